//! Reading trace files from a native file system: the one place where the library opens files,
//! shared by the CLI and the Python package (the page reads through its own workers). The stages
//! of the pipeline stay free of I/O; this module only hands them bytes.
//!
//! [`read_trace`] parses a file in 1 MiB reads, never holding it whole, a large plain-JSON file on
//! up to [`parse_threads`] threads (one per core, at most 8), each reading its own range.
//! [`trace_files`] is the folder walk of `sightline ranks`; [`job`] is that command's middle for
//! the CLI and Python alike (files sorted and deduplicated, each digested by [`rank_digest`] on a
//! thread of its own and dropped, then compared); [`rank_digest`] reads one rank on one thread,
//! its file name giving the rank when the trace does not. [`read_snapshot`] reads a memory
//! snapshot the same way, in 1 MiB reads. [`digest_of`] reads a diff's BASE or NEW: a trace
//! digested, else a digest file read back ([`digest_file`]), for the CLI, `sightline mcp` and
//! Python alike.

use crate::analysis::derived::Derived;
use crate::analysis::digest::Digest;
use crate::analysis::ranks::{self, Align, OverlapScope, RanksReport};
use crate::model::Trace;
use crate::parse::{parse_parallel, ParseError};
use crate::snapshot::{Snapshot, SnapshotError};
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The threads a large file is parsed on: one per core, up to 8.
pub fn parse_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}

/// Parses the file at `path` in 1 MiB reads, never holding it whole; a large plain-JSON file on up
/// to `threads` threads, each reading its own range (the result equals a one-thread parse). The
/// outer error is the file's, the inner one says why the bytes are not a trace.
pub fn read_trace(path: &Path, threads: usize) -> io::Result<Result<Trace, ParseError>> {
    let len = open_regular(path)?.1.len();
    // Each thread opens the file again, and each open is checked again: a file swapped for a
    // FIFO after the first open is refused, never waited on.
    let open = |offset: u64| -> io::Result<File> {
        let mut f = open_regular(path)?.0;
        f.seek(SeekFrom::Start(offset))?;
        Ok(f)
    };
    parse_parallel(&open, len, threads)
}

/// A gzip file's inflated size from its trailer (ISIZE, modulo 4 GiB), read from its last 4
/// bytes; `None` for a file that does not start as gzip. Leaves the file at its start.
fn gzip_inflated_size(file: &mut std::fs::File, len: u64) -> io::Result<Option<u64>> {
    let mut magic = [0u8; 2];
    if len < 18 || file.read_exact(&mut magic).is_err() || magic != [0x1f, 0x8b] {
        file.seek(SeekFrom::Start(0))?;
        return Ok(None);
    }
    let mut size = [0u8; 4];
    file.seek(SeekFrom::Start(len - 4))?;
    file.read_exact(&mut size)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(Some(u32::from_le_bytes(size) as u64))
}

/// Reads the memory snapshot at `path` in 1 MiB reads, never holding it whole. The outer error is
/// the file's, the inner one says why the bytes are not a snapshot (or are refused).
pub fn read_snapshot(path: &Path) -> io::Result<Result<Snapshot, SnapshotError>> {
    let (mut file, meta) = open_regular(path)?;
    let mut reader = crate::snapshot::Reader::new();
    reader.expect_bytes(meta.len());
    if let Some(inflated) = gzip_inflated_size(&mut file, meta.len())? {
        reader.expect_inflated_bytes(inflated);
    }
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        reader.feed(&buf[..n]);
    }
    Ok(reader.finish())
}

/// Opens `path` for reading if it is a regular file, with its metadata; anything else (a folder,
/// a FIFO, a device, a socket) is an error that says what it is. The type is read
/// from the opened handle, not the path, so a file swapped between a check and the open cannot
/// slip through; and the open itself does not block (`O_NONBLOCK`), which a FIFO's would until
/// a writer came. On a regular file the flag changes nothing.
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() {
        Ok((file, meta))
    } else {
        Err(not_a_file(&meta.file_type()))
    }
}

/// The error of a path that is not a regular file: a folder's is the system's own (`EISDIR`, so
/// that Python raises `IsADirectoryError` as `open` would); the others say what the path is.
fn not_a_file(kind: &std::fs::FileType) -> io::Error {
    let what = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a regular file ({what}); only regular files are read"),
        )
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_dir() {
            return io::Error::from_raw_os_error(libc::EISDIR);
        }
        if kind.is_fifo() {
            return what("a FIFO");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return what("a device");
        }
        if kind.is_socket() {
            return what("a socket");
        }
    }
    what(if kind.is_dir() {
        "a directory"
    } else {
        "another kind"
    })
}

/// The digest of the trace at `path`, or, when it is not a trace, the digest `sightline digest`
/// wrote there read back; neither: why it is not a trace.
pub fn digest_of(path: &Path) -> io::Result<Result<Digest, ParseError>> {
    match read_trace(path, parse_threads())? {
        Ok(trace) => Ok(Ok(Derived::new(trace).digest(""))),
        Err(not_a_trace) => Ok(digest_file(path)?.ok_or(not_a_trace)),
    }
}

/// The digest `sightline digest` wrote to `path`, read back; `None` for a file that is not one.
pub fn digest_file(path: &Path) -> io::Result<Option<Digest>> {
    let (f, _) = open_regular(path)?;
    Ok(serde_json::from_reader(io::BufReader::new(f)).ok())
}

/// The trace files under `path` as `sightline ranks` finds them: a file as named, a folder
/// searched recursively for `*.json` and `*.json.gz`. The error names the path that failed.
pub fn trace_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), (PathBuf, io::Error)> {
    let at = |e| (path.to_path_buf(), e);
    let meta = std::fs::metadata(path).map_err(at)?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    for entry in std::fs::read_dir(path).map_err(at)? {
        let p = entry.map_err(at)?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            trace_files(&p, out)?;
        } else if ranks::is_trace_file_name(name) {
            out.push(p);
        }
    }
    Ok(())
}

/// `sightline ranks` over `files` (those [`trace_files`] found): each digested on a thread of its
/// own and dropped ([`ranks::digest_all`]), then compared; the files that could not be read are
/// the report's `unreadable_files`. An error when no file is left or none is a trace.
pub fn job(
    mut files: Vec<PathBuf>,
    align: Align,
    scope: OverlapScope,
) -> Result<RanksReport, String> {
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err("no .json or .json.gz trace in the given paths".to_string());
    }
    let (digests, unreadable) = ranks::digest_all(&files, rank_digest);
    if digests.is_empty() {
        let why: Vec<String> = unreadable
            .iter()
            .map(|u| format!("{}: {}", u.file, u.error))
            .collect();
        return Err(format!("none of the files is a trace: {}", why.join("; ")));
    }
    let mut report = ranks::analyze_with(&digests, align, scope);
    report.unreadable_files = unreadable;
    Ok(report)
}

/// One rank's digest for `sightline ranks`: the file parsed on one thread (the ranks' files are
/// read side by side), its name giving the rank when the trace does not.
pub fn rank_digest(path: &Path) -> Result<Digest, String> {
    let trace = read_trace(path, 1)
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok(Derived::new(trace).digest(&name))
}
