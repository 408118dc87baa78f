//! Stream parser: bytes of a PyTorch profiler trace (`.json` or `.json.gz`) in, a [`Trace`] out.
//!
//! Push interface: [`Parser::feed`] any number of chunks, split anywhere (inside a string, a number or
//! a gzip block), then [`Parser::finish`]. The result does not depend on how the input was chunked.
//! Memory while parsing is the model plus the largest single event.
//!
//! Supported: the object form with `traceEvents` among the top-level keys (in any order) and the bare
//! array form; gzip detected by its magic bytes; phases X, B/E, i/I, C, M and s/t/f flows. Other
//! phases (async b/e/n, samples, objects) are counted and listed, not shown.
//!
//! Damage is reported, not fatal: a truncated file (also inside the gzip stream), a cut-off last event,
//! raw control characters in strings, bare `N/A`, integers wider than 64 bits, unmatched B/E. Only
//! input that is not a trace at all is an error ([`ParseError`]).
//!
//! Files, in the order the bytes pass through them:
//! - this module: gzip detected by its magic bytes and inflated as it streams (flate2 on
//!   miniz_oxide, pure Rust, so the page's wasm runs the same code), or JSON inflated by the caller
//!   ([`Parser::feed_inflated`]: the page's inflate worker); non-traces classified into one
//!   [`ParseError`]; which [`Reader`] takes events apart.
//! - `split`: a state machine over the JSON envelope (`traceEvents` among the top-level keys, or a
//!   bare array) that cuts the event array into one byte slice per element. Only the element being
//!   cut is buffered; nesting depth is a counter, never recursion.
//! - `direct`: the fast reader of one event's members as raw text spans. It reads them in the
//!   order they come (the code's position is the state, so branches predict): a string's end by
//!   one 16-byte compare for a quote, backslash or control byte (SSE2, wasm `simd128`, or portable
//!   code, every path tested against the others), a scalar to its first delimiter, a nested value
//!   bracket by bracket; it reads `args` in the same walk, and says whether the event is all ASCII
//!   (then no UTF-8 check) and holds a backslash (then its strings are unescaped). It accepts a
//!   subset of what `read_object` accepts and gives the same spans for it.
//! - `fields`: `read_object` (a memchr search per string and container), which reads what the
//!   direct reader refuses (a raw control byte, a backslash outside a string, unpaired brackets,
//!   odd scalars, nesting past 63); what it refuses goes to serde_json with repair.
//!   [`Reader::Objects`] runs `read_object` alone: the tests' oracle. Where an event lies whole in
//!   the chunk, the splitter hands it to the readers at its opening brace
//!   (`Sink::element_prefix`), so it is read once; the readers refuse whatever the splitter's
//!   brace counting would end elsewhere, so both cut an event at one byte.
//! - `event`: an event's fields as raw text; decimal `ts`/`dur` to integer ns; ids in odd forms
//!   (`"stream 7"`); `Input Dims` as Python prints it; repair of known damage.
//! - `build`: events into per-lane columns; `finish` sorts lanes, lays out rows, rebases time,
//!   orders lanes and binds flows. An event goes in by passes (counts, args, time, then one per
//!   phase). `Builder::absorb` joins a builder that read the bytes after this one's, keeping
//!   first-seen orders, so ids equal those of a one-builder parse; `absorb_from` takes the part's
//!   slices and args from wherever they lie (`PartSlices`), so `build` knows no buffer format.
//! - `rows`: each slice's row (`depth`): placed longest first, one row below the deepest longer
//!   slice it overlaps (a max segment tree for the slices that overlap without nesting and those
//!   containing them, a stack pass under the innermost container for every other slice). Proper
//!   nesting keeps its depth; of two slices overlapping without nesting the shorter goes under the
//!   longer, so depth stays at the containment depth instead of growing with every step.
//! - `parallel`: a large plain-JSON file on several threads (one on wasm32): the event array cut at
//!   guessed element boundaries ([`event_boundary`]), each part read from its own range, a guess
//!   trusted only if the part before it ends exactly between two events; B/E pairs and gzip take
//!   the one-thread path. [`Part`] is one such range parsed alone, for the page's parse workers:
//!   `Part::encode` writes it into one buffer and [`Parser::absorb_part`] joins it with the same
//!   check (a refused join is `false`; the caller reads those bytes instead).
//! - `codec`: a part's splitter and builder state as one binary buffer (magic, format version,
//!   columns whole as little-endian values, strings as length and UTF-8, maps rebuilt rather than
//!   written). Reading checks lengths before allocating, enum codes, every id against its table and
//!   times against the parser's bounds, so a damaged buffer is a [`PartError`], never a panic.
//!   It owns the format: it imports `build`'s types, writes and reads them, and copies a part's
//!   columns from its buffer into a joining builder (its `PartSlices`); `build` imports nothing
//!   of it.

