//! The pickle machine: opcodes in, the snapshot's rows out, never a value tree of the whole file.
//!
//! A pickle is a program for a stack machine. This one runs the data-only part of it: containers,
//! strings, numbers, the memo and marks. Every opcode that names or calls a global is refused
//! before anything else happens ([`Refusal`]); nothing here can run code, import or look up a
//! name, because nothing here knows any.
//!
//! Streaming: a container is complete when it is attached to its parent (`APPEND(S)`,
//! `SETITEM(S)`, a tuple), since pickle writes a value whole before the operation that stores
//! it. At that moment a list of frames becomes an interned stack id, and a dict that is a trace
//! entry, a block, a segment or an annotation a row of the builder's columns ([`Value::Row`]), a
//! frame dict an interned frame id, so what stays on the stack is one small value per item. A
//! list of rows keeps a run of row ids (`start`, `len`), not the rows. What the pickler batches
//! between a `MARK` and an `APPENDS` (1,000 items) is all that is ever held generically.
//!
//! A dict is read sooner where it can be: the pickler gives a dict's items in batches of 1,000
//! (`SETITEMS`), so a first batch whose keys make a whole row or frame is read into it at once,
//! from the stack, and the dict is never built ([`Value::NewDict`] until then): a trace entry,
//! the bulk of a snapshot, costs no allocation. Keys given to it in a later batch (a dict of
//! over 1,000 keys, the snapshot's own coming first) are counted, not read.
//!
//! The memo (`memo`) keeps what a later `GET` may ask for: strings (as interned ids), numbers,
//! frames, stacks, rows, and generic containers up to `value::MEMO_NODES` values. A `GET` of a
//! container that is not finished, or of a larger generic one, is `None` and counted
//! ([`DiagKind::Reference`]); `_dump_snapshot`'s pickles only share strings, frames and frame
//! lists.
//!
//! No recursion on input structure: nesting lives on the machine's stack, and a generic value
//! nested past [`MAX_DEPTH`] is dropped when attached, so no conversion, copy or drop of a
//! value recurses deeper than that.

use super::build::Builder;
use super::memo::{Memo, Slot};
use super::model::DiagKind;
use super::value::{Container, Value, MAX_DEPTH, NO_MEMO};
use std::fmt;

/// How far down the stack a `GET` of an unfinished container looks for it.
const SEARCHED: usize = 4096;

/// An opcode that names or calls code: the file is refused, nothing of it is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub opcode: &'static str,
    pub offset: u64,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused: this pickle names or calls code (opcode {} at byte {}); a memory snapshot \
             holds only plain data, and nothing in the file was run",
            self.opcode, self.offset
        )
    }
}

/// Where the machine stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    Running,
    /// `STOP` was read: the value is complete; later bytes are counted as trailing.
    Stopped,
    /// The bytes could not be taken further (see the diagnostics); what was read is kept.
    Broken,
    Refused(Refusal),
}

/// Opcodes that name, import or call code, refused on sight.
fn refused_name(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}

/// The opcode's name, for messages about opcodes this machine reads.
fn op_name(op: u8) -> &'static str {
    match op {
        b'a' => "APPEND",
        b'e' => "APPENDS",
        b's' => "SETITEM",
        b'u' => "SETITEMS",
        b't' => "TUPLE",
        0x85 => "TUPLE1",
        0x86 => "TUPLE2",
        0x87 => "TUPLE3",
        b'd' => "DICT",
        b'l' => "LIST",
        b'0' => "POP",
        b'1' => "POP_MARK",
        b'2' => "DUP",
        0x94 => "MEMOIZE",
        b'p' => "PUT",
        b'q' => "BINPUT",
        b'r' => "LONG_BINPUT",
        b'g' => "GET",
        b'h' => "BINGET",
        b'j' => "LONG_BINGET",
        b'.' => "STOP",
        b'I' => "INT",
        b'L' => "LONG",
        b'F' => "FLOAT",
        _ => "an opcode",
    }
}

