//! One file parsed in several Web Workers: each helper worker's Session parses one range into a
//! part (`start_part`, `feed`, `take_part`), and the loading Session, which read the file's first
//! range itself, joins the parts in file order (`absorb_part`). The parts cross between workers
//! as transferred buffers (`parse/codec.rs`). `www/js/worker/parallel.js` drives it.

use super::err;
use super::session::{Session, State};
use crate::parse::Part;
use wasm_bindgen::prelude::*;

/// True when a file starting with `head` can be parsed in parts: plain JSON, not gzip.
#[wasm_bindgen]
pub fn splittable(head: &[u8]) -> bool {
    crate::parse::splittable(head)
}

/// Where in `window` (bytes read from anywhere in the file) an event probably starts; -1 when
/// nowhere. A wrong guess is caught when the parts are joined.
#[wasm_bindgen]
pub fn event_boundary(window: &[u8]) -> f64 {
    crate::parse::event_boundary(window).map_or(-1.0, |i| i as f64)
}

#[wasm_bindgen]
impl Session {
    /// Makes this session parse the range of a file that starts at byte `start` (an event's
    /// start), fed with `feed`; `head` is the file's first bytes.
    pub fn start_part(&mut self, head: &[u8], start: f64) -> Result<(), JsValue> {
        match &self.state {
            State::Reading(p) if p.bytes_fed() == 0 => {}
            _ => return Err(err("a part must start before any bytes are fed")),
        }
        let part = Part::new(head, start as u64).ok_or_else(|| err("this file cannot be cut"))?;
        self.state = State::Part(Box::new(part));
        Ok(())
    }

    /// The part read so far as one buffer, for the session that joins it; this session is done.
    pub fn take_part(&mut self) -> Result<Vec<u8>, JsValue> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Part(part) => Ok(part.encode()),
            _ => Err(err("this session is not parsing a part")),
        }
    }

    /// Joins a part that starts where the bytes fed so far end. False when it cannot be joined
    /// exactly (see `Parser::absorb_part`): the caller then reads the file with one parser.
    /// The part's buffer is kept (its args' bytes are the model's where they lie).
    pub fn absorb_part(&mut self, part: Vec<u8>) -> Result<bool, JsValue> {
        match &mut self.state {
            State::Reading(p) => p.absorb_part(part).map_err(err),
            _ => Err(err("this session has finished reading")),
        }
    }
}
