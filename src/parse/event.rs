//! Reading the fields of one event from the spans the readers of `fields.rs` found (serde_json
//! reads only the events they refuse, with repair), with our own code for the values that must
//! not go through a float (timestamps) or that real files write in odd ways (string pids).

use super::fields::{is_bare, is_bare_word, read_object, Field};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// The fields of a trace event that the model keeps, as raw JSON text (`"X"`, `12.5`, `{...}`).
#[derive(Default)]
pub(crate) struct Ev<'a> {
    pub ph: Option<&'a str>,
    pub name: Option<&'a str>,
    pub cat: Option<&'a str>,
    pub pid: Option<&'a str>,
    pub tid: Option<&'a str>,
    pub ts: Option<&'a str>,
    pub dur: Option<&'a str>,
    pub id: Option<&'a str>,
    pub bp: Option<&'a str>,
    pub args: Option<&'a str>,
    /// A value was a bare word such as `N/A` and is read as absent.
    pub repaired: bool,
    /// A key the model reads was written twice; the last value is kept.
    pub duplicate: bool,
    /// The event's text holds raw control characters (not valid JSON), read as text.
    pub control: bool,
    /// The event's text holds no backslash (the direct reader saw every byte), so a string
    /// value has no escapes to decode: [`Ev::text`] need not search it.
    pub plain: bool,
    /// The members of `args`, already found by [`read_event_with`](super::direct::read_event_with), as
    /// spans of the event's text (given with them): the args need not be read again.
    pub args_members: Option<(&'a str, &'a [Field])>,
}

impl<'a> Ev<'a> {
    /// [`raw_str`] of one of this event's values, without the search for escapes when the event
    /// has none (`plain`): that search ran for the phase, category and name of every event.
    #[inline]
    pub fn text(&self, v: Option<&'a str>) -> Cow<'a, str> {
        unquote(v, !self.plain)
    }

    /// The event whose values `slots` found in `text`.
    #[inline]
    pub fn from_slots(text: &'a str, slots: &Slots) -> Ev<'a> {
        let get = |k: usize| {
            let (a, b) = slots.value[k];
            (b > 0).then(|| &text[a as usize..b as usize])
        };
        Ev {
            ph: get(Slots::PH),
            name: get(Slots::NAME),
            cat: get(Slots::CAT),
            pid: get(Slots::PID),
            tid: get(Slots::TID),
            ts: get(Slots::TS),
            dur: get(Slots::DUR),
            id: get(Slots::ID),
            bp: get(Slots::BP),
            args: get(Slots::ARGS),
            repaired: slots.repaired,
            duplicate: slots.duplicate,
            ..Ev::default()
        }
    }
}

/// Where the values of the keys the model reads lie in an event's text: a span of it per key,
/// `(0, 0)` for a key that is absent or whose value is a bare word such as `N/A` (read as
/// absent). The direct reader fills it as it meets each key; [`Slots::from_fields`] fills it
/// from [`read_object`]'s members, the same way (the differential tests check the two agree).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slots {
    pub value: [(u32, u32); Slots::COUNT],
    /// A value was a bare word and is read as absent.
    pub repaired: bool,
    /// A key the model reads was written twice; the last value is kept.
    pub duplicate: bool,
}

impl Slots {
    pub const PH: usize = 0;
    pub const NAME: usize = 1;
    pub const CAT: usize = 2;
    pub const PID: usize = 3;
    pub const TID: usize = 4;
    pub const TS: usize = 5;
    pub const DUR: usize = 6;
    pub const ID: usize = 7;
    pub const BP: usize = 8;
    pub const ARGS: usize = 9;
    const COUNT: usize = 10;

    /// The slot of a key as written between its quotes (escapes undecoded, as `read_object`
    /// gives it), by its length and then its bytes: no hashing, no string compare.
    #[inline(always)]
    pub fn of(key: &[u8]) -> Option<usize> {
        match *key {
            [b'p', b'h'] => Some(Self::PH),
            [b't', b's'] => Some(Self::TS),
            [b'i', b'd'] => Some(Self::ID),
            [b'b', b'p'] => Some(Self::BP),
            [b'c', b'a', b't'] => Some(Self::CAT),
            [b'p', b'i', b'd'] => Some(Self::PID),
            [b't', b'i', b'd'] => Some(Self::TID),
            [b'd', b'u', b'r'] => Some(Self::DUR),
            [b'n', b'a', b'm', b'e'] => Some(Self::NAME),
            [b'a', b'r', b'g', b's'] => Some(Self::ARGS),
            _ => None,
        }
    }

