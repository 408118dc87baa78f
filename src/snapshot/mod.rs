//! Memory snapshots: the pickles `torch.cuda.memory._dump_snapshot` writes, read without Python.
//!
//! Push interface like the trace parser's: [`Reader::feed`] any number of chunks, split
//! anywhere, then [`Reader::finish`]. Plain pickles or gzip (told by the magic bytes, inflated by
//! flate2 as it streams). Memory while reading is the model plus one batch of a list (what the
//! pickler writes between `MARK` and `APPENDS`, 1,000 items): the file is never held whole and
//! no generic tree of it is built (see `pickle`).
//!
//! # Safety
//! Only data opcodes run (protocols 0-5's containers, strings, bytes, numbers, booleans, None,
//! the memo, marks, frames). Every opcode that names, imports or calls code (`GLOBAL`,
//! `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`, `NEWOBJ`, `NEWOBJ_EX`, `PERSID`,
//! `BINPERSID`, `EXT1/2/4`, out-of-band buffers) refuses the whole file ([`ErrorKind::Refused`]):
//! nothing here knows a name to look up. An unknown opcode is damage: what was read before it
//! is kept. Messages name an opcode by its name or hex value and an offset, never the file's
//! bytes.
//!
//! # Format
//! `_dump_snapshot(filename)` is `pickle.dump(torch.cuda.memory._snapshot(), f)` (protocol 4,
//! Python's default since 3.8), and `_snapshot()` is the dict `torch._C._cuda_memorySnapshot`
//! builds in `torch/csrc/cuda/Module.cpp`. Key by key, what is read:
//! - top level: `segments`, `device_traces` (one list per device index), `external_annotations`,
//!   `allocator_settings` (kept as text: `PYTORCH_CUDA_ALLOC_CONF`, `max_split_size`,
//!   `garbage_collection_threshold`, `expandable_segments`, `pinned_num_register_threads`,
//!   `release_lock_on_cudamalloc`, `pinned_use_cuda_host_register`, `roundup_power2_divisions`,
//!   `graph_capture_record_stream_reuse`, and any other). Other keys are counted.
//! - segment: `device`, `address`, `total_size`, `allocated_size`, `active_size`,
//!   `requested_size`, `stream`, `segment_type` (`large`/`small`), `segment_pool_id` (a tuple
//!   of two ints; a list is read too), `is_expandable`, `frames`, `blocks`.
//! - block: `address`, `size`, `requested_size` (absent: the size, as `_memory_viz` reads old
//!   files), `state` (`active_allocated`, `active_pending_free`, `inactive`), `frames`. The
//!   `history` of torch 2.0's blocks is counted as an unknown key, not read.
//! - trace entry: `action` (`alloc`, `free_requested`, `free_completed`, `segment_alloc`,
//!   `segment_free`, `segment_map`, `segment_unmap`, `snapshot`, `oom`; others kept as
//!   [`Action::Other`]), `addr` (or, for `oom`, `device_free`, kept in the same column as the
//!   allocator does), `size`, `stream`, `time_us` (absent in old files), `frames`,
//!   `compile_context` and `user_metadata` (strings, in recent files). Other keys are counted.
//! - frame: `filename`, `line`, `name`; the `fx_node_op`, `fx_node_name`, `fx_original_trace`
//!   and `fx_node_info` that `augment_with_fx_traces` adds are not read.
//! - external annotation: `device`, `time_us`, `stage`, `name`; other metadata keys are not read.
//!
//! Files: this module (the [`Reader`], gzip, what a non-snapshot is), `pickle` (the opcode
//! machine, streaming and salvage), `value` (what its stack holds), `memo` (what a `GET` may ask
//! for), `build` (dicts into rows, rows into the [`Snapshot`]), `model` (the columns), `analysis` (every figure: segments as `_memory_viz.segsum` counts
//! them, the folded stacks of its `segments` and `memory`, the live-bytes timeline, the peak
//! and what holds it by group, the `oom` event, the diff of two snapshots, also from each one's
//! `Peaks`), `bands` (the Active Memory Timeline laid out for a window and a canvas, with level
//! of detail, and what is under a point of it).

pub mod analysis;
pub mod bands;
mod build;
mod memo;
mod model;
mod pickle;
mod value;

