//! Where LOGDIR's files come from: a local folder ([`Local`]). Each store lists the trace files
//! under its root and opens one by the segments of its relative path (already checked by
//! [`super::paths::segments`]); the listing is read anew on every call, so new files appear
//! without a restart.

use super::listing::{is_trace_file, Entry, HEADER_BYTES};
use super::paths::{resolve_under, Refusal};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// A file's bytes, to stream in the response.
pub struct Body {
    pub reader: Box<dyn Read + Send>,
    pub len: Option<u64>,
}

pub trait Store: Send + Sync {
    /// Every trace file under the root, in no particular order.
    fn list(&self) -> Result<Vec<Entry>, String>;
    /// The file at `segments` (checked), or why not.
    fn open(&self, segments: &[String]) -> Result<Body, Refusal>;
    /// The first decompressed bytes of a listed file, for [`super::listing::rank_in_header`].
    fn head(&self, entry: &Entry) -> Option<Vec<u8>>;
}

/// Folders are walked at most this deep, and at most this many entries are looked at, so a
/// LOGDIR pointed at `/` by mistake answers instead of walking the whole disk.
const MAX_DEPTH: usize = 32;
const MAX_ENTRIES: usize = 200_000;

pub struct Local {
    root: PathBuf,
}

impl Local {
    /// LOGDIR must exist and be a folder.
    pub fn new(root: &Path) -> Result<Local, String> {
        let root = root
            .canonicalize()
            .map_err(|e| format!("{}: {e}", root.display()))?;
        if !root.is_dir() {
            return Err(format!("{} is not a folder", root.display()));
        }
        Ok(Local { root })
    }
}

fn mtime_ms(meta: &std::fs::Metadata) -> Option<i64> {
    let d = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

impl Store for Local {
    fn list(&self) -> Result<Vec<Entry>, String> {
        let mut out = Vec::new();
        let mut seen = 0usize;
        // (folder, its relative path, depth); iterative, so deep trees cannot overflow the stack.
        let mut todo = vec![(self.root.clone(), String::new(), 0usize)];
        while let Some((dir, rel, depth)) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue; // unreadable folders are skipped, as the plugin skips them
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > MAX_ENTRIES {
                    return Ok(out);
                }
                let Some(name) = e.file_name().to_str().map(str::to_string) else {
                    continue; // names that are not UTF-8 cannot be named in a URL here
                };
                let Ok(kind) = e.file_type() else { continue };
                let path = e.path();
                let rel_path = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                if kind.is_dir() {
                    // Symlinked folders are not followed (no loops, nothing outside).
                    if depth + 1 < MAX_DEPTH {
                        todo.push((path, rel_path, depth + 1));
                    }
                    continue;
                }
                if !is_trace_file(&name) {
                    continue;
                }
                // A symlinked file is listed only when it resolves inside LOGDIR.
                if kind.is_symlink() {
                    match path.canonicalize() {
                        Ok(p) if p.starts_with(&self.root) && p.is_file() => {}
                        _ => continue,
                    }
                }
                let Ok(meta) = std::fs::metadata(&path) else {
                    continue;
                };
                if !meta.is_file() {
                    continue;
                }
                out.push(Entry {
                    path: rel_path,
                    size: meta.len(),
                    mtime_ms: mtime_ms(&meta),
                });
            }
        }
        Ok(out)
    }

    fn open(&self, segments: &[String]) -> Result<Body, Refusal> {
        let name = segments.last().map(String::as_str).unwrap_or("");
        if !is_trace_file(name) {
            return Err(Refusal::NotFound(format!(
                "'{}': only trace files (*.json, *.json.gz) are served from LOGDIR",
                segments.join("/")
            )));
        }
        let path = resolve_under(&self.root, segments)?;
        let file = std::fs::File::open(&path)
            .map_err(|e| Refusal::Failed(format!("'{}': {e}", segments.join("/"))))?;
        let len = file.metadata().ok().map(|m| m.len());
        Ok(Body {
            reader: Box::new(file),
            len,
        })
    }

    fn head(&self, entry: &Entry) -> Option<Vec<u8>> {
        let segments: Vec<String> = entry.path.split('/').map(str::to_string).collect();
        let path = resolve_under(&self.root, &segments).ok()?;
        head_of(std::fs::File::open(path).ok()?)
    }
}

/// The first [`HEADER_BYTES`] of a (possibly gzipped) stream, decompressed; gzip is told by its
/// magic bytes, as the parser tells it.
pub fn head_of(reader: impl Read) -> Option<Vec<u8>> {
    let mut reader = std::io::BufReader::new(reader);
    let magic = {
        use std::io::BufRead;
        let buf = reader.fill_buf().ok()?;
        buf.len() >= 2 && buf[0] == 0x1f && buf[1] == 0x8b
    };
    let mut out = Vec::new();
    let limit = HEADER_BYTES as u64;
    if magic {
        // A cut gzip stream (a span still being written) gives what decompressed before the cut.
        let _ = flate2::read::MultiGzDecoder::new(reader)
            .take(limit)
            .read_to_end(&mut out);
    } else {
        reader.take(limit).read_to_end(&mut out).ok()?;
    }
    Some(out)
}