    /// Takes the value at `value` (a span of `text`) for `slot`.
    #[inline(always)]
    pub fn put(&mut self, slot: usize, text: &[u8], value: (u32, u32)) {
        let v = &mut self.value[slot];
        self.duplicate |= *v != (0, 0);
        if is_bare(&text[value.0 as usize..value.1 as usize]) {
            self.repaired = true;
            *v = (0, 0);
        } else {
            *v = value;
        }
    }

    /// The slots of an object whose members `fields` (from [`read_object`]) found in `text`.
    pub fn from_fields(text: &[u8], fields: &[Field]) -> Slots {
        let mut s = Slots::default();
        for f in fields {
            if let Some(k) = Slots::of(&text[f.key.0 as usize..f.key.1 as usize]) {
                s.put(k, text, f.value);
            }
        }
        s
    }
}

/// The same fields read by serde_json: the slow path for events the scanner refuses.
#[derive(Deserialize)]
pub(crate) struct RawEvent<'a> {
    #[serde(borrow, default)]
    ph: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cat: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    bp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

impl<'a> RawEvent<'a> {
    pub fn into_ev(self) -> Ev<'a> {
        let t = |v: Option<&'a RawValue>| v.map(RawValue::get);
        Ev {
            ph: t(self.ph),
            name: t(self.name),
            cat: t(self.cat),
            pid: t(self.pid),
            tid: t(self.tid),
            ts: t(self.ts),
            dur: t(self.dur),
            id: t(self.id),
            bp: t(self.bp),
            args: t(self.args),
            repaired: false,
            duplicate: false,
            control: false,
            plain: false,
            args_members: None,
        }
    }
}

/// The args that analyses need typed, as raw text; everything else stays in the args store.
#[derive(Default)]
pub(crate) struct Args<'a> {
    pub external_id: Option<&'a str>,
    pub correlation: Option<&'a str>,
    pub input_dims: Option<&'a str>,
    // Metadata (`M`) events.
    pub name: Option<&'a str>,
    pub labels: Option<&'a str>,
    pub sort_index: Option<&'a str>,
    // `[memory]` instants.
    pub device_type: Option<&'a str>,
    pub device_id: Option<&'a str>,
    pub bytes: Option<&'a str>,
    pub total_allocated: Option<&'a str>,
    pub total_reserved: Option<&'a str>,
    pub addr: Option<&'a str>,
    /// A top-level value was a bare word such as `N/A` (read as absent).
    pub repaired: bool,
    /// The text was an object (its members are in the `fields` passed to [`Args::read`]).
    pub object: bool,
}

impl<'a> Args<'a> {
    /// Reads the typed args out of an args object's text (empty when it is not an object).
    pub fn read(text: &'a str, fields: &mut Vec<Field>) -> Args<'a> {
        if read_object(text.as_bytes(), fields).is_none() {
            return Args::default();
        }
        Args::from_fields(text, fields)
    }

    /// The typed args of an object whose members `fields` found in `text`.
    pub fn from_fields(text: &'a str, fields: &[Field]) -> Args<'a> {
        let mut a = Args {
            object: true,
            ..Args::default()
        };
        for f in fields.iter() {
            let v = f.value(text);
            let slot = match f.key(text) {
                "External id" | "external id" => &mut a.external_id,
                "correlation" => &mut a.correlation,
                "Input Dims" => &mut a.input_dims,
                "name" => &mut a.name,
                "labels" => &mut a.labels,
                "sort_index" => &mut a.sort_index,
                "Device Type" => &mut a.device_type,
                "Device Id" => &mut a.device_id,
                "Bytes" => &mut a.bytes,
                "Total Allocated" => &mut a.total_allocated,
                "Total Reserved" => &mut a.total_reserved,
                "Addr" => &mut a.addr,
                _ => {
                    a.repaired |= is_bare_word(v);
                    continue;
                }
            };
            if is_bare_word(v) {
                a.repaired = true;
            } else {
                *slot = Some(v);
            }
        }
        a
    }
}

/// The text of a raw JSON value as a string: a JSON string's contents (unescaped), a number's
/// digits, or empty for `null`.
pub(crate) fn raw_str(v: Option<&str>) -> Cow<'_, str> {
    unquote(v, true)
}

/// [`raw_str`], searching a string for escapes only when it `may_escape`. Always inlined: as a
/// call from the per-event path it cost 1.7% of a one-core `summary`.
#[inline(always)]
fn unquote(v: Option<&str>, may_escape: bool) -> Cow<'_, str> {
    let Some(t) = v else { return Cow::Borrowed("") };
    if t.len() >= 2 && t.starts_with('"') {
        let inner = &t[1..t.len() - 1];
        if !may_escape || memchr::memchr(b'\\', inner.as_bytes()).is_none() {
            return Cow::Borrowed(inner);
        }
        return serde_json::from_str::<String>(t)
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(inner));
    }
    if t == "null" {
        return Cow::Borrowed("");
    }
    Cow::Borrowed(t)
}

