//! `sightline serve` as HTTP clients and attackers meet it: ranges, validators, HEAD, keep-alive,
//! malformed requests, names that cannot exist, symlinks to what is not a trace, and the limits
//! that keep slow, silent or too many clients from shutting everyone else out. Every test talks to
//! the real binary on 127.0.0.1, holds its connections for a bounded time and ends by itself.

use crate::serve::{fixture_logdir, get, scratch, serve, serve_with, Served};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The server's limits (src/cli/serve/http.rs), as a client sees them.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
const WRITE_TIMEOUT: Duration = Duration::from_secs(15);
const MAX_CONNECTIONS: usize = 512;

const CNN: &str = "cnn/vm_14499.1790857100123.pt.trace.json.gz";

/// A response read off a connection that stays open: the head, then exactly `Content-Length`
/// bytes (none for HEAD, 304 and a body-less status).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn read_answer(r: &mut BufReader<TcpStream>, head_only: bool) -> Answer {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line
        .split(' ')
        .nth(1)
        .unwrap_or_else(|| panic!("no status line: {line:?}"))
        .parse()
        .unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let mut a = Answer {
        status,
        headers,
        body: Vec::new(),
    };
    if !head_only && status != 304 {
        let len: usize = a.header("content-length").map_or(0, |l| l.parse().unwrap());
        a.body = vec![0; len];
        r.read_exact(&mut a.body).unwrap();
    }
    a
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// One request with `headers` (each a whole line) on a fresh connection, answered in full.
fn ask(port: u16, method: &str, target: &str, headers: &[String]) -> Answer {
    let mut s = connect(port);
    let mut req = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("Connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    read_answer(&mut BufReader::new(s), method == "HEAD")
}

fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(fixture_logdir().join(path)).unwrap()
}

#[test]
fn ranges_are_answered_206_and_416() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let whole = fixture(CNN);
    let n = whole.len();
    let target = format!("/logdir/{CNN}");
    let r = ask(s.port, "GET", &target, &["Range: bytes=0-99".into()]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &whole[..100]);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 0-99/{n}").as_str())
    );
    assert_eq!(r.header("content-length"), Some("100"));
    // A download resumed from byte 1000, and the last 10 bytes.
    let r = ask(s.port, "GET", &target, &["Range: bytes=1000-".into()]);
    assert_eq!((r.status, &r.body[..]), (206, &whole[1000..]));
    let r = ask(s.port, "GET", &target, &["Range: bytes=-10".into()]);
    assert_eq!((r.status, &r.body[..]), (206, &whole[n - 10..]));
    // Past the end: 416, saying the length.
    let r = ask(s.port, "GET", &target, &[format!("Range: bytes={n}-")]);
    assert_eq!(r.status, 416);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes */{n}").as_str())
    );
    // Several ranges, another unit, or a stale If-Range: the whole file.
    for h in [
        "Range: bytes=0-1,5-9".to_string(),
        "Range: items=0-9".to_string(),
    ] {
        let r = ask(s.port, "GET", &target, std::slice::from_ref(&h));
        assert_eq!((r.status, r.body.len()), (200, n), "{h}");
    }
    let etag = ask(s.port, "HEAD", &target, &[])
        .header("etag")
        .unwrap()
        .to_string();
    let r = ask(
        s.port,
        "GET",
        &target,
        &["Range: bytes=0-9".into(), "If-Range: \"stale\"".into()],
    );
    assert_eq!((r.status, r.body.len()), (200, n));
    let r = ask(
        s.port,
        "GET",
        &target,
        &["Range: bytes=0-9".into(), format!("If-Range: {etag}")],
    );
    assert_eq!((r.status, &r.body[..]), (206, &whole[..10]));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
}