mod build;
mod codec;
mod direct;
mod event;
mod fields;
mod parallel;
mod rows;
mod split;

pub use build::enclosing_slice;
pub use codec::PartError;
pub use direct::Path as SimdPath;
pub use parallel::{event_boundary, parse_parallel, parse_parallel_with, splittable, Part};
pub use rows::layout_rows;

use crate::model::{DiagKind, ParseStats, Trace};
use build::Builder;
use split::{Form, Splitter};
use std::fmt;
use std::io::Write;

/// Which reader takes the events apart. The result never depends on it (tested on every fixture):
/// it is a choice of speed, and of an oracle for the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The direct reader with one string search (the default: the one with SIMD where this
    /// build has it), with [`Reader::Objects`] for the events it refuses.
    Direct(SimdPath),
    /// `read_object` alone: one memchr search per string and container.
    Objects,
}

impl Default for Reader {
    /// The direct reader on [`SimdPath::best`]. Its portable search too reads faster than
    /// `read_object` alone (`reader_speed`, 300 MB scaled trace: 237 against 246 ms, and it
    /// reads the args' members in the same walk), so it is the default everywhere.
    fn default() -> Self {
        Reader::Direct(SimdPath::best())
    }
}

/// Why the input is not a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Empty,
    NotJson,
    NotATrace,
    CorruptGzip,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

/// The JSON stage: splits the (decompressed) bytes into events and builds the model from them.
struct JsonStage {
    splitter: Splitter,
    builder: Builder,
    json_bytes: u64,
    head: Vec<u8>,
}