/// Parses the decimal text of a microsecond value (`"1234.567"`, `1.7e15`, `"-3"`) into integer
/// nanoseconds without going through a float when the text is plain decimal, so epoch-scale
/// microseconds with three decimals stay exact. Digits past the nanosecond are rounded half up.
pub(crate) fn parse_us_to_ns(text: &str) -> Option<i64> {
    let t = text.trim_matches('"').trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let bytes = digits.as_bytes();
    let mut int: i64 = 0;
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        let d = (bytes[i] - b'0') as i64;
        // 18 digits always fit in an i64: only longer numbers are checked. (An overflow check is
        // a 128-bit multiply in wasm32, a call per digit of every timestamp.)
        int = if i < SAFE_DIGITS {
            int * 10 + d
        } else {
            int.checked_mul(10)?.checked_add(d)?
        };
        i += 1;
    }
    let int_digits = i;
    let mut frac: i64 = 0;
    let mut frac_digits = 0;
    let mut round_up = false;
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            if frac_digits < 3 {
                frac = frac * 10 + (bytes[i] - b'0') as i64;
                frac_digits += 1;
            } else if frac_digits == 3 {
                round_up = bytes[i] >= b'5';
                frac_digits += 1;
            }
            i += 1;
        }
    }
    if i != bytes.len() {
        // Exponent or something else: a float is the best we can do.
        let f: f64 = t.parse().ok()?;
        if !f.is_finite() || f.abs() > 9.0e15 {
            return None;
        }
        return Some((f * 1000.0).round() as i64);
    }
    if int_digits == 0 && frac_digits == 0 {
        return None;
    }
    while frac_digits < 3 {
        frac *= 10;
        frac_digits += 1;
    }
    let ns = if int_digits <= SAFE_DIGITS - 3 {
        int * 1000 + frac + round_up as i64
    } else {
        int.checked_mul(1000)?.checked_add(frac + round_up as i64)?
    };
    Some(if neg { -ns } else { ns })
}

/// Decimal digits that an `i64` holds whatever they are (10^18 - 1 < 2^63).
const SAFE_DIGITS: usize = 18;

/// A plain decimal integer (`-` and up to [`SAFE_DIGITS`] digits) read without overflow checks;
/// `None` for anything else, which `str::parse` then reads (a `+`, more digits, an overflow).
#[inline]
fn plain_int(t: &str) -> Option<i64> {
    let (neg, digits) = match t.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        b => (false, b),
    };
    if digits.is_empty() || digits.len() > SAFE_DIGITS {
        return None;
    }
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as i64;
    }
    Some(if neg { -n } else { n })
}

/// Reads an integer id: a JSON integer, a float (truncated), or a string holding one (`"7"`,
/// `"stream 7"`: the trailing digits). `None` when there is no number or it does not fit in `i64`.
pub(crate) fn parse_int(v: Option<&str>) -> Option<i64> {
    let t = v?;
    if let Some(n) = plain_int(t) {
        return Some(n);
    }
    if let Some(s) = t.strip_prefix('"') {
        let s = s.strip_suffix('"').unwrap_or(s).trim();
        if let Ok(n) = s.parse::<i64>() {
            return Some(n);
        }
        let tail = s.trim_end_matches(|c: char| c.is_ascii_digit());
        let digits = &s[tail.len()..];
        if digits.is_empty() {
            return None;
        }
        return digits.parse().ok();
    }
    if let Ok(n) = t.parse::<i64>() {
        return Some(n);
    }
    let f: f64 = t.parse().ok()?;
    (f.is_finite() && f.abs() < 9.2e18).then_some(f as i64)
}

