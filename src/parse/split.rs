//! Splits a JSON trace document, fed in arbitrary chunks, into its events.
//!
//! serde_json cannot hand out a top-level array's elements lazily, so this small state machine walks
//! the envelope itself: it finds `traceEvents` among the top-level keys (or takes a bare array), cuts
//! the array into one byte slice per element, and passes each complete element on. The top-level
//! keys other than `traceEvents` are passed on whole (they are small: device properties, rank, ...).
//!
//! Only the element being cut is ever buffered, so memory is bounded by the largest single event.
//! The scanner never recurses; nesting depth is a counter.

use memchr::{memchr2, memchr3};

/// A metadata value larger than this is skipped rather than kept (its bytes are still scanned).
const MAX_META_BYTES: usize = 16 << 20;

/// Receives what the splitter finds.
pub(crate) trait Sink {
    /// A complete element of the event array starting at byte `offset`; `is_object` tells whether
    /// it began with `{`.
    fn element(&mut self, bytes: &[u8], offset: u64, is_object: bool);
    /// The fast path: `bytes` start with an event's `{` and run to the end of the chunk. When the
    /// sink can read a whole event there, it takes it and returns its length; `None` sends the
    /// event down the general path ([`Sink::element`] once its end is found). Both paths must end
    /// an event at the same byte, so the result does not depend on where chunks are cut.
    fn element_prefix(&mut self, bytes: &[u8], offset: u64) -> Option<usize>;
    /// A top-level key other than `traceEvents` and its raw value (`None` when it was too large).
    fn meta(&mut self, key: &str, value: Option<&[u8]>, offset: u64);
    /// A second `traceEvents` array begins at `offset` (its events are read after the first's).
    fn events_again(&mut self, offset: u64);
    /// Something after the end of the document.
    fn trailing(&mut self, offset: u64);
}

/// What kind of top-level document this is, as far as seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Unknown,
    Object,
    Array,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Start,
    /// In the top-level object, before a key (or `}`).
    Key,
    /// Inside a top-level key's string.
    InKey,
    Colon,
    /// Before a top-level value.
    Value,
    /// Inside a generic top-level value being captured.
    InValue,
    /// In the event array, between elements.
    Events,
    /// Inside an object element of the event array.
    InEvent,
    /// Inside a non-object element of the event array.
    InOther,
    Done,
    /// Bytes after the end of the document were reported; the rest of the input is ignored (so
    /// that they are reported once, however the input is chunked).
    Trailing,
    /// The first bytes were not JSON of a trace; `first_byte` says what they were.
    NotJson,
}

/// Scans one JSON value that may span chunks: strings, numbers, literals, objects and arrays.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ValueScan {
    pub(super) depth: u32,
    pub(super) in_str: bool,
    pub(super) esc: bool,
    /// The value is a scalar (number or literal): it ends at the first delimiter.
    pub(super) scalar: bool,
    pub(super) started: bool,
}

impl ValueScan {
    /// Scans `bytes`; returns the index just past the end of the value if it ends here.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut i = 0;
        if !self.started {
            self.started = true;
            match bytes.first()? {
                b'{' | b'[' => self.depth = 1,
                b'"' => self.in_str = true,
                _ => self.scalar = true,
            }
            i = 1;
        }
        while i < bytes.len() {
            let b = bytes[i];
            if self.esc {
                self.esc = false;
            } else if self.in_str {
                if b == b'\\' {
                    self.esc = true;
                } else if b == b'"' {
                    self.in_str = false;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
            } else if self.scalar {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    return Some(i);
                }
            } else {
                match b {
                    b'"' => self.in_str = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        None
    }
}

/// Scans one event object quickly: only quotes and braces matter for finding its end.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct ObjectScan {
    pub(super) depth: u32,
    pub(super) in_str: bool,
    pub(super) esc: bool,
}

impl ObjectScan {
    /// Starts just after the opening brace.
    fn new() -> Self {
        ObjectScan {
            depth: 1,
            in_str: false,
            esc: false,
        }
    }

    /// Scans `bytes`; returns the index just past the closing brace if it is here.
    fn scan(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut i = 0;
        if self.esc {
            self.esc = false;
            i = 1;
        }
        while i < bytes.len() {
            if self.in_str {
                let k = memchr2(b'"', b'\\', &bytes[i..])?;
                let j = i + k;
                if bytes[j] == b'\\' {
                    if j + 1 >= bytes.len() {
                        self.esc = true;
                        return None;
                    }
                    i = j + 2;
                } else {
                    self.in_str = false;
                    i = j + 1;
                }
            } else {
                let k = memchr3(b'"', b'{', b'}', &bytes[i..])?;
                let j = i + k;
                match bytes[j] {
                    b'"' => self.in_str = true,
                    b'{' => self.depth += 1,
                    _ => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            return Some(j + 1);
                        }
                    }
                }
                i = j + 1;
            }
        }
        None
    }
}

