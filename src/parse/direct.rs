//! The direct reader: an event's members read in the order they come, as the grammar expects
//! them, with no pass over the text before. A string's end is found by one 16-byte compare for a
//! quote, a backslash or a control byte (most keys and values of a Kineto event fit in one); a
//! scalar runs to the first byte that cannot be in one; a container other than `args` is skipped
//! bracket by bracket. The `args` object's members are read in the same walk.
//!
//! It accepts less than [`read_object`](super::fields::read_object), its oracle: whatever it
//! accepts, `read_object` reads to the same members and the same end (the differential tests and
//! the fuzzer check every path), and anything unusual (a raw control byte, a backslash or a
//! byte of 0x80 or above outside a string, a scalar holding a bracket, quote or colon, brackets
//! that do not pair, nesting past 63 levels) is refused, so the caller falls back to
//! `read_object` and the result never depends on which reader ran.
//!
//! It replaced a walk over the structural characters of 64-byte blocks (simdjson's first stage,
//! then its tokens one by one): a Kineto event has about 80 of them in 250 bytes, and classifying
//! every block and handing out every token cost more than reading the members straight.

use super::event::Slots;
use super::fields::{skip_ws as ws, Field};

/// The string searches this build has; which one runs is [`Path::best`] unless a test asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Path {
    /// Every path this build can run, portable first.
    pub fn available() -> Vec<Path> {
        vec![
            Path::Portable,
            #[cfg(target_arch = "x86_64")]
            Path::Sse2,
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128,
        ]
    }

    /// The path to use: `SIGHTLINE_SIMD` (`portable`, `sse2`, `simd128`) when it names one this
    /// build has, else the last (the one with SIMD, where there is one). Wider vectors would not
    /// pay: most keys and values end within 16 bytes.
    pub fn best() -> Path {
        static BEST: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let available = Path::available();
            let asked = std::env::var("SIGHTLINE_SIMD").ok();
            available
                .iter()
                .find(|p| asked.as_deref() == Some(p.name()))
                .or(available.last())
                .copied()
                .expect("the portable path is always there")
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Path::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => "sse2",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => "simd128",
        }
    }
}

/// What [`read_event_with`] learnt of an event besides its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventRead {
    /// Index just past the closing brace.
    pub end: usize,
    /// No byte of the event is 0x80 or above, so its text is UTF-8 without checking.
    pub ascii: bool,
    /// A backslash is somewhere in the event (in a string: outside one the reader refuses it),
    /// so its strings may hold escapes; without one they are read as written, unsearched.
    pub escapes: bool,
    /// The last `args` member was an object, and its members are in the `args` list.
    pub args_object: bool,
}

/// What the reader learnt of the event's bytes so far.
#[derive(Default)]
struct Seen {
    /// A byte of 0x80 or above (in a string: elsewhere the reader refuses it).
    high: bool,
    /// A backslash (in a string).
    escapes: bool,
}

/// Finds where a string's plain run ends.
trait Strings {
    /// From `j`, inside a string, the index of the first quote, backslash or control byte
    /// (below 0x20); `seen.high` is set when a byte of 0x80 or above came before it. `None` when
    /// the input ends first.
    ///
    /// # Safety
    /// The CPU must have the implementation's features.
    unsafe fn stop(b: &[u8], j: usize, seen: &mut Seen) -> Option<usize>;
}

/// A SIMD search: 16 bytes classified at once, the last few by the portable search.
trait Block {
    /// The 16 bytes at `p` as two masks, bit `i` for byte `i`: a quote, backslash or control
    /// byte; a byte of 0x80 or above.
    ///
    /// # Safety
    /// 16 bytes from `p` must be readable, and the CPU must have the implementation's features.
    unsafe fn block(p: *const u8) -> (u32, u32);
}

