//! String interning: every name, category and shape string is stored once and referred to by a `u32`.

use rustc_hash::FxHashMap;

/// An interned string. `StrId::NONE` is the empty string, used for "absent".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

impl StrId {
    pub const NONE: StrId = StrId(0);

    pub fn is_none(self) -> bool {
        self == StrId::NONE
    }
}

impl serde::Serialize for StrId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

#[derive(Debug)]
pub struct Interner {
    map: FxHashMap<Box<str>, StrId>,
    strings: Vec<Box<str>>,
}

impl Default for Interner {
    fn default() -> Self {
        let mut i = Interner {
            map: FxHashMap::default(),
            strings: Vec::new(),
        };
        i.intern("");
        i
    }
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = StrId(self.strings.len() as u32);
        self.strings.push(s.into());
        self.map.insert(s.into(), id);
        id
    }

    /// Looks a string up without adding it.
    pub fn find(&self, s: &str) -> Option<StrId> {
        self.map.get(s).copied()
    }

    /// The strings in id order (id 0 is the empty string): for writing a parse part out.
    pub fn strings(&self) -> impl ExactSizeIterator<Item = &str> {
        self.strings.iter().map(|s| &**s)
    }

    /// An interner holding `strings` with ids in their order; `None` unless the first is the
    /// empty string and none repeats (ids would shift), so a part read back keeps its ids.
    pub fn from_strings(strings: impl IntoIterator<Item = String>) -> Option<Interner> {
        let mut i = Interner {
            map: FxHashMap::default(),
            strings: Vec::new(),
        };
        for (n, s) in strings.into_iter().enumerate() {
            if (n == 0) != s.is_empty() || i.intern(&s).0 as usize != n {
                return None;
            }
        }
        (!i.strings.is_empty()).then_some(i)
    }

    pub fn get(&self, id: StrId) -> &str {
        self.strings.get(id.0 as usize).map(|s| &**s).unwrap_or("")
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// `f` of every interned string, indexed by id: a test of names made once per name rather
    /// than once per slice.
    pub fn each<T>(&self, f: impl FnMut(&str) -> T) -> Vec<T> {
        self.strings.iter().map(|s| &**s).map(f).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.len() <= 1
    }

    /// Approximate heap bytes: both copies of each string plus table overhead.
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.strings.iter().map(|s| s.len()).sum();
        text * 2 + self.strings.capacity() * 16 + self.map.capacity() * 24
    }
}
