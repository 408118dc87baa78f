//! Every event's `args`, kept compactly for the details panel and the few analyses that read
//! them by key.

use super::ArgsId;
use std::ops::Range;

/// Every event's `args`, compactly: member by member, a known key as one byte, then the value's
/// JSON text as written.
///
/// Typed copies of what the analyses need (External id, correlation, Input Dims) sit in the slice
/// columns; the rest is read on demand, e.g. for a details panel, with [`ArgStore::field`] or
/// [`ArgStore::value`]. Keeping the text instead of re-reading the file means a `.gz` trace need not
/// be decompressed again; the key dictionary (Kineto repeats the same twenty keys on every event)
/// roughly halves what that costs.
///
/// Encoding of one record: per member, a key byte (`1..=KEYS.len()` for a dictionary key, 0 for a
/// literal key followed by its varint length and text), then the value's varint length and text.
/// A record whose args are not an object is a single member with the key byte [`RAW`].
///
/// The records lie in blocks that never move once written: a new block is started when the last
/// is full, sized from the parser's projection of the whole input but at most [`BLOCK`], and a
/// part joined from another reader brings its bytes as blocks of their own. One growing buffer
/// had to be reserved for the whole input from its first sixty-fourth, where Kineto writes the
/// CPU ops whose args are longest (a fifth too much on the 1 GB scaled trace, the largest
/// single waste in the page's memory), and a join copied the whole store into a larger one.
#[derive(Debug, Default)]
pub struct ArgStore {
    blocks: Vec<Vec<u8>>,
    /// The id of each block's first record, rising (a block may hold none).
    firsts: Vec<u32>,
    /// Each record's end within its block.
    ends: Vec<u32>,
    /// The block of every `1 << COARSE`th record, made when the parse ends ([`ArgStore::shrink`]):
    /// the analyses look records up by the million, and a search of the blocks for each was 2-3%
    /// of `report`'s CPU. Blocks are only ever added after it, so it stays right as far as it goes.
    coarse: Vec<u32>,
}

/// See [`ArgStore::coarse`].
const COARSE: u32 = 10;

/// A new block is at most this large, so that what a projection from the head of the input
/// overestimates costs at most this much.
const BLOCK: usize = 16 << 20;

/// And at least this large: a block is sealed when less than [`RECORD`] is left, so one of about
/// that size would hold a record or two (a small trace had a block per record).
const MIN_BLOCK: usize = 64 << 10;

/// What a record usually takes at most: a block with less room left is sealed.
const RECORD: usize = 4096;

/// A block is sealed once it holds this much, so that every end within it fits a `u32` after a
/// record of up to as much again (a larger record is not stored).
const SEAL: usize = 1 << 31;

/// Key byte of a record holding a non-object args value as raw JSON text.
const RAW: u8 = 0xFF;

/// The keys Kineto writes most, in a fixed order: their index + 1 is their byte in the store.
const KEYS: &[&str] = &[
    "External id",
    "Record function id",
    "Ev Idx",
    "Sequence number",
    "Fwd thread id",
    "Concrete Inputs",
    "Input type",
    "Input Strides",
    "Input Dims",
    "Call stack",
    "Module Hierarchy",
    "Python id",
    "Python parent id",
    "Python module id",
    "Python thread",
    "correlation",
    "cbid",
    "device",
    "stream",
    "context",
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "warps per SM",
    "est. achieved occupancy %",
    "queued",
    "bytes",
    "memory bandwidth (GB/s)",
    "Device Type",
    "Device Id",
    "Addr",
    "Bytes",
    "Total Allocated",
    "Total Reserved",
    "name",
    "labels",
    "sort_index",
    "external id",
    "Collective name",
    "In msg nelems",
    "Out msg nelems",
    "Group size",
    "dtype",
    "Process Group Name",
    "Process Group Description",
    "Process Group Ranks",
    "In split size",
    "Out split size",
    "Trace name",
    "Trace iteration",
    "kind",
    "wait_on_stream",
    "wait_on_cuda_event_record_corr_id",
];