impl<B: Block> Strings for B {
    #[inline(always)]
    unsafe fn stop(b: &[u8], mut j: usize, seen: &mut Seen) -> Option<usize> {
        while j + 16 <= b.len() {
            // SAFETY: 16 bytes from `j` lie inside `b`; the caller's promise for the CPU.
            let (stops, high) = unsafe { B::block(b.as_ptr().add(j)) };
            if stops != 0 {
                let k = stops.trailing_zeros();
                seen.high |= high & ((1 << k) - 1) != 0;
                return Some(j + k as usize);
            }
            seen.high |= high != 0;
            j += 16;
        }
        // SAFETY: the portable search needs no feature.
        unsafe { Portable::stop(b, j, seen) }
    }
}

/// One byte at a time: the reference, and the path where no SIMD is available.
struct Portable;

impl Strings for Portable {
    #[inline(always)]
    unsafe fn stop(b: &[u8], j: usize, seen: &mut Seen) -> Option<usize> {
        let mut any = 0u8;
        for (i, &c) in b.get(j..)?.iter().enumerate() {
            if c == b'"' || c == b'\\' || c < 0x20 {
                seen.high |= any >= 0x80;
                return Some(j + i);
            }
            any |= c;
        }
        None
    }
}

#[cfg(target_arch = "x86_64")]
struct Sse2;

#[cfg(target_arch = "x86_64")]
impl Block for Sse2 {
    #[inline(always)]
    unsafe fn block(p: *const u8) -> (u32, u32) {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86-64; the caller's promise for the 16 bytes.
        unsafe {
            let v = _mm_loadu_si128(p.cast());
            let control = _mm_set1_epi8(0x1f);
            let stops = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                ),
                // Unsigned `v <= 0x1f`: the maximum of the two is 0x1f.
                _mm_cmpeq_epi8(_mm_max_epu8(v, control), control),
            );
            (_mm_movemask_epi8(stops) as u32, _mm_movemask_epi8(v) as u32)
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
struct Simd128;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl Block for Simd128 {
    #[inline(always)]
    unsafe fn block(p: *const u8) -> (u32, u32) {
        use std::arch::wasm32::*;
        // SAFETY: the module is built with simd128; the caller's promise for the 16 bytes.
        unsafe {
            let v = v128_load(p.cast());
            let stops = v128_or(
                v128_or(
                    u8x16_eq(v, u8x16_splat(b'"')),
                    u8x16_eq(v, u8x16_splat(b'\\')),
                ),
                u8x16_le(v, u8x16_splat(0x1f)),
            );
            (u8x16_bitmask(stops) as u32, u8x16_bitmask(v) as u32)
        }
    }
}

/// Reads the event at the start of `b` (after optional whitespace) on `path`'s string search:
/// the values of the keys the model reads into `out`, as each key is met (the other members are
/// read past) and, when its last `args` member is an object, that object's members into `args`
/// (offsets into `b`, as for the event's own). `None` for whatever it does not read (see the
/// module's note); the caller then reads the event with `read_object`.
pub(crate) fn read_event_with(
    path: Path,
    b: &[u8],
    out: &mut Slots,
    args: &mut Vec<Field>,
) -> Option<EventRead> {
    // SAFETY: every `Path` value names a search this build has: SSE2 is part of x86-64, and a
    // module built with simd128 runs only where the engine validated it.
    unsafe {
        match path {
            Path::Portable => read::<Portable>(b, out, args),
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => read::<Sse2>(b, out, args),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => read::<Simd128>(b, out, args),
        }
    }
}

/// # Safety
/// The CPU must have `S`'s features.
#[inline(always)]
unsafe fn read<S: Strings>(b: &[u8], out: &mut Slots, args: &mut Vec<Field>) -> Option<EventRead> {
    *out = Slots::default();
    args.clear();
    let start = ws(b, 0);
    if b.get(start) != Some(&b'{') {
        return None;
    }
    let mut seen = Seen::default();
    let mut args_object = false;
    // SAFETY: the caller's promise.
    let end = unsafe {
        members::<S, Slots, true>(&mut seen, b, start + 1, out, Some((args, &mut args_object)))
    }?;
    Some(EventRead {
        end: end + 1,
        ascii: !seen.high,
        escapes: seen.escapes,
        args_object,
    })
}

/// The index of the quote that closes the string whose text starts at `j`.
///
/// # Safety
/// The CPU must have `S`'s features.
#[inline(always)]
unsafe fn string_end<S: Strings>(seen: &mut Seen, b: &[u8], mut j: usize) -> Option<usize> {
    loop {
        // SAFETY: the caller's promise.
        let k = unsafe { S::stop(b, j, seen) }?;
        match b[k] {
            b'"' => return Some(k),
            b'\\' => {
                seen.escapes = true;
                // The escaped byte is the string's too (`read_object` skips it unread).
                let e = *b.get(k + 1)?;
                if e < 0x20 {
                    return None;
                }
                seen.high |= e >= 0x80;
                j = k + 2;
            }
            _ => return None,
        }
    }
}

/// What each byte is to [`skip`] and [`scalar`].
const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
/// Whitespace, `,` and `:`: structure inside a container; the end of a scalar.
const SEPARATOR: u8 = 4;
/// A backslash, a control byte or a byte of 0x80 or above: refused outside strings.
const REFUSED: u8 = 5;

static CLASS: [u8; 256] = {
    let mut t = [PLAIN; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'"' => QUOTE,
            b'{' | b'[' => OPEN,
            b'}' | b']' => CLOSE,
            b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' => SEPARATOR,
            b'\\' | 0..=0x1f | 0x80..=0xff => REFUSED,
            _ => PLAIN,
        };
        c += 1;
    }
    t
};