#[test]
fn validators_answer_304() {
    let dist = scratch("dist-304");
    std::fs::write(dist.join("index.html"), "<!doctype html>").unwrap();
    std::fs::write(dist.join("sightline_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let s = serve(&[fixture_logdir().to_str().unwrap()], Some(&dist));
    for target in [format!("/logdir/{CNN}"), "/sightline_bg.wasm".to_string()] {
        let first = ask(s.port, "GET", &target, &[]);
        assert_eq!(first.status, 200, "{target}");
        let etag = first.header("etag").expect("an ETag").to_string();
        let modified = first
            .header("last-modified")
            .expect("a Last-Modified")
            .to_string();
        let r = ask(s.port, "GET", &target, &[format!("If-None-Match: {etag}")]);
        assert_eq!(r.status, 304, "{target}");
        assert_eq!(r.header("etag"), Some(etag.as_str()));
        let r = ask(
            s.port,
            "GET",
            &target,
            &[format!("If-Modified-Since: {modified}")],
        );
        assert_eq!(r.status, 304, "{target}");
        let r = ask(s.port, "GET", &target, &["If-None-Match: \"other\"".into()]);
        assert_eq!(
            (r.status, r.body.len()),
            (200, first.body.len()),
            "{target}"
        );
    }
    // The file changes: its ETag does too, and the old one no longer gives 304.
    let dir = scratch("logdir-304");
    let file = dir.join("a.json");
    std::fs::write(&file, b"{\"traceEvents\": []}").unwrap();
    let s = serve(&[dir.to_str().unwrap()], None);
    let before = ask(s.port, "GET", "/logdir/a.json", &[]);
    let etag = before.header("etag").unwrap().to_string();
    std::fs::write(&file, b"{\"traceEvents\": [ ]}").unwrap();
    let after = ask(
        s.port,
        "GET",
        "/logdir/a.json",
        &[format!("If-None-Match: {etag}")],
    );
    assert_eq!(after.status, 200);
    assert_ne!(after.header("etag"), Some(etag.as_str()));
    let _ = std::fs::remove_dir_all(&dist);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn head_gives_the_headers_of_get_without_the_body() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let target = format!("/logdir/{CNN}");
    let mut st = connect(s.port);
    write!(
        st,
        "HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
        s.port
    )
    .unwrap();
    let mut raw = Vec::new();
    st.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    assert!(raw.ends_with("\r\n\r\n"), "HEAD sent a body: {raw}");
    let len = fixture(CNN).len();
    assert!(
        raw.to_ascii_lowercase()
            .contains(&format!("content-length: {len}\r\n")),
        "{raw}"
    );
    let listing = ask(s.port, "HEAD", "/api/runs", &[]);
    assert_eq!(listing.status, 200);
    assert_eq!(
        listing.header("content-length"),
        Some(get(s.port, "/api/runs").body.len().to_string().as_str())
    );
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let st = connect(s.port);
    let mut w = st.try_clone().unwrap();
    let mut r = BufReader::new(st);
    for target in [
        "/api/runs".to_string(),
        format!("/logdir/{CNN}"),
        "/api/runs".into(),
    ] {
        write!(
            w,
            "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            s.port
        )
        .unwrap();
        let a = read_answer(&mut r, false);
        assert_eq!(a.status, 200, "{target}");
        assert_ne!(a.header("connection"), Some("close"));
    }
    // Pipelined: two requests written at once, answered in order.
    write!(
        w,
        "GET /logdir/{CNN} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\nGET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n",
        p = s.port
    )
    .unwrap();
    assert_eq!(read_answer(&mut r, false).body, fixture(CNN));
    assert_eq!(
        read_answer(&mut r, false).header("content-type"),
        Some("application/json")
    );
}

/// The raw answer to `request`, written as is.
fn raw_answer(port: u16, request: &[u8]) -> String {
    let mut s = connect(port);
    s.write_all(request).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    String::from_utf8_lossy(&raw).into_owned()
}

#[test]
fn two_host_headers_and_malformed_versions_are_400() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let p = s.port;
    let two = format!(
        "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nHost: attacker.example\r\nConnection: close\r\n\r\n"
    );
    let raw = raw_answer(p, two.as_bytes());
    assert!(raw.starts_with("HTTP/1.1 400"), "{raw}");
    assert!(!raw.contains("gloo4"), "{raw}");
    // The other order too: neither the first nor the last wins.
    let two = format!(
        "GET /api/runs HTTP/1.1\r\nHost: attacker.example\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n"
    );
    assert!(raw_answer(p, two.as_bytes()).starts_with("HTTP/1.1 400"));
    for version in ["HTTP/1.9", "HTTP/2.0", "HTTP/1.x", "HTTX/1.1", "HTTP/11"] {
        let req = format!("GET /api/runs {version}\r\nHost: 127.0.0.1:{p}\r\n\r\n");
        let raw = raw_answer(p, req.as_bytes());
        assert!(raw.starts_with("HTTP/1.1 400"), "{version}: {raw}");
    }
    // HTTP/1.0 is still answered.
    let raw = raw_answer(
        p,
        format!("GET /api/runs HTTP/1.0\r\nHost: 127.0.0.1:{p}\r\n\r\n").as_bytes(),
    );
    assert!(
        raw.starts_with("HTTP/1.0 200") || raw.starts_with("HTTP/1.1 200"),
        "{raw}"
    );
}

#[test]
fn names_that_cannot_exist_are_404() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let long = format!("/logdir/cnn/{}.json", "a".repeat(300));
    let under_a_file = format!("/logdir/{CNN}/.json");
    let deeper = format!("/logdir/{CNN}/x/y.json.gz");
    let long_page = format!("/{}.js", "b".repeat(300));
    for target in [long, under_a_file, deeper, long_page] {
        let r = get(s.port, &target);
        assert_eq!(r.status, 404, "{target}: {}", r.text());
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_named_like_a_trace_that_leads_elsewhere_is_neither_listed_nor_served() {
    let logdir = scratch("symlinked-env");
    std::fs::create_dir_all(logdir.join("run")).unwrap();
    std::fs::write(
        logdir.join(".env"),
        "AWS_SECRET_ACCESS_KEY=SECRET-IN-LOGDIR",
    )
    .unwrap();
    std::fs::copy(
        fixture_logdir().join(CNN),
        logdir.join("run/real.pt.trace.json.gz"),
    )
    .unwrap();
    std::os::unix::fs::symlink("../.env", logdir.join("run/x.json")).unwrap();
    std::os::unix::fs::symlink("real.pt.trace.json.gz", logdir.join("run/alias.json.gz")).unwrap();
    let s = serve(&[logdir.to_str().unwrap()], None);
    let listing = get(s.port, "/api/runs").text();
    assert!(!listing.contains("x.json"), "{listing}");
    assert!(listing.contains("alias.json.gz"), "{listing}");
    let r = get(s.port, "/logdir/run/x.json");
    assert_eq!(r.status, 404, "{}", r.text());
    assert!(!r.text().contains("SECRET"), "{}", r.text());
    assert_eq!(get(s.port, "/logdir/run/alias.json.gz").status, 200);
    drop(s);
    let _ = std::fs::remove_dir_all(&logdir);
}

/// 127.0.0.2 is a loopback address of its own on Linux: the URL printed answers, and a DNS name
/// pointed at it is still refused.
#[cfg(target_os = "linux")]
#[test]
fn another_loopback_address_is_served_under_its_own_name() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sightline"));
    cmd.args([
        "serve",
        fixture_logdir().to_str().unwrap(),
        "--host",
        "127.0.0.2",
        "--port",
        "0",
    ])
    .env_remove("SIGHTLINE_DIST")
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let at = line
        .find("http://127.0.0.2:")
        .unwrap_or_else(|| panic!("{line}"));
    let port: u16 = line[at + "http://127.0.0.2:".len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap();
    let mut bound = String::new();
    out.read_line(&mut bound).unwrap();
    assert!(bound.contains("Bound to 127.0.0.2 only"), "{bound}");
    let ask_as = |host: &str| {
        let mut s = TcpStream::connect(("127.0.0.2", port)).unwrap();
        write!(
            s,
            "GET /api/runs HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        raw
    };
    let ok = ask_as(&format!("127.0.0.2:{port}"));
    assert!(
        ok.starts_with("HTTP/1.1 200") && ok.contains("gloo4"),
        "{ok}"
    );
    let refused = ask_as(&format!("attacker.example:{port}"));
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    assert!(
        refused.contains(&format!("http://127.0.0.2:{port}/")),
        "{refused}"
    );
    assert!(!refused.contains("127.0.0.1"), "{refused}");
    let _ = child.kill();
    let _ = child.wait();
}

/// The server's thread count and resident memory, from /proc.
#[cfg(target_os = "linux")]
fn threads_and_rss_kb(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> usize {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("Threads:"), field("VmRSS:"))
}

/// The slowest of five listings fetched by a normal client.
fn listing_latency(port: u16) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            let r = get(port, "/api/runs");
            assert_eq!(r.status, 200, "{}", r.text());
            assert!(r.text().contains("gloo4"));
            t.elapsed()
        })
        .max()
        .unwrap()
}

