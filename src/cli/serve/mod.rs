//! `sightline serve [LOGDIR] [--port N] [--host H]`: the built page and LOGDIR's traces over HTTP,
//! for the runs `torch.profiler.tensorboard_trace_handler` writes (what TensorBoard's profiler
//! plugin used to show).
//!
//! Routes (GET and HEAD only):
//! - `/api/runs`: LOGDIR's runs, workers and spans as JSON ([`listing`]), read anew on every
//!   request; 404 when serving without LOGDIR.
//! - `/logdir/<path>`: a trace file's bytes, streamed. Only trace files (`*.json[.gz]`) under
//!   LOGDIR; the path rules are in [`paths`].
//! - anything else: the built page (`dist/`, found as [`dist::find`] says), `/` being
//!   `index.html`, served with the page's own Content-Security-Policy as an HTTP header; the
//!   root `index.html` says it is served here ([`dist::mark_served`]), so the page lists the runs.
//!
//! Bound to 127.0.0.1 unless `--host` says otherwise. While bound to a loopback address, requests
//! must name a loopback host (`Host: 127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT`), so a web page
//! elsewhere cannot read the traces by pointing a DNS name at 127.0.0.1 (DNS rebinding).
//!
//! HTTP lives here, in the CLI ([`http`]), behind the `cli` feature (hyper, tokio); the library
//! and the Python package build without it.
//!
//! Invariants: nothing outside LOGDIR (or `dist/`) is served, whatever the spelling, and from
//! LOGDIR only what resolves to a trace file (`tests/serve.rs`, `tests/serve_limits.rs`). A body is
//! read 128 KiB at a time on the blocking pool, the next chunk as soon as hyper takes one and no
//! further, so a client that stops reading holds two chunks of memory and no thread
//! (`tests/serve_limits.rs` holds 200 of them, and 200 slow request heads, while a normal client
//! is served).
//!
//! Files: this module (the routes, a synchronous function from a request to a reply run on the
//! blocking pool; the binding; the loopback Host check), [`http`] (HTTP/1.1 on hyper, a tokio
//! runtime of two workers and a blocking pool of eight: a deadline for the request head, one for
//! each write and one for a route's file work, a head of at most 32 KiB, absolute-form targets, at
//! most 512 connections with the next answered 503 and `Retry-After` by a task, a back-off when
//! `accept` fails at the descriptor limit; keep-alive, HEAD, single ranges, `ETag`/`Last-Modified`
//! with 304, 400 for two `Host` headers), [`paths`] (decode once, then plain relative segments;
//! symlinks resolved and kept under the root; names that cannot exist are 404), [`listing`] (runs,
//! workers and spans as the TensorBoard plugin named them, each file's rank from the first 64 KiB
//! of its header or its name), [`store`] (LOGDIR's files from a folder, hidden names below it
//! skipped, regular files only, checked on the opened handle; `Blob`, a file to serve: size, time,
//! the bytes of any range), `cloud` (the same for `s3://` and `gs://` through `object_store` on a
//! small runtime of its own; the `cloud` feature, on by default) and [`dist`] (the built page:
//! lookup, content types, its Content-Security-Policy, and the `<meta name="sightline-serve">` that
//! tells the page where it is served).

#[cfg(all(feature = "cloud", not(target_arch = "wasm32")))]
pub mod cloud;
pub mod dist;
pub mod http;
pub mod listing;
pub mod paths;
pub mod store;

use super::args::ServeArgs;
use http::{Payload, Reply, Request};
use listing::{Entry, HeaderRank};
use paths::Refusal;
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use store::{LocalFile, Store};

/// A file's version as listed: (size, mtime); its header is read again only when this changes.
type FileVersion = (u64, Option<i64>);

/// What the request threads share.
struct State {
    logdir: Option<(String, Box<dyn Store>)>,
    dist: Mutex<Option<PathBuf>>,
    /// Header ranks by path, with the version they were read from: a file is read again only
    /// when it changed, and a file's entry goes when it is no longer listed.
    ranks: Mutex<HashMap<String, (FileVersion, HeaderRank)>>,
    /// The address while bound to loopback: the Host header must then name a loopback host.
    loopback: Option<SocketAddr>,
}

