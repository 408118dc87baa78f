//! A memory snapshot in the page (`www/js/snapshot*.js`): its reader while bytes arrive, then the
//! snapshot, its report and each device's timeline bands, in the worker's wasm memory. Every figure
//! comes from `crate::snapshot` (the CLI's `sightline snapshot`); this only hands it on as JSON
//! or, for the timeline's rectangles, a `Float64Array`.

use super::{err, json};
use crate::snapshot::analysis::{self, diff_peaks, Peaks};
use crate::snapshot::bands::{Bands, Window};
use crate::snapshot::{Reader, Snapshot};
use wasm_bindgen::prelude::*;

enum State {
    Reading(Reader),
    Ready(Box<Loaded>),
    Done,
}

struct Loaded {
    snap: Snapshot,
    /// Each device's bands, built when its timeline is first asked for.
    bands: Vec<Option<Bands>>,
}

/// One opened snapshot. Its reading methods are a `Session`'s (`feed`, `expect_bytes`,
/// `bytes_fed`, `events_read`), so the worker reads a file into either alike.
#[wasm_bindgen]
pub struct SnapshotSession {
    state: State,
}

impl Default for SnapshotSession {
    fn default() -> Self {
        Self::new()
    }
}

impl SnapshotSession {
    fn loaded(&self) -> Result<&Loaded, JsValue> {
        match &self.state {
            State::Ready(l) => Ok(l),
            _ => Err(err("no snapshot is loaded in this session")),
        }
    }

    fn bands(&mut self, device: usize) -> Result<(&Snapshot, &Bands), JsValue> {
        let State::Ready(l) = &mut self.state else {
            return Err(err("no snapshot is loaded in this session"));
        };
        if device >= l.snap.devices.len() {
            return Err(err(format!("the snapshot has no device {device}")));
        }
        let Loaded { snap, bands } = &mut **l;
        let b = bands[device].get_or_insert_with(|| Bands::new(snap, device));
        Ok((snap, b))
    }
}

#[wasm_bindgen]
impl SnapshotSession {
    #[wasm_bindgen(constructor)]
    pub fn new() -> SnapshotSession {
        SnapshotSession {
            state: State::Reading(Reader::new()),
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsValue> {
        match &mut self.state {
            State::Reading(r) => {
                r.feed(chunk);
                Ok(())
            }
            _ => Err(err("this session has finished reading")),
        }
    }

    /// The file's size, before it is read: see `Reader::expect_bytes`.
    pub fn expect_bytes(&mut self, bytes: f64) {
        if let State::Reading(r) = &mut self.state {
            r.expect_bytes(bytes as u64);
        }
    }

    /// A gzip file's inflated size, before it is read: see `Reader::expect_inflated_bytes`.
    pub fn expect_inflated_bytes(&mut self, bytes: f64) {
        if let State::Reading(r) = &mut self.state {
            r.expect_inflated_bytes(bytes as u64);
        }
    }

    pub fn bytes_fed(&self) -> f64 {
        match &self.state {
            State::Reading(r) => r.bytes_fed() as f64,
            State::Ready(l) => l.snap.stats.input_bytes as f64,
            State::Done => 0.0,
        }
    }

    /// Trace entries read: known once the snapshot is built (0 while reading).
    pub fn events_read(&self) -> f64 {
        match &self.state {
            State::Ready(l) => l.snap.entries() as f64,
            _ => 0.0,
        }
    }

    /// Ends the input and builds the snapshot; returns its report with each group list cut to
    /// its `top` largest (`sightline snapshot FILE --json --top TOP`). Throws the reader's message
    /// when the input is not a snapshot or is refused.
    pub fn finish(&mut self, top: u32) -> Result<String, JsValue> {
        let State::Reading(reader) = std::mem::replace(&mut self.state, State::Done) else {
            return Err(err("this session has already finished"));
        };
        let snap = reader.finish().map_err(err)?;
        let report = json(&analysis::report(&snap, top as usize));
        let devices = snap.devices.len();
        self.state = State::Ready(Box::new(Loaded {
            snap,
            bands: (0..devices).map(|_| None).collect(),
        }));
        Ok(report)
    }

    /// The report again, cut to another `top`.
    pub fn report(&self, top: u32) -> Result<String, JsValue> {
        Ok(json(&analysis::report(&self.loaded()?.snap, top as usize)))
    }

    /// What a diff needs of this snapshot (JSON), for [`diff_snapshots`].
    pub fn peaks(&self) -> Result<String, JsValue> {
        Ok(json(&analysis::peaks(&self.loaded()?.snap)))
    }

    /// The positions of `device`'s timeline (its entries plus one), building its bands.
    pub fn positions(&mut self, device: usize) -> Result<f64, JsValue> {
        Ok(self.bands(device)?.1.positions() as f64)
    }

    /// `device`'s timeline laid out for positions `start..end` on `width` x `height` pixels:
    /// `[max_bytes, max_position, rects...]`, the rectangles `bands::RECT_STRIDE` floats each.
    pub fn bands_layout(
        &mut self,
        device: usize,
        start: f64,
        end: f64,
        width: u32,
        height: f64,
    ) -> Result<Vec<f64>, JsValue> {
        let (snap, b) = self.bands(device)?;
        let l = b.layout(
            snap,
            Window {
                start,
                end,
                width,
                height,
            },
        );
        let mut out = Vec::with_capacity(l.rects.len() + 2);
        out.push(l.max_bytes as f64);
        out.push(l.max_position as f64);
        out.extend_from_slice(&l.rects);
        Ok(out)
    }

    /// What is at pixel (`x`, `y`) (y up from the bottom) of that layout, as JSON (`null` for
    /// nothing).
    #[allow(clippy::too_many_arguments)]
    pub fn bands_hit(
        &mut self,
        device: usize,
        start: f64,
        end: f64,
        width: u32,
        height: f64,
        x: f64,
        y: f64,
    ) -> Result<String, JsValue> {
        let (snap, b) = self.bands(device)?;
        let w = Window {
            start,
            end,
            width,
            height,
        };
        Ok(json(&b.hit(snap, w, x, y)))
    }
}

/// The diff of two snapshots from their [`SnapshotSession::peaks`] (JSON), each group list cut to
/// its `top` largest changes: `sightline snapshot BASE NEW --json --top TOP`.
#[wasm_bindgen]
pub fn diff_snapshots(base: &str, new: &str, top: u32) -> Result<String, JsValue> {
    let read = |s: &str, which: &str| -> Result<Peaks, JsValue> {
        serde_json::from_str(s)
            .map_err(|e| err(format!("the {which} snapshot's peaks do not read: {e}")))
    };
    Ok(json(&diff_peaks(
        &read(base, "base")?,
        &read(new, "new")?,
        top as usize,
    )))
}
