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
use super::{finish_stage, JsonStage, ParseError, Parser};
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
        return sequential(open);
    }
    let mut head = vec![0u8; 64 << 10];
    let n = read_full(&mut open(0)?, &mut head)?;
    head.truncate(n);
    let form = match head
        .iter()
        .copied()
        .find(|b| !b" \t\r\n\xEF\xBB\xBF".contains(b))
    {
        _ if head.starts_with(&[0x1f, 0x8b]) => return sequential(open),
        Some(b'{') => Form::Object,
        Some(b'[') => Form::Array,
        _ => return sequential(open),
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
        return sequential(open);
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
                    let mut stage = if start == 0 {
                        JsonStage::new()
                    } else {
                        JsonStage {
                            splitter: Splitter::in_events(form, start),
                            ..JsonStage::new()
                        }
                    };
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
    let last = stages.len() - 1;
    let sound = stages.iter().enumerate().all(|(k, s)| {
        let ends_clean = k == last
            || (s.splitter.between_events() && s.splitter.saw_events() && s.builder.can_continue());
        ends_clean && (k == 0 || !s.builder.saw_begin_end())
    });
    if !sound {
        return sequential(open);
    }
    let rest = stages.split_off(1);
    let mut first = stages.pop().expect("there is a first part");
    let mut splitter = None;
    for s in rest {
        first.builder.absorb(s.builder);
        splitter = Some(s.splitter);
    }
    first.splitter = splitter.expect("there is more than one part");
    first.json_bytes = len;
    let parts = starts.len() as u32;
    Ok(finish_stage(first, len, false, None).map(|mut t| {
        t.stats.threads = parts;
        t
    }))
}

fn sequential<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
) -> io::Result<Result<Trace, ParseError>> {
    let mut reader = open(0)?;
    let mut parser = Parser::new();
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

/// The offset of the first `{` after `at` that follows `}` `,` (with optional whitespace): a
/// guess at the start of an event, verified later.
fn boundary_after<R: Read>(
    open: &(dyn Fn(u64) -> io::Result<R> + Sync),
    at: u64,
) -> io::Result<Option<u64>> {
    let mut window = vec![0u8; SEARCH_WINDOW];
    let n = read_full(&mut open(at)?, &mut window)?;
    let w = &window[..n];
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
                return Ok(Some(at + j as u64));
            }
        }
        i += k + 1;
    }
    Ok(None)
}
