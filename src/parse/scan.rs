//! Structural scanning 64 bytes at a time, in the manner of simdjson's first stage.
//!
//! Each 64-byte block becomes a few bitmasks (quotes, backslashes, brackets, colons, commas,
//! control and non-ASCII bytes) with one compare per character class and lane; escaped quotes
//! and the inside of strings then follow from carry-less bit arithmetic, so a reader walks the
//! block's structural characters with `trailing_zeros` instead of testing every byte. A Kineto
//! event has about one structural character per 9 bytes, so this skips most of the text.
//!
//! Three classifiers compute the same [`Masks`]: SSE2 or AVX2 on x86-64 (AVX2 chosen at run time),
//! `simd128` on wasm32 when the module is built with it, and a portable one everywhere; every
//! path is tested against the portable one ([`classify_with`]).

/// Bit `i` of each mask says what byte `i` of the block is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    pub quote: u64,
    pub backslash: u64,
    /// `{`, `[`, `}`, `]`, `:` or `,` (the reader looks at the byte for which).
    pub structural: u64,
    /// `{`, `[`, `}` or `]`.
    pub bracket: u64,
    /// Space, `\t`, `\n`, `\r`.
    pub ws: u64,
    /// Below 0x20 and not `\t`, `\n` or `\r`: what JSON forbids raw in a string.
    pub control: u64,
    /// 0x80 and above: text that needs UTF-8 validation.
    pub high: u64,
}

/// A way of computing [`Masks`] for a block.
pub(crate) trait Classify {
    /// # Safety
    /// The CPU must have the classifier's features (checked by whoever picked it).
    unsafe fn classify(block: &[u8; 64]) -> Masks;
}

/// One byte at a time: the reference, and the path where no SIMD is available.
pub(crate) struct Portable;

impl Classify for Portable {
    #[inline(always)]
    unsafe fn classify(block: &[u8; 64]) -> Masks {
        let mut m = Masks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => m.quote |= bit,
                b'\\' => m.backslash |= bit,
                b'{' | b'[' | b'}' | b']' => {
                    m.structural |= bit;
                    m.bracket |= bit;
                }
                b':' | b',' => m.structural |= bit,
                b' ' | b'\t' | b'\n' | b'\r' => m.ws |= bit,
                0..=0x1f => m.control |= bit,
                0x80..=0xff => m.high |= bit,
                _ => {}
            }
        }
        m
    }
}