pub(crate) struct Splitter {
    pub(super) state: State,
    pub(super) form: Form,
    /// Bytes consumed before the current chunk.
    pub(super) offset: u64,
    /// The part of the element or key being cut that came in earlier chunks.
    pub(super) carry: Vec<u8>,
    /// Offset of the element being cut.
    pub(super) cap_offset: u64,
    /// The capture grew past [`MAX_META_BYTES`]; its bytes are no longer kept.
    pub(super) cap_overflow: bool,
    pub(super) value: ValueScan,
    pub(super) object: ObjectScan,
    pub(super) key: String,
    pub(super) key_esc: bool,
    pub(super) saw_events: bool,
    pub(super) first_byte: Option<u8>,
    pub(super) bom: u8,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Splitter {
    pub(crate) fn new() -> Self {
        Splitter {
            state: State::Start,
            form: Form::Unknown,
            offset: 0,
            carry: Vec::new(),
            cap_offset: 0,
            cap_overflow: false,
            value: ValueScan::default(),
            object: ObjectScan::new(),
            key: String::new(),
            key_esc: false,
            saw_events: false,
            first_byte: None,
            bom: 0,
        }
    }

    /// A splitter that starts between two elements of the event array at byte `offset`, for a
    /// part of the input parsed on its own (the part before it must end there, which the caller
    /// checks with [`Splitter::between_events`]).
    pub(crate) fn in_events(form: Form, offset: u64) -> Self {
        Splitter {
            state: State::Events,
            form,
            offset,
            saw_events: true,
            ..Splitter::new()
        }
    }

    /// True when the input so far ends between two elements of the event array.
    pub(crate) fn between_events(&self) -> bool {
        self.state == State::Events
    }

    pub(crate) fn form(&self) -> Form {
        self.form
    }

    /// The document's first significant byte, when it was not `{` or `[`.
    pub(crate) fn not_json(&self) -> Option<u8> {
        (self.state == State::NotJson).then_some(self.first_byte.unwrap_or(0))
    }

    /// True once the `traceEvents` array (or a bare array) was entered.
    pub(crate) fn saw_events(&self) -> bool {
        self.saw_events
    }

    /// True when the document ended properly (closing bracket of the events and of the object).
    pub(crate) fn complete(&self) -> bool {
        matches!(self.state, State::Done | State::Trailing)
    }

    /// True when the input stopped inside the event array or in the middle of an event.
    pub(crate) fn inside_events(&self) -> bool {
        matches!(self.state, State::Events | State::InEvent | State::InOther)
    }

    /// Offset and length of an element cut off by the end of input, if any.
    pub(crate) fn pending(&self) -> Option<(u64, usize)> {
        matches!(self.state, State::InEvent | State::InOther)
            .then_some((self.cap_offset, self.carry.len()))
    }

    pub(crate) fn bytes_seen(&self) -> u64 {
        self.offset
    }

    pub(crate) fn feed(&mut self, chunk: &[u8], sink: &mut impl Sink) {
        let mut i = 0;
        // Start of the capture within this chunk, when one is running.
        let mut cap_from: Option<usize> = matches!(
            self.state,
            State::InKey | State::InEvent | State::InOther | State::InValue
        )
        .then_some(0);
        while i < chunk.len() {
            match self.state {
                State::Start => {
                    let b = chunk[i];
                    // A UTF-8 byte order mark is allowed before the document.
                    if self.bom < 3 && b == [0xEF, 0xBB, 0xBF][self.bom as usize] {
                        self.bom += 1;
                        i += 1;
                        continue;
                    }
                    if is_ws(b) {
                        i += 1;
                        continue;
                    }
                    self.first_byte = Some(b);
                    match b {
                        b'{' => {
                            self.form = Form::Object;
                            self.state = State::Key;
                        }
                        b'[' => {
                            self.form = Form::Array;
                            self.saw_events = true;
                            self.state = State::Events;
                        }
                        _ => {
                            self.state = State::NotJson;
                            break;
                        }
                    }
                    i += 1;
                }
                State::Key => {
                    let b = chunk[i];
                    i += 1;
                    match b {
                        b'"' => {
                            self.key.clear();
                            self.carry.clear();
                            self.state = State::InKey;
                            cap_from = Some(i);
                        }
                        b'}' => self.state = State::Done,
                        _ if is_ws(b) || b == b',' => {}
                        _ => {
                            sink.trailing(self.offset + i as u64 - 1);
                            self.state = State::Trailing;
                        }
                    }
                }
                State::InKey => {
                    let from = cap_from.unwrap_or(0);
                    let mut end = None;
                    let mut j = i;
                    while j < chunk.len() {
                        let b = chunk[j];
                        if self.key_esc {
                            self.key_esc = false;
                        } else if b == b'\\' {
                            self.key_esc = true;
                        } else if b == b'"' {
                            end = Some(j);
                            break;
                        }
                        j += 1;
                    }
                    match end {
                        Some(j) => {
                            self.carry.extend_from_slice(&chunk[from..j]);
                            self.key = String::from_utf8_lossy(&self.carry).into_owned();
                            self.carry.clear();
                            cap_from = None;
                            self.state = State::Colon;
                            i = j + 1;
                        }
                        None => i = chunk.len(),
                    }
                }
                State::Colon => {
                    let b = chunk[i];
                    i += 1;
                    if b == b':' {
                        self.state = State::Value;
                    } else if !is_ws(b) {
                        sink.trailing(self.offset + i as u64 - 1);
                        self.state = State::Trailing;
                    }
                }
                State::Value => {
                    let b = chunk[i];
                    if is_ws(b) {
                        i += 1;
                        continue;
                    }
                    if b == b'[' && self.key == "traceEvents" {
                        if self.saw_events {
                            sink.events_again(self.offset + i as u64);
                        }
                        self.saw_events = true;
                        self.state = State::Events;
                        i += 1;
                    } else {
                        self.begin_capture(i, &mut cap_from);
                        self.value = ValueScan::default();
                        self.state = State::InValue;
                    }
                }
                State::InValue => {
                    let from = cap_from.unwrap_or(0);
                    match self.value.scan(&chunk[i..]) {
                        Some(k) => {
                            let end = i + k;
                            let at = self.cap_offset;
                            let key = std::mem::take(&mut self.key);
                            if self.cap_overflow {
                                sink.meta(&key, None, at);
                            } else if self.carry.is_empty() {
                                sink.meta(&key, Some(&chunk[from..end]), at);
                            } else {
                                self.carry.extend_from_slice(&chunk[from..end]);
                                sink.meta(&key, Some(&self.carry), at);
                            }
                            self.carry.clear();
                            cap_from = None;
                            self.state = State::Key;
                            i = end;
                        }
                        None => i = chunk.len(),
                    }
                }
                State::Events => {
                    let b = chunk[i];
                    if is_ws(b) || b == b',' {
                        i += 1;
                        continue;
                    }
                    match b {
                        b'{' => {
                            if let Some(n) =
                                sink.element_prefix(&chunk[i..], self.offset + i as u64)
                            {
                                i += n;
                                continue;
                            }
                            self.begin_capture(i, &mut cap_from);
                            self.object = ObjectScan::new();
                            self.state = State::InEvent;
                            i += 1;
                        }
                        b']' => {
                            self.state = if self.form == Form::Array {
                                State::Done
                            } else {
                                State::Key
                            };
                            i += 1;
                        }
                        _ => {
                            self.begin_capture(i, &mut cap_from);
                            self.value = ValueScan::default();
                            self.state = State::InOther;
                        }
                    }
                }
                State::InEvent | State::InOther => {
                    let from = cap_from.unwrap_or(0);
                    let found = if self.state == State::InEvent {
                        self.object.scan(&chunk[i..])
                    } else {
                        self.value.scan(&chunk[i..])
                    };
                    match found {
                        Some(k) => {
                            let end = i + k;
                            let is_object = self.state == State::InEvent;
                            let at = self.cap_offset;
                            if self.carry.is_empty() {
                                sink.element(&chunk[from..end], at, is_object);
                            } else {
                                self.carry.extend_from_slice(&chunk[from..end]);
                                sink.element(&self.carry, at, is_object);
                                self.carry.clear();
                            }
                            cap_from = None;
                            self.state = State::Events;
                            i = end;
                        }
                        None => i = chunk.len(),
                    }
                }
                State::Done => {
                    if !is_ws(chunk[i]) {
                        // Only the first trailing byte is reported; the rest is ignored.
                        sink.trailing(self.offset + i as u64);
                        self.state = State::Trailing;
                    }
                    i += 1;
                }
                State::Trailing | State::NotJson => break,
            }
        }
        if let Some(from) = cap_from {
            let keep = match self.state {
                State::InValue => !self.cap_overflow,
                State::InKey | State::InEvent | State::InOther => true,
                _ => false,
            };
            if keep {
                self.carry.extend_from_slice(&chunk[from..]);
            }
            if self.state == State::InValue && self.carry.len() > MAX_META_BYTES {
                self.cap_overflow = true;
                self.carry = Vec::new();
            }
        }
        self.offset += chunk.len() as u64;
    }

    fn begin_capture(&mut self, i: usize, cap_from: &mut Option<usize>) {
        self.carry.clear();
        self.cap_overflow = false;
        self.cap_offset = self.offset + i as u64;
        *cap_from = Some(i);
    }
}