/// A dictionary key and its byte in the store.
type KeyCode = (&'static [u8], u8);

fn key_byte(key: &str) -> u8 {
    // This runs for every member of every event's args: the keys of one length are compared
    // with it (one to four, no hashing), found by the length.
    static BY_LEN: std::sync::OnceLock<Vec<Vec<KeyCode>>> = std::sync::OnceLock::new();
    let by_len = BY_LEN.get_or_init(|| {
        let mut v: Vec<Vec<KeyCode>> = Vec::new();
        for (i, k) in KEYS.iter().enumerate() {
            if v.len() <= k.len() {
                v.resize(k.len() + 1, Vec::new());
            }
            v[k.len()].push((k.as_bytes(), i as u8 + 1));
        }
        v
    });
    let key = key.as_bytes();
    by_len
        .get(key.len())
        .and_then(|keys| keys.iter().find(|(k, _)| same_short(k, key)))
        .map_or(0, |&(_, code)| code)
}

/// `a == b` for slices of one length, up to 32 bytes compared with two overlapping loads of a
/// fixed size. `==` calls `memcmp`, which the wasm build compiles to a byte loop.
#[inline]
fn same_short(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // The words at 0 and at n - W of both slices, as integers (in bounds when W <= n).
    macro_rules! two {
        ($t:ty, $w:literal) => {{
            let word = |s: &[u8], at: usize| {
                <$t>::from_le_bytes(s[at..at + $w].try_into().expect("in bounds"))
            };
            word(a, 0) == word(b, 0) && word(a, n - $w) == word(b, n - $w)
        }};
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => two!(u32, 4),
        8..=15 => two!(u64, 8),
        16..=32 => two!(u128, 16),
        _ => a == b,
    }
}

/// Appends `v` to `out`; up to 32 bytes with two overlapping loads and stores of a fixed size
/// instead of a call to `memcpy`. Most args values are that short (ids, small shape lists), and
/// the wasm build's `memcpy` (`memory.copy`) costs about a call into the engine each time: with it,
/// storing the args was 8.5% of a wasm parse, 2.3% of a native one.
#[inline]
fn push_short(out: &mut Vec<u8>, v: &[u8]) {
    let n = v.len();
    if n > 32 {
        out.extend_from_slice(v);
        return;
    }
    out.reserve(32);
    let len = out.len();
    // SAFETY: `reserve(32)` made room for 32 bytes after `len`, every write below ends within
    // `len + n <= len + 32`, every read lies within `v`, and the bytes up to `len + n` are
    // initialised (written here) before `set_len`.
    unsafe {
        let src = v.as_ptr();
        let dst = out.as_mut_ptr().add(len);
        match n {
            0 => {}
            1..=3 => {
                *dst = *src;
                *dst.add(n / 2) = *src.add(n / 2);
                *dst.add(n - 1) = *src.add(n - 1);
            }
            4..=7 => {
                let a = (src as *const u32).read_unaligned();
                let b = (src.add(n - 4) as *const u32).read_unaligned();
                (dst as *mut u32).write_unaligned(a);
                (dst.add(n - 4) as *mut u32).write_unaligned(b);
            }
            8..=15 => {
                let a = (src as *const u64).read_unaligned();
                let b = (src.add(n - 8) as *const u64).read_unaligned();
                (dst as *mut u64).write_unaligned(a);
                (dst.add(n - 8) as *mut u64).write_unaligned(b);
            }
            _ => {
                let a = (src as *const u128).read_unaligned();
                let b = (src.add(n - 16) as *const u128).read_unaligned();
                (dst as *mut u128).write_unaligned(a);
                (dst.add(n - 16) as *mut u128).write_unaligned(b);
            }
        }
        out.set_len(len + n);
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn get_varint(b: &[u8], i: &mut usize) -> Option<usize> {
    let mut n = 0usize;
    let mut shift = 0;
    loop {
        let byte = *b.get(*i)?;
        *i += 1;
        n |= ((byte & 0x7F) as usize) << shift;
        if byte < 0x80 {
            return Some(n);
        }
        shift += 7;
    }
}

impl ArgStore {
    /// The block being written, started when there is none or the last is sealed.
    fn tail(&mut self) -> &mut Vec<u8> {
        if self.blocks.last().is_none_or(|b| b.len() >= SEAL) {
            self.start_block(0);
        }
        self.blocks.last_mut().expect("a block was just started")
    }

    /// Room for `records` more ids below `NONE`.
    fn fits(&self, records: usize) -> bool {
        records <= ((u32::MAX - 1) as usize).saturating_sub(self.ends.len())
    }

    /// The bytes of every record.
    fn held(&self) -> usize {
        self.blocks.iter().map(Vec::len).sum()
    }

    fn start_block(&mut self, capacity: usize) {
        if let Some(last) = self.blocks.last_mut() {
            // Sealed: what it was given beyond what it holds (less than a record) goes back, in
            // place.
            last.shrink_to_fit();
        }
        self.blocks.push(Vec::with_capacity(capacity));
        self.firsts.push(self.ends.len() as u32);
    }

    /// Ends the record begun at `start` in the last block: its id, or `NONE` when it is empty or
    /// would not fit (it is then taken back).
    fn close(&mut self, start: usize) -> ArgsId {
        let bytes = self
            .blocks
            .last_mut()
            .expect("a record is written to a block");
        if bytes.len() == start || bytes.len() > u32::MAX as usize {
            bytes.truncate(start);
            return ArgsId::NONE;
        }
        self.ends.push(bytes.len() as u32);
        ArgsId(self.ends.len() as u32 - 1)
    }

    /// Stores an object's members, given as (key text without quotes, value JSON text) pairs.
    pub fn push_members<'a>(
        &mut self,
        members: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> ArgsId {
        if !self.fits(1) {
            return ArgsId::NONE;
        }
        let bytes = self.tail();
        let start = bytes.len();
        for (key, value) in members {
            match key_byte(key) {
                0 => {
                    bytes.push(0);
                    put_varint(bytes, key.len());
                    bytes.extend_from_slice(key.as_bytes());
                }
                b => bytes.push(b),
            }
            put_varint(bytes, value.len());
            push_short(bytes, value.as_bytes());
        }
        self.close(start)
    }

    /// Stores args that are not an object (rare) as their raw JSON text.
    pub fn push_raw(&mut self, json: &str) -> ArgsId {
        if json.is_empty() || json.len() > SEAL || !self.fits(1) {
            return ArgsId::NONE;
        }
        let bytes = self.tail();
        let start = bytes.len();
        bytes.push(RAW);
        put_varint(bytes, json.len());
        bytes.extend_from_slice(json.as_bytes());
        self.close(start)
    }

    /// The block holding record `i` (which exists).
    fn block_of(&self, i: usize) -> usize {
        match self.coarse.get(i >> COARSE) {
            // The block of a record at most 1023 before `i`, then on to `i`'s (at most a few
            // blocks of the smallest size).
            Some(&b) => {
                let mut b = b as usize;
                while self.firsts.get(b + 1).is_some_and(|&f| f as usize <= i) {
                    b += 1;
                }
                b
            }
            None => self.search_block(i),
        }
    }

    /// The last block with its first record at or before `i`.
    fn search_block(&self, i: usize) -> usize {
        self.firsts.partition_point(|&f| f as usize <= i) - 1
    }

    fn record(&self, id: ArgsId) -> Option<&[u8]> {
        let i = id.0 as usize;
        let end = *self.ends.get(i)? as usize;
        let block = self.block_of(i);
        let start = if self.firsts[block] as usize == i {
            0
        } else {
            self.ends[i - 1] as usize
        };
        self.blocks[block].get(start..end)
    }

    /// The members of the args: (key, value JSON text). A non-object args value is one member
    /// with an empty key.
    pub fn members(&self, id: ArgsId) -> Members<'_> {
        Members {
            raw: self.raw_members(id),
        }
    }

    fn raw_members(&self, id: ArgsId) -> RawMembers<'_> {
        RawMembers {
            bytes: self.record(id).unwrap_or(&[]),
            i: 0,
        }
    }

    /// The JSON text of one member's value, e.g. `field(id, "grid")` -> `[128, 1, 1]`.
    pub fn field(&self, id: ArgsId, key: &str) -> Option<&str> {
        let [v] = self.fields(id, [key]);
        v
    }

    /// The JSON text of the first member of each key, in one walk of the record.
    pub fn fields<const N: usize>(&self, id: ArgsId, keys: [&str; N]) -> [Option<&str>; N] {
        // The analyses ask this by the million (`Input type`, `stream`, `flops`): members are
        // matched on their key bytes and only the values found are checked as text, where walking
        // [`ArgStore::members`] checked every key and value it passed.
        let mut out: [Option<Option<&str>>; N] = [None; N];
        let codes = keys.map(key_byte);
        let mut left = N;
        for (tag, literal, value) in self.raw_members(id) {
            for k in 0..N {
                let hit = match tag {
                    0 => literal == keys[k].as_bytes(),
                    RAW => keys[k].is_empty(),
                    t => t == codes[k],
                };
                if hit && out[k].is_none() {
                    // A value that is not text ends the search for its key, as in `members`.
                    out[k] = Some(std::str::from_utf8(value).ok());
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        out.map(Option::flatten)
    }

    /// The args as one JSON object text (member order kept), or `None` for [`ArgsId::NONE`].
    pub fn json(&self, id: ArgsId) -> Option<String> {
        let record = self.record(id)?;
        if record.first() == Some(&RAW) {
            return self.members(id).next().map(|(_, v)| v.to_string());
        }
        let mut out = String::with_capacity(record.len() + 32);
        out.push('{');
        for (n, (k, v)) in self.members(id).enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(k);
            out.push_str("\":");
            out.push_str(v);
        }
        out.push('}');
        Some(out)
    }

    /// The args parsed as a JSON value (an object), or `Null`.
    pub fn value(&self, id: ArgsId) -> serde_json::Value {
        let Some(text) = self.json(id) else {
            return serde_json::Value::Null;
        };
        serde_json::from_str(&text)
            .or_else(|_| {
                // A raw tab or newline inside a string (kept as written) is invalid JSON; as a
                // space it reads, and outside strings a space is what it was anyway.
                let spaced = text.replace(['\n', '\r', '\t'], " ");
                serde_json::from_str(&spaced)
            })
            .unwrap_or(serde_json::Value::Null)
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of every record, as if the blocks were one: their length, and the blocks in
    /// order. With [`ArgStore::flat_ends`], what a parse part holds.
    pub fn flat_bytes(&self) -> (usize, impl Iterator<Item = &[u8]>) {
        (self.held(), self.blocks.iter().map(Vec::as_slice))
    }

    /// Each record's end in [`ArgStore::flat_bytes`].
    pub fn flat_ends(&self) -> FlatEnds<'_> {
        FlatEnds {
            store: self,
            i: 0,
            block: 0,
            base: 0,
        }
    }

    /// Appends another store's records, block by block, without copying them; theirs become
    /// ids `self.len()..` (as many as fit below `NONE`; more are not a trace's).
    pub fn append(&mut self, other: ArgStore) {
        if other.blocks.is_empty() || !self.fits(other.ends.len()) {
            return;
        }
        let base = self.ends.len() as u32;
        // The last block is sealed here: what it was given beyond what it holds goes back (their
        // last block is this store's last, shrunk when sealed in turn or at the finish).
        if let Some(last) = self.blocks.last_mut() {
            last.shrink_to_fit();
        }
        self.blocks.extend(other.blocks);
        self.firsts.extend(other.firsts.iter().map(|f| f + base));
        self.ends.extend_from_slice(&other.ends);
    }

    /// Appends the records of a store given flat ([`ArgStore::flat_bytes`],
    /// [`ArgStore::flat_ends`]) where they lie (a part's buffer), which the caller checked: the
    /// ends rise, within the bytes. They are copied into blocks of their exact size.
    pub(crate) fn append_raw(&mut self, bytes: &[u8], ends: impl ExactSizeIterator<Item = u64>) {
        if !self.fits(ends.len()) {
            return;
        }
        self.ends.reserve_exact(ends.len());
        let mut ends = ends.peekable();
        let mut from = 0usize;
        while ends.peek().is_some() {
            // A block takes the records that end within SEAL of its start, at least one.
            self.start_block(0);
            let first = self.ends.len();
            while let Some(&end) = ends.peek() {
                let len = end as usize - from;
                if len > SEAL && self.ends.len() > first {
                    break;
                }
                if len > u32::MAX as usize {
                    // Longer than a record can be (only a damaged part's): kept empty.
                    self.ends.push(0);
                    from = end as usize;
                } else {
                    self.ends.push(len as u32);
                }
                ends.next();
            }
            let to = from + self.ends.last().map_or(0, |&e| e as usize);
            self.blocks
                .last_mut()
                .expect("a block was just started")
                .extend_from_slice(&bytes[from..to]);
            from = to;
        }
    }

    /// [`ArgStore::append_raw`] without the bytes, for bytes in a buffer this store may then
    /// keep ([`ArgStore::adopt`]): the records' ends now, while the buffer is read. `None` when
    /// `len` bytes do not fit one block or the records would overflow the ids: nothing was added,
    /// and the caller appends them with `append_raw`.
    pub(crate) fn append_ends(
        &mut self,
        len: usize,
        ends: impl ExactSizeIterator<Item = u64>,
    ) -> Option<Pending> {
        if len > u32::MAX as usize || !self.fits(ends.len()) {
            return None;
        }
        self.start_block(0);
        self.ends.reserve_exact(ends.len());
        // The caller checked that the ends rise within the `len` bytes.
        self.ends.extend(ends.map(|e| e as u32));
        Some(Pending {
            block: self.blocks.len() - 1,
        })
    }

    /// The bytes of the records `pending` stands for: `range` of `buf`, which becomes their
    /// block where it lies (moved to its front, the rest of it given back in place) instead of
    /// being copied into one. The page's loading worker, given a part's buffer, then holds the
    /// buffer and not also a copy of its args (on the 1 GB scaled trace, 90 MB of a 208 MB
    /// part).
    pub(crate) fn adopt(&mut self, pending: Pending, mut buf: Vec<u8>, range: Range<usize>) {
        buf.truncate(range.end);
        buf.drain(..range.start);
        buf.shrink_to_fit();
        self.blocks[pending.block] = buf;
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Before a record is stored: when the last block has less room than a record usually
    /// takes, starts one for what `room` projects the whole input to hold beyond what is held
    /// now (at most [`BLOCK`]; `room(n)` is the projected total for `n` held), and makes room for
    /// `room(n)` records in all. A record longer than that grows its block by doubling.
    pub(crate) fn make_room(&mut self, room: impl Fn(usize) -> usize) {
        if self
            .blocks
            .last()
            .is_none_or(|b| b.capacity() - b.len() < RECORD || b.len() >= SEAL)
        {
            let held = self.held();
            let want = room(held).saturating_sub(held).clamp(MIN_BLOCK, BLOCK);
            self.start_block(want);
        }
        let records = self.ends.len();
        if records == self.ends.capacity() {
            self.ends
                .reserve_exact(room(records).max(records + 1) - records);
        }
    }

    /// The blocks' and the ends' bytes. The list of blocks (tens) is left out: a trace read in
    /// parts, whose blocks are others, then counts what one read of it counts.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>() + self.ends.capacity() * 4
    }

    /// Gives back what the last block and the ends were reserved beyond what they hold, and
    /// makes the table that finds a record's block at once.
    pub(crate) fn shrink(&mut self) {
        if let Some(last) = self.blocks.last_mut() {
            last.shrink_to_fit();
        }
        self.ends.shrink_to_fit();
        self.coarse = (0..self.ends.len())
            .step_by(1 << COARSE)
            .map(|i| self.search_block(i) as u32)
            .collect();
    }
}

/// Records appended by [`ArgStore::append_ends`], their bytes still to come
/// ([`ArgStore::adopt`]); until then they read as empty.
#[must_use]
pub(crate) struct Pending {
    block: usize,
}

/// Iterator over the ends of an [`ArgStore`]'s records in its flat bytes.
pub struct FlatEnds<'a> {
    store: &'a ArgStore,
    i: usize,
    block: usize,
    /// Where `block` starts in the flat bytes.
    base: u64,
}

impl Iterator for FlatEnds<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let s = self.store;
        let end = *s.ends.get(self.i)?;
        while s
            .firsts
            .get(self.block + 1)
            .is_some_and(|&f| f as usize <= self.i)
        {
            self.base += s.blocks[self.block].len() as u64;
            self.block += 1;
        }
        self.i += 1;
        Some(self.base + end as u64)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.store.ends.len() - self.i;
        (n, Some(n))
    }
}