/// The machine: a carry of bytes not yet taken apart, the stack, the marks and the memo, and the
/// builder its rows go to.
pub(crate) struct Machine {
    /// The bytes of an opcode the last chunk cut, waiting for the rest.
    carry: Vec<u8>,
    /// Stream offset of the first byte not yet taken apart.
    base: u64,
    stack: Vec<Value>,
    /// Stack lengths at each open `MARK`.
    marks: Vec<usize>,
    memo: Memo,
    pub state: State,
    pub protocol: u8,
    /// The first bytes of the stream, to say what a non-snapshot is.
    pub head: Vec<u8>,
    pub bytes: u64,
    pub trailing: u64,
    pub builder: Builder,
    /// The finished top-level value.
    pub root: Option<Value>,
}

/// Result of one step: go on, wait for more bytes, or stop.
enum Step {
    Next,
    More,
    Halt,
}

impl Machine {
    pub fn new() -> Self {
        Machine {
            carry: Vec::new(),
            base: 0,
            stack: Vec::new(),
            marks: Vec::new(),
            memo: Memo::default(),
            state: State::Running,
            protocol: 0,
            head: Vec::new(),
            bytes: 0,
            trailing: 0,
            builder: Builder::new(),
            root: None,
        }
    }

    /// Whether more input is read (counted, at least): not after a break or a refusal.
    pub fn takes_more(&self) -> bool {
        matches!(self.state, State::Running | State::Stopped)
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        // Bytes after a break are not counted: how many of them arrive depends on how the
        // input was cut into chunks.
        match self.state {
            State::Running => {}
            State::Stopped => {
                self.bytes += bytes.len() as u64;
                self.trailing += bytes.len() as u64;
                return;
            }
            State::Broken | State::Refused(_) => return,
        }
        if self.head.len() < 16 {
            let n = (16 - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
        }
        self.bytes += bytes.len() as u64;
        let mut rest = bytes;
        if !self.carry.is_empty() {
            // The opcode the last chunk cut is completed from the start of this one, a few bytes
            // at a time: the chunk itself is read where it lies, not copied (in the page, a
            // 16 MB copy in wasm memory).
            let mut carry = std::mem::take(&mut self.carry);
            let (mut added, mut want) = (0, 64);
            loop {
                let upto = want.min(bytes.len());
                carry.extend_from_slice(&bytes[added..upto]);
                added = upto;
                let held = carry.len() - added;
                let Some(pos) = self.run(&carry, bytes.len() - added) else {
                    return;
                };
                if pos >= held {
                    rest = &bytes[pos - held..];
                    carry.clear();
                    self.carry = carry;
                    break;
                }
                carry.drain(..pos);
                if added == bytes.len() {
                    self.carry = carry;
                    return;
                }
                want *= 2;
            }
        }
        if let Some(pos) = self.run(rest, 0) {
            self.carry.extend_from_slice(&rest[pos..]);
        }
    }

    /// Runs the opcodes `data` holds whole, `data[0]` at stream offset `self.base`; the bytes they
    /// took, or `None` once the machine stops (`after`: the chunk's bytes past `data`, left
    /// unread with the rest).
    fn run(&mut self, data: &[u8], after: usize) -> Option<usize> {
        let mut pos = 0;
        loop {
            match self.step(data, &mut pos) {
                Step::Next => {}
                Step::More => {
                    self.base += pos as u64;
                    return Some(pos);
                }
                Step::Halt => {
                    let rest = (data.len() - pos + after) as u64;
                    if self.state == State::Stopped {
                        self.trailing += rest;
                    } else {
                        self.bytes -= rest;
                    }
                    return None;
                }
            }
        }
    }

    fn malformed(&mut self, detail: String) -> Step {
        self.builder.diag(DiagKind::Malformed, || {
            format!("{detail}; nothing after it is read")
        });
        self.state = State::Broken;
        Step::Halt
    }

    /// The `N` bytes after the opcode at `*pos`, moving `*pos` past them; `None` (and `*pos`
    /// unmoved) until they have arrived.
    #[inline]
    fn take<const N: usize>(data: &[u8], pos: &mut usize) -> Option<[u8; N]> {
        let a = data.get(*pos + 1..*pos + 1 + N)?;
        *pos += 1 + N;
        Some(a.try_into().expect("N bytes"))
    }

    /// Where the argument of an opcode that gives its length in `width` bytes lies.
    fn take_sized(data: &[u8], pos: &mut usize, width: usize) -> Option<std::ops::Range<usize>> {
        let arg = data.get(*pos + 1..)?;
        let len = match width {
            1 => *arg.first()? as u64,
            4 => u32::from_le_bytes(*arg.first_chunk()?) as u64,
            _ => u64::from_le_bytes(*arg.first_chunk()?),
        };
        let len = usize::try_from(len).ok()?;
        let end = width.checked_add(len)?;
        if arg.len() < end {
            return None;
        }
        let start = *pos + 1 + width;
        *pos += 1 + end;
        Some(start..start + len)
    }

    /// Where the argument of a text opcode lies, up to its newline.
    fn take_line(data: &[u8], pos: &mut usize) -> Option<std::ops::Range<usize>> {
        let start = *pos + 1;
        let n = memchr::memchr(b'\n', &data[start..])?;
        *pos = start + n + 1;
        Some(start..start + n)
    }

    /// Takes one opcode apart at `*pos` and runs it, or says more bytes are needed. Each arm
    /// takes its own argument: the opcodes of a snapshot's bulk (`BINGET`, `MEMOIZE`,
    /// `EMPTY_DICT`, `MARK`, `SETITEMS`, small integers) go through one dispatch.
    fn step(&mut self, data: &[u8], pos: &mut usize) -> Step {
        let Some(&op) = data.get(*pos) else {
            return Step::More;
        };
        let at = self.base + *pos as u64;
        self.builder.at = at;
        match op {
            b'j' => {
                let Some(a) = Self::take::<4>(data, pos) else {
                    return Step::More;
                };
                self.get(at, u32::from_le_bytes(a) as u64)
            }
            b'h' => {
                let Some([i]) = Self::take::<1>(data, pos) else {
                    return Step::More;
                };
                self.get(at, i as u64)
            }
            0x94 => {
                *pos += 1;
                self.put(self.memo.len() as u64)
            }
            b'}' => {
                *pos += 1;
                self.push(Value::NewDict(NO_MEMO))
            }
            b'(' => {
                *pos += 1;
                self.marks.push(self.stack.len());
                Step::Next
            }
            b'K' => {
                let Some([i]) = Self::take::<1>(data, pos) else {
                    return Step::More;
                };
                self.push(Value::Int(i as i64))
            }
            b'M' => {
                let Some(a) = Self::take::<2>(data, pos) else {
                    return Step::More;
                };
                self.push(Value::Int(u16::from_le_bytes(a) as i64))
            }
            b'J' => {
                let Some(a) = Self::take::<4>(data, pos) else {
                    return Step::More;
                };
                self.push(Value::Int(i32::from_le_bytes(a) as i64))
            }
            0x8a | 0x8b => {
                let Some(r) = Self::take_sized(data, pos, if op == 0x8a { 1 } else { 4 }) else {
                    return Step::More;
                };
                let v = long(&data[r]);
                self.push(v)
            }
            b'e' | b'u' => {
                *pos += 1;
                let Some(m) = self.marks.pop() else {
                    return self.malformed(format!("{} without a MARK", op_name(op)));
                };
                if m == 0 || m > self.stack.len() {
                    return self.malformed(format!("{} with nothing to fill", op_name(op)));
                }
                self.fill(op, m)
            }
            b'a' | b's' => {
                *pos += 1;
                let k = if op == b'a' { 1 } else { 2 };
                let floor = self.marks.last().copied().unwrap_or(0);
                if self.stack.len() < floor + k + 1 {
                    return self.malformed(format!("{} on a short stack", op_name(op)));
                }
                self.fill(op, self.stack.len() - k)
            }
            b'X' | 0x8c | 0x8d | b'T' | b'U' => {
                let width = match op {
                    b'X' | b'T' => 4,
                    0x8d => 8,
                    _ => 1,
                };
                let Some(r) = Self::take_sized(data, pos, width) else {
                    return Step::More;
                };
                let text = &data[r];
                let id = match std::str::from_utf8(text) {
                    Ok(s) => self.builder.intern(s),
                    Err(_) => {
                        let s = String::from_utf8_lossy(text).into_owned();
                        self.builder.intern(&s)
                    }
                };
                self.push(Value::Str(id))
            }
            b'q' => {
                let Some([i]) = Self::take::<1>(data, pos) else {
                    return Step::More;
                };
                self.put(i as u64)
            }
            b'r' => {
                let Some(a) = Self::take::<4>(data, pos) else {
                    return Step::More;
                };
                self.put(u32::from_le_bytes(a) as u64)
            }
            b'p' | b'g' => {
                let Some(r) = Self::take_line(data, pos) else {
                    return Step::More;
                };
                match (text_index(&data[r]), op) {
                    (Some(id), b'p') => self.put(id),
                    (Some(id), _) => self.get(at, id),
                    (None, b'p') => self.malformed("PUT without an index".into()),
                    (None, _) => self.malformed("GET without an index".into()),
                }
            }
            0x80 => {
                let Some([protocol]) = Self::take::<1>(data, pos) else {
                    return Step::More;
                };
                self.protocol = protocol;
                if protocol > 5 {
                    return self.malformed(format!("pickle protocol {protocol} is unknown"));
                }
                Step::Next
            }
            // Frames only group opcodes for the reader's buffering; the opcodes follow as usual.
            0x95 => match Self::take::<8>(data, pos) {
                Some(_) => Step::Next,
                None => Step::More,
            },
            b'.' => {
                *pos += 1;
                if self.stack.len() != 1 || !self.marks.is_empty() {
                    return self.malformed("STOP with an unfinished stack".into());
                }
                self.root = self.stack.pop().map(Value::boxed);
                self.state = State::Stopped;
                Step::Halt
            }
            b'N' | 0x88 | 0x89 => {
                *pos += 1;
                self.push(match op {
                    b'N' => Value::None,
                    0x88 => Value::Bool(true),
                    _ => Value::Bool(false),
                })
            }
            b'G' => {
                let Some(a) = Self::take::<8>(data, pos) else {
                    return Step::More;
                };
                self.push(Value::Float(f64::from_be_bytes(a)))
            }
            b'I' | b'L' | b'F' => {
                let Some(r) = Self::take_line(data, pos) else {
                    return Step::More;
                };
                let text = std::str::from_utf8(&data[r]).unwrap_or("");
                let text = text.trim_end_matches('L');
                let v = if op == b'F' {
                    text.parse().map(Value::Float).ok()
                } else {
                    match text {
                        "00" => Some(Value::Bool(false)),
                        "01" => Some(Value::Bool(true)),
                        _ => text
                            .parse::<i64>()
                            .map(Value::Int)
                            .ok()
                            .or_else(|| text.parse::<i128>().ok().map(|_| Value::Wide)),
                    }
                };
                match v {
                    Some(v) => self.push(v),
                    None => self.malformed(format!("{} without a number", op_name(op))),
                }
            }
            b'B' | b'C' | 0x8e | 0x96 => {
                let width = match op {
                    b'B' => 4,
                    b'C' => 1,
                    _ => 8,
                };
                match Self::take_sized(data, pos, width) {
                    Some(_) => self.push(Value::Bytes),
                    None => Step::More,
                }
            }
            b']' | b')' => {
                *pos += 1;
                self.push(if op == b']' {
                    Value::List(Container::new())
                } else {
                    Value::Tuple(Container::new())
                })
            }
            0x85..=0x87 => {
                *pos += 1;
                let k = (op - 0x84) as usize;
                if self.stack.len() < k + self.marks.last().copied().unwrap_or(0) {
                    return self.malformed(format!("{} on a short stack", op_name(op)));
                }
                let items = self.take_items(self.stack.len() - k);
                self.push(Value::Tuple(Container::with(items)))
            }
            b't' | b'l' | b'd' => {
                *pos += 1;
                let Some(m) = self.marks.pop() else {
                    return self.malformed(format!("{} without a MARK", op_name(op)));
                };
                let items = self.take_items(m);
                match op {
                    b't' => self.push(Value::Tuple(Container::with(items))),
                    b'l' => {
                        let mut c = Container::new();
                        for v in items {
                            c.push_item(v);
                        }
                        self.push(Value::List(c))
                    }
                    _ => {
                        if items.len() % 2 == 1 {
                            return self.malformed("DICT with a key without a value".into());
                        }
                        self.push(Value::Dict(Container::with(items)))
                    }
                }
            }
            b'0' => {
                *pos += 1;
                if self.marks.last() == Some(&self.stack.len()) {
                    self.marks.pop();
                } else if self.stack.pop().is_none() {
                    return self.malformed("POP on an empty stack".into());
                }
                Step::Next
            }
            b'1' => {
                *pos += 1;
                let Some(m) = self.marks.pop() else {
                    return self.malformed("POP_MARK without a MARK".into());
                };
                self.stack.truncate(m);
                Step::Next
            }
            b'2' => {
                *pos += 1;
                let Some(top) = self.stack.last() else {
                    return self.malformed("DUP on an empty stack".into());
                };
                let copy = match top.copy() {
                    Some(v) => v,
                    None => {
                        self.builder.diag(DiagKind::Reference, || {
                            "DUP of a large value; the copy is read as None".into()
                        });
                        Value::None
                    }
                };
                self.push(copy)
            }
            _ => {
                if let Some(name) = refused_name(op) {
                    self.state = State::Refused(Refusal {
                        opcode: name,
                        offset: at,
                    });
                    return Step::Halt;
                }
                *pos += 1;
                self.malformed(format!("unknown pickle opcode 0x{op:02x} at byte {at}"))
            }
        }
    }

    #[inline]
    fn push(&mut self, v: Value) -> Step {
        self.stack.push(v);
        Step::Next
    }

    /// Finishes the stack's values from `from` on where they are (see the module doc).
    fn finish_items(&mut self, from: usize) {
        // Most batches (a trace entry's keys and values) hold no container.
        if !self.stack[from..].iter().any(Value::is_container) {
            return;
        }
        for i in from..self.stack.len() {
            // Scalars are finished as they are.
            if !self.stack[i].is_container() {
                continue;
            }
            let v = std::mem::replace(&mut self.stack[i], Value::None);
            let done = self.finish(v);
            self.stack[i] = match &done {
                Value::List(c) | Value::Dict(c) | Value::Tuple(c) if c.depth >= MAX_DEPTH => {
                    self.builder.diag(DiagKind::TooDeep, || {
                        format!("values nested deeper than {MAX_DEPTH} levels are not kept")
                    });
                    Value::Lost
                }
                _ => done,
            };
        }
    }

    /// The stack from `from` on, each value finished.
    fn take_items(&mut self, from: usize) -> Vec<Value> {
        self.finish_items(from);
        self.stack.split_off(from)
    }

    /// Attaches the stack's values from `from` on, finished, to the container below them. A
    /// dict's first items that make a row (or a frame) are read into it here, from the stack:
    /// no container is built for it.
    fn fill(&mut self, op: u8, from: usize) -> Step {
        self.finish_items(from);
        let (below, items) = self.stack.split_at_mut(from);
        let Some(target) = below.last_mut() else {
            self.pop_to(from);
            return self.malformed(format!("{} with nothing to fill", op_name(op)));
        };
        let pairs = items.len().is_multiple_of(2);
        match (op, target) {
            (b'a' | b'e', Value::List(c)) => {
                for v in items {
                    c.push_item(std::mem::replace(v, Value::None));
                }
            }
            (b's' | b'u', target @ Value::NewDict(_)) if pairs => {
                let Value::NewDict(memo) = *target else {
                    unreachable!("matched above")
                };
                *target = match self.builder.read_dict(items) {
                    Some(row) => {
                        if (memo as usize) < self.memo.len() {
                            self.memo.set(memo as usize, &row);
                        }
                        row
                    }
                    None => {
                        let mut c = Container::new();
                        c.memo = memo;
                        c.items.reserve_exact(items.len());
                        for v in items {
                            let v = std::mem::replace(v, Value::None);
                            c.count(&v);
                            c.items.push(v);
                        }
                        Value::Dict(c)
                    }
                };
            }
            (b's' | b'u', Value::Dict(c)) if pairs => {
                for v in items {
                    let v = std::mem::replace(v, Value::None);
                    c.count(&v);
                    c.items.push(v);
                }
            }
            // A pickler gives a dict of over 1,000 items in batches of 1,000: the first made it
            // a row or a frame, and the keys of a snapshot's rows and frames come first.
            (b's' | b'u', Value::Row(..) | Value::Frame(_)) if pairs => {
                self.builder.diag(DiagKind::UnknownKey, || {
                    "keys given to a dict after its first batch of items made it a row or a \
                     frame; counted, not kept"
                        .into()
                });
            }
            (_, target) => {
                // The items are not salvaged: what they were for is not known.
                let what = target.type_name();
                self.pop_to(from);
                return self.malformed(format!("{} on {what}", op_name(op)));
            }
        }
        self.pop_to(from);
        Step::Next
    }

    /// Drops the stack's values from `from` on. Nearly all are numbers and ids by now, which
    /// need no dropping: `truncate` would call the values' drop glue out of line for each one,
    /// a tenth of the reading time.
    fn pop_to(&mut self, from: usize) {
        for v in self.stack.drain(from..) {
            if v.is_container() {
                drop(v);
            } else {
                // Forgetting a value that owns nothing leaks nothing.
                std::mem::forget(v);
            }
        }
    }

    /// A value leaves the stack for its parent: rows, frames and stacks are made here, and the
    /// memo gets what a later `GET` would see.
    fn finish(&mut self, v: Value) -> Value {
        let memo = match &v {
            Value::List(c) | Value::Dict(c) | Value::Tuple(c) => c.memo,
            Value::NewDict(memo) => *memo,
            _ => NO_MEMO,
        };
        let v = self.builder.convert(v.boxed());
        if memo != NO_MEMO && (memo as usize) < self.memo.len() {
            self.memo.set(memo as usize, &v);
        }
        v
    }

    fn put(&mut self, id: u64) -> Step {
        let Some(top) = self.stack.last_mut() else {
            return self.malformed("PUT on an empty stack".into());
        };
        // Slots are kept in a vector: a pickler numbers them from 0 (MEMOIZE always does), so
        // an index far past the end is damage, not a reason to allocate.
        let Ok(i) = usize::try_from(id) else {
            return self.malformed("a memo index out of range".into());
        };
        if i > self.memo.len() + (1 << 20) {
            return self.malformed("a memo index out of range".into());
        }
        // A container's slot is filled in when it is finished.
        match top {
            Value::NewDict(memo) => *memo = i as u32,
            Value::List(c) | Value::Dict(c) | Value::Tuple(c) => c.memo = i as u32,
            v => {
                self.memo.set(i, v);
                return Step::Next;
            }
        }
        self.memo.set_slot(i, Slot::PENDING);
        Step::Next
    }

    /// `GET`: a copy of what the memo holds. Inlined for the strings, frames, stacks and rows
    /// nearly every `GET` of a snapshot gives.
    #[inline(always)]
    fn get(&mut self, at: u64, id: u64) -> Step {
        let slot = usize::try_from(id).ok().and_then(|i| self.memo.get(i));
        match slot.and_then(Slot::id_value) {
            Some(v) => self.push(v),
            None => self.get_other(at, id),
        }
    }

    #[cold]
    fn get_other(&mut self, at: u64, id: u64) -> Step {
        let slot = usize::try_from(id).ok().and_then(|i| self.memo.get(i));
        let v = match slot {
            Some(s) if s != Slot::PENDING => self.memo.value(s).unwrap_or(Value::Lost),
            Some(_) => {
                // A container not finished yet: one still on the stack without an open mark
                // right above it (its own batch being filled) is complete, a value waiting for
                // its parent's SETITEMS or APPENDS, and is finished now, in place.
                // Only the top of the stack is searched (a pickler's batch is 1,000 items), so
                // no file makes the search quadratic; marks are in stack order.
                let low = self.stack.len().saturating_sub(SEARCHED);
                let found = self.stack[low..]
                    .iter()
                    .rposition(|v| match v {
                        Value::List(c) | Value::Dict(c) | Value::Tuple(c) => c.memo as u64 == id,
                        Value::NewDict(memo) => *memo as u64 == id,
                        _ => false,
                    })
                    .map(|p| p + low);
                match found {
                    Some(p) if self.marks.binary_search(&(p + 1)).is_err() => {
                        let v = std::mem::replace(&mut self.stack[p], Value::None);
                        let done = self.finish(v);
                        let copy = done.copy();
                        self.stack[p] = done;
                        copy.unwrap_or(Value::Lost)
                    }
                    _ => Value::Lost,
                }
            }
            None => {
                return self.malformed(format!("GET of a memo slot never set at byte {at}"));
            }
        };
        if matches!(v, Value::Lost) {
            self.builder.diag(DiagKind::Reference, || {
                "a reference to a value that is not kept (unfinished, or large); read as None"
                    .into()
            });
        }
        self.push(v)
    }

    /// Ends the input: the finished value, or what an unfinished stack holds, closed as if each
    /// open container ended where the input does. Containers that were still being filled are
    /// flagged, and the builder drops the rows among them (an entry cut before its `frames`
    /// would otherwise carry the wrong stack).
    pub fn salvage(&mut self) -> Option<Value> {
        if self.root.is_some() {
            return self.root.take();
        }
        if self.stack.is_empty() {
            return None;
        }
        for v in &mut self.stack {
            if let Value::NewDict(_) = v {
                *v = std::mem::replace(v, Value::None).boxed();
            }
        }
        for &m in &self.marks {
            if let Some(c) = m.checked_sub(1).and_then(|p| self.stack[p].container_mut()) {
                c.unfinished = true;
            }
        }
        if let Some(c) = self.stack.last_mut().and_then(Value::container_mut) {
            if c.items.is_empty() && c.run.is_none() {
                c.unfinished = true;
            }
        }
        while let Some(m) = self.marks.pop() {
            let items = self.take_items(m);
            match self.stack.last_mut() {
                Some(Value::List(c)) => {
                    for v in items {
                        c.push_item(v);
                    }
                }
                Some(Value::Dict(c)) => {
                    let even = items.len() - items.len() % 2;
                    for v in items.into_iter().take(even) {
                        c.count(&v);
                        c.items.push(v);
                    }
                }
                _ => {}
            }
        }
        // Single-item forms still open: `list item` or `dict key value`.
        while self.stack.len() > 1 {
            let top = self.stack.pop().expect("len > 1");
            let top = self.finish(top);
            let n = self.stack.len();
            let under_dict = n >= 2 && matches!(self.stack[n - 2], Value::Dict(_));
            match &mut self.stack[n - 1] {
                Value::List(c) => c.push_item(top),
                Value::Str(_) if under_dict => {
                    let key = self.stack.pop().expect("n >= 2");
                    if let Some(Value::Dict(c)) = self.stack.last_mut() {
                        c.items.push(key);
                        c.items.push(top);
                    }
                }
                _ => {}
            }
        }
        self.stack.pop()
    }
}

/// `LONG1`/`LONG4`'s little-endian two's complement.
fn long(digits: &[u8]) -> Value {
    if digits.len() > 8 {
        let sign = if digits.last().is_some_and(|b| b & 0x80 != 0) {
            0xff
        } else {
            0
        };
        // Sign bytes past the eighth do not widen the value.
        if digits[8..].iter().all(|&b| b == sign) && (digits[7] & 0x80 == sign & 0x80) {
            return long(&digits[..8]);
        }
        return Value::Wide;
    }
    if digits.is_empty() {
        return Value::Int(0);
    }
    // Shifted in byte by byte: a copy of a variable length into an array is a call to
    // `memcpy`, for two integers of nearly every trace entry.
    let mut v = 0u64;
    for (i, &d) in digits.iter().enumerate() {
        v |= (d as u64) << (8 * i);
    }
    let unused = 64 - 8 * digits.len() as u32;
    // Sign-extended from the last byte's top bit.
    Value::Int(((v << unused) as i64) >> unused)
}

/// A text opcode's decimal index (`PUT`, `GET`), its newline taken off.
fn text_index(arg: &[u8]) -> Option<u64> {
    std::str::from_utf8(arg).ok()?.parse().ok()
}
