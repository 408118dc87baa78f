//! The values of the pickle machine's stack and memo: scalars, interned ids (strings, frames,
//! stacks, rows) and the generic containers (a list, dict or tuple) a snapshot needs few of.

use super::build::RowKind;

/// Generic values nested deeper than this are dropped (a snapshot nests four levels).
pub(crate) const MAX_DEPTH: u8 = 32;
/// Generic containers of up to this many values are copied into the memo for a later `GET`.
const MEMO_NODES: u32 = 256;
/// Not a memo id.
pub(crate) const NO_MEMO: u32 = u32::MAX;

/// One value on the machine's stack or in the memo.
#[derive(Debug)]
pub(crate) enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer wider than 64 bits; its value is not kept.
    Wide,
    Float(f64),
    /// An interned string (`str`, or a protocol 1 byte string).
    Str(u32),
    /// `bytes` or `bytearray`; the contents are not kept.
    Bytes,
    /// An interned frame.
    Frame(u32),
    /// An interned stack (a list of frames).
    Stack(u32),
    /// A row of the builder's tables.
    Row(RowKind, u32),
    /// A value that could not be kept (see the diagnostics).
    Lost,
    // The containers last, so that telling one (`is_container`, for every item attached) is
    // one comparison of the tag.
    /// A dict just opened (`EMPTY_DICT`), with its memo id ([`NO_MEMO`] when none): boxed only
    /// if its items do not make a row (see `Machine::fill`), so that a trace entry, the bulk of
    /// a snapshot, never allocates.
    NewDict(u32),
    List(Box<Container>),
    Dict(Box<Container>),
    Tuple(Box<Container>),
}

/// A list, dict (keys and values alternating) or tuple.
#[derive(Debug, Default)]
pub(crate) struct Container {
    pub items: Vec<Value>,
    /// A list of rows kept as a run: rows `start..start + len` of one kind; `items` is then
    /// empty.
    pub run: Option<(RowKind, u32, u32)>,
    pub(super) memo: u32,
    pub(super) depth: u8,
    nodes: u32,
    /// Left unfinished by the end of the input (set when salvaging).
    pub unfinished: bool,
}

impl Container {
    pub(super) fn new() -> Box<Container> {
        Box::new(Container {
            memo: NO_MEMO,
            depth: 1,
            nodes: 1,
            ..Container::default()
        })
    }

    pub(super) fn with(items: Vec<Value>) -> Box<Container> {
        let mut c = Container::new();
        for v in &items {
            c.count(v);
        }
        c.items = items;
        c
    }

    pub(super) fn count(&mut self, v: &Value) {
        let (d, n) = match v {
            Value::List(c) | Value::Dict(c) | Value::Tuple(c) => (c.depth, c.nodes),
            _ => (0, 1),
        };
        self.depth = self.depth.max(d.saturating_add(1));
        self.nodes = self.nodes.saturating_add(n);
    }

    /// The list's items as values (a run of rows spelled out).
    pub(super) fn spell_out(&mut self) {
        if let Some((kind, start, len)) = self.run.take() {
            self.items = (start..start + len).map(|i| Value::Row(kind, i)).collect();
        }
    }

    pub(super) fn push_item(&mut self, v: Value) {
        if let Value::Row(kind, id) = v {
            match &mut self.run {
                Some((k, start, len)) if *k == kind && *start + *len == id => {
                    *len += 1;
                    return;
                }
                None if self.items.is_empty() => {
                    self.run = Some((kind, id, 1));
                    return;
                }
                _ => {}
            }
        }
        self.spell_out();
        self.count(&v);
        self.items.push(v);
    }
}

impl Value {
    /// A copy for the memo or `DUP`, when the value is small enough to copy. Inlined for the
    /// strings and rows a `GET` copies for nearly every dict of a snapshot.
    #[inline]
    pub(super) fn copy(&self) -> Option<Value> {
        Some(match self {
            Value::Str(s) => Value::Str(*s),
            Value::Row(k, r) => Value::Row(*k, *r),
            Value::Frame(f) => Value::Frame(*f),
            Value::Stack(s) => Value::Stack(*s),
            Value::Int(i) => Value::Int(*i),
            Value::List(_) | Value::Dict(_) | Value::Tuple(_) => return self.copy_container(),
            Value::NewDict(_) => Value::NewDict(NO_MEMO),
            Value::None => Value::None,
            Value::Bool(b) => Value::Bool(*b),
            Value::Wide => Value::Wide,
            Value::Float(f) => Value::Float(*f),
            Value::Bytes => Value::Bytes,
            Value::Lost => Value::Lost,
        })
    }

    #[cold]
    pub(super) fn copy_container(&self) -> Option<Value> {
        Some(match self {
            Value::List(c) | Value::Dict(c) | Value::Tuple(c) => {
                if c.nodes > MEMO_NODES {
                    return None;
                }
                let mut items = Vec::with_capacity(c.items.len());
                for v in &c.items {
                    items.push(v.copy()?);
                }
                let copy = Box::new(Container {
                    items,
                    run: c.run,
                    memo: NO_MEMO,
                    depth: c.depth,
                    nodes: c.nodes,
                    unfinished: false,
                });
                match self {
                    Value::List(_) => Value::List(copy),
                    Value::Dict(_) => Value::Dict(copy),
                    _ => Value::Tuple(copy),
                }
            }
            other => return other.copy(),
        })
    }

    pub(super) fn container_mut(&mut self) -> Option<&mut Container> {
        match self {
            Value::List(c) | Value::Dict(c) | Value::Tuple(c) => Some(c),
            _ => None,
        }
    }

    /// Whether this is a container (finished when attached to its parent).
    pub(super) fn is_container(&self) -> bool {
        matches!(
            self,
            Value::List(_) | Value::Dict(_) | Value::Tuple(_) | Value::NewDict(_)
        )
    }

    /// A [`Value::NewDict`] as the generic dict it is, for the paths that need one (salvage,
    /// the top-level value, an empty dict attached as it is).
    pub(super) fn boxed(self) -> Value {
        match self {
            Value::NewDict(memo) => {
                let mut c = Container::new();
                c.memo = memo;
                Value::Dict(c)
            }
            v => v,
        }
    }

    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Wide => "an integer",
            Value::Float(_) => "a float",
            Value::Str(_) => "a string",
            Value::Bytes => "bytes",
            Value::List(_) | Value::Stack(_) => "a list",
            Value::Dict(_) | Value::NewDict(_) | Value::Frame(_) | Value::Row(..) => "a dict",
            Value::Tuple(_) => "a tuple",
            Value::Lost => "a value not kept",
        }
    }
}