impl JsonStage {
    fn new() -> Self {
        JsonStage {
            splitter: Splitter::new(),
            builder: Builder::new(),
            json_bytes: 0,
            head: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        if self.head.len() < 16 {
            let n = (16 - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
        }
        self.json_bytes += bytes.len() as u64;
        self.splitter.feed(bytes, &mut self.builder);
    }
}

impl JsonStage {
    /// True when `next`, parsed on its own from byte `next_start`, can be joined after this
    /// stage with a result equal to one stage reading both: this one stopped right there,
    /// between two events of the array with no `B` left open, and `next` holds no `B`/`E` (a
    /// pair cannot be matched across the cut).
    fn can_take(&self, next: &JsonStage, next_start: u64) -> bool {
        self.splitter.bytes_seen() == next_start
            && self.splitter.between_events()
            && self.splitter.saw_events()
            && self.builder.can_continue()
            && !next.builder.saw_begin_end()
    }

    /// Joins `next` (see [`JsonStage::can_take`]): its events after these, its splitter's state
    /// as where the input now stands.
    fn take(&mut self, next: JsonStage) {
        self.builder.absorb(next.builder);
        self.splitter = next.splitter;
        self.json_bytes += next.json_bytes;
    }

    /// [`JsonStage::take`] of a part read from a buffer, its slices and args still there.
    fn take_encoded(
        &mut self,
        next: JsonStage,
        encoded: &codec::Encoded<'_>,
    ) -> Option<crate::model::Pending> {
        self.splitter = next.splitter;
        self.json_bytes += next.json_bytes;
        self.builder.absorb_from(next.builder, encoded)
    }
}

impl Write for JsonStage {
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
    Plain(Box<JsonStage>),
    Gzip(Box<flate2::write::MultiGzDecoder<JsonStage>>),
    /// gzip inflated by the caller ([`Parser::feed_inflated`]): the page inflates in a worker of
    /// its own with the browser's native inflater while this one parses.
    Inflated(Box<JsonStage>),
}

/// The push parser. See the module docs.
pub struct Parser {
    stage: Stage,
    input_bytes: u64,
    /// The gzip stream failed; what it said. Later input is ignored.
    gzip_error: Option<String>,
    /// Parts joined after the bytes fed here ([`Parser::absorb_part`]): read by as many more
    /// workers.
    parts: u32,
    reader: Reader,
    /// The input's size, when told ([`Parser::expect_size`]).
    expect: Option<u64>,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    pub fn new() -> Self {
        Parser {
            stage: Stage::Sniff(Vec::new()),
            input_bytes: 0,
            gzip_error: None,
            parts: 0,
            reader: Reader::default(),
            expect: None,
        }
    }

    /// The size of the input in bytes, when it is known before it is read (a file's length): a
    /// plain JSON input's columns are then reserved for the whole of it, from what its first part
    /// holds, instead of doubling as they grow (see `build.rs`). Only memory and time depend on it;
    /// a wrong size costs a copy or spare room, never a different model. A gzip input's offsets
    /// count inflated bytes, so its compressed size is not used.
    pub fn expect_size(&mut self, bytes: u64) {
        self.expect = Some(bytes);
        if let Stage::Plain(json) = &mut self.stage {
            json.builder.expect = Some((0, bytes));
        }
    }

    /// Bytes fed so far.
    pub fn bytes_fed(&self) -> u64 {
        self.input_bytes
    }

    /// Trace events read so far (for progress reports).
    pub fn events_read(&self) -> u64 {
        match &self.stage {
            Stage::Sniff(_) => 0,
            Stage::Plain(j) => j.builder.events_total(),
            Stage::Gzip(g) => g.get_ref().builder.events_total(),
            Stage::Inflated(j) => j.builder.events_total(),
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) {
        self.input_bytes += chunk.len() as u64;
        if let Stage::Sniff(head) = &mut self.stage {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return;
            }
            let head = std::mem::take(head);
            let json = self.json_stage();
            self.stage = if head[..2] == [0x1f, 0x8b] {
                Stage::Gzip(Box::new(flate2::write::MultiGzDecoder::new(json)))
            } else {
                let mut json = json;
                json.builder.expect = self.expect.map(|n| (0, n));
                Stage::Plain(Box::new(json))
            };
            self.push(&head);
            return;
        }
        self.push(chunk);
    }

    fn json_stage(&self) -> JsonStage {
        let mut json = JsonStage::new();
        json.builder.reader = self.reader;
        json
    }

    /// Feeds JSON that the caller inflated from a gzip file, `compressed` bytes of which it has
    /// read so far: the model, the statistics and the diagnostics are those `feed` gives on the
    /// file itself (tested), as long as the inflater did not fail. A failed inflate is not
    /// reported here: the caller feeds the file to a new parser instead, whose inflater says
    /// what is wrong and keeps what can be read, as the command line does. An error when plain
    /// bytes were fed before.
    pub fn feed_inflated(&mut self, json: &[u8], compressed: u64) -> Result<(), &'static str> {
        if matches!(&self.stage, Stage::Sniff(head) if head.is_empty()) {
            self.stage = Stage::Inflated(Box::new(self.json_stage()));
        }
        match &mut self.stage {
            Stage::Inflated(j) => {
                j.feed(json);
                self.input_bytes = compressed;
                Ok(())
            }
            _ => Err("inflated JSON cannot follow the bytes of a file"),
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        match &mut self.stage {
            Stage::Sniff(_) => unreachable!("sniffing ends before bytes are pushed"),
            Stage::Plain(j) => j.feed(bytes),
            // `feed` after `feed_inflated`: taken as more inflated JSON.
            Stage::Inflated(j) => j.feed(bytes),
            Stage::Gzip(g) => {
                if self.gzip_error.is_none() {
                    if let Err(e) = g.write_all(bytes) {
                        self.gzip_error = Some(e.to_string());
                    }
                }
            }
        }
    }

    /// A parser that reads events with `reader` instead of the default.
    pub fn with_reader(reader: Reader) -> Self {
        Parser {
            reader,
            ..Parser::new()
        }
    }

    /// Joins a part read elsewhere ([`Part::encode`]) that starts where the bytes fed so far end:
    /// the result is what feeding the part's bytes would have given. `Ok(false)` when it cannot
    /// be joined exactly (the input is gzip, the part does not start here, the bytes so far do
    /// not end between two events, `B`/`E` events): nothing changed, and the caller feeds the
    /// bytes instead. A buffer that is not a part is an error. Bytes fed afterwards, or the next
    /// part, follow the part's last byte.
    ///
    /// The buffer is kept: its args' bytes become the model's where they lie, the rest is given
    /// back (see [`crate::model::ArgStore`]'s `adopt`).
    pub fn absorb_part(&mut self, part: Vec<u8>) -> Result<bool, PartError> {
        let (start, mut stage, encoded) = codec::decode(&part)?;
        // Where the args' bytes lie in the buffer, for when it is no longer borrowed.
        let at = encoded.args_bytes.as_ptr() as usize - part.as_ptr() as usize;
        let args = at..at + encoded.args_bytes.len();
        let pending = match &mut self.stage {
            Stage::Sniff(head) if head.is_empty() && start == 0 => {
                self.input_bytes = stage.json_bytes;
                let pending = stage.builder.hold(&encoded);
                self.stage = Stage::Plain(Box::new(stage));
                pending
            }
            Stage::Plain(mine) if mine.can_take(&stage, start) => {
                self.input_bytes += stage.json_bytes;
                self.parts += 1;
                mine.take_encoded(stage, &encoded)
            }
            _ => return Ok(false),
        };
        if let (Some(pending), Stage::Plain(json)) = (pending, &mut self.stage) {
            json.builder.args.adopt(pending, part, args);
        }
        Ok(true)
    }

    /// Ends the input and builds the model; an error only when the input is not a trace.
    pub fn finish(mut self) -> Result<Trace, ParseError> {
        if let Stage::Sniff(head) = &mut self.stage {
            let head = std::mem::take(head);
            self.stage = Stage::Plain(Box::new(self.json_stage()));
            self.push(&head);
        }
        let gzipped = matches!(self.stage, Stage::Gzip(_) | Stage::Inflated(_));
        let (json, gzip_end_error) = match self.stage {
            Stage::Sniff(_) => unreachable!("sniffing was ended above"),
            Stage::Plain(j) | Stage::Inflated(j) => (*j, None),
            Stage::Gzip(mut g) => {
                let end = if self.gzip_error.is_none() {
                    g.try_finish().err()
                } else {
                    None
                };
                let j = std::mem::replace(g.get_mut(), JsonStage::new());
                (j, self.gzip_error.or(end.map(|e| e.to_string())))
            }
        };
        let parts = self.parts;
        finish_stage(json, self.input_bytes, gzipped, gzip_end_error).map(|mut t| {
            t.stats.threads = 1 + parts;
            t
        })
    }
}

/// Classifies what was read and builds the model: shared by the streaming parser and the
/// parallel one.
fn finish_stage(
    mut json: JsonStage,
    input_bytes: u64,
    gzipped: bool,
    gzip_end_error: Option<String>,
) -> Result<Trace, ParseError> {
    if input_bytes == 0 {
        return Err(err(ErrorKind::Empty, "the file is empty".into()));
    }
    if gzipped && json.json_bytes == 0 {
        let why = gzip_end_error.unwrap_or_else(|| "no data".into());
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
    // The file is described by its kind and size, never by its bytes or key names: an agent or
    // a web page that can name any file must not read a line of `/etc/shadow` in an error.
    let size = format!("{input_bytes} bytes");
    if let Some(b) = json.splitter.not_json() {
        let what = describe_bytes(&json.head, b);
        return Err(err(
            ErrorKind::NotJson,
            format!(
                "not a trace: {what}{inside}, {size} (a PyTorch trace is JSON starting with '{{' or '[')"
            ),
        ));
    }
    if json.splitter.form() == Form::Unknown {
        return Err(err(
            ErrorKind::Empty,
            format!("the file holds only whitespace{inside}"),
        ));
    }
    if !json.splitter.saw_events() {
        let detail = if json.splitter.complete() {
            "a JSON object without a traceEvents array"
        } else {
            "a JSON object that ends before any traceEvents array"
        };
        return Err(err(
            ErrorKind::NotATrace,
            format!("not a trace: {detail}{inside}, {size}"),
        ));
    }
    if json.builder.looks_like_other_json() {
        return Err(err(
            ErrorKind::NotATrace,
            format!("not a trace: a JSON array whose elements are not trace events (no 'ph' field){inside}, {size}"),
        ));
    }

    let mut truncated = false;
    if let Some((offset, len)) = json.splitter.pending() {
        truncated = true;
        json.builder
            .diagnostics
            .add(DiagKind::Truncated, offset, || {
                format!("the file ends inside an event ({len} bytes of it); that event is skipped")
            });
    } else if !json.splitter.complete() {
        truncated = true;
        let at = json.splitter.bytes_seen();
        let what = if json.splitter.inside_events() {
            "the file ends inside the event array (no closing ']')"
        } else {
            "the file ends before the closing '}'"
        };
        json.builder
            .diagnostics
            .add(DiagKind::Truncated, at, || what.into());
    }
    if let Some(e) = gzip_end_error {
        truncated = true;
        let at = json.json_bytes;
        json.builder.diagnostics.add(DiagKind::Truncated, at, || {
            format!("the gzip stream ends early or is damaged ({e}); everything before is kept")
        });
    }
    let stats = ParseStats {
        input_bytes,
        json_bytes: json.json_bytes,
        gzipped,
        truncated,
        threads: 1,
        ..ParseStats::default()
    };
    Ok(json.builder.finish(stats))
}

fn err(kind: ErrorKind, message: String) -> ParseError {
    ParseError { kind, message }
}

/// Names what kind of file that is not JSON this is, from its first bytes (never quoting them).
fn describe_bytes(head: &[u8], first: u8) -> &'static str {
    let starts = |m: &[u8]| head.starts_with(m);
    if starts(b"\x89PNG") {
        "a PNG image"
    } else if starts(&[0xFF, 0xD8, 0xFF]) {
        "a JPEG image"
    } else if starts(b"GIF8") {
        "a GIF image"
    } else if starts(b"%PDF") {
        "a PDF document"
    } else if starts(b"PK\x03\x04") {
        "a zip archive"
    } else if crate::snapshot::looks_like_pickle(head) {
        "a Python pickle (a memory snapshot? `sightline snapshot` reads those)"
    } else if first == b'<' {
        "an HTML or XML document"
    } else if first.is_ascii_graphic() {
        "text"
    } else {
        "binary data"
    }
}

/// What the direct reader on `path` reads of the event at the start of `text` (its end, flags,
/// the values of the keys the model reads and the args' members, as spans), or `None` where it
/// refuses. For the browser tests: the crate's unit tests check every path against the oracle
/// natively, and the wasm SIMD search runs only in a browser, where it is checked against the
/// portable one with this.
#[doc(hidden)]
pub fn direct_read_spans(path: SimdPath, text: &[u8]) -> Option<String> {
    let (mut slots, mut args) = (event::Slots::default(), Vec::new());
    let read = direct::read_event_with(path, text, &mut slots, &mut args)?;
    Some(format!("{read:?} {slots:?} {args:?}"))
}

/// Parses a whole buffer: a convenience for tests and small inputs.
pub fn parse_bytes(bytes: &[u8]) -> Result<Trace, ParseError> {
    let mut p = Parser::new();
    p.expect_size(bytes.len() as u64);
    p.feed(bytes);
    p.finish()
}
