//! Hostile files and peers, on every front end: a file that is not a trace is described by its
//! kind and size and never quoted; FIFOs, devices and folders are refused at once, never read or
//! waited on; `sightline mcp` answers what is not a request as JSON-RPC says (its end with stdin
//! is a unit test of `src/cli/mcp/stdio.rs`); `serve` keeps hidden files hidden and takes a
//! name with `%`, an absolute-form target and its head limit as docs/serve.md says.
#![cfg(unix)]

use crate::common;
use crate::mcp::Session;
use crate::serve::{get_as, scratch, serve};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What no output may hold, whole or in part.
const SECRET: &str = "Zq8vKx3mPw7yTn2R";

/// Fails when `out` holds [`SECRET`] or any 6 bytes of it in a row.
fn assert_unquoted(what: &str, out: &str) {
    for w in SECRET.as_bytes().windows(6) {
        let w = std::str::from_utf8(w).unwrap();
        assert!(!out.contains(w), "{what} quotes {w:?} of the secret: {out}");
    }
}

/// Files that hold the secret and are not traces: text first, a `.env`, JSON whose key is the
/// secret, JSON cut inside that key, an array of other JSON.
fn secret_files(dir: &Path) -> Vec<PathBuf> {
    let files = [
        ("shadow.json", format!("{SECRET}:*:20228:0:99999:7:::\n")),
        ("env.json", format!("AWS_SECRET_ACCESS_KEY={SECRET}\n")),
        ("keys.json", format!("{{\"{SECRET}\": 1, \"b\": 2}}")),
        ("cut.json", format!("{{\"a\": 1, \"{SECRET}")),
        ("array.json", format!("[{{\"{SECRET}\": 1}}]")),
    ];
    files
        .iter()
        .map(|(name, text)| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p
        })
        .collect()
}

#[test]
fn no_front_end_quotes_a_file_that_is_not_a_trace() {
    let dir = scratch("secret");
    let files = secret_files(&dir);
    let trace = common::local_fixture("judge/small_op_storm.base.pt.trace.json.gz");
    let trace = trace.to_str().unwrap();
    let mut mcp = Session::initialized();
    for f in &files {
        let f = f.to_str().unwrap();
        for args in [
            vec!["summary", f],
            vec!["report", f, "--json"],
            vec!["diff", trace, f],
            vec!["ranks", f, trace],
            vec!["snapshot", f, "--json"],
        ] {
            // `ranks` goes on with the files that are traces and lists the others.
            let (code, out, err) = common::run_cli(&args);
            assert!(code != 0 || args[0] == "ranks", "{args:?}");
            assert_unquoted(&format!("{args:?}"), &format!("{out}{err}"));
            if args[0] == "summary" {
                assert!(
                    err.contains("not a trace") && err.contains("bytes"),
                    "{err}"
                );
            }
        }
        for (tool, arguments) in [
            ("report", json!({ "file": f })),
            ("open", json!({ "file": f })),
            ("diff", json!({ "base": f, "new": trace })),
            ("ranks", json!({ "paths": [f, trace] })),
            ("snapshot", json!({ "file": f })),
        ] {
            let (texts, _) = mcp.call(tool, arguments);
            assert_unquoted(&format!("mcp {tool} {f}"), &texts.join("\n"));
        }
    }
    // The same files under trace names in a LOGDIR: listed (their rank unknown), served as the
    // bytes they are, and nothing else says a word of them.
    let logdir = scratch("secret-logdir");
    for f in &files {
        let name = f.file_stem().unwrap().to_str().unwrap();
        std::fs::copy(f, logdir.join(format!("{name}.pt.trace.json"))).unwrap();
    }
    let s = serve(&[logdir.to_str().unwrap()], None);
    let host = format!("127.0.0.1:{}", s.port);
    let runs = get_as(s.port, "/api/runs", &host);
    assert_eq!(runs.status, 200);
    assert_unquoted("/api/runs", &runs.text());
    for f in &files {
        let r = get_as(s.port, f.to_str().unwrap(), &host);
        assert_unquoted("a refused path", &r.text());
    }
}