impl ExactSizeIterator for FlatEnds<'_> {}

/// Iterator over the members of one args record: (key, value JSON text).
pub struct Members<'a> {
    raw: RawMembers<'a>,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let (tag, literal, value) = self.raw.next()?;
        let key = match tag {
            0 => std::str::from_utf8(literal).ok()?,
            RAW => "",
            t => KEYS.get(t as usize - 1)?,
        };
        Some((key, std::str::from_utf8(value).ok()?))
    }
}

/// The members of one args record as stored: (key byte, literal key, value), nothing yet read
/// as text; the literal key is empty unless the key byte is 0.
struct RawMembers<'a> {
    bytes: &'a [u8],
    i: usize,
}

impl<'a> Iterator for RawMembers<'a> {
    type Item = (u8, &'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let b = self.bytes;
        let tag = *b.get(self.i)?;
        self.i += 1;
        let mut literal: &[u8] = &[];
        if tag == 0 {
            let n = get_varint(b, &mut self.i)?;
            literal = b.get(self.i..self.i + n)?;
            self.i += n;
        }
        let n = get_varint(b, &mut self.i)?;
        let value = b.get(self.i..self.i + n)?;
        self.i += n;
        Some((tag, literal, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_slices_compare_as_slices_do() {
        let a: Vec<u8> = (0..40u8).collect();
        for n in 0..=a.len() {
            for i in 0..n.max(1) {
                let mut b = a[..n].to_vec();
                if n > 0 {
                    b[i] ^= 0x40;
                }
                assert_eq!(same_short(&a[..n], &b), a[..n] == b[..], "{n} {i}");
                assert!(same_short(&a[..n], &a[..n]));
            }
        }
        assert!(!same_short(b"ab", b"abc"));
    }

    #[test]
    fn short_values_are_appended_byte_for_byte() {
        let src: Vec<u8> = (0..40u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(1))
            .collect();
        for before in [0usize, 1, 7, 31] {
            for n in 0..=src.len() {
                let mut got = vec![0xAAu8; before];
                push_short(&mut got, &src[..n]);
                let mut want = vec![0xAAu8; before];
                want.extend_from_slice(&src[..n]);
                assert_eq!(got, want, "{before} + {n}");
            }
        }
    }

    #[test]
    fn each_dictionary_key_has_its_byte_and_nothing_else_has_one() {
        for (i, k) in KEYS.iter().enumerate() {
            assert_eq!(key_byte(k), i as u8 + 1, "{k}");
        }
        for other in [
            "",
            "External ID",
            "External id ",
            "device_",
            "Input Dimz",
            "x",
        ] {
            assert_eq!(key_byte(other), 0, "{other}");
        }
    }

    #[test]
    fn a_field_is_the_first_member_of_its_key() {
        // Dictionary keys, literal keys (one a dictionary key's prefix, one a key repeated), an
        // empty key, long values: `field` reads the record's bytes as `members` does.
        let long = "y".repeat(200);
        let members = [
            ("Input type", "[\"double\"]"),
            ("Input typ", "1"),
            ("", "2"),
            ("odd key", long.as_str()),
            ("odd key", "3"),
            ("stream", "7"),
            ("é", "\"ü\""),
        ];
        let mut s = ArgStore::default();
        let id = s.push_members(members);
        for key in [
            "Input type",
            "Input typ",
            "",
            "odd key",
            "stream",
            "é",
            "grid",
            "Input",
        ] {
            let want = s.members(id).find(|(k, _)| *k == key).map(|(_, v)| v);
            assert_eq!(s.field(id, key), want, "{key}");
        }
        assert_eq!(s.field(id, "odd key"), Some(long.as_str()));
        assert_eq!(s.field(ArgsId::NONE, "stream"), None);
        let keys = ["stream", "grid", "odd key", "Input type", "stream", ""];
        let each = keys.map(|k| s.field(id, k));
        assert_eq!(s.fields(id, keys), each);
        assert_eq!(each[0], Some("7"));
    }

    #[test]
    fn args_store_round_trips_members() {
        let mut s = ArgStore::default();
        let long = "x".repeat(300);
        let a = s.push_members([
            ("External id", "7"),
            ("my key", "[1, 2]"),
            ("Call stack", long.as_str()),
        ]);
        let b = s.push_raw("[1,2,3]");
        assert_eq!(s.push_members([]), ArgsId::NONE);
        assert_eq!(s.field(a, "External id"), Some("7"));
        assert_eq!(s.field(a, "my key"), Some("[1, 2]"));
        assert_eq!(s.field(a, "Call stack").map(str::len), Some(300));
        assert_eq!(s.field(a, "absent"), None);
        let json = s.json(a).unwrap();
        assert!(
            json.starts_with("{\"External id\":7,\"my key\":[1, 2],\"Call stack\":xxx"),
            "{json}"
        );
        assert_eq!(s.json(b).unwrap(), "[1,2,3]");
        assert_eq!(s.field(b, ""), Some("[1,2,3]"));
        assert_eq!(s.field(b, "External id"), None);
        assert_eq!(s.json(ArgsId::NONE), None);
        assert_eq!(s.value(ArgsId::NONE), serde_json::Value::Null);
    }

    /// The records of a store made of many blocks (a projection that never looks ahead makes
    /// each the smallest) read back as written: where they lie, laid flat and copied back as a
    /// part's are, and moved into another store with their ids shifted.
    #[test]
    fn records_read_back_across_blocks_flat_and_joined() {
        let value = |i: usize| format!("[{}]", "7,".repeat(i % 700) + &i.to_string());
        let mut s = ArgStore::default();
        let mut ids = Vec::new();
        for i in 0..3000 {
            s.make_room(|n| n);
            let v = value(i);
            ids.push(if i % 5 == 4 {
                s.push_raw(&v)
            } else {
                s.push_members([("Input Dims", v.as_str()), ("odd key", "1")])
            });
        }
        // A record longer than a block grows the block it starts in.
        s.make_room(|n| n);
        let long = "x".repeat(3 * 4096);
        let long_id = s.push_members([("Call stack", long.as_str())]);
        // Many blocks, each filled to within a record of its size.
        let blocks = s.blocks.len();
        let (len, _) = s.flat_bytes();
        assert!(
            (20..=len / (MIN_BLOCK - RECORD) + 1).contains(&blocks),
            "{blocks} blocks"
        );
        let check = |s: &ArgStore, shift: u32| {
            for (i, &id) in ids.iter().enumerate() {
                let id = ArgsId(id.0 + shift);
                let v = value(i);
                if i % 5 == 4 {
                    assert_eq!(s.json(id).as_deref(), Some(v.as_str()), "{i}");
                } else {
                    assert_eq!(s.field(id, "Input Dims"), Some(v.as_str()), "{i}");
                    assert_eq!(s.field(id, "odd key"), Some("1"), "{i}");
                }
            }
            let long_id = ArgsId(long_id.0 + shift);
            assert_eq!(s.field(long_id, "Call stack"), Some(long.as_str()));
        };
        check(&s, 0);

        let (len, blocks) = s.flat_bytes();
        let flat: Vec<u8> = blocks.flatten().copied().collect();
        assert_eq!(flat.len(), len);
        let ends: Vec<u64> = s.flat_ends().collect();
        assert_eq!(ends.len(), s.len());
        assert!(ends.windows(2).all(|w| w[0] <= w[1]) && ends.last() == Some(&(len as u64)));
        let mut copied = ArgStore::default();
        copied.append_raw(&flat, ends.iter().copied());
        assert_eq!(copied.blocks.len(), 1);
        check(&copied, 0);
        // Read whole or copied from parts, a store counts the same bytes once shrunk; its
        // records are then found through the table of blocks, and read the same.
        s.shrink();
        assert_eq!(s.heap_bytes(), copied.heap_bytes());
        assert!(s.coarse.len() > 1);
        check(&s, 0);

        // Adopted where they lie in a larger buffer, the bytes read the same and the rest of the
        // buffer is given back.
        let mut buffer = b"head".to_vec();
        buffer.extend_from_slice(&flat);
        buffer.extend_from_slice(&[7; 1000]);
        let mut adopted = ArgStore::default();
        let pending = adopted.append_ends(len, ends.iter().copied()).unwrap();
        adopted.adopt(pending, buffer, 4..4 + len);
        check(&adopted, 0);
        assert_eq!(adopted.heap_bytes(), copied.heap_bytes());

        let mut joined = ArgStore::default();
        let first = joined.push_members([("name", "\"a\"")]);
        joined.append(s);
        assert_eq!(joined.field(first, "name"), Some("\"a\""));
        check(&joined, 1);
        let (len, _) = joined.flat_bytes();
        assert_eq!(joined.flat_ends().last(), Some(len as u64));
    }
}
