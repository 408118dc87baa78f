//! Two readers of one flat JSON object: the top-level keys and the raw text of their values.
//! The structural reader (`read_event_with`, the fast path) walks the tokens of the block masks
//! of `scan.rs` in the order the grammar expects them and reads the `args` members in the same
//! walk; what it refuses goes to `read_object`, described below, its oracle in the tests.
//!
//! Trace events are flat objects whose values the model reads as text anyway (timestamps are parsed
//! from their decimal digits), so building a serde tree for each would be wasted work. This scanner
//! jumps through strings and nested values with memchr and records spans; values are not validated
//! beyond what finding their end needs. It refuses (returns `None`) on anything that is not a plain
//! object, and the caller then falls back to serde_json with repair, which is slower but thorough.

use super::scan::{self, Masks, Path};
use memchr::{memchr2, memchr3};

/// One top-level member, as byte ranges of the object's text: the key (without quotes, still
/// escaped) and the value's raw text. Ranges rather than `&str` so one buffer serves every event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    key: (u32, u32),
    value: (u32, u32),
}

impl Field {
    pub fn key<'a>(&self, text: &'a str) -> &'a str {
        &text[self.key.0 as usize..self.key.1 as usize]
    }

    pub fn value<'a>(&self, text: &'a str) -> &'a str {
        &text[self.value.0 as usize..self.value.1 as usize]
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// Index just past the closing quote of the string whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + memchr2(b'"', b'\\', &b[j..])?;
        if b[k] == b'\\' {
            j = k + 2;
            if j > b.len() {
                return None;
            }
        } else {
            return Some(k + 1);
        }
    }
}

/// Index just past the container (object or array) that opens at `i`.
///
/// Braces are counted exactly as the splitter's event scanner counts them (outside strings), and
/// an array must hold balanced braces too, so that wherever this reader finds an event's end, the
/// splitter would find the same one: the two paths agree, whatever the chunking.
fn container_end(b: &[u8], i: usize) -> Option<usize> {
    let (open, close) = if b[i] == b'{' {
        (b'{', b'}')
    } else {
        (b'[', b']')
    };
    let end = matching_close(b, i, open, close)?;
    if open == b'[' && !braces_balanced(&b[i..end]) {
        return None;
    }
    Some(end)
}

fn matching_close(b: &[u8], i: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 1u32;
    let mut j = i + 1;
    loop {
        let k = j + memchr3(b'"', open, close, &b[j..])?;
        match b[k] {
            b'"' => j = string_end(b, k)?,
            c if c == open => {
                depth += 1;
                j = k + 1;
            }
            _ => {
                depth -= 1;
                j = k + 1;
                if depth == 0 {
                    return Some(j);
                }
            }
        }
    }
}

/// Braces outside strings pair up and never close more than they opened.
fn braces_balanced(b: &[u8]) -> bool {
    let mut depth = 0i64;
    let mut j = 0;
    while let Some(k) = memchr3(b'"', b'{', b'}', &b[j..]) {
        let k = j + k;
        match b[k] {
            b'"' => match string_end(b, k) {
                Some(e) => j = e,
                None => return false,
            },
            b'{' => {
                depth += 1;
                j = k + 1;
            }
            _ => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
                j = k + 1;
            }
        }
    }
    depth == 0
}