pub use model::*;
pub use pickle::Refusal;

use build::NotSnapshot;
use pickle::{Machine, State};
use std::fmt;
use std::io::Write;

/// Why the input is not a snapshot, or is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Empty,
    NotASnapshot,
    /// The pickle names or calls code; nothing of it was used.
    Refused,
    CorruptGzip,
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SnapshotError {}

impl Write for Machine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.feed(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

enum Stage {
    /// Fewer than two bytes seen: gzip or not is still open.
    Sniff(Vec<u8>),
    Plain(Box<Machine>),
    Gzip(Box<flate2::write::MultiGzDecoder<Machine>>),
}

/// The push reader. See the module docs.
pub struct Reader {
    stage: Stage,
    input_bytes: u64,
    gzip_error: Option<String>,
    /// The input's size, when known before it is read.
    expect: Option<u64>,
    /// A gzip input's inflated size, when known before it is read.
    expect_inflated: Option<u64>,
}

impl Default for Reader {
    fn default() -> Self {
        Self::new()
    }
}

impl Reader {
    pub fn new() -> Self {
        Reader {
            stage: Stage::Sniff(Vec::new()),
            input_bytes: 0,
            gzip_error: None,
            expect: None,
            expect_inflated: None,
        }
    }

    /// The size of the input in bytes, when it is known before it is read (a file's length): a
    /// plain pickle's trace entries are then reserved for the whole of it, from the density read
    /// so far, instead of doubling as they grow (`crate::room`). Only memory and time depend on
    /// it. A gzip input's offsets count inflated bytes, so its compressed size is not used.
    pub fn expect_bytes(&mut self, bytes: u64) {
        self.expect = Some(bytes);
        if let Stage::Plain(m) = &mut self.stage {
            m.builder.expect = Some(bytes);
        }
    }

    /// A gzip input's inflated size, when it is known before it is read (the gzip trailer's
    /// ISIZE: the size modulo 4 GiB, of the last member): its trace entries are reserved from it
    /// as [`Reader::expect_bytes`] reserves a plain input's. A wrong size costs memory or time,
    /// never a figure.
    pub fn expect_inflated_bytes(&mut self, bytes: u64) {
        self.expect_inflated = Some(bytes);
        if let Stage::Gzip(g) = &mut self.stage {
            g.get_mut().builder.expect = Some(bytes);
        }
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> u64 {
        self.input_bytes
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.input_bytes += chunk.len() as u64;
        if let Stage::Sniff(head) = &mut self.stage {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return;
            }
            let head = std::mem::take(head);
            let machine = Machine::new();
            self.stage = if head[..2] == [0x1f, 0x8b] {
                let mut machine = machine;
                machine.builder.expect = self.expect_inflated;
                Stage::Gzip(Box::new(flate2::write::MultiGzDecoder::new(machine)))
            } else {
                let mut machine = Box::new(machine);
                machine.builder.expect = self.expect;
                Stage::Plain(machine)
            };
            self.push(&head);
            return;
        }
        self.push(chunk);
    }

    fn push(&mut self, bytes: &[u8]) {
        match &mut self.stage {
            Stage::Sniff(_) => unreachable!("sniffing ends before bytes are pushed"),
            Stage::Plain(m) => m.feed(bytes),
            Stage::Gzip(g) => {
                // A broken or refused pickle needs no more inflating, and a gzip error found
                // after it (within the same write or not, as the chunks fall) is not reported.
                if self.gzip_error.is_none() && g.get_ref().takes_more() {
                    if let Err(e) = g.write_all(bytes) {
                        if g.get_ref().takes_more() {
                            self.gzip_error = Some(e.to_string());
                        }
                    }
                }
            }
        }
    }

    /// Ends the input and builds the snapshot; an error only when the input is not a snapshot
    /// or is refused. Damage (a truncated file, an unknown opcode) is salvaged and listed in
    /// [`Snapshot::diagnostics`].
    pub fn finish(mut self) -> Result<Snapshot, SnapshotError> {
        if let Stage::Sniff(head) = &mut self.stage {
            let head = std::mem::take(head);
            self.stage = Stage::Plain(Box::new(Machine::new()));
            self.push(&head);
        }
        let (mut m, gzipped, gzip_error) = match self.stage {
            Stage::Sniff(_) => unreachable!("sniffing was ended above"),
            Stage::Plain(m) => (*m, false, None),
            Stage::Gzip(mut g) => {
                let end = if self.gzip_error.is_none() && g.get_ref().takes_more() {
                    g.try_finish().err().map(|e| e.to_string())
                } else {
                    None
                };
                let m = std::mem::replace(g.get_mut(), Machine::new());
                // The pickle may break on output the inflater hands over in the same call that
                // finds the damage (also in `try_finish`): damage after the break is not the
                // pickle's, and whether it is found depends on the chunks.
                let error = self.gzip_error.or(end).filter(|_| m.takes_more());
                (m, true, error)
            }
        };
        let size = format!("{} bytes", self.input_bytes);
        if self.input_bytes == 0 {
            return Err(err(ErrorKind::Empty, "the file is empty".into()));
        }
        if let State::Refused(r) = &m.state {
            return Err(err(ErrorKind::Refused, r.to_string()));
        }
        if gzipped && m.bytes == 0 {
            let why = gzip_error.unwrap_or_else(|| "no data".into());
            return Err(err(
                ErrorKind::CorruptGzip,
                format!("a gzip file that cannot be decompressed ({why})"),
            ));
        }
        let inside = if gzipped {
            " inside the gzip stream"
        } else {
            ""
        };
        if m.head.first() != Some(&0x80) {
            let what = describe(&m.head);
            return Err(err(
                ErrorKind::NotASnapshot,
                format!(
                    "not a memory snapshot: {what}{inside}, {size} (a snapshot is a pickle, \
                     starting with byte 0x80)"
                ),
            ));
        }
        let truncated = m.state == State::Running;
        if truncated {
            let at = m.bytes;
            m.builder.at = at;
            m.builder.diag(DiagKind::Truncated, || {
                format!(
                    "the file ends at byte {at}, before the pickle's end; what was read is \
                     kept, the item being read is dropped, and whatever followed is missing"
                )
            });
        }
        if let Some(e) = gzip_error {
            m.builder.at = m.bytes;
            m.builder.diag(DiagKind::Truncated, || {
                format!("the gzip stream ends early or is damaged ({e}); what was read is kept")
            });
        }
        if m.trailing > 0 {
            let n = m.trailing;
            m.builder.at = m.bytes - n;
            m.builder.diag(DiagKind::TrailingBytes, || {
                format!("{n} bytes after the pickle's end; ignored")
            });
        }
        let root = m.salvage();
        let stats = SnapshotStats {
            input_bytes: self.input_bytes,
            pickle_bytes: m.bytes,
            gzipped,
            protocol: m.protocol,
            truncated,
        };
        m.builder.finish(root, stats).map_err(|e| match e {
            NotSnapshot::Other(message) => err(ErrorKind::NotASnapshot, message),
        })
    }
}

/// Reads a whole snapshot held in memory.
pub fn read(bytes: &[u8]) -> Result<Snapshot, SnapshotError> {
    let mut r = Reader::new();
    r.feed(bytes);
    r.finish()
}

fn err(kind: ErrorKind, message: String) -> SnapshotError {
    SnapshotError { kind, message }
}

/// Whether these first bytes (of a file, or inflated from it) start a pickle of protocol 2 or
/// later, as a snapshot does: for the trace parser, to say what such a file is.
pub fn looks_like_pickle(head: &[u8]) -> bool {
    matches!(head, [0x80, 2..=5, ..])
}

/// What kind of file that is not a pickle this is, from its first bytes (never quoting them).
fn describe(head: &[u8]) -> &'static str {
    let first = head.iter().find(|b| !b.is_ascii_whitespace()).copied();
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(b"\x89PNG") {
        "a PNG image"
    } else if starts(b"PK\x03\x04") {
        "a zip archive"
    } else if starts(b"%PDF") {
        "a PDF document"
    } else if matches!(first, Some(b'{' | b'[')) {
        "JSON text (a profiler trace is read by the other commands)"
    } else if first.is_some_and(|b| b.is_ascii_graphic()) {
        "text"
    } else {
        "binary data"
    }
}
