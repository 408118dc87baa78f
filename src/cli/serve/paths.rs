//! The path rules of `sightline serve`: which request paths name something under a root.
//!
//! A request path is percent-decoded exactly once and must then be a plain relative path: segments
//! separated by `/`, none empty, `.` or `..`; no backslash (raw or encoded), no NUL, no leading `/`
//! or drive letter. What decoding leaves is taken literally: a double-encoded `%252e%252e` is a
//! name with `%` in it, which no rule ever decodes again, so a listed name holding `%` can be
//! asked for. Symlinks are checked where the path meets the file system
//! ([`resolve_under`]): the canonical path must lie under the canonical root.

use std::path::{Path, PathBuf};

/// Why a request is refused, with the HTTP status it gets and a sentence for the user.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: the path breaks the rules above.
    BadPath(String),
    /// 403: the path is well formed but leads outside the root (a symlink).
    Outside(String),
    /// 404: nothing (servable) there.
    NotFound(String),
    /// 500: an I/O error other than "not found".
    Failed(String),
}

impl Refusal {
    pub fn status(&self) -> u16 {
        match self {
            Refusal::BadPath(_) => 400,
            Refusal::Outside(_) => 403,
            Refusal::NotFound(_) => 404,
            Refusal::Failed(_) => 500,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Refusal::BadPath(m)
            | Refusal::Outside(m)
            | Refusal::NotFound(m)
            | Refusal::Failed(m) => m,
        }
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Decodes `%XX` escapes once. A `%` not followed by two hex digits is an error.
pub fn percent_decode(raw: &str) -> Result<String, Refusal> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let pair = bytes
                .get(i + 1)
                .copied()
                .and_then(hex)
                .zip(bytes.get(i + 2).copied().and_then(hex));
            let Some((hi, lo)) = pair else {
                return Err(Refusal::BadPath(format!(
                    "'{raw}': a % not followed by two hex digits"
                )));
            };
            out.push(hi * 16 + lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out)
        .map_err(|_| Refusal::BadPath(format!("'{raw}' is not UTF-8 once decoded")))
}

/// The segments of `raw` (a request path below a route, still percent-encoded, without the query),
/// or why it is refused. An empty `raw` is no segments.
pub fn segments(raw: &str) -> Result<Vec<String>, Refusal> {
    let bad = |why: &str| Err(Refusal::BadPath(format!("'{raw}': {why}")));
    if raw.contains('\\') || raw.to_ascii_lowercase().contains("%5c") {
        return bad("backslashes are not allowed in paths");
    }
    // Decoded once and never again: a `%XX` left after it is part of a name (`a%41.json` is
    // listed so and asked for as `a%2541.json`), so `%252e%252e` names a folder called
    // `%2e%2e`, never `..`.
    let path = percent_decode(raw)?;
    if path.contains('\0') {
        return bad("NUL in the path");
    }
    if path.starts_with('/') {
        return bad("absolute paths are not served; paths are relative to the served folder");
    }
    let b = path.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return bad("absolute paths are not served; paths are relative to the served folder");
    }
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" => return bad("empty path segment"),
            "." | ".." => return bad("'.' and '..' are not allowed in paths"),
            // No file system holds a longer name: not found, whether or not the folder it would
            // be looked for in exists (the page's, before it is built).
            s if s.len() > NAME_MAX => {
                return Err(Refusal::NotFound(format!(
                    "a name of {} bytes: no such file",
                    s.len()
                )))
            }
            s => out.push(s.to_string()),
        }
    }
    Ok(out)
}

/// The longest file name Linux, macOS and Windows file systems hold, in bytes.
const NAME_MAX: usize = 255;

/// True for the errors that say the name cannot be a file: missing, a name too long for the file
/// system (a 300-character segment), a file where a folder was expected (`file.txt/.json`). These
/// are the client's to fix (404), not the server's (500).
fn cannot_exist(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), NotFound | NotADirectory | InvalidFilename)
}

/// The file `segments` name under `root`, after resolving symlinks: refused when its canonical path
/// is not under `root`'s, and not found unless it is a regular file.
pub fn resolve_under(root: &Path, segments: &[String]) -> Result<PathBuf, Refusal> {
    let shown = segments.join("/");
    let canonical_root = root
        .canonicalize()
        .map_err(|e| Refusal::Failed(format!("{}: {e}", root.display())))?;
    let mut joined = canonical_root.clone();
    for s in segments {
        joined.push(s);
    }
    let resolved = match joined.canonicalize() {
        Ok(p) => p,
        Err(e) if cannot_exist(&e) => {
            return Err(Refusal::NotFound(format!("'{shown}': no such file")))
        }
        Err(e) => return Err(Refusal::Failed(format!("'{shown}': {e}"))),
    };
    if !resolved.starts_with(&canonical_root) {
        return Err(Refusal::Outside(format!(
            "'{shown}' leads outside the served folder (a symlink); it is not served"
        )));
    }
    if !resolved.is_file() {
        return Err(Refusal::NotFound(format!("'{shown}' is not a file")));
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(raw: &str) -> Vec<String> {
        segments(raw).unwrap_or_else(|e| panic!("{raw}: {e:?}"))
    }

    #[test]
    fn plain_paths_decode_to_segments() {
        assert_eq!(
            ok("run1/host_1.2.pt.trace.json.gz"),
            ["run1", "host_1.2.pt.trace.json.gz"]
        );
        assert_eq!(ok("my%20run/a.json"), ["my run", "a.json"]);
        assert_eq!(ok(""), Vec::<String>::new());
        assert_eq!(ok("a..b/c.json"), ["a..b", "c.json"]);
    }

    #[test]
    fn what_one_decoding_leaves_is_a_plain_name() {
        assert_eq!(ok("%252e%252e/x"), ["%2e%2e", "x"]);
        assert_eq!(ok("%252e%252e%252fx"), ["%2e%2e%2fx"]);
        assert_eq!(ok("run/a%2541b.json"), ["run", "a%41b.json"]);
    }

    #[test]
    fn traversal_in_every_spelling_is_refused() {
        for raw in [
            "..",
            "../etc/passwd",
            "run1/../../x",
            "%2e%2e/x",
            "%2E%2E%2Fx",
            "..%2fx",
            "..\\x",
            "..%5cx",
            "/etc/passwd",
            "%2fetc%2fpasswd",
            "C:/Windows/win.ini",
            "a//b",
            "./a",
            "a/%00b",
            "%zz",
            "%2",
            "%ff",
        ] {
            assert!(
                matches!(segments(raw), Err(Refusal::BadPath(_))),
                "{raw} was accepted"
            );
        }
    }
}