/// A child process waited for at most `limit`, then killed: its exit code (`None` when it had
/// to be killed), stdout and stderr.
fn run_bounded(args: &[&str], limit: Duration) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
    (code, text(out.stdout), text(out.stderr))
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo").arg(path).status().unwrap().success();
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn fifos_devices_and_folders_are_refused_at_once() {
    let dir = scratch("fifo");
    let fifo = dir.join("pipe.pt.trace.json");
    mkfifo(&fifo);
    let cases = [
        (fifo.to_str().unwrap(), "FIFO"),
        ("/dev/zero", "device"),
        (dir.to_str().unwrap(), "directory"),
    ];
    for (path, kind) in cases {
        for command in ["summary", "report"] {
            let (code, _, err) = run_bounded(&[command, path], Duration::from_secs(20));
            assert_eq!(code, Some(2), "{command} {path} did not end: {err}");
            assert!(err.contains(kind), "{command} {path}: {err}");
        }
    }
    let mut mcp = Session::initialized();
    for (path, kind) in cases {
        let (texts, error) = mcp.call("report", json!({ "file": path }));
        assert!(error && texts[0].contains(kind), "{path}: {texts:?}");
    }
}

/// A GET that gives up after `limit`: the status, or `None` when no whole answer came.
fn get_within(port: u16, target: &str, limit: Duration) -> Option<u16> {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(limit)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let head = String::from_utf8_lossy(&raw);
    head.split(' ').nth(1)?.parse().ok()
}

#[test]
fn a_file_swapped_for_a_fifo_fails_its_requests_not_the_server() {
    let logdir = scratch("swap");
    std::fs::create_dir_all(logdir.join("run")).unwrap();
    let file = logdir.join("run/w.pt.trace.json");
    let trace = std::fs::read(common::local_fixture("parse/keys_after_events.json")).unwrap();
    std::fs::write(&file, &trace).unwrap();
    let s = serve(&[logdir.to_str().unwrap()], None);
    let port = s.port;
    assert_eq!(
        get_within(port, "/api/runs", Duration::from_secs(20)),
        Some(200)
    );
    // The file is a trace and a FIFO in turn, swapped by rename, while clients ask for it and
    // for the listing: opens land between the server's check of the path and its open.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (done, file, logdir) = (done.clone(), file.clone(), logdir.clone());
        std::thread::spawn(move || {
            let (fifo, plain) = (logdir.join("swap.fifo"), logdir.join("swap.plain"));
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // SAFETY: `c` is a NUL-terminated path that outlives the call.
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
                std::fs::rename(&fifo, &file).unwrap();
                std::fs::write(&plain, &trace).unwrap();
                std::fs::rename(&plain, &file).unwrap();
            }
        })
    };
    let askers: Vec<_> = (0..16)
        .map(|i| {
            std::thread::spawn(move || {
                let target = if i % 4 == 0 {
                    "/api/runs"
                } else {
                    "/logdir/run/w.pt.trace.json"
                };
                for _ in 0..40 {
                    let status = get_within(port, target, Duration::from_secs(20));
                    assert!(status.is_some(), "{target}: no answer within 20 s");
                }
            })
        })
        .collect();
    let asked: Vec<_> = askers.into_iter().map(|a| a.join()).collect();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(asked.iter().all(Result::is_ok), "a request went unanswered");
    assert_eq!(
        get_within(port, "/api/runs", Duration::from_secs(20)),
        Some(200)
    );
}

/// The next line from the server within `limit`, as JSON.
fn next_reply(s: &Session, limit: Duration) -> Value {
    let line = s.lines.recv_timeout(limit).expect("a reply");
    serde_json::from_str(&line).unwrap()
}

#[test]
fn mcp_answers_what_is_not_a_request_and_goes_on() {
    let mut s = Session::initialized();
    let stdin = s.stdin.as_mut().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \n")
        .unwrap();
    stdin.flush().unwrap();
    let v = next_reply(&s, Duration::from_secs(20));
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");

    // 9 MB in one message: refused whole, and read to its end without holding it.
    let mut big =
        b"{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"ping\", \"params\": {\"x\": \"".to_vec();
    big.resize(9 << 20, b'a');
    big.extend_from_slice(b"\"}}\n");
    let stdin = s.stdin.as_mut().unwrap();
    stdin.write_all(&big).unwrap();
    stdin.flush().unwrap();
    let v = next_reply(&s, Duration::from_secs(20));
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("8 MiB"),
        "{v}"
    );

    // The session goes on.
    let v = s.request("ping", json!({}));
    assert!(v["result"].is_object(), "{v}");
}

