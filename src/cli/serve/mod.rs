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
//! HTTP lives here, in the CLI ([`http`]); the library has none.

#[cfg(all(feature = "cloud", not(target_arch = "wasm32")))]
pub mod cloud;
pub mod dist;
pub mod http;
pub mod listing;
pub mod paths;
pub mod store;

use http::Request;
use listing::{Entry, HeaderRank};
use paths::Refusal;
use std::collections::HashMap;
use std::io::Cursor;
use std::net::TcpListener;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use store::{Body, Store};

/// TensorBoard's port.
pub const DEFAULT_PORT: u16 = 6006;

struct Options {
    logdir: Option<String>,
    port: u16,
    host: String,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut logdir = None;
    let mut port = DEFAULT_PORT;
    let mut host = "127.0.0.1".to_string();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (name, inline) = match a.split_once('=') {
            Some((k, v)) if a.starts_with("--") => (k, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or(format!("{name} needs a value")),
            }
        };
        match name {
            "--port" => {
                let v = value()?;
                port = v.parse().map_err(|_| {
                    format!("--port needs a port number (0 picks a free one), not '{v}'")
                })?;
            }
            "--host" => host = value()?,
            n if n.starts_with("--") => return Err(format!("serve: unknown option '{n}'")),
            _ if logdir.is_none() => logdir = Some(a.clone()),
            _ => return Err(format!("serve takes one LOGDIR, not also '{a}'")),
        }
    }
    Ok(Options { logdir, port, host })
}

/// A file as listed: (path, size, mtime); a header is read again only when this changes.
type FileVersion = (String, u64, Option<i64>);

/// What the request threads share.
struct State {
    logdir: Option<(String, Box<dyn Store>)>,
    dist: Mutex<Option<PathBuf>>,
    /// Header ranks by (path, size, mtime): a file is read again only when it changed.
    ranks: Mutex<HashMap<FileVersion, HeaderRank>>,
    /// `Some(port)` while bound to loopback: the Host header must then name a loopback host.
    loopback_port: Option<u16>,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let opts = parse_args(args)?;
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
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let loopback = bound.ip().is_loopback();
    let state = State {
        logdir,
        dist: Mutex::new(dist),
        ranks: Mutex::new(HashMap::new()),
        loopback_port: loopback.then_some(bound.port()),
    };
    announce(&state, bound, &opts)?;

    http::serve(listener, move |req| handle(&state, req));
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
fn announce(state: &State, bound: SocketAddr, opts: &Options) -> Result<(), String> {
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
            "Bound to {ip} only: no other machine can connect (--host 0.0.0.0 to share; see the README)."
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

/// Sends `body` with the headers every response gets.
fn send(req: Request, status: u16, content_type: &str, body: Body, extra: &[(&str, String)]) {
    let mut headers = vec![
        ("Content-Type", content_type.to_string()),
        ("X-Content-Type-Options", "nosniff".to_string()),
        ("Cache-Control", "no-cache".to_string()),
    ];
    headers.extend(extra.iter().map(|(k, v)| (*k, v.clone())));
    req.respond(status, &headers, body);
}

fn send_bytes(
    req: Request,
    status: u16,
    content_type: &str,
    bytes: Vec<u8>,
    extra: &[(&str, String)],
) {
    let len = Some(bytes.len() as u64);
    send(
        req,
        status,
        content_type,
        Body {
            reader: Box::new(Cursor::new(bytes)),
            len,
        },
        extra,
    );
}

fn refuse(req: Request, r: &Refusal) {
    let text = format!("{} {}\n", r.status(), r.message());
    send_bytes(
        req,
        r.status(),
        "text/plain; charset=utf-8",
        text.into_bytes(),
        &[],
    );
}

/// True when `host` (a Host header) names a loopback host on `port`.
fn loopback_host(host: &str, port: u16) -> bool {
    let (name, p) = match host.rsplit_once(':') {
        Some((n, p)) if !n.is_empty() && !p.contains(']') => (n, p.parse::<u16>().ok()),
        _ => (host, Some(80)),
    };
    p == Some(port)
        && matches!(
            name.to_ascii_lowercase().as_str(),
            "127.0.0.1" | "localhost" | "[::1]"
        )
}

fn handle(state: &State, req: Request) {
    if !matches!(req.method.as_str(), "GET" | "HEAD") {
        let r = Refusal::BadPath(format!("{} is not served: GET and HEAD only", req.method));
        let text = format!("405 {}\n", r.message());
        return send_bytes(
            req,
            405,
            "text/plain; charset=utf-8",
            text.into_bytes(),
            &[("Allow", "GET, HEAD".into())],
        );
    }
    if let Some(port) = state.loopback_port {
        let host = req.host.clone();
        if !loopback_host(&host, port) {
            let r = Refusal::Outside(format!(
                "Host '{host}' is not this machine's loopback address: bound to localhost, \
                 the server answers only http://127.0.0.1:{port}/ and http://localhost:{port}/"
            ));
            return refuse(req, &r);
        }
    }
    let url = req.target.clone();
    let path = url.split(['?', '#']).next().unwrap_or("");
    let Some(path) = path.strip_prefix('/') else {
        return refuse(req, &Refusal::BadPath(format!("'{url}': not a path")));
    };
    if path == "api/runs" {
        return runs(state, req);
    }
    if let Some(rel) = path.strip_prefix("logdir/") {
        return trace_file(state, req, rel);
    }
    if path.starts_with("api/") || path == "logdir" {
        return refuse(req, &Refusal::NotFound(format!("/{path}: no such route")));
    }
    page_file(state, req, path)
}

fn runs(state: &State, req: Request) {
    let Some((name, store)) = &state.logdir else {
        return refuse(
            req,
            &Refusal::NotFound(
                "no LOGDIR: sightline serve was started without one, so it serves the page alone"
                    .into(),
            ),
        );
    };
    let entries = match store.list() {
        Ok(e) => e,
        Err(e) => return refuse(req, &Refusal::Failed(format!("listing LOGDIR: {e}"))),
    };
    let rank_of = |e: &Entry| -> HeaderRank {
        let key = (e.path.clone(), e.size, e.mtime_ms);
        if let Some(r) = state
            .ranks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return *r;
        }
        let r = store
            .head(e)
            .map_or_else(HeaderRank::default, |h| listing::rank_in_header(&h));
        state
            .ranks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, r);
        r
    };
    let listing = listing::build(name, &entries, &rank_of);
    match serde_json::to_vec(&listing) {
        Ok(json) => send_bytes(req, 200, "application/json", json, &[]),
        Err(e) => refuse(req, &Refusal::Failed(e.to_string())),
    }
}