pub fn run(opts: &ServeArgs) -> Result<(), String> {
    let logdir = match &opts.logdir {
        None => None,
        Some(d) => Some((d.clone(), open_store(d)?)),
    };
    let dist = match dist::find() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("sightline serve: warning: {e}. Until then only the API answers.");
            None
        }
    };
    let host = if opts.host.contains(':') && !opts.host.starts_with('[') {
        format!("[{}]", opts.host)
    } else {
        opts.host.clone()
    };
    let addr: SocketAddr = format!("{host}:{}", opts.port)
        .to_socket_addrs()
        .map_err(|e| format!("--host {}: {e}", opts.host))?
        .next()
        .ok_or(format!("--host {}: no address", opts.host))?;
    let server = http::Server::bind(addr)?;
    let bound = server.local_addr()?;
    let state = State {
        logdir,
        dist: Mutex::new(dist),
        ranks: Mutex::new(HashMap::new()),
        loopback: bound.ip().is_loopback().then_some(bound),
    };
    announce(&state, bound, opts)?;
    server.serve(move |req| handle(&state, req), needs_logdir, opts.deadline);
    Ok(())
}

/// A folder, or (with the `cloud` feature, on by default, and not on wasm32, where its crates are
/// not built) `s3://bucket/prefix` or `gs://...`.
fn open_store(logdir: &str) -> Result<Box<dyn Store>, String> {
    if logdir.starts_with("s3://") || logdir.starts_with("gs://") {
        #[cfg(all(feature = "cloud", not(target_arch = "wasm32")))]
        return Ok(Box::new(cloud::Cloud::new(logdir)?));
        #[cfg(not(all(feature = "cloud", not(target_arch = "wasm32"))))]
        return Err(format!(
            "{logdir}: this sightline was built without the `cloud` feature, which reads s3:// and gs://"
        ));
    }
    Ok(Box::new(store::Local::new(Path::new(logdir))?))
}

/// Prints the address (first line: the URL, which tests read) and what the binding means.
fn announce(state: &State, bound: SocketAddr, opts: &ServeArgs) -> Result<(), String> {
    let ip = bound.ip();
    let shown = if ip.is_unspecified() {
        format!("127.0.0.1:{}", bound.port())
    } else {
        bound.to_string()
    };
    match &state.logdir {
        Some((name, store)) => {
            let files = store.list()?;
            let runs: std::collections::BTreeSet<&str> = files
                .iter()
                .map(|e| e.path.rsplit_once('/').map_or(".", |(d, _)| d))
                .collect();
            println!(
                "sightline serve: http://{shown}/ (LOGDIR {name}: {} runs, {} trace files)",
                runs.len(),
                files.len()
            );
        }
        None => println!("sightline serve: http://{shown}/ (the page alone: no LOGDIR given)"),
    }
    if ip.is_loopback() {
        println!(
            "Bound to {ip} only: no other machine can connect (--host 0.0.0.0 to share; see docs/serve.md)."
        );
    } else {
        eprintln!(
            "sightline serve: warning: bound to {} (--host {}): anyone who can reach this machine on port {} \
             can read the page{}. Leave out --host to keep them to this machine.",
            bound,
            opts.host,
            bound.port(),
            if state.logdir.is_some() { " and every trace in LOGDIR" } else { "" }
        );
    }
    println!("Press Ctrl-C to stop.");
    Ok(())
}

