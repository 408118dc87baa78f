//! The pickle's memo: what a later `GET` may ask for, in 8 bytes a slot.

use super::build::RowKind;
use super::value::Value;

/// Memo slots per block of [`Memo`].
const MEMO_BLOCK: usize = 1 << 16;

/// One memo slot in 8 bytes: a tag and a 32-bit id (a string, frame, stack or row: nearly every
/// slot of a snapshot), or an index into [`Memo::others`] for any other value. A 16-byte
/// [`Value`] a slot held the pickle's size again in memory for the densest snapshots (a slot for
/// every trace entry dict).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Slot(u64);

impl Slot {
    /// A container not finished yet, or a slot never set.
    pub(super) const PENDING: Slot = Slot(0);
    const STR: u64 = 1;
    const FRAME: u64 = 2;
    const STACK: u64 = 3;
    const OTHER: u64 = 4;
    /// Rows: this plus the [`RowKind`].
    const ROW: u64 = 5;

    fn new(tag: u64, id: u32) -> Slot {
        Slot(tag << 32 | id as u64)
    }

    /// The value of a slot that holds an id.
    #[inline]
    pub(super) fn id_value(self) -> Option<Value> {
        let id = self.0 as u32;
        Some(match self.0 >> 32 {
            Slot::STR => Value::Str(id),
            Slot::FRAME => Value::Frame(id),
            Slot::STACK => Value::Stack(id),
            t if t >= Slot::ROW => Value::Row(RowKind::ALL[(t - Slot::ROW) as usize], id),
            _ => return None,
        })
    }
}

/// The memo's slots, in blocks of [`MEMO_BLOCK`]. The pickler memoizes every dict, list and
/// string: a 2 GB snapshot whose entries carry their own frames memoizes about 10^8, and one vector
/// of them would double past wasm32's limit on one allocation (2 GiB; the page's worker then
/// stopped with a capacity overflow), holding up to twice its slots, and the hole it left, while it
/// grew. Blocks are added one at a time and never move.
#[derive(Default)]
pub(super) struct Memo {
    blocks: Vec<Vec<Slot>>,
    len: usize,
    /// The values that are not an id (numbers, generic containers), which a pickler does not
    /// memoize but a `PUT` may.
    others: Vec<Value>,
}

impl Memo {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(super) fn get(&self, i: usize) -> Option<Slot> {
        (i < self.len).then(|| self.blocks[i / MEMO_BLOCK][i % MEMO_BLOCK])
    }

    /// The value a slot holds; `None` while it is pending.
    pub(super) fn value(&self, slot: Slot) -> Option<Value> {
        match slot.0 >> 32 {
            Slot::OTHER => Some(
                self.others[slot.0 as u32 as usize]
                    .copy()
                    .unwrap_or(Value::Lost),
            ),
            _ => slot.id_value(),
        }
    }

    /// Sets slot `i` to a copy of `v` (pending when `v` is too large to copy), adding pending
    /// slots up to it.
    pub(super) fn set(&mut self, i: usize, v: &Value) {
        let slot = match v {
            Value::Str(s) => Slot::new(Slot::STR, *s),
            Value::Row(k, r) => Slot::new(Slot::ROW + *k as u64, *r),
            Value::Frame(f) => Slot::new(Slot::FRAME, *f),
            Value::Stack(s) => Slot::new(Slot::STACK, *s),
            v => match v.copy() {
                Some(copy) => self.other(copy),
                None => Slot::PENDING,
            },
        };
        self.set_slot(i, slot);
    }

    #[cold]
    fn other(&mut self, v: Value) -> Slot {
        self.others.push(v);
        Slot::new(Slot::OTHER, self.others.len() as u32 - 1)
    }

    #[inline]
    pub(super) fn set_slot(&mut self, i: usize, slot: Slot) {
        if i < self.len {
            self.blocks[i / MEMO_BLOCK][i % MEMO_BLOCK] = slot;
            return;
        }
        // `MEMOIZE`: the next slot, in the last block.
        if i == self.len && !i.is_multiple_of(MEMO_BLOCK) {
            if let Some(block) = self.blocks.last_mut() {
                block.push(slot);
                self.len += 1;
                return;
            }
        }
        self.grow(i, slot);
    }

    #[cold]
    fn grow(&mut self, i: usize, slot: Slot) {
        while self.len <= i {
            if self.len.is_multiple_of(MEMO_BLOCK) {
                self.blocks.push(Vec::with_capacity(MEMO_BLOCK));
            }
            self.blocks
                .last_mut()
                .expect("a block was just added")
                .push(Slot::PENDING);
            self.len += 1;
        }
        self.blocks[i / MEMO_BLOCK][i % MEMO_BLOCK] = slot;
    }
}
