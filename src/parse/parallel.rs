//! Parsing one plain-JSON trace on several threads. wasm32 has no threads here: there the same
//! calls parse on one (the browser streams a `File` through [`super::Parser`] instead).
//!
//! The event array is cut into parts at guessed element boundaries; each part is read from its own
//! reader and parsed by its own builder on its own thread, then the builders are joined in file
//! order ([`Builder::absorb`]). The result equals a sequential parse, because:
//! - a guess is only trusted when the part before it, parsed from the real start, ends exactly
//!   between two elements of the event array (a `},{` inside a string fails that test);
//! - joining keeps first-seen orders, so string ids, lane order, args ids and slice order match;
//! - `B`/`E` pairs cannot be matched across parts, so a trace with any falls back to one thread.
//!
//! Anything unexpected (gzip, a failed guess, a short file) falls back to the streaming parser, so
//! this is purely a speed-up. Each part is read by `read()` calls on its own range: the file is
//! still never held whole.

use super::split::{Form, Splitter};
use super::{codec, finish_stage, JsonStage, ParseError, Parser};
use crate::model::Trace;
use std::io::{self, Read};

/// Below this, one thread is as fast as several.
const MIN_PARALLEL_BYTES: u64 = 32 << 20;
/// How far past a cut point to look for an element boundary.
const SEARCH_WINDOW: usize = 4 << 20;
const READ_CHUNK: usize = 1 << 20;

/// Parses `len` bytes of JSON using up to `parts` threads; `open(offset)` gives a reader positioned
/// at `offset`. I/O errors are returned as such; a non-trace as the inner `ParseError`.
pub fn parse_parallel<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
    len: u64,
    parts: usize,
) -> io::Result<Result<Trace, ParseError>> {
    parse_parallel_with(open, len, parts, MIN_PARALLEL_BYTES)
}