/// The end of the scalar that starts at `v`: the first byte that cannot be in one. `None` for
/// an empty scalar. Byte by byte: most scalars of an event are a few bytes (`"pid": 0`), and a
/// 16-byte search for the ten bytes that end one measured 4% slower on the whole reader.
#[inline(always)]
fn scalar(b: &[u8], v: usize) -> Option<usize> {
    let mut e = v;
    while e < b.len() && CLASS[b[e] as usize] == PLAIN {
        e += 1;
    }
    (e > v).then_some(e)
}

/// The index just past the container that opens at `v`; `None` when its brackets do not pair,
/// nest past 63 levels, or it holds a byte refused outside strings.
///
/// # Safety
/// The CPU must have `S`'s features.
#[inline(always)]
unsafe fn skip<S: Strings>(seen: &mut Seen, b: &[u8], v: usize) -> Option<usize> {
    // A bit per depth, set for `[`.
    let mut brackets = (b[v] == b'[') as u64;
    let mut depth = 1u32;
    let mut j = v + 1;
    loop {
        let c = *b.get(j)?;
        match CLASS[c as usize] {
            PLAIN | SEPARATOR => j += 1,
            // SAFETY: the caller's promise.
            QUOTE => j = unsafe { string_end::<S>(seen, b, j + 1) }? + 1,
            OPEN => {
                if depth >= 63 {
                    return None;
                }
                brackets = (brackets << 1) | (c == b'[') as u64;
                depth += 1;
                j += 1;
            }
            CLOSE => {
                if (brackets & 1 == 1) != (c == b']') {
                    return None;
                }
                brackets >>= 1;
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => return None,
        }
    }
}

/// Where [`members`] puts what it reads: an event's values by key ([`Slots`]), or every member
/// of its `args` object (spans, for the args store).
trait Out {
    /// The slot of a key the caller keeps apart (the event's keys the model reads), else `None`.
    fn slot(key: &[u8]) -> Option<usize>;
    /// Takes one member, with its key's slot.
    fn member(&mut self, b: &[u8], slot: Option<usize>, key: (u32, u32), value: (u32, u32));
}

impl Out for Slots {
    #[inline(always)]
    fn slot(key: &[u8]) -> Option<usize> {
        Slots::of(key)
    }

    #[inline(always)]
    fn member(&mut self, b: &[u8], slot: Option<usize>, _key: (u32, u32), value: (u32, u32)) {
        if let Some(k) = slot {
            self.put(k, b, value);
        }
    }
}

impl Out for Vec<Field> {
    #[inline(always)]
    fn slot(_key: &[u8]) -> Option<usize> {
        None
    }

    #[inline(always)]
    fn member(&mut self, _b: &[u8], _slot: Option<usize>, key: (u32, u32), value: (u32, u32)) {
        self.push(Field { key, value });
    }
}

/// Reads the members of the object whose text starts at `i` (just past its `{`) into `out` (and,
/// for the event, its `args` object's members into `args`, with the flag set when the last
/// `args` member was an object); returns its closing brace's index. `EVENT` is false when
/// reading the args themselves (and `args` is `None`).
///
/// # Safety
/// The CPU must have `S`'s features.
#[inline(always)]
unsafe fn members<S: Strings, O: Out, const EVENT: bool>(
    seen: &mut Seen,
    b: &[u8],
    i: usize,
    out: &mut O,
    mut args: Option<(&mut Vec<Field>, &mut bool)>,
) -> Option<usize> {
    let mut i = ws(b, i);
    if *b.get(i)? == b'}' {
        return Some(i);
    }
    loop {
        if *b.get(i)? != b'"' {
            return None;
        }
        // SAFETY (every `string_end`, `skip` and `members` below): the caller's promise.
        let k = unsafe { string_end::<S>(seen, b, i + 1) }?;
        let key = (i as u32 + 1, k as u32);
        let slot = O::slot(&b[i + 1..k]);
        i = ws(b, k + 1);
        if *b.get(i)? != b':' {
            return None;
        }
        let v = ws(b, i + 1);
        let first = *b.get(v)?;
        // `EVENT` rather than `args.is_some()`: with a constant, the args level does not call
        // itself, so both levels inline into one function.
        let is_args = EVENT && slot == Some(Slots::ARGS);
        let end = match first {
            b'"' => unsafe { string_end::<S>(seen, b, v + 1) }? + 1,
            b'{' if is_args => {
                let (list, found) = args.as_mut().expect("reading the event");
                // Of two `args` members, the last counts (as for every key).
                list.clear();
                let e = unsafe { members::<S, Vec<Field>, false>(seen, b, v + 1, *list, None) }?;
                **found = true;
                e + 1
            }
            b'{' | b'[' => unsafe { skip::<S>(seen, b, v) }?,
            // A scalar runs to the first byte that cannot be in one; what follows it is checked
            // below (a comma, a brace or whitespace).
            _ => scalar(b, v)?,
        };
        if is_args && first != b'{' {
            // An `args` that is not an object: the event's args are not read here.
            if let Some((_, found)) = args.as_mut() {
                **found = false;
            }
        }
        out.member(b, slot, key, (v as u32, end as u32));
        i = ws(b, end);
        match *b.get(i)? {
            b',' => {
                i = ws(b, i + 1);
                // A trailing comma before the closing brace is tolerated, as `read_object` does.
                if *b.get(i)? == b'}' {
                    return Some(i);
                }
            }
            b'}' => return Some(i),
            _ => return None,
        }
    }
}

/// Differential checks of [`read_event_with`] against [`read_object`], for the tests and the fuzzer.
#[cfg(test)]
pub(crate) mod differential {
    use super::*;
    use crate::parse::fields::read_object;

    /// Checks one text on every path: the paths agree, and whatever `read_event_with` accepts,
    /// `read_object` reads to the same end, with the same values for the keys the model reads
    /// ([`Slots::from_fields`] of its members) and the args' members as `read_object` reads them
    /// from the args' text. Returns whether it accepted.
    pub(crate) fn check(text: &[u8]) -> bool {
        let mut old = Vec::new();
        let old_end = read_object(text, &mut old);
        let mut first: Option<(Option<EventRead>, Slots, Vec<Field>)> = None;
        for path in Path::available() {
            let (mut f, mut a) = (Slots::default(), Vec::new());
            let got = read_event_with(path, text, &mut f, &mut a);
            let spans = |v: &[Field]| v.iter().map(|x| (x.key, x.value)).collect::<Vec<_>>();
            match &first {
                None => first = Some((got, f, a)),
                Some((g, f0, a0)) => {
                    assert_eq!(
                        got,
                        *g,
                        "{} on {:?}",
                        path.name(),
                        String::from_utf8_lossy(text)
                    );
                    if got.is_some() {
                        assert_eq!(f, *f0, "{}", path.name());
                        assert_eq!(spans(&a), spans(a0), "{}", path.name());
                    }
                }
            }
        }
        let (got, fields, args) = first.expect("the portable path");
        let Some(read) = got else { return false };
        let shown = String::from_utf8_lossy(text);
        assert_eq!(old_end, Some(read.end), "end of {shown:?}");
        let spans = |v: &[Field]| v.iter().map(|x| (x.key, x.value)).collect::<Vec<_>>();
        assert_eq!(
            fields,
            Slots::from_fields(text, &old),
            "members of {shown:?}"
        );
        let body = &text[..read.end];
        assert_eq!(read.ascii, body.is_ascii(), "{shown:?}");
        // A raw control byte is refused: the general path keeps it and tells the repair.
        let control = body
            .iter()
            .any(|&c| c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r'));
        assert!(!control, "{shown:?}");
        assert_eq!(read.escapes, body.contains(&b'\\'), "{shown:?}");
        let last_args = old
            .iter()
            .rev()
            .find(|f| &text[f.key.0 as usize..f.key.1 as usize] == b"args");
        match last_args {
            Some(f) if text[f.value.0 as usize] == b'{' => {
                assert!(read.args_object, "{shown:?}");
                let at = f.value.0;
                let mut want = Vec::new();
                let args_text = &text[f.value.0 as usize..f.value.1 as usize];
                assert!(read_object(args_text, &mut want).is_some(), "{shown:?}");
                let shifted: Vec<_> = args
                    .iter()
                    .map(|x| {
                        (
                            (x.key.0 - at, x.key.1 - at),
                            (x.value.0 - at, x.value.1 - at),
                        )
                    })
                    .collect();
                assert_eq!(shifted, spans(&want), "args of {shown:?}");
            }
            _ => assert!(!read.args_object, "{shown:?}"),
        }
        true
    }

    /// A small deterministic generator (xorshift64*), so a failure replays from its seed.
    pub(crate) struct Rng(pub u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        pub(crate) fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// The bytes that change how JSON reads, and some that do not.
    pub(crate) const SPECIAL: &[u8] = b"\"\\{}[],: \n\t\x01\x7fx0-e.\xc3\xa9";

    /// One random edit of `text`: a byte replaced, inserted or deleted, a run duplicated, or a cut.
    pub(crate) fn mutate(text: &mut Vec<u8>, rng: &mut Rng) {
        let n = text.len();
        let at = rng.below(n + 1).min(n);
        let special = SPECIAL[rng.below(SPECIAL.len())];
        match rng.below(6) {
            0 if at < n => text[at] = special,
            1 => text.insert(at, special),
            2 if at < n => {
                text.remove(at);
            }
            3 => text.truncate(at),
            4 if at < n => {
                let len = rng.below(16).min(n - at);
                let run: Vec<u8> = text[at..at + len].to_vec();
                let to = rng.below(n);
                text.splice(to..to, run);
            }
            _ => {
                let to = rng.below(n + 1).min(n);
                text.insert(to, special);
            }
        }
    }

    /// Events of the bundled sample and of the parser's pathological fixtures, one text each.
    pub(crate) fn corpus() -> Vec<Vec<u8>> {
        use std::io::Read;
        let root = env!("CARGO_MANIFEST_DIR");
        let mut texts = Vec::new();
        let mut gz = Vec::new();
        std::fs::File::open(format!(
            "{root}/www/samples/tracelens_h100_bert_small_stack_mem.json.gz"
        ))
        .and_then(|f| flate2::read::GzDecoder::new(f).read_to_end(&mut gz))
        .expect("the bundled sample");
        texts.push(gz);
        for entry in std::fs::read_dir(format!("{root}/tests/fixtures/parse")).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "json") {
                texts.push(std::fs::read(path).expect("fixture"));
            }
        }
        let mut events = Vec::new();
        for text in texts {
            // Each `{` that starts a line or follows `[`/`,` starts an event candidate running to
            // the end of the line block; the readers find where it ends themselves.
            for (i, w) in text.windows(2).enumerate() {
                if w[1] == b'{' && matches!(w[0], b'[' | b',' | b'\n' | b' ') {
                    let end = (i + 1 + 1200).min(text.len());
                    events.push(text[i + 1..end].to_vec());
                }
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::fields::read_object;

    #[test]
    fn the_direct_reader_agrees_with_read_object_on_real_events() {
        let corpus = differential::corpus();
        let accepted = corpus.iter().filter(|t| differential::check(t)).count();
        // Nearly every real event takes the fast path.
        assert!(
            accepted * 10 >= corpus.len() * 9,
            "{accepted} of {}",
            corpus.len()
        );
    }

    #[test]
    fn the_direct_reader_agrees_with_read_object_on_mutated_events() {
        differential_fuzz(20_000, 1);
    }

    /// The same over many more inputs: `cargo test --release -- --ignored differential`.
    #[test]
    #[ignore]
    fn differential_fuzz_long() {
        differential_fuzz(1_000_000, 7);
    }

    fn differential_fuzz(count: usize, seed: u64) {
        let corpus = differential::corpus();
        let mut rng = differential::Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut accepted = 0;
        for _ in 0..count {
            let mut text = corpus[rng.below(corpus.len())].clone();
            for _ in 0..1 + rng.below(4) {
                differential::mutate(&mut text, &mut rng);
            }
            accepted += differential::check(&text) as usize;
        }
        // The mutations must leave most inputs readable, or the test would check little.
        assert!(accepted * 4 >= count, "{accepted} of {count}");
    }

    #[test]
    fn every_special_byte_at_every_place_of_a_16_byte_search() {
        // A padding string shifts what follows by 0..48 bytes, so each escape, quote, control,
        // high byte and structure lands at every offset of the 16-byte search, at its end and
        // past the end of the input. Valid events must be read; every case must agree with
        // `read_object` on every path.
        let tails: [&[u8]; 10] = [
            br#""s": "ab\"cd", "t": 1}"#,
            br#""s": "\\", "t": "x\u00e9y"}"#,
            "\"s\": \"\u{e9}\u{4e2d}\", \"t\": [\"\u{e9}\"]}".as_bytes(),
            b"\"s\": \"a\x01b\"}",
            b"\"s\": \"a\x7fb\"}",
            br#""args": {"Input Dims": [[1, 2], []], "x": {"y": "}"}}, "t": -1.5e3}"#,
            b"\"s\":\r\n\t\"x\"\r\n,\t\"t\" :\n2\r\n}",
            br#""s": "unterminated"#,
            br#""s": "a\"#,
            br#""t": 12"#,
        ];
        let mut read = 0;
        for pad in 0..48 {
            for tail in tails {
                let mut text = format!("{{\"p\": \"{}\", ", "x".repeat(pad)).into_bytes();
                text.extend_from_slice(tail);
                read += differential::check(&text) as usize;
                // The same with bytes after the event, as a chunk holds them.
                text.extend_from_slice(b",\n{\"ph\": \"X\"}");
                differential::check(&text);
            }
        }
        // The six valid tails, at every padding.
        assert_eq!(read, 6 * 48);
    }

    #[test]
    fn hand_made_cases() {
        for text in [
            r#"{"a": 1 2}"#,
            r#"{"a": 1[2]}"#,
            r#"{"a": 1\"x"}"#,
            r#"{"args": {"a": 1}, "args": 2}"#,
            r#"{"args": {"a": 1}, "args": {"b": 2, "c": 3}}"#,
            r#"{"args": 2, "args": {"b": [1, {"c": "}"}]}}"#,
            r#"{"args": {"a": 1,}}"#,
            r#"{"args": {}}"#,
            r#"{ }"#,
            r#"{"a" : "\\", "b":"\"" , "c" :{"d":[[[]]]} }"#,
            "{\"a\": \"\x01\"}",
            "{\"a\": \"\u{e9}\"}",
            // Bare words and keys written twice, in the keys the model reads and in others.
            r#"{"ph": N/A, "ts": 1, "ts": NaN, "dur": NaN, "dur": 2, "x": N/A, "x": 1}"#,
            r#"{"name": true, "cat": null, "pid": false, "tid": -1, "id": [1], "bp": {}}"#,
            // A key with an escape is not the key it spells, for either reader.
            r#"{"p\u0068": "X", "ph": "i", "nam": 1, "names": 2, "ARGS": 3}"#,
        ] {
            differential::check(text.as_bytes());
        }
        let long = format!(
            "{{\"name\": \"{}\", \"args\": {{\"x\": [{}]}}}}",
            "a\\\"".repeat(40),
            "[".repeat(70) + &"]".repeat(70)
        );
        differential::check(long.as_bytes());
        // Each of these is read by the direct reader.
        let mut f = Slots::default();
        let mut a = Vec::new();
        let r = read_event_with(
            Path::best(),
            br#"{"ph": "X", "args": {"External id": 7, "s": "x\"}"}, "ts": N/A}"#,
            &mut f,
            &mut a,
        )
        .unwrap();
        assert!(r.args_object && r.ascii && r.escapes);
        assert_eq!(f.value[Slots::PH], (7, 10));
        assert_eq!(f.value[Slots::ARGS].0, 20);
        assert_eq!(f.value[Slots::TS], (0, 0));
        assert!(f.repaired && !f.duplicate);
        assert_eq!(a.len(), 2);
    }

    /// Reader speed on a real trace: `SIGHTLINE_READER_BENCH=file.json cargo test --release
    /// --lib -- --ignored reader_speed --nocapture`.
    #[test]
    #[ignore]
    fn reader_speed() {
        let Ok(path) = std::env::var("SIGHTLINE_READER_BENCH") else {
            return;
        };
        let text = std::fs::read(path).unwrap();
        // Events as Kineto indents them, or one per line.
        let starts: Vec<usize> = text
            .windows(6)
            .enumerate()
            .filter(|(_, w)| w == b"\n    {" || w[4..] == *b"\n{")
            .map(|(i, _)| i + 5)
            .collect();
        let (mut f, mut a, mut all) = (Slots::default(), Vec::new(), Vec::new());
        // The fastest of 15 rounds: the machine is shared.
        let mut best = vec![std::time::Duration::MAX; 1 + Path::available().len()];
        for _ in 0..15 {
            let t = std::time::Instant::now();
            for &s in &starts {
                std::hint::black_box(read_object(&text[s..], &mut all));
            }
            best[0] = best[0].min(t.elapsed());
            for (i, path) in Path::available().into_iter().enumerate() {
                let t = std::time::Instant::now();
                for &s in &starts {
                    std::hint::black_box(read_event_with(path, &text[s..], &mut f, &mut a));
                }
                best[i + 1] = best[i + 1].min(t.elapsed());
            }
        }
        let mb = text.len() as f64 / 1e6;
        for path in Path::available() {
            let read = starts
                .iter()
                .filter(|&&s| read_event_with(path, &text[s..], &mut f, &mut a).is_some())
                .count();
            println!("{}: read {read} of {} events", path.name(), starts.len());
        }
        // The whole parse (events into the model) with each reader.
        let readers = std::iter::once(crate::parse::Reader::Objects).chain(
            Path::available()
                .into_iter()
                .map(crate::parse::Reader::Direct),
        );
        for reader in readers {
            let mut best = std::time::Duration::MAX;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                let mut p = crate::parse::Parser::with_reader(reader);
                for c in text.chunks(1 << 20) {
                    p.feed(c);
                }
                std::hint::black_box(p.finish().unwrap());
                best = best.min(t.elapsed());
            }
            println!(
                "parse with {reader:?}: {best:?} ({:.0} MB/s)",
                mb / best.as_secs_f64()
            );
        }
        println!("{} events, {mb:.0} MB", starts.len());
        let names =
            std::iter::once("read_object").chain(Path::available().into_iter().map(Path::name));
        for (name, d) in names.zip(best) {
            println!("  {name}: {d:?} ({:.0} MB/s)", mb / d.as_secs_f64());
        }
    }
}
