//! `read_object`: the reader of one flat JSON object's top-level keys and the raw text of their
//! values that the direct reader (`direct.rs`, the fast path) falls back to, and its oracle in
//! the tests.
//!
//! Trace events are flat objects whose values the model reads as text anyway (timestamps are parsed
//! from their decimal digits), so building a serde tree for each would be wasted work. This scanner
//! jumps through strings and nested values with memchr and records spans; values are not validated
//! beyond what finding their end needs. It refuses (returns `None`) on anything that is not a plain
//! object, and the caller then falls back to serde_json with repair, which is slower but thorough.

use memchr::{memchr2, memchr3};

/// One top-level member, as byte ranges of the object's text: the key (without quotes, still
/// escaped) and the value's raw text. Ranges rather than `&str` so one buffer serves every event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(super) key: (u32, u32),
    pub(super) value: (u32, u32),
}

impl Field {
    pub fn key<'a>(&self, text: &'a str) -> &'a str {
        &text[self.key.0 as usize..self.key.1 as usize]
    }

    pub fn value<'a>(&self, text: &'a str) -> &'a str {
        &text[self.value.0 as usize..self.value.1 as usize]
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace (or `b.len()`).
#[inline(always)]
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
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

/// True for a scalar value that JSON does not allow (`N/A`, `NaN`, ...): read as absent.
pub(crate) fn is_bare_word(value: &str) -> bool {
    is_bare(value.as_bytes())
}

/// [`is_bare_word`] of a value's bytes.
#[inline(always)]
pub(crate) fn is_bare(value: &[u8]) -> bool {
    let c = value[0];
    let json_start = matches!(c, b'"' | b'{' | b'[' | b'-') || c.is_ascii_digit();
    !(json_start || matches!(value, b"true" | b"false" | b"null"))
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
    fn bare_words() {
        assert!(is_bare_word("N/A") && is_bare_word("NaN"));
        assert!(!is_bare_word("null") && !is_bare_word("-1") && !is_bare_word("\"N/A\""));
    }
}