/// Joins the 16- or 32-bit masks of a block's lanes into one 64-bit mask per class. The lanes'
/// masks are gathered in arrays first: or-ing each into a struct field as it came made the
/// compiler pack the fields into vectors and rebuild them byte by byte.
#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
))]
#[inline(always)]
fn join<const N: usize>(lanes: [[u32; 7]; N]) -> Masks {
    let width = 64 / N;
    let class = |c: usize| {
        let mut m = 0u64;
        for (i, lane) in lanes.iter().enumerate() {
            m |= (lane[c] as u64) << (i * width);
        }
        m
    };
    Masks {
        quote: class(0),
        backslash: class(1),
        structural: class(2),
        ws: class(3),
        control: class(4),
        high: class(5),
        bracket: class(6),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{join, Classify, Masks};
    use std::arch::x86_64::*;

    /// Four 16-byte lanes (SSE2 is part of x86-64, so this needs no check).
    pub(crate) struct Sse2;

    impl Classify for Sse2 {
        #[inline(always)]
        unsafe fn classify(block: &[u8; 64]) -> Masks {
            let mut lanes = [[0u32; 7]; 4];
            for (i, lane) in lanes.iter_mut().enumerate() {
                // SAFETY: 16 bytes at i * 16 lie within the 64-byte block; loadu takes any alignment.
                let v = unsafe { _mm_loadu_si128(block.as_ptr().add(i * 16) as *const __m128i) };
                let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
                let bits = |x: __m128i| _mm_movemask_epi8(x) as u32;
                // `[` and `{` differ only in bit 0x20, as do `]` and `}`.
                let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
                let fold = |c: u8| _mm_cmpeq_epi8(folded, _mm_set1_epi8(c as i8));
                let bracket = _mm_or_si128(fold(b'{'), fold(b'}'));
                let structural = _mm_or_si128(bracket, _mm_or_si128(eq(b':'), eq(b',')));
                let ws3 = _mm_or_si128(_mm_or_si128(eq(b'\t'), eq(b'\n')), eq(b'\r'));
                // Signed compare: below 0x20, or 0x80 and above (both have the sign bit clear
                // only in the first case).
                let low = _mm_andnot_si128(v, _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
                let control = _mm_andnot_si128(ws3, low);
                *lane = [
                    bits(eq(b'"')),
                    bits(eq(b'\\')),
                    bits(structural),
                    bits(_mm_or_si128(ws3, eq(b' '))),
                    bits(control),
                    bits(v),
                    bits(bracket),
                ];
            }
            join(lanes)
        }
    }

    /// Two 32-byte lanes.
    pub(crate) struct Avx2;

    impl Classify for Avx2 {
        #[inline(always)]
        unsafe fn classify(block: &[u8; 64]) -> Masks {
            // SAFETY: the caller checked AVX2.
            unsafe { avx2_masks(block) }
        }
    }

    /// A function of its own so that it, and the closures in it, are compiled with AVX2: the
    /// intrinsics then inline (in a closure of a function without the feature they are calls).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn avx2_masks(block: &[u8; 64]) -> Masks {
        {
            // SAFETY: both 32-byte loads lie within the block; the caller checked AVX2.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256(block.as_ptr() as *const __m256i),
                    _mm256_loadu_si256(block.as_ptr().add(32) as *const __m256i),
                )
            };
            // A macro rather than a closure taking a closure: this must inline into the caller
            // that has AVX2 enabled, or every vector crosses a call.
            macro_rules! mask {
                (|$v:ident| $e:expr) => {{
                    let f = |$v: __m256i| $e;
                    (_mm256_movemask_epi8(f(lo)) as u32 as u64)
                        | ((_mm256_movemask_epi8(f(hi)) as u32 as u64) << 32)
                }};
            }
            let eq = |v: __m256i, c: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8));
            let ws3 = |v: __m256i| {
                _mm256_or_si256(_mm256_or_si256(eq(v, b'\t'), eq(v, b'\n')), eq(v, b'\r'))
            };
            // `[` and `{` differ only in bit 0x20, as do `]` and `}`.
            let bracket = |v: __m256i| {
                let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
                _mm256_or_si256(eq(folded, b'{'), eq(folded, b'}'))
            };
            Masks {
                quote: mask!(|v| eq(v, b'"')),
                backslash: mask!(|v| eq(v, b'\\')),
                structural: mask!(|v| _mm256_or_si256(
                    bracket(v),
                    _mm256_or_si256(eq(v, b':'), eq(v, b','))
                )),
                bracket: mask!(|v| bracket(v)),
                ws: mask!(|v| _mm256_or_si256(ws3(v), eq(v, b' '))),
                control: mask!(|v| {
                    // Signed: below 0x20 and not 0x80 and above.
                    let low = _mm256_andnot_si256(v, _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));
                    _mm256_andnot_si256(ws3(v), low)
                }),
                high: mask!(|v| v),
            }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use super::{join, Classify, Masks};
    use std::arch::wasm32::*;

    /// Four 16-byte lanes of wasm SIMD (the module is built with `+simd128`).
    pub(crate) struct Simd128;

    impl Classify for Simd128 {
        #[inline(always)]
        unsafe fn classify(block: &[u8; 64]) -> Masks {
            let mut lanes = [[0u32; 7]; 4];
            for (i, lane) in lanes.iter_mut().enumerate() {
                // SAFETY: 16 bytes at i * 16 lie within the block; v128_load takes any alignment.
                let v = unsafe { v128_load(block.as_ptr().add(i * 16) as *const v128) };
                let eq = |c: u8| i8x16_eq(v, u8x16_splat(c));
                let bits = |x: v128| i8x16_bitmask(x) as u32;
                let folded = v128_or(v, u8x16_splat(0x20));
                let fold = |c: u8| i8x16_eq(folded, u8x16_splat(c));
                let bracket = v128_or(fold(b'{'), fold(b'}'));
                let structural = v128_or(bracket, v128_or(eq(b':'), eq(b',')));
                let ws3 = v128_or(v128_or(eq(b'\t'), eq(b'\n')), eq(b'\r'));
                let control = v128_andnot(u8x16_lt(v, u8x16_splat(0x20)), ws3);
                *lane = [
                    bits(eq(b'"')),
                    bits(eq(b'\\')),
                    bits(structural),
                    bits(v128_or(ws3, eq(b' '))),
                    bits(control),
                    bits(v),
                    bits(bracket),
                ];
            }
            join(lanes)
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) use wasm::Simd128;
#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Sse2};

/// The classifiers this build has; which one runs is [`Path::best`] unless a test asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Path {
    /// Every path this build and this CPU can run, portable first.
    pub fn available() -> Vec<Path> {
        #[allow(unused_mut)]
        let mut paths = vec![Path::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            paths.push(Path::Sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                paths.push(Path::Avx2);
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        paths.push(Path::Simd128);
        paths
    }

    /// The path to use: `SIGHTLINE_SCAN` (`portable`, `sse2`, `avx2`, `simd128`) when it names
    /// one this CPU has, else the fastest measured. On x86-64 that is SSE2: AVX2's wider blocks
    /// gave nothing here (the reader's time goes to its tokens, not to classifying bytes), and
    /// were 5-15% slower in `reader_speed` on an AMD EPYC; it stays a tested choice.
    pub fn best() -> Path {
        let available = Path::available();
        let asked = std::env::var("SIGHTLINE_SCAN").ok();
        if let Some(p) = available
            .iter()
            .find(|p| asked.as_deref() == Some(p.name()))
        {
            return *p;
        }
        #[cfg(target_arch = "x86_64")]
        return Path::Sse2;
        #[allow(unreachable_code)]
        *available.last().expect("the portable path is always there")
    }

    pub fn name(self) -> &'static str {
        match self {
            Path::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => "sse2",
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => "avx2",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => "simd128",
        }
    }
}

/// The masks of one block by `path` (for tests of the paths against each other).
#[cfg(test)]
pub(crate) fn classify_with(path: Path, block: &[u8; 64]) -> Masks {
    // SAFETY: `path` comes from `Path::available`, which checked the CPU.
    unsafe {
        match path {
            Path::Portable => Portable::classify(block),
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => Sse2::classify(block),
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => avx2_classify(block),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Path::Simd128 => Simd128::classify(block),
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx2")]
unsafe fn avx2_classify(block: &[u8; 64]) -> Masks {
    // SAFETY: the caller checked AVX2.
    unsafe { Avx2::classify(block) }
}

const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// The bits of the characters escaped by a backslash (simdjson's `find_escaped`): a character is
/// escaped when an odd run of backslashes ends just before it. `prev` carries a run that reaches
/// the block's last byte into the next block.
#[inline(always)]
pub(crate) fn escaped(backslash: u64, prev: &mut u64) -> u64 {
    if backslash == 0 {
        let e = *prev;
        *prev = 0;
        return e;
    }
    let backslash = backslash & !*prev;
    let follows_escape = (backslash << 1) | *prev;
    let odd_starts = backslash & !EVEN_BITS & !follows_escape;
    let (even_starts, overflow) = odd_starts.overflowing_add(backslash);
    *prev = overflow as u64;
    let invert = even_starts << 1;
    (EVEN_BITS ^ invert) & follows_escape
}

/// Bit `i` is the XOR of bits `0..=i`: set from an opening quote up to (not including) its
/// closing quote.
#[inline(always)]
pub(crate) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(text: &[u8]) -> [u8; 64] {
        let mut b = [b' '; 64];
        b[..text.len()].copy_from_slice(text);
        b
    }

    #[test]
    fn every_path_equals_the_portable_one_on_every_byte() {
        // Each byte value in every position, and real event text.
        let mut blocks = Vec::new();
        for v in 0..=255u8 {
            let mut b = [0u8; 64];
            for (i, x) in b.iter_mut().enumerate() {
                *x = v.wrapping_add((i as u8).wrapping_mul(37));
            }
            blocks.push(b);
            blocks.push([v; 64]);
        }
        blocks.push(block(
            br#"{"ph": "X", "name": "a\"b\\", "args": {"x": [1, {}]}}, \t\n"#,
        ));
        for b in &blocks {
            let want = classify_with(Path::Portable, b);
            for path in Path::available() {
                assert_eq!(classify_with(path, b), want, "{}", path.name());
            }
        }
    }

    #[test]
    fn escapes_and_strings() {
        let b = block(br#""a\"b" \\"c\\\"d" x"#);
        let m = classify_with(Path::Portable, &b);
        let mut prev = 0;
        let quotes = m.quote & !escaped(m.backslash, &mut prev);
        let bits: Vec<u32> = (0..64).filter(|i| quotes >> i & 1 == 1).collect();
        assert_eq!(bits, vec![0, 5, 9, 16]);
        let inside = prefix_xor(quotes);
        assert!(inside & 1 == 1 && inside >> 5 & 1 == 0 && inside >> 10 & 1 == 1);
        // A run of backslashes reaching the block's end escapes the next block's first byte.
        let mut b = [b'a'; 64];
        b[63] = b'\\';
        let mut prev = 0;
        escaped(classify_with(Path::Portable, &b).backslash, &mut prev);
        assert_eq!(prev, 1);
        assert_eq!(escaped(0, &mut prev), 1);
        b[62] = b'\\';
        let mut prev = 0;
        escaped(classify_with(Path::Portable, &b).backslash, &mut prev);
        assert_eq!(prev, 0);
    }
}