/// `body` with the headers every answer gets.
fn reply(
    status: u16,
    content_type: &str,
    body: Payload,
    extra: Vec<(&'static str, String)>,
) -> Reply {
    let mut headers = vec![
        ("Content-Type", content_type.to_string()),
        ("X-Content-Type-Options", "nosniff".to_string()),
        ("Cache-Control", "no-cache".to_string()),
    ];
    headers.extend(extra);
    Reply {
        status,
        headers,
        body,
    }
}

fn text(status: u16, text: String, extra: Vec<(&'static str, String)>) -> Reply {
    reply(
        status,
        "text/plain; charset=utf-8",
        Payload::Bytes(text.into_bytes()),
        extra,
    )
}

fn refuse(r: &Refusal) -> Reply {
    text(
        r.status(),
        format!("{} {}\n", r.status(), r.message()),
        vec![],
    )
}

/// The hosts a request may name while bound to loopback address `bound`.
fn allowed_host(host: &str, bound: SocketAddr) -> bool {
    let (name, p) = match host.rsplit_once(':') {
        Some((n, p)) if !n.is_empty() && !p.contains(']') => (n, p.parse::<u16>().ok()),
        _ => (host, Some(80)),
    };
    if p != Some(bound.port()) {
        return false;
    }
    let name = name.to_ascii_lowercase();
    if name == "localhost" {
        return true;
    }
    // An address literal of this machine's loopback (127.0.0.2 when bound there): no DNS name
    // can stand for it, so no other site's page can reach it by rebinding one.
    let literal = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(&name);
    literal
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The URL a loopback server is reached at: its address, and `localhost` where that resolves to it.
fn loopback_urls(bound: SocketAddr) -> String {
    let port = bound.port();
    match bound.ip() {
        std::net::IpAddr::V4(ip) if ip == std::net::Ipv4Addr::LOCALHOST => {
            format!("http://127.0.0.1:{port}/ and http://localhost:{port}/")
        }
        _ => format!("http://{bound}/"),
    }
}

fn handle(state: &State, req: &Request) -> Reply {
    if !matches!(req.method.as_str(), "GET" | "HEAD") {
        let why = format!("405 {} is not served: GET and HEAD only\n", req.method);
        return text(405, why, vec![("Allow", "GET, HEAD".into())]);
    }
    if let Some(bound) = state.loopback {
        if !allowed_host(&req.host, bound) {
            return refuse(&Refusal::Outside(format!(
                "Host '{}' is not this machine's loopback address: bound to {}, the server \
                 answers only {}",
                req.host,
                bound.ip(),
                loopback_urls(bound)
            )));
        }
    }
    let url = &req.target;
    match route(url) {
        None => refuse(&Refusal::BadPath(format!("'{url}': not a path"))),
        Some(Route::Runs) => runs(state),
        Some(Route::TraceFile(rel)) => trace_file(state, rel),
        Some(Route::Unknown(path)) => refuse(&Refusal::NotFound(format!("/{path}: no such route"))),
        Some(Route::Page(path)) => page_file(state, path),
    }
}

/// Where a request goes, by its path (the target without its query and fragment).
enum Route<'a> {
    /// `/api/runs`: LOGDIR's runs.
    Runs,
    /// `/logdir/REL`: a trace file of LOGDIR.
    TraceFile(&'a str),
    /// Another `/api/` path, or `/logdir` itself.
    Unknown(&'a str),
    /// A file of the page.
    Page(&'a str),
}

/// The route of `target`; `None` when it is not a path.
fn route(target: &str) -> Option<Route<'_>> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let path = path.strip_prefix('/')?;
    Some(if path == "api/runs" {
        Route::Runs
    } else if let Some(rel) = path.strip_prefix("logdir/") {
        Route::TraceFile(rel)
    } else if path.starts_with("api/") || path == "logdir" {
        Route::Unknown(path)
    } else {
        Route::Page(path)
    })
}

/// Whether `req`'s route reads LOGDIR (the runs' listing, a trace file): the routes a LOGDIR that
/// stopped answering holds up.
fn needs_logdir(req: &Request) -> bool {
    matches!(route(&req.target), Some(Route::Runs | Route::TraceFile(_)))
}

fn runs(state: &State) -> Reply {
    let Some((name, store)) = &state.logdir else {
        return refuse(&Refusal::NotFound(
            "no LOGDIR: sightline serve was started without one, so it serves the page alone"
                .into(),
        ));
    };
    let entries = match store.list() {
        Ok(e) => e,
        Err(e) => return refuse(&Refusal::Failed(format!("listing LOGDIR: {e}"))),
    };
    let ranks = || state.ranks.lock().unwrap_or_else(|p| p.into_inner());
    {
        let listed: std::collections::HashSet<&str> =
            entries.iter().map(|e| e.path.as_str()).collect();
        ranks().retain(|path, _| listed.contains(path.as_str()));
    }
    let rank_of = |e: &Entry| -> HeaderRank {
        let version = (e.size, e.mtime_ms);
        if let Some((v, r)) = ranks().get(&e.path) {
            if *v == version {
                return *r;
            }
        }
        let r = store
            .head(e)
            .map_or_else(HeaderRank::default, |h| listing::rank_in_header(&h));
        ranks().insert(e.path.clone(), (version, r));
        r
    };
    let listing = listing::build(name, &entries, &rank_of);
    match serde_json::to_vec(&listing) {
        Ok(json) => reply(200, "application/json", Payload::Bytes(json), vec![]),
        Err(e) => refuse(&Refusal::Failed(e.to_string())),
    }
}

fn trace_file(state: &State, rel: &str) -> Reply {
    let Some((_, store)) = &state.logdir else {
        return refuse(&Refusal::NotFound(
            "no LOGDIR: sightline serve was started without one".into(),
        ));
    };
    let segments = match paths::segments(rel) {
        Ok(s) if !s.is_empty() => s,
        Ok(_) => return refuse(&Refusal::NotFound("/logdir/: name a file".into())),
        Err(r) => return refuse(&r),
    };
    match store.open(&segments) {
        Ok(blob) => {
            let name = segments.last().map_or("", String::as_str);
            reply(200, dist::content_type(name), Payload::File(blob), vec![])
        }
        Err(r) => refuse(&r),
    }
}

fn page_file(state: &State, rel: &str) -> Reply {
    let mut segments = match paths::segments(rel) {
        Ok(s) => s,
        Err(r) => return refuse(&r),
    };
    let dist = {
        let mut d = state.dist.lock().unwrap_or_else(|p| p.into_inner());
        if d.is_none() {
            *d = dist::find().ok(); // built since the server started
        }
        d.clone()
    };
    let Some(dist) = dist else {
        let why = format!(
            "Sightline's page is not built: {}.\nThe API answers meanwhile: /api/runs.\n",
            dist::BUILD_HINT
        );
        return text(503, why, vec![]);
    };
    if segments.is_empty() {
        segments.push("index.html".into());
    }
    let file = match paths::resolve_under(&dist, &segments) {
        Ok(f) => f,
        Err(r) => return refuse(&r),
    };
    let name = segments.last().map_or("", String::as_str);
    let ctype = dist::content_type(name);
    if ctype.starts_with("text/html") {
        // The policy travels as a header too, exactly as the page's <meta> states it.
        let html = match std::fs::read(&file) {
            Ok(h) => h,
            Err(e) => return refuse(&Refusal::Failed(format!("{}: {e}", file.display()))),
        };
        let mut html = String::from_utf8_lossy(&html).into_owned();
        if segments == ["index.html"] {
            html = dist::mark_served(&html, state.logdir.is_some());
        }
        let csp = dist::meta_csp(&html).unwrap_or_else(|| dist::CSP.to_string());
        return reply(
            200,
            ctype,
            Payload::Bytes(html.into_bytes()),
            vec![("Content-Security-Policy", csp)],
        );
    }
    match LocalFile::open(&file) {
        Ok(f) => reply(200, ctype, Payload::File(Box::new(f)), vec![]),
        Err(e) => refuse(&Refusal::Failed(format!("{name}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rank_cache_keeps_one_entry_per_listed_file() {
        let dir = std::env::temp_dir().join(format!("sightline-ranks-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let file = dir.join("run/w.pt.trace.json");
        let write = |rank: u32, pad: usize| {
            let text = format!(
                "{{\"distributedInfo\": {{\"rank\": {rank}}}, \"traceEvents\": []}}{}",
                " ".repeat(pad)
            );
            std::fs::write(&file, text).unwrap();
        };
        let state = State {
            logdir: Some(("logs".into(), Box::new(store::Local::new(&dir).unwrap()))),
            dist: Mutex::new(None),
            ranks: Mutex::new(HashMap::new()),
            loopback: None,
        };
        let cached = || state.ranks.lock().unwrap().len();
        for (rank, pad) in [(1, 0), (2, 7), (3, 20)] {
            write(rank, pad);
            assert_eq!(runs(&state).status, 200);
            assert_eq!(cached(), 1, "rewritten as rank {rank}");
        }
        std::fs::remove_file(&file).unwrap();
        assert_eq!(runs(&state).status, 200);
        assert_eq!(cached(), 0, "a file gone keeps no entry");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn hosts() {
        let at = |a: &str| a.parse::<SocketAddr>().unwrap();
        let b = at("127.0.0.1:6006");
        assert!(allowed_host("127.0.0.1:6006", b));
        assert!(allowed_host("localhost:6006", b));
        assert!(allowed_host("LOCALHOST:6006", b));
        assert!(allowed_host("[::1]:6006", b));
        assert!(!allowed_host("evil.example:6006", b));
        assert!(!allowed_host("127.0.0.1.evil.example:6006", b));
        assert!(!allowed_host("127.0.0.1:6007", b));
        assert!(!allowed_host("127.0.0.1", b));
        assert!(!allowed_host("", b));
        assert!(allowed_host("localhost", at("127.0.0.1:80")));
        assert!(allowed_host("127.0.0.2:6006", at("127.0.0.2:6006")));
        assert!(allowed_host("[::1]:6006", at("[::1]:6006")));
        assert_eq!(
            loopback_urls(at("127.0.0.2:6006")),
            "http://127.0.0.2:6006/"
        );
    }
}