/// Reads the members of the object at the start of `b` (after optional whitespace) into `out`
/// (cleared first); returns the index just past its closing brace. `None` when the bytes do not
/// start with a well-shaped object; a value's own syntax is not checked, except that a scalar may
/// not hold a quote or a brace (the splitter would read those as structure).
pub(crate) fn read_object(b: &[u8], out: &mut Vec<Field>) -> Option<usize> {
    out.clear();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key = (i as u32 + 1, key_end as u32 - 1);
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let start = i;
        let end = match b.get(i)? {
            b'"' => string_end(b, i)?,
            b'{' | b'[' => container_end(b, i)?,
            _ => {
                let mut j = i;
                while j < b.len() && !matches!(b[j], b',' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    if matches!(b[j], b'"' | b'{') {
                        return None;
                    }
                    j += 1;
                }
                if j == i {
                    return None;
                }
                j
            }
        };
        out.push(Field {
            key,
            value: (start as u32, end as u32),
        });
        i = skip_ws(b, end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
        // A trailing comma before the closing brace is tolerated.
        if b.get(i) == Some(&b'}') {
            return Some(i + 1);
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
    /// A raw control character (other than whitespace) is somewhere in the event.
    pub control: bool,
    /// A backslash is somewhere in the event (in a string: outside one the reader refuses it),
    /// so its strings may hold escapes; without one they are read as written, unsearched.
    pub escapes: bool,
    /// The last `args` member was an object, and its members are in the `args` list.
    pub args_object: bool,
}

/// The SIMD path this process uses, picked once.
pub(crate) fn best_path() -> Path {
    static BEST: std::sync::OnceLock<Path> = std::sync::OnceLock::new();
    *BEST.get_or_init(Path::best)
}

/// Reads an event on `path` the way [`read_object`] does, from the structural characters that
/// [`scan`](super::scan) finds 64 bytes at a time, and the members of its `args` object in the same
/// walk (offsets into `b`, as for the event's own members).
///
/// It accepts less than [`read_object`]: whatever it accepts, [`read_object`] reads to the same
/// members and the same end (tested by a differential fuzzer), and anything unusual (a backslash
/// outside a string, brackets that do not pair, an odd scalar, nesting past 63 levels) is refused,
/// so the caller falls back to [`read_object`] and the result never depends on which reader ran.
pub(crate) fn read_event_with(
    path: Path,
    b: &[u8],
    out: &mut Vec<Field>,
    args: &mut Vec<Field>,
) -> Option<EventRead> {
    // SAFETY: every `Path` value names a classifier this build has and `Path::available` checked;
    // AVX2 runs only where `is_x86_feature_detected!` found it.
    unsafe {
        match path {
            Path::Portable => walk::<scan::Portable>(b, out, args),
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => walk::<scan::Sse2>(b, out, args),
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => walk_avx2(b, out, args),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => walk::<scan::Simd128>(b, out, args),
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn walk_avx2(b: &[u8], out: &mut Vec<Field>, args: &mut Vec<Field>) -> Option<EventRead> {
    // SAFETY: the caller checked AVX2.
    unsafe { walk::<scan::Avx2>(b, out, args) }
}

/// The structural characters of one event, found block by block as the reader asks for them.
struct Tokens<'a, C> {
    b: &'a [u8],
    /// Start of the current block.
    base: usize,
    m: Masks,
    /// Tokens of the block not yet handed out: structure outside strings, and unescaped quotes.
    tokens: u64,
    /// Bytes outside strings that are neither whitespace nor structure, after the last token
    /// handed out (the bits before it are cleared as tokens go).
    other: u64,
    /// A backslash outside strings: `read_object` and the splitter treat it differently.
    stray: u64,
    /// `other` bytes after the last token of the previous block.
    carry_other: bool,
    prev_escaped: u64,
    prev_inside: u64,
    control: bool,
    ascii: bool,
    escapes: bool,
    pad: [u8; 64],
    classify: std::marker::PhantomData<C>,
}

impl<'a, C: scan::Classify> Tokens<'a, C> {
    /// # Safety
    /// The CPU must have `C`'s features.
    #[inline(always)]
    unsafe fn new(b: &'a [u8], start: usize) -> Self {
        let mut t = Tokens {
            b,
            base: start,
            m: Masks::default(),
            tokens: 0,
            other: 0,
            stray: 0,
            carry_other: false,
            prev_escaped: 0,
            prev_inside: 0,
            control: false,
            ascii: true,
            escapes: false,
            pad: [b' '; 64],
            classify: std::marker::PhantomData,
        };
        // SAFETY: the caller's promise.
        unsafe { t.load() };
        t
    }

    /// Classifies the block at `base` (padded with spaces past the end of the input).
    #[inline(always)]
    unsafe fn load(&mut self) {
        let avail = self.b.len() - self.base;
        let block: &[u8; 64] = if avail >= 64 {
            self.b[self.base..self.base + 64]
                .try_into()
                .expect("64 bytes")
        } else {
            // Only the last block is short, so the padding is written once.
            self.pad[..avail].copy_from_slice(&self.b[self.base..]);
            &self.pad
        };
        // SAFETY: the caller's promise.
        let m = unsafe { C::classify(block) };
        let quotes = m.quote & !scan::escaped(m.backslash, &mut self.prev_escaped);
        let inside = scan::prefix_xor(quotes) ^ self.prev_inside;
        self.prev_inside = ((inside as i64) >> 63) as u64;
        self.tokens = (m.structural & !inside) | quotes;
        self.other = !(m.ws | m.quote | m.structural | inside);
        self.stray = m.backslash & !inside;
        self.m = m;
    }

    /// Moves to the next block once this one's tokens are all handed out. `None` at the end of
    /// the input, or at a backslash outside strings. Not inlined: it runs once a block, and
    /// inlined at every place that takes a token it made the reader several times larger and
    /// slower (instruction cache).
    #[inline(never)]
    unsafe fn advance(&mut self) -> Option<()> {
        // The whole block lies inside the event.
        if self.stray != 0 {
            return None;
        }
        self.carry_other |= self.other != 0;
        self.control |= self.m.control != 0;
        self.ascii &= self.m.high == 0;
        self.escapes |= self.m.backslash != 0;
        self.base += 64;
        if self.base >= self.b.len() {
            return None;
        }
        // SAFETY: the caller's promise.
        unsafe { self.load() };
        Some(())
    }

    /// The next token's position, and whether anything but whitespace came before it since the
    /// previous token.
    #[inline(always)]
    unsafe fn next(&mut self) -> Option<(usize, bool)> {
        while self.tokens == 0 {
            // SAFETY: the caller's promise.
            unsafe { self.advance() }?;
        }
        let k = self.tokens.trailing_zeros() as usize;
        self.tokens &= self.tokens - 1;
        let below = (1u64 << k) - 1;
        let gap = self.carry_other | (self.other & below != 0);
        self.other &= !below & !(1u64 << k);
        self.carry_other = false;
        Some((self.base + k, gap))
    }

    /// The event ends at `p` (its closing brace, in the current block): the flags of its bytes
    /// (control, ascii, escapes).
    #[inline(always)]
    fn end(&self, p: usize) -> Option<(bool, bool, bool)> {
        let upto = low_bits(p - self.base + 1);
        if self.stray & upto != 0 {
            return None;
        }
        Some((
            self.control || self.m.control & upto != 0,
            self.ascii && self.m.high & upto == 0,
            self.escapes || self.m.backslash & upto != 0,
        ))
    }

    /// Skips the container whose opening bracket was the last token; returns the index just
    /// past its closing bracket. `None` when brackets do not pair or nest past 63 levels. Only
    /// the brackets of each block are visited.
    #[inline(always)]
    unsafe fn skip(&mut self, open: u8) -> Option<usize> {
        // A bit per depth, set for `[`.
        let mut brackets = (open == b'[') as u64;
        let mut depth = 1u32;
        loop {
            let mut left = self.tokens & self.m.bracket;
            while left != 0 {
                let k = left.trailing_zeros() as usize;
                left &= left - 1;
                let c = self.b[self.base + k];
                if c == b'{' || c == b'[' {
                    if depth >= 63 {
                        return None;
                    }
                    brackets = (brackets << 1) | (c == b'[') as u64;
                    depth += 1;
                } else {
                    if (brackets & 1 == 1) != (c == b']') {
                        return None;
                    }
                    brackets >>= 1;
                    depth -= 1;
                    if depth == 0 {
                        // Everything up to here is handed out, the container's scalars too.
                        self.tokens &= !low_bits(k + 1);
                        self.other &= !low_bits(k + 1);
                        self.carry_other = false;
                        return Some(self.base + k + 1);
                    }
                }
            }
            self.tokens = 0;
            // SAFETY: the caller's promise.
            unsafe { self.advance() }?;
        }
    }
}

/// Reads the members of the object whose `{` was the last token into `out` (and, for the event,
/// its `args` object's members into `args`), as [`read_object`] would; returns its closing
/// brace's index. `EVENT` is false when reading the args themselves (and `args` is `None`); the
/// flag with the list is set when the last `args` member was an object.
///
/// # Safety
/// The CPU must have `C`'s features.
#[inline(always)]
unsafe fn members<C: scan::Classify, const EVENT: bool>(
    t: &mut Tokens<'_, C>,
    out: &mut Vec<Field>,
    mut args: Option<(&mut Vec<Field>, &mut bool)>,
) -> Option<usize> {
    let b = t.b;
    // SAFETY (every `next` and `skip` below): the caller's promise.
    let (mut p, mut gap) = unsafe { t.next() }?;
    loop {
        // Before a key, or the closing brace (also after a trailing comma).
        if gap {
            return None;
        }
        match b[p] {
            b'"' => {}
            b'}' => return Some(p),
            _ => return None,
        }
        let (q, _) = unsafe { t.next() }?;
        let key = (p as u32 + 1, q as u32);
        let (c, c_gap) = unsafe { t.next() }?;
        if b[c] != b':' || c_gap {
            return None;
        }
        let (v, v_gap) = unsafe { t.next() }?;
        // `EVENT` rather than `args.is_some()`: with a constant the args level does not call
        // itself, so both levels inline into one function and the tokens stay in registers.
        let is_args = EVENT && is_args(b, key);
        let mut after = None;
        let value = if !v_gap {
            match b[v] {
                b'"' => {
                    let (e, _) = unsafe { t.next() }?;
                    (v, e + 1)
                }
                b'{' if is_args => {
                    let (list, found) = args.as_mut().expect("reading the event");
                    // Of two `args` members, the last counts (as for every key).
                    list.clear();
                    let e = unsafe { members::<C, false>(t, list, None) }?;
                    **found = true;
                    out.push(Field {
                        key,
                        value: (v as u32, e as u32 + 1),
                    });
                    let (n, n_gap) = unsafe { t.next() }?;
                    if !after_value(b, n, n_gap)? {
                        return Some(n);
                    }
                    (p, gap) = unsafe { t.next() }?;
                    continue;
                }
                open @ (b'{' | b'[') => (v, unsafe { t.skip(open) }?),
                _ => return None,
            }
        } else {
            // A scalar: up to the first whitespace, then only whitespace up to the comma or
            // brace that ends it (which is `v` itself).
            let s = skip_ws(b, c + 1);
            let mut e = s;
            while e < v && !matches!(b[e], b' ' | b'\t' | b'\n' | b'\r') {
                e += 1;
            }
            if !ws_only(b, e, v) {
                return None;
            }
            after = Some(v);
            (s, e)
        };
        if is_args {
            // An `args` that is not an object: the event's args are not read here.
            if let Some((_, found)) = args.as_mut() {
                **found = false;
            }
        }
        out.push(Field {
            key,
            value: (value.0 as u32, value.1 as u32),
        });
        (p, gap) = match after {
            Some(v) => (v, false),
            None => unsafe { t.next() }?,
        };
        if !after_value(b, p, gap)? {
            return Some(p);
        }
        (p, gap) = unsafe { t.next() }?;
    }
}

/// After a value: `Some(true)` for a comma (another member follows), `Some(false)` for the
/// closing brace, `None` for anything else.
#[inline(always)]
fn after_value(b: &[u8], p: usize, gap: bool) -> Option<bool> {
    match (b[p], gap) {
        (b',', false) => Some(true),
        (b'}', false) => Some(false),
        _ => None,
    }
}

#[inline(always)]
fn is_args(b: &[u8], key: (u32, u32)) -> bool {
    key.1 - key.0 == 4 && b[key.0 as usize..key.1 as usize] == *b"args"
}

/// Bits `0..n` (`n` up to 64).
#[inline(always)]
fn low_bits(n: usize) -> u64 {
    ((1u128 << n) - 1) as u64
}

fn ws_only(b: &[u8], from: usize, to: usize) -> bool {
    b[from..to]
        .iter()
        .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
}

/// # Safety
/// The CPU must have `C`'s features.
#[inline(always)]
unsafe fn walk<C: scan::Classify>(
    b: &[u8],
    out: &mut Vec<Field>,
    args: &mut Vec<Field>,
) -> Option<EventRead> {
    out.clear();
    args.clear();
    let start = skip_ws(b, 0);
    if b.get(start) != Some(&b'{') {
        return None;
    }
    // SAFETY: the caller's promise.
    let mut t = unsafe { Tokens::<C>::new(b, start) };
    // The event's own brace.
    unsafe { t.next() }?;
    let mut args_object = false;
    let end = unsafe { members::<C, true>(&mut t, out, Some((args, &mut args_object))) }?;
    let (control, ascii, escapes) = t.end(end)?;
    Some(EventRead {
        end: end + 1,
        ascii,
        control,
        escapes,
        args_object,
    })
}

/// True for a scalar value that JSON does not allow (`N/A`, `NaN`, ...): read as absent.
pub(crate) fn is_bare_word(value: &str) -> bool {
    let c = value.as_bytes()[0];
    let json_start = matches!(c, b'"' | b'{' | b'[' | b'-') || c.is_ascii_digit();
    !(json_start || matches!(value, "true" | "false" | "null"))
}

/// Differential checks of [`read_event_with`] against [`read_object`], for the tests and the fuzzer.
#[cfg(test)]
pub(crate) mod differential {
    use super::*;

    /// Checks one text on every path: the paths agree, and whatever `read_event_with` accepts,
    /// `read_object` reads to the same end and members, with the args' members as
    /// `read_object` reads them from the args' text. Returns whether it accepted.
    pub(crate) fn check(text: &[u8]) -> bool {
        let mut old = Vec::new();
        let old_end = read_object(text, &mut old);
        let mut first: Option<(Option<EventRead>, Vec<Field>, Vec<Field>)> = None;
        for path in Path::available() {
            let (mut f, mut a) = (Vec::new(), Vec::new());
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
                        assert_eq!(spans(&f), spans(f0), "{}", path.name());
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
        assert_eq!(spans(&fields), spans(&old), "members of {shown:?}");
        let body = &text[..read.end];
        assert_eq!(read.ascii, body.is_ascii(), "{shown:?}");
        let control = body
            .iter()
            .any(|&c| c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r'));
        assert_eq!(read.control, control, "{shown:?}");
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

    fn fields(text: &str) -> Option<Vec<(String, String)>> {
        let mut out = Vec::new();
        read_object(text.as_bytes(), &mut out)?;
        Some(
            out.iter()
                .map(|f| (f.key(text).to_string(), f.value(text).to_string()))
                .collect(),
        )
    }

    #[test]
    fn reads_members_as_raw_text() {
        let got =
            fields(r#" { "ph" : "X", "ts": 12.5 ,"args": {"a": [1, {"b": "}"}]}, "s\"q": "x\\" }"#);
        let want = [
            ("ph", "\"X\""),
            ("ts", "12.5"),
            ("args", "{\"a\": [1, {\"b\": \"}\"}]}"),
            ("s\\\"q", "\"x\\\\\""),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(got.unwrap(), want);
        assert_eq!(fields("{}").unwrap(), vec![]);
        assert_eq!(fields(r#"{"a": 1,}"#).unwrap().len(), 1);
    }

    #[test]
    fn refuses_what_is_not_an_object() {
        for bad in [
            "[1]",
            "{\"a\" 1}",
            "{\"a\": 1 \"b\": 2}",
            "{\"a\": }",
            "{\"a\": \"unterminated}",
            "{\"a\": [1}",
            // What the splitter would count differently: braces in an array, a scalar with a brace.
            "{\"a\": [{]}",
            "{\"a\": [}]}",
            "{\"a\": 1{}",
            "{\"a\": x\"y}",
        ] {
            assert!(fields(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_structural_reader_agrees_with_read_object_on_real_events() {
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
    fn the_structural_reader_agrees_with_read_object_on_mutated_events() {
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
        ] {
            differential::check(text.as_bytes());
        }
        let long = format!(
            "{{\"name\": \"{}\", \"args\": {{\"x\": [{}]}}}}",
            "a\\\"".repeat(40),
            "[".repeat(70) + &"]".repeat(70)
        );
        differential::check(long.as_bytes());
        // Each of these is read by the structural reader.
        let mut f = Vec::new();
        let mut a = Vec::new();
        let r = read_event_with(
            best_path(),
            br#"{"ph": "X", "args": {"External id": 7, "s": "x\"}"}}"#,
            &mut f,
            &mut a,
        )
        .unwrap();
        assert!(r.args_object && r.ascii && !r.control);
        assert_eq!(f.len(), 2);
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
        let (mut f, mut a) = (Vec::new(), Vec::new());
        // The fastest of 15 rounds: the machine is shared.
        let mut best = vec![std::time::Duration::MAX; 1 + Path::available().len()];
        for _ in 0..15 {
            let t = std::time::Instant::now();
            for &s in &starts {
                std::hint::black_box(read_object(&text[s..], &mut f));
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
        // The whole parse (events into the model) with each reader.
        let readers = std::iter::once(crate::parse::Reader::Objects).chain(
            Path::available()
                .into_iter()
                .map(crate::parse::Reader::Structural),
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

    #[test]
    fn bare_words() {
        assert!(is_bare_word("N/A") && is_bare_word("NaN"));
        assert!(!is_bare_word("null") && !is_bare_word("-1") && !is_bare_word("\"N/A\""));
    }
}