/// [`parse_parallel`] with the size below which one thread is used as a parameter (tests cut
/// small files to prove the result equals a one-thread parse).
pub fn parse_parallel_with<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
    len: u64,
    parts: usize,
    min_bytes: u64,
) -> io::Result<Result<Trace, ParseError>> {
    if parts < 2 || len < min_bytes || cfg!(target_arch = "wasm32") {
        return sequential(open, len);
    }
    let mut head = vec![0u8; 64 << 10];
    let n = read_full(&mut open(0)?, &mut head)?;
    head.truncate(n);
    let Some(form) = form_of(&head) else {
        return sequential(open, len);
    };
    let mut cuts = Vec::new();
    for k in 1..parts as u64 {
        let guess = len * k / parts as u64;
        if let Some(at) = boundary_after(open, guess)? {
            if cuts.last().is_none_or(|&c| at > c) && at < len {
                cuts.push(at);
            }
        }
    }
    if cuts.is_empty() {
        return sequential(open, len);
    }
    let mut starts = vec![0];
    starts.extend(&cuts);
    let mut ends = cuts.clone();
    ends.push(len);

    let stages: Vec<io::Result<JsonStage>> = std::thread::scope(|scope| {
        let handles: Vec<_> = starts
            .iter()
            .zip(&ends)
            .map(|(&start, &end)| {
                scope.spawn(move || -> io::Result<JsonStage> {
                    let mut stage = stage_at(form, start);
                    // The first part takes in the others when they are joined: its columns are
                    // reserved for the whole file, so the join copies the other parts' slices and
                    // args without moving the first part's (1 GB scaled trace, 2 parts: the join
                    // 120 -> 101-105 ms, peak RSS unchanged). The page's loading worker is not told
                    // so: measured there, neither its time nor its memory moved.
                    let holds = if start == 0 { len } else { end };
                    stage.builder.expect = Some((start, holds));
                    let mut reader = open(start)?.take(end - start);
                    let mut buf = vec![0u8; READ_CHUNK];
                    loop {
                        let n = reader.read(&mut buf)?;
                        if n == 0 {
                            break;
                        }
                        stage.feed(&buf[..n]);
                    }
                    Ok(stage)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a parse thread panicked"))
            .collect()
    });
    let mut stages = stages.into_iter().collect::<io::Result<Vec<_>>>()?;

    // Trust the cuts only if every part but the last ended between two events, and no B/E pair
    // could straddle a cut.
    let rest = stages.split_off(1);
    let mut first = stages.pop().expect("there is a first part");
    for (s, &start) in rest.into_iter().zip(&cuts) {
        if !first.can_take(&s, start) {
            return sequential(open, len);
        }
        first.take(s);
    }
    let parts = cuts.len() as u32 + 1;
    Ok(finish_stage(first, len, false, None).map(|mut t| {
        t.stats.threads = parts;
        t
    }))
}

/// A stage that reads a file of `form` from byte `start`, an event's first byte (or the file's).
fn stage_at(form: Form, start: u64) -> JsonStage {
    if start == 0 {
        JsonStage::new()
    } else {
        JsonStage {
            splitter: Splitter::in_events(form, start),
            ..JsonStage::new()
        }
    }
}

fn sequential<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
    len: u64,
) -> io::Result<Result<Trace, ParseError>> {
    let mut reader = open(0)?;
    let mut parser = Parser::new();
    parser.expect_size(len);
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        parser.feed(&buf[..n]);
    }
    Ok(parser.finish())
}

fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The offset of the first `{` after `at` that follows `}` `,`: see [`event_boundary`].
fn boundary_after<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
    at: u64,
) -> io::Result<Option<u64>> {
    let mut window = vec![0u8; SEARCH_WINDOW];
    let n = read_full(&mut open(at)?, &mut window)?;
    Ok(event_boundary(&window[..n]).map(|j| at + j as u64))
}

/// The offset in `window` (bytes from anywhere in a file) of the first `{` that follows `}` `,`
/// with optional whitespace: a guess at the start of an event, verified when the part before it
/// is joined ([`JsonStage::can_take`]). Windows of a few MB find one in every real trace.
pub fn event_boundary(window: &[u8]) -> Option<usize> {
    let w = window;
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let mut i = 0;
    while let Some(k) = memchr::memchr(b'}', &w[i..]) {
        let mut j = i + k + 1;
        while j < w.len() && ws(w[j]) {
            j += 1;
        }
        if j < w.len() && w[j] == b',' {
            j += 1;
            while j < w.len() && ws(w[j]) {
                j += 1;
            }
            if j < w.len() && w[j] == b'{' {
                return Some(j);
            }
        }
        i += k + 1;
    }
    None
}

/// The form of a plain-JSON document from its first bytes; `None` for gzip or anything that is
/// not a JSON object or array (those are read by one parser).
fn form_of(head: &[u8]) -> Option<Form> {
    if head.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    match head
        .iter()
        .copied()
        .find(|b| !b" \t\r\n\xEF\xBB\xBF".contains(b))
    {
        Some(b'{') => Some(Form::Object),
        Some(b'[') => Some(Form::Array),
        _ => None,
    }
}

/// True when a file whose first bytes are `head` can be parsed in parts ([`Part`]): plain JSON,
/// not gzip.
pub fn splittable(head: &[u8]) -> bool {
    form_of(head).is_some()
}

/// One range of a plain-JSON file parsed on its own (in a Web Worker, or anywhere else), to be
/// written into a buffer ([`Part::encode`]) and joined in file order by the parser that read the
/// bytes before it ([`Parser::absorb_part`]). The join is exact or refused, as for the threads
/// above: the range must start at an event (found with [`event_boundary`]), the bytes before it
/// must end between two events, and it must hold no `B`/`E` events.
pub struct Part {
    stage: JsonStage,
    start: u64,
}

impl Part {
    /// A part starting at byte `start` of the file whose first bytes are `head` (enough to see
    /// its first significant byte); `None` when the file cannot be cut ([`splittable`]).
    pub fn new(head: &[u8], start: u64) -> Option<Part> {
        let stage = stage_at(form_of(head)?, start);
        Some(Part { stage, start })
    }

    /// The part's next bytes, in order, split anywhere.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.stage.feed(bytes);
    }

    pub fn bytes_fed(&self) -> u64 {
        self.stage.json_bytes
    }

    /// The part's length in bytes, when known before it is read: see [`Parser::expect_size`].
    pub fn expect_len(&mut self, len: u64) {
        self.stage.builder.expect = Some((self.start, self.start + len));
    }

    pub fn events_read(&self) -> u64 {
        self.stage.builder.events_total()
    }

    /// The part as one buffer (see `codec.rs`).
    pub fn encode(&self) -> Vec<u8> {
        codec::encode(&self.stage, self.start)
    }
}