const HELD: usize = 200;

/// Slowloris: 200 connections send a request head a byte at a time, never finishing it. A normal
/// client meanwhile gets the listing within 1 s, and the server holds them without a thread each.
#[cfg(target_os = "linux")]
#[test]
fn slow_heads_do_not_shut_out_a_normal_client() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let (idle_threads, idle_rss) = threads_and_rss_kb(s.child.id());
    let mut slow: Vec<TcpStream> = (0..HELD)
        .map(|_| {
            let mut c = connect(s.port);
            write!(
                c,
                "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow: ",
                s.port
            )
            .unwrap();
            c
        })
        .collect();
    // Held for 3 s (well inside the head deadline), a byte to each every 250 ms.
    let start = Instant::now();
    let mut latency = Duration::ZERO;
    let mut figures = (0, 0);
    while start.elapsed() < Duration::from_secs(3) {
        for c in &mut slow {
            c.write_all(b"a").unwrap();
        }
        if latency.is_zero() && start.elapsed() > Duration::from_millis(500) {
            latency = listing_latency(s.port);
            figures = threads_and_rss_kb(s.child.id());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    report("slow heads", idle_threads, idle_rss, latency, figures);
    assert!(latency < Duration::from_secs(1), "{latency:?}");
    assert!(
        figures.0 < 32,
        "{} threads for {HELD} connections",
        figures.0
    );
}

/// 200 clients ask for a 64 MB trace and never read the reply; a normal client meanwhile gets
/// the listing within 1 s, and each stuck connection holds two chunks, not the file.
#[cfg(target_os = "linux")]
#[test]
fn clients_that_never_read_do_not_shut_out_a_normal_client() {
    let dir = scratch("never-read");
    copy_logdir(&dir);
    let big = std::fs::File::create(dir.join("big.json")).unwrap();
    big.set_len(64 << 20).unwrap();
    drop(big);
    let s = serve(&[dir.to_str().unwrap()], None);
    let (idle_threads, idle_rss) = threads_and_rss_kb(s.child.id());
    let stuck: Vec<TcpStream> = (0..HELD)
        .map(|_| {
            let mut c = connect(s.port);
            write!(
                c,
                "GET /logdir/big.json HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
                s.port
            )
            .unwrap();
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    let latency = listing_latency(s.port);
    let figures = threads_and_rss_kb(s.child.id());
    report("never read", idle_threads, idle_rss, latency, figures);
    assert!(latency < Duration::from_secs(1), "{latency:?}");
    assert!(
        figures.0 < 32,
        "{} threads for {HELD} connections",
        figures.0
    );
    // Two 128 KiB chunks a connection (the one hyper is writing and the next), not the file's
    // 64 MB: under 1 MiB each.
    assert!(figures.1 < idle_rss + HELD * 1024, "RSS {} kB", figures.1);
    drop(stuck);
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

fn copy_logdir(to: &Path) {
    for run in ["cnn", "gloo4"] {
        std::fs::create_dir_all(to.join(run)).unwrap();
        for e in std::fs::read_dir(fixture_logdir().join(run)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(run).join(e.file_name())).unwrap();
        }
    }
}

fn report(
    what: &str,
    idle_threads: usize,
    idle_rss: usize,
    latency: Duration,
    held: (usize, usize),
) {
    println!(
        "{what}: {HELD} clients held; a normal client's listing in {:.1} ms at worst; threads \
         {idle_threads} idle, {} held; RSS {:.1} MB idle, {:.1} MB held",
        latency.as_secs_f64() * 1e3,
        held.0,
        idle_rss as f64 / 1024.0,
        held.1 as f64 / 1024.0
    );
}

/// The head deadline is for the whole head: a byte a second does not restart it.
#[test]
fn a_slow_head_is_cut_at_the_deadline() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let mut c = connect(s.port);
    c.set_read_timeout(Some(Duration::from_millis(900)))
        .unwrap();
    let start = Instant::now();
    let head = format!(
        "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Slow: ",
        s.port
    );
    let mut bytes = head.bytes().chain(std::iter::repeat(b'a'));
    let closed_after = loop {
        let elapsed = start.elapsed();
        assert!(
            elapsed < HEAD_TIMEOUT + Duration::from_secs(5),
            "still open after {elapsed:?}"
        );
        if c.write_all(&[bytes.next().unwrap()]).is_err() {
            break elapsed;
        }
        let mut buf = [0u8; 256];
        match c.read(&mut buf) {
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            // Closed (0 bytes or a reset), or an answer to a head cut short.
            _ => break start.elapsed(),
        }
    };
    assert!(
        closed_after > HEAD_TIMEOUT - Duration::from_secs(1),
        "closed after {closed_after:?}, before the deadline"
    );
}

/// A client that asks for a large file and reads nothing loses the connection at the write
/// deadline: reading afterwards gets less than the file, then the end.
#[test]
fn a_client_that_never_reads_is_dropped_at_the_write_deadline() {
    let dir = scratch("write-deadline");
    let big = std::fs::File::create(dir.join("big.json")).unwrap();
    big.set_len(256 << 20).unwrap();
    drop(big);
    let s = serve(&[dir.to_str().unwrap()], None);
    let mut c = connect(s.port);
    write!(
        c,
        "GET /logdir/big.json HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
        s.port
    )
    .unwrap();
    std::thread::sleep(WRITE_TIMEOUT + Duration::from_secs(3));
    let mut got = 0u64;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n as u64,
        }
    }
    assert!(
        got < 256 << 20,
        "the whole file came: the connection was kept"
    );
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Past the cap, connections are answered 503 with Retry-After, and the refusals cost no thread.
#[cfg(target_os = "linux")]
#[test]
fn past_the_cap_connections_get_503_and_no_thread() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let held: Vec<TcpStream> = (0..MAX_CONNECTIONS).map(|_| connect(s.port)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let refused: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut c = connect(s.port);
            let _ = write!(
                c,
                "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
                s.port
            );
            c
        })
        .collect();
    let (threads, _) = threads_and_rss_kb(s.child.id());
    assert!(threads < 32, "{threads} threads");
    for mut c in refused.into_iter().take(20) {
        let mut raw = String::new();
        let _ = c.read_to_string(&mut raw);
        assert!(raw.starts_with("HTTP/1.1 503"), "{raw}");
        assert!(raw.contains("Retry-After: 1\r\n"), "{raw}");
    }
    drop(held);
    // Slots come back as soon as their connections close.
    let start = Instant::now();
    loop {
        let r = get(s.port, "/api/runs");
        if r.status == 200 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{} {}",
            r.status,
            r.text()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CPU time (user + system) of a process, from /proc/PID/stat, in clock ticks (1/100 s).
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// With 48 descriptors, 100 connections leave `accept` failing: the server waits for one to close
/// instead of spinning a core, and serves again once they do.
#[cfg(target_os = "linux")]
#[test]
fn at_the_descriptor_limit_the_server_waits_instead_of_spinning() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -n 48 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_sightline"))
        .args(["serve", fixture_logdir().to_str().unwrap(), "--port", "0"])
        .env_remove("SIGHTLINE_DIST");
    let mut s: Served = serve_with(cmd);
    let held: Vec<TcpStream> = (0..100).map(|_| connect(s.port)).collect();
    std::thread::sleep(Duration::from_millis(300));
    let before = cpu_ticks(s.child.id());
    std::thread::sleep(Duration::from_secs(2));
    let spent = cpu_ticks(s.child.id()) - before;
    // Spinning would be about 200 ticks (a core for 2 s).
    assert!(
        spent < 30,
        "{spent} ticks of CPU in 2 s at the descriptor limit"
    );
    drop(held);
    let start = Instant::now();
    loop {
        let mut c = connect(s.port);
        c.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let _ = write!(
            c,
            "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            s.port
        );
        let mut raw = String::new();
        let _ = c.read_to_string(&mut raw);
        if raw.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "not served again: {raw}"
        );
    }
    let _ = s.child.kill();
    let mut err = String::new();
    s.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("cannot accept a connection"), "{err}");
}
