//! Where LOGDIR's files come from: a local folder ([`Local`]). Each store lists the trace files
//! under its root and opens one by the segments of its relative path (already checked by
//! [`super::paths::segments`]); the listing is read anew on every call, so new files appear
//! without a restart.

use super::listing::{is_trace_file, Entry, HEADER_BYTES};
use super::paths::{resolve_under, Refusal};
use sightline::native::open_regular;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A file to serve: its size and time (for `ETag`, `Last-Modified` and ranges) and its bytes
/// from any offset. Reading may block (a disk, an object store); the server calls it on its
/// blocking pool.
pub trait Blob: Send {
    fn size(&self) -> u64;
    fn modified(&self) -> Option<SystemTime>;
    /// The bytes of `range` (inside `0..size()`), as a reader.
    fn read(self: Box<Self>, range: Range<u64>) -> std::io::Result<Box<dyn Read + Send>>;
}

/// A file opened on the local disk.
pub struct LocalFile {
    file: std::fs::File,
    size: u64,
    modified: Option<SystemTime>,
}

impl LocalFile {
    /// Only a regular file, its type read from the opened handle (a file swapped for a FIFO
    /// after the listing is refused at once, not waited on; [`open_regular`]).
    pub fn open(path: &Path) -> std::io::Result<LocalFile> {
        let (file, meta) = open_regular(path)?;
        Ok(LocalFile {
            file,
            size: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl Blob for LocalFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    fn read(mut self: Box<Self>, range: Range<u64>) -> std::io::Result<Box<dyn Read + Send>> {
        self.file.seek(SeekFrom::Start(range.start))?;
        Ok(Box::new(self.file.take(range.end - range.start)))
    }
}

pub trait Store: Send + Sync {
    /// Every trace file under the root, in no particular order.
    fn list(&self) -> Result<Vec<Entry>, String>;
    /// The trace file at `segments` (checked), or why not.
    fn open(&self, segments: &[String]) -> Result<Box<dyn Blob>, Refusal>;
    /// The first decompressed bytes of a listed file, for [`super::listing::rank_in_header`].
    fn head(&self, entry: &Entry) -> Option<Vec<u8>>;
}

/// The refusal of a name that is not a trace file's.
pub fn only_traces(shown: &str) -> Refusal {
    Refusal::NotFound(format!(
        "'{shown}': only trace files (*.json, *.json.gz) are served from LOGDIR"
    ))
}

/// True for a hidden name (`.env`, `.git`, `.pt.trace.json`). Hidden files and folders below the
/// root are neither listed nor served, as TensorBoard's walk of a logdir skips them: they hold
/// what their owner did not mean to show.
pub fn is_hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// True when `path` (canonical, under the canonical `root`) passes through a hidden name below
/// the root: where a symlink with a plain name leads counts, not only its name.
fn hidden_below(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rel| {
        rel.components()
            .any(|c| c.as_os_str().to_str().is_none_or(is_hidden))
    })
}

/// The refusal of a hidden name.
pub fn hidden(shown: &str) -> Refusal {
    Refusal::NotFound(format!(
        "'{shown}': hidden files and folders are not served from LOGDIR"
    ))
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

/// True when `path` (resolved) is a trace file by its own name: a symlink's name is not enough,
/// `run/x.json -> ../.env` names a trace and leads to something else.
fn resolves_to_trace(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_trace_file)
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
                if is_hidden(&name) {
                    continue;
                }
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
                // A symlinked file is listed only when it leads to a trace file inside LOGDIR,
                // as `open` serves it.
                if kind.is_symlink() {
                    match path.canonicalize() {
                        Ok(p)
                            if p.starts_with(&self.root)
                                && p.is_file()
                                && resolves_to_trace(&p)
                                && !hidden_below(&self.root, &p) => {}
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

    fn open(&self, segments: &[String]) -> Result<Box<dyn Blob>, Refusal> {
        let shown = segments.join("/");
        if !is_trace_file(segments.last().map(String::as_str).unwrap_or("")) {
            return Err(only_traces(&shown));
        }
        if segments.iter().any(|s| is_hidden(s)) {
            return Err(hidden(&shown));
        }
        let path = resolve_under(&self.root, segments)?;
        if !resolves_to_trace(&path) {
            return Err(only_traces(&shown));
        }
        if hidden_below(&self.root, &path) {
            return Err(hidden(&shown));
        }
        let file =
            LocalFile::open(&path).map_err(|e| Refusal::Failed(format!("'{shown}': {e}")))?;
        Ok(Box::new(file))
    }

    fn head(&self, entry: &Entry) -> Option<Vec<u8>> {
        let segments: Vec<String> = entry.path.split('/').map(str::to_string).collect();
        let path = resolve_under(&self.root, &segments).ok()?;
        head_of(open_regular(&path).ok()?.0)
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