fn trace_file(state: &State, req: Request, rel: &str) {
    let Some((_, store)) = &state.logdir else {
        return refuse(
            req,
            &Refusal::NotFound("no LOGDIR: sightline serve was started without one".into()),
        );
    };
    let segments = match paths::segments(rel) {
        Ok(s) if !s.is_empty() => s,
        Ok(_) => return refuse(req, &Refusal::NotFound("/logdir/: name a file".into())),
        Err(r) => return refuse(req, &r),
    };
    match store.open(&segments) {
        Ok(body) => {
            let name = segments.last().map_or("", String::as_str);
            send(req, 200, dist::content_type(name), body, &[]);
        }
        Err(r) => refuse(req, &r),
    }
}

fn page_file(state: &State, req: Request, rel: &str) {
    let mut segments = match paths::segments(rel) {
        Ok(s) => s,
        Err(r) => return refuse(req, &r),
    };
    let dist = {
        let mut d = state.dist.lock().unwrap_or_else(|p| p.into_inner());
        if d.is_none() {
            *d = dist::find().ok(); // built since the server started
        }
        d.clone()
    };
    let Some(dist) = dist else {
        let text = format!(
            "Sightline's page is not built: {}.\nThe API answers meanwhile: /api/runs.\n",
            dist::BUILD_HINT
        );
        return send_bytes(
            req,
            503,
            "text/plain; charset=utf-8",
            text.into_bytes(),
            &[],
        );
    };
    if segments.is_empty() {
        segments.push("index.html".into());
    }
    let file = match paths::resolve_under(&dist, &segments) {
        Ok(f) => f,
        Err(r) => return refuse(req, &r),
    };
    let name = segments.last().map_or("", String::as_str);
    let ctype = dist::content_type(name);
    if ctype.starts_with("text/html") {
        // The policy travels as a header too, exactly as the page's <meta> states it.
        let html = match std::fs::read(&file) {
            Ok(h) => h,
            Err(e) => return refuse(req, &Refusal::Failed(format!("{}: {e}", file.display()))),
        };
        let mut html = String::from_utf8_lossy(&html).into_owned();
        if segments == ["index.html"] {
            html = dist::mark_served(&html, state.logdir.is_some());
        }
        let csp = dist::meta_csp(&html).unwrap_or_else(|| dist::CSP.to_string());
        return send_bytes(
            req,
            200,
            ctype,
            html.into_bytes(),
            &[("Content-Security-Policy", csp)],
        );
    }
    match std::fs::File::open(&file) {
        Ok(f) => {
            let len = f.metadata().ok().map(|m| m.len());
            send(
                req,
                200,
                ctype,
                Body {
                    reader: Box::new(f),
                    len,
                },
                &[],
            );
        }
        Err(e) => refuse(req, &Refusal::Failed(format!("{name}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        assert!(loopback_host("127.0.0.1:6006", 6006));
        assert!(loopback_host("localhost:6006", 6006));
        assert!(loopback_host("[::1]:6006", 6006));
        assert!(!loopback_host("evil.example:6006", 6006));
        assert!(!loopback_host("127.0.0.1:6007", 6006));
        assert!(!loopback_host("", 6006));
        assert!(loopback_host("localhost", 80));
    }

    #[test]
    fn args() {
        let a = |s: &[&str]| parse_args(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        let o = a(&["log", "--port", "0"]).unwrap();
        assert_eq!(
            (o.logdir.as_deref(), o.port, o.host.as_str()),
            (Some("log"), 0, "127.0.0.1")
        );
        let o = a(&["--host=0.0.0.0"]).unwrap();
        assert_eq!(
            (o.logdir, o.port, o.host.as_str()),
            (None, DEFAULT_PORT, "0.0.0.0")
        );
        assert!(a(&["a", "b"]).is_err());
        assert!(a(&["--port", "x"]).is_err());
        assert!(a(&["--bogus"]).is_err());
    }
}