/// Reads a number as f64 (counter values, byte counts wider than i64).
pub(crate) fn parse_f64(t: &str) -> Option<f64> {
    let t = t
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(t);
    t.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Formats `Input Dims` the way Python's `str()` prints the list, which is how PyTorch keys its
/// table by input shape: `[[64, 64, 3], []]`.
pub(crate) fn format_dims(raw: &str, out: &mut String) {
    out.clear();
    let mut in_str = false;
    for c in raw.chars() {
        if in_str {
            if c == '"' {
                in_str = false;
                out.push('\'');
            } else {
                out.push(c);
            }
            continue;
        }
        match c {
            '"' => {
                in_str = true;
                out.push('\'');
            }
            ',' => out.push_str(", "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
}

/// Makes a damaged event readable where the damage is of a kind real files show: raw control
/// characters inside strings (escaped), and bare `N/A`, `NaN`, `Infinity` values (made `null`).
/// Returns `None` when nothing was changed (the event is broken some other way).
pub(crate) fn repair(json: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(json.len() + 16);
    let mut changed = false;
    let mut in_str = false;
    let mut esc = false;
    let mut i = 0;
    while i < json.len() {
        let b = json[i];
        if in_str {
            if esc {
                esc = false;
                out.push(b);
            } else if b == b'\\' {
                esc = true;
                out.push(b);
            } else if b == b'"' {
                in_str = false;
                out.push(b);
            } else if b < 0x20 {
                out.extend_from_slice(format!("\\u{:04x}", b).as_bytes());
                changed = true;
            } else {
                out.push(b);
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_str = true;
            out.push(b);
            i += 1;
            continue;
        }
        let rest = &json[i..];
        let bad = [
            &b"N/A"[..],
            b"-NaN",
            b"NaN",
            b"-Infinity",
            b"Infinity",
            b"nan",
            b"-nan",
            b"inf",
        ]
        .into_iter()
        .find(|w| rest.starts_with(w));
        let prev_ok = out
            .iter()
            .rev()
            .find(|c| !c.is_ascii_whitespace())
            .is_some_and(|&c| matches!(c, b':' | b',' | b'['));
        if let (Some(w), true) = (bad, prev_ok) {
            out.extend_from_slice(b"null");
            i += w.len();
            changed = true;
            continue;
        }
        out.push(b);
        i += 1;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_parsing_is_exact() {
        assert_eq!(
            parse_us_to_ns("5122564150679.794"),
            Some(5_122_564_150_679_794)
        );
        assert_eq!(
            parse_us_to_ns("1700000000123456"),
            Some(1_700_000_000_123_456_000)
        );
        assert_eq!(parse_us_to_ns("1.5"), Some(1500));
        assert_eq!(parse_us_to_ns("0.0004"), Some(0));
        assert_eq!(parse_us_to_ns("0.0005"), Some(1));
        assert_eq!(parse_us_to_ns("-2.25"), Some(-2250));
        assert_eq!(parse_us_to_ns("1e3"), Some(1_000_000));
        assert_eq!(parse_us_to_ns("\"12\""), Some(12_000));
        assert_eq!(parse_us_to_ns("N/A"), None);
        assert_eq!(parse_us_to_ns(""), None);
        assert_eq!(parse_us_to_ns("99999999999999999999999"), None);
    }

    #[test]
    fn ids_in_odd_forms() {
        let r = |s: &str| parse_int(Some(s));
        assert_eq!(r("7"), Some(7));
        assert_eq!(r("\"stream 7\""), Some(7));
        assert_eq!(r("\"Spans\""), None);
        assert_eq!(r("3.0"), Some(3));
        assert_eq!(r("123456789012345678901234567890"), None);
    }

    #[test]
    fn integers_read_without_overflow_checks_equal_the_checked_reading() {
        // Around the 18 digits read unchecked, and the forms the fast path leaves to `parse`.
        for t in [
            "0",
            "-0",
            "+5",
            "-",
            "",
            "12a",
            "000000000000000000123",
            "999999999999999999",
            "-999999999999999999",
            "1000000000000000000",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
        ] {
            let checked = t.parse::<i64>().ok().or_else(|| {
                let f: f64 = t.parse().ok()?;
                (f.is_finite() && f.abs() < 9.2e18).then_some(f as i64)
            });
            assert_eq!(parse_int(Some(t)), checked, "{t:?}");
        }
        // Timestamps: 15 integer digits take the unchecked product by 1000, more the checked one.
        assert_eq!(
            parse_us_to_ns("999999999999999.9995"),
            Some(999_999_999_999_999_999 + 1)
        );
        assert_eq!(
            parse_us_to_ns("9223372036854775"),
            Some(9_223_372_036_854_775_000)
        );
        assert_eq!(parse_us_to_ns("9223372036854776"), None);
        assert_eq!(
            parse_us_to_ns("-9223372036854775.807"),
            Some(-9_223_372_036_854_775_807)
        );
        assert_eq!(parse_us_to_ns("1234567890123456789"), None);
    }

    #[test]
    fn dims_print_like_python() {
        let mut s = String::new();
        format_dims("[[64,64, 3], [], [\"a\"]]", &mut s);
        assert_eq!(s, "[[64, 64, 3], [], ['a']]");
    }

    #[test]
    fn repair_fixes_known_damage_only() {
        let fixed = repair(b"{\"a\": N/A, \"b\": \"x\ty\"}").unwrap();
        assert_eq!(
            std::str::from_utf8(&fixed).unwrap(),
            "{\"a\": null, \"b\": \"x\\u0009y\"}"
        );
        assert!(repair(b"{\"a\": 1,,}").is_none());
        // A string that merely contains N/A is not damage.
        assert!(repair(b"{\"a\": \"N/A\"}").is_none());
    }
}