#[test]
fn hidden_files_and_folders_are_neither_listed_nor_served() {
    let logdir = scratch("hidden");
    let trace = std::fs::read(common::local_fixture("parse/keys_after_events.json")).unwrap();
    for f in [
        "run/w.pt.trace.json",
        "run/.pt.trace.json",
        ".hidden/x.pt.trace.json",
        "run/.git/y.pt.trace.json",
    ] {
        let p = logdir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &trace).unwrap();
    }
    // A plain name that leads to a hidden file is hidden too.
    std::os::unix::fs::symlink(
        logdir.join(".hidden/x.pt.trace.json"),
        logdir.join("run/alias.pt.trace.json"),
    )
    .unwrap();
    let s = serve(&[logdir.to_str().unwrap()], None);
    let host = format!("127.0.0.1:{}", s.port);
    let listing = get_as(s.port, "/api/runs", &host).text();
    assert!(listing.contains("w.pt.trace.json"), "{listing}");
    for hidden in ["\"run/.pt", "x.pt.trace", ".git", "alias"] {
        assert!(!listing.contains(hidden), "{hidden} listed: {listing}");
    }
    assert_eq!(
        get_as(s.port, "/logdir/run/w.pt.trace.json", &host).status,
        200
    );
    for target in [
        "/logdir/run/.pt.trace.json",
        "/logdir/.hidden/x.pt.trace.json",
        "/logdir/run/.git/y.pt.trace.json",
        "/logdir/run/%2Egit/y.pt.trace.json",
        "/logdir/run/alias.pt.trace.json",
    ] {
        let r = get_as(s.port, target, &host);
        assert_eq!(r.status, 404, "{target}: {}", r.text());
    }
}

#[test]
fn a_listed_name_with_a_percent_sign_downloads() {
    let logdir = scratch("percent");
    std::fs::create_dir_all(logdir.join("run")).unwrap();
    let trace = std::fs::read(common::local_fixture("parse/keys_after_events.json")).unwrap();
    std::fs::write(logdir.join("run/w%41 50%.pt.trace.json"), &trace).unwrap();
    let s = serve(&[logdir.to_str().unwrap()], None);
    let host = format!("127.0.0.1:{}", s.port);
    let listing = get_as(s.port, "/api/runs", &host).text();
    assert!(listing.contains("w%41 50%.pt.trace.json"), "{listing}");
    // As the page asks for it: each segment through encodeURIComponent.
    let r = get_as(s.port, "/logdir/run/w%2541%2050%25.pt.trace.json", &host);
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, trace);
}

#[test]
fn an_absolute_form_target_is_answered_for_this_servers_host() {
    let logdir = scratch("absolute");
    let s = serve(&[logdir.to_str().unwrap()], None);
    let own = format!("127.0.0.1:{}", s.port);
    let r = get_as(s.port, &format!("http://{own}/api/runs"), &own);
    assert_eq!(r.status, 200, "{}", r.text());
    // The target's host counts, not the Host header's: another name is refused.
    let r = get_as(
        s.port,
        &format!("http://evil.example:{}/api/runs", s.port),
        &own,
    );
    assert_eq!(r.status, 403, "{}", r.text());
}

/// A GET with a header of `pad` bytes: its status.
fn status_with_head_of(port: u16, pad: usize) -> u16 {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Pad: {}\r\nConnection: close\r\n\r\n",
        "a".repeat(pad)
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    text.split(' ').nth(1).unwrap_or("0").parse().unwrap()
}

#[test]
fn the_head_limit_is_the_heads_size() {
    let logdir = scratch("head");
    let s = serve(&[logdir.to_str().unwrap()], None);
    assert_eq!(status_with_head_of(s.port, 31 << 10), 200);
    for kib in [33, 40, 48] {
        assert_eq!(status_with_head_of(s.port, kib << 10), 431, "{kib} KiB");
    }
}

#[test]
fn mcp_argument_errors_are_tool_errors_that_name_the_argument() {
    let mut s = Session::initialized();
    let (texts, error) = s.call("ops", json!({ "file": "x.json", "top": "abc" }));
    assert!(error && texts[0].contains("abc"), "{texts:?}");
    let (texts, error) = s.call("ops", json!({}));
    assert!(error && texts[0].contains("file"), "{texts:?}");
}
