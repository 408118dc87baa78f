//! `sightline serve`: the real binary on a free port, asked over real HTTP on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running `sightline serve`, stopped when dropped.
pub(crate) struct Served {
    pub(crate) child: Child,
    pub(crate) port: u16,
    /// Everything printed before the URL line, and that line.
    pub(crate) said: String,
    _stdout: BufReader<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn serve(args: &[&str], dist: Option<&Path>) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sightline"));
    cmd.arg("serve").args(args).args(["--port", "0"]);
    match dist {
        Some(d) => cmd.env("SIGHTLINE_DIST", d),
        None => cmd.env_remove("SIGHTLINE_DIST"),
    };
    serve_with(cmd)
}

/// Starts `cmd` (a `sightline serve ... --port 0`) and reads the URL it prints.
pub(crate) fn serve_with(mut cmd: Command) -> Served {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start sightline serve");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut said = String::new();
    let port = loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("serve exited before printing its URL:\n{said}\n{err}");
        }
        said.push_str(&line);
        if let Some(at) = line.find("http://127.0.0.1:") {
            let rest = &line[at + "http://127.0.0.1:".len()..];
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            break digits.parse::<u16>().unwrap();
        }
    };
    // The line after the URL says what the binding means.
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    said.push_str(&line);
    let stderr = child.stderr.take();
    Served {
        child,
        port,
        said,
        _stdout: stdout,
        stderr,
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
}

/// A GET of `target` exactly as written (no normalization), with `host` as the Host header.
pub(crate) fn get_as(port: u16, target: &str, host: &str) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = b.windows(2).position(|w| w == b"\r\n").unwrap();
        let len =
            usize::from_str_radix(std::str::from_utf8(&b[..eol]).unwrap().trim(), 16).unwrap();
        if len == 0 {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + len]);
        b = &b[eol + 4 + len..];
    }
}

pub(crate) fn get(port: u16, target: &str) -> Reply {
    get_as(port, target, &format!("127.0.0.1:{port}"))
}

pub(crate) fn fixture_logdir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logdir")
}

/// A fresh empty folder under the system's temp folder.
pub(crate) fn scratch(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "sightline-serve-{}-{}-{name}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The page's policy as `www/index.html` states it.
fn page_policy() -> String {
    let html =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("www/index.html"))
            .unwrap();
    let at = html.find("http-equiv=\"Content-Security-Policy\"").unwrap();
    let rest = &html[at..];
    let c = rest.find("content=\"").unwrap() + "content=\"".len();
    rest[c..c + rest[c..].find('"').unwrap()].to_string()
}

fn spans_of<'a>(listing: &'a serde_json::Value, run: &str) -> Vec<&'a serde_json::Value> {
    let run = listing["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run"] == run)
        .unwrap_or_else(|| panic!("no run {run} in {listing}"));
    run["workers"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["spans"].as_array().unwrap())
        .collect()
}

#[test]
fn lists_the_runs_workers_and_spans_of_a_logdir() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    let r = get(s.port, "/api/runs");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let l = r.json();
    let runs: Vec<&str> = l["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["cnn", "gloo4"]);

    // cnn: one worker with two spans (in time order), another with one.
    let cnn = &l["runs"][0];
    assert_eq!(cnn["files"], 3);
    let workers: Vec<&str> = cnn["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["worker"].as_str().unwrap())
        .collect();
    assert_eq!(workers, ["vm_14499", "vm_23924"]);
    let spans: Vec<&str> = cnn["workers"][0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["span"].as_str().unwrap())
        .collect();
    assert_eq!(spans, ["1790857100123", "1790857160456"]);
    for span in spans_of(&l, "cnn") {
        let path = span["path"].as_str().unwrap();
        let meta = std::fs::metadata(fixture_logdir().join(path)).unwrap();
        assert_eq!(span["size"].as_u64(), Some(meta.len()), "{path}");
        assert!(
            span["mtime_ms"].as_i64().unwrap() > 1_500_000_000_000,
            "{path}"
        );
        assert!(
            span["rank"].is_null(),
            "{path}: a single-process trace has no rank"
        );
    }
    assert_eq!(
        cnn["size"].as_u64(),
        Some(
            spans_of(&l, "cnn")
                .iter()
                .map(|s| s["size"].as_u64().unwrap())
                .sum()
        )
    );

    // gloo4: four workers, ranks 0..3 from distributedInfo in their headers.
    let ranks: Vec<(String, i64, i64)> = spans_of(&l, "gloo4")
        .iter()
        .map(|s| {
            assert_eq!(s["rank_source"], "distributedInfo");
            (
                s["file"].as_str().unwrap().to_string(),
                s["rank"].as_i64().unwrap(),
                s["world_size"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ranks,
        [
            ("vm_23798.1790857400110.pt.trace.json.gz".to_string(), 0, 4),
            ("vm_23799.1790857400111.pt.trace.json.gz".to_string(), 1, 4),
            ("vm_23800.1790857400112.pt.trace.json.gz".to_string(), 2, 4),
            ("vm_23801.1790857400113.pt.trace.json.gz".to_string(), 3, 4),
        ]
    );
    assert!(s.said.contains("2 runs, 7 trace files"), "{}", s.said);
}

#[test]
fn a_file_downloads_byte_for_byte() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    for path in [
        "cnn/vm_14499.1790857160456.pt.trace.json.gz",
        "gloo4/vm_23801.1790857400113.pt.trace.json.gz",
    ] {
        let r = get(s.port, &format!("/logdir/{path}"));
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(
            r.body,
            std::fs::read(fixture_logdir().join(path)).unwrap(),
            "{path}"
        );
        assert_eq!(r.header("content-type"), Some("application/gzip"));
        // A length, so the page's progress bar knows the total; never chunked.
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        assert_eq!(r.header("transfer-encoding"), None);
        // Not Content-Encoding: the page reads the gzip itself.
        assert_eq!(r.header("content-encoding"), None);
    }
    // Percent-encoded names are decoded once.
    let r = get(
        s.port,
        "/logdir/cnn/vm%5f14499.1790857160456.pt.trace.json.gz",
    );
    assert_eq!(r.status, 200);
    assert_eq!(get(s.port, "/logdir/cnn/nothing.pt.trace.json").status, 404);
}

#[test]
fn new_files_appear_without_a_restart() {
    let dir = scratch("new-files");
    copy_dir(&fixture_logdir().join("cnn"), &dir.join("cnn"));
    let s = serve(&[dir.to_str().unwrap()], None);
    let before = get(s.port, "/api/runs").json();
    assert_eq!(before["runs"].as_array().unwrap().len(), 1);
    assert_eq!(spans_of(&before, "cnn").len(), 3);

    // A new span of a known worker, and a new run in a nested folder.
    let src = fixture_logdir().join("gloo4/vm_23798.1790857400110.pt.trace.json.gz");
    std::fs::copy(
        &src,
        dir.join("cnn/vm_14499.1790857999999.pt.trace.json.gz"),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("later/run2")).unwrap();
    std::fs::copy(&src, dir.join("later/run2/vm_1.1.pt.trace.json.gz")).unwrap();
    let after = get(s.port, "/api/runs").json();
    let runs: Vec<&str> = after["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["cnn", "later/run2"]);
    let spans: Vec<&str> = after["runs"][0]["workers"][0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["span"].as_str().unwrap())
        .collect();
    assert_eq!(spans, ["1790857100123", "1790857160456", "1790857999999"]);
    // The new file's header gives its rank.
    assert_eq!(spans_of(&after, "later/run2")[0]["rank"], 0);
    let r = get(s.port, "/logdir/later/run2/vm_1.1.pt.trace.json.gz");
    assert_eq!(r.body, std::fs::read(&src).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every spelling of "outside LOGDIR" is refused with a 4xx and never answered with the outside
/// file's bytes; so is a symlink inside LOGDIR that leads out.
#[cfg(unix)]
#[test]
fn nothing_outside_logdir_is_served() {
    let root = scratch("traversal");
    let secret = "SECRET-OUTSIDE-LOGDIR";
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(
        root.join("outside/secret.pt.trace.json"),
        format!("{{\"{secret}\": 1}}"),
    )
    .unwrap();
    std::fs::write(root.join("secret.json"), secret).unwrap();
    let logdir = root.join("logdir");
    std::fs::create_dir_all(logdir.join("run")).unwrap();
    std::fs::copy(
        fixture_logdir().join("cnn/vm_23924.1790857300789.pt.trace.json.gz"),
        logdir.join("run/vm_1.1.pt.trace.json.gz"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        root.join("outside/secret.pt.trace.json"),
        logdir.join("run/evil.pt.trace.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("outside"), logdir.join("linked")).unwrap();
    // A symlink that stays inside LOGDIR is fine.
    std::os::unix::fs::symlink(
        logdir.join("run/vm_1.1.pt.trace.json.gz"),
        logdir.join("run/alias.pt.trace.json.gz"),
    )
    .unwrap();

    // A page beside it, so the page's own route is tried too.
    let dist = root.join("dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::write(dist.join("index.html"), "<!doctype html>").unwrap();
    std::os::unix::fs::symlink(root.join("secret.json"), dist.join("leak.json")).unwrap();

    let s = serve(&[logdir.to_str().unwrap()], Some(&dist));
    let listing = get(s.port, "/api/runs");
    assert!(
        !listing.text().contains("evil") && !listing.text().contains("linked"),
        "{}",
        listing.text()
    );
    assert!(listing.text().contains("alias.pt.trace.json.gz"));
    assert_eq!(
        get(s.port, "/logdir/run/alias.pt.trace.json.gz").status,
        200
    );

    let attempts = [
        "/logdir/../secret.json",
        "/logdir/run/../../secret.json",
        "/logdir/..%2fsecret.json",
        "/logdir/..%2Fsecret.json",
        "/logdir/%2e%2e/secret.json",
        "/logdir/%2E%2E%2Fsecret.json",
        "/logdir/%252e%252e/secret.json",
        "/logdir/%252e%252e%252fsecret.json",
        "/logdir/..%252fsecret.json",
        "/logdir/..\\secret.json",
        "/logdir/run\\..\\..\\secret.json",
        "/logdir/..%5csecret.json",
        "/logdir/%5c..%5csecret.json",
        "/logdir//etc/passwd",
        "/logdir/%2fetc%2fpasswd",
        "/logdir/%2F..%2Fsecret.json",
        "/logdir/run/evil.pt.trace.json",
        "/logdir/linked/secret.pt.trace.json",
        "/logdir/run/%00../../secret.json",
        "/logdir/./../secret.json",
        "/etc/passwd",
        "//etc/passwd",
        "/..%2f..%2fsecret.json",
        "/%2e%2e/%2e%2e/secret.json",
        "/../../../../../../etc/passwd",
        "/leak.json",
        "/..%2fsecret.json",
        &format!("/logdir/{}", root.join("secret.json").display()),
    ];
    for a in attempts {
        let r = get(s.port, a);
        assert!(
            (400..500).contains(&r.status),
            "{a}: status {} {}",
            r.status,
            r.text()
        );
        let body = r.text();
        assert!(
            !body.contains(secret) && !body.contains("root:"),
            "{a}: {body}"
        );
    }
    // The symlink that leads out is named as such, not just "not found".
    let r = get(s.port, "/logdir/run/evil.pt.trace.json");
    assert_eq!(r.status, 403, "{}", r.text());
    assert!(r.text().contains("outside"), "{}", r.text());
    // Only GET and HEAD.
    let mut st = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    write!(st, "DELETE /logdir/run/vm_1.1.pt.trace.json.gz HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n", s.port).unwrap();
    let mut raw = String::new();
    st.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 405"), "{raw}");
    drop(s);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn binds_localhost_by_default_and_answers_only_localhost_names() {
    let s = serve(&[fixture_logdir().to_str().unwrap()], None);
    assert!(s.said.contains("Bound to 127.0.0.1 only"), "{}", s.said);
    assert_eq!(
        get_as(s.port, "/api/runs", &format!("localhost:{}", s.port)).status,
        200
    );
    // A DNS name pointed at 127.0.0.1 (DNS rebinding) is refused.
    let r = get_as(s.port, "/api/runs", &format!("attacker.example:{}", s.port));
    assert_eq!(r.status, 403);
    assert!(!r.text().contains("gloo4"));
}

#[test]
fn another_host_is_bound_with_a_warning() {
    let mut s = serve(
        &[fixture_logdir().to_str().unwrap(), "--host", "0.0.0.0"],
        None,
    );
    assert!(!s.said.contains("Bound to 127.0.0.1 only"), "{}", s.said);
    let _ = s.child.kill();
    let mut err = String::new();
    s.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("warning: bound to 0.0.0.0"), "{err}");
    assert!(
        err.contains("can read the page and every trace in LOGDIR"),
        "{err}"
    );
}

#[test]
fn the_page_is_served_with_its_policy_and_content_types() {
    let dist = scratch("dist");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("www/index.html"),
        dist.join("index.html"),
    )
    .unwrap();
    std::fs::create_dir_all(dist.join("js")).unwrap();
    std::fs::write(dist.join("js/app.js"), "export {};").unwrap();
    std::fs::write(dist.join("sightline_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(dist.join("style.css"), "body{}").unwrap();
    // Without LOGDIR: the page alone.
    let s = serve(&[], Some(&dist));
    assert!(s.said.contains("the page alone"), "{}", s.said);
    let index = get(s.port, "/");
    assert_eq!(index.status, 200);
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        index.header("content-security-policy"),
        Some(page_policy().as_str())
    );
    // The page learns it is served by `sightline serve` (here without LOGDIR) from a <meta>.
    assert!(index
        .text()
        .contains(r#"<meta name="sightline-serve" content="page">"#));
    let with_query = get(s.port, "/?url=logdir/a.json");
    assert_eq!(with_query.body, index.body);
    for (path, ctype) in [
        ("/sightline_bg.wasm", "application/wasm"),
        ("/js/app.js", "text/javascript; charset=utf-8"),
        ("/style.css", "text/css; charset=utf-8"),
    ] {
        let r = get(s.port, path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(ctype), "{path}");
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    assert_eq!(get(s.port, "/nothing.js").status, 404);
    let runs = get(s.port, "/api/runs");
    assert_eq!(runs.status, 404);
    assert!(runs.text().contains("no LOGDIR"), "{}", runs.text());
    drop(s);

    // An index.html without a <meta> policy still gets the page's policy (the server's copy of it).
    std::fs::write(dist.join("index.html"), "<!doctype html><title>x</title>").unwrap();
    let s = serve(&[], Some(&dist));
    let index = get(s.port, "/index.html");
    assert_eq!(
        index.header("content-security-policy"),
        Some(page_policy().as_str())
    );
    drop(s);
    let _ = std::fs::remove_dir_all(&dist);
}

#[test]
fn without_a_built_page_it_says_what_to_run() {
    let empty = scratch("no-dist");
    let mut s = serve(&[fixture_logdir().to_str().unwrap()], Some(&empty));
    let r = get(s.port, "/");
    assert_eq!(r.status, 503);
    assert!(r.text().contains("trunk build --release"), "{}", r.text());
    assert_eq!(get(s.port, "/api/runs").status, 200);
    let _ = s.child.kill();
    let mut err = String::new();
    s.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(err.contains("trunk build --release"), "{err}");
    let _ = std::fs::remove_dir_all(&empty);
}

#[test]
fn a_missing_logdir_is_an_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_sightline"))
        .args(["serve", "/no/such/logdir", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such/logdir"));
}

/// `moto_server` (PyPI `moto[server]`, which scripts/setup installs into `.venv`): `$SIGHTLINE_MOTO`,
/// else `.venv/bin/moto_server`, else one on PATH.
fn moto_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SIGHTLINE_MOTO") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/moto_server");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("moto_server"))
            .find(|p| p.is_file())
    })
}

/// A local S3-compatible server (moto), stopped when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Moto {
    fn start(exe: &Path) -> Moto {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(exe)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto_server");
        let moto = Moto { child, port };
        let start = std::time::Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed().as_secs() < 30,
                "moto_server did not listen on {port} in 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        moto
    }

    /// moto started for a test, which fails without it: a passing test that ran nothing would
    /// leave S3 serving untested while the suite stays green.
    fn started() -> Moto {
        let exe = moto_server().expect(
            "moto_server not found: scripts/setup installs moto[server] into .venv (or set \
             SIGHTLINE_MOTO to one)",
        );
        Moto::start(&exe)
    }

    /// `sightline serve s3://traces/logs --port 0 ARGS` against this moto, without the page.
    fn serve(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sightline"));
        cmd.args(["serve", "s3://traces/logs", "--port", "0"])
            .args(args)
            .env(
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.port),
            )
            .env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env_remove("AWS_PROFILE")
            .env_remove("SIGHTLINE_DIST");
        cmd
    }

    /// A path-style S3 request without a signature (moto does not check them by default).
    fn put(&self, path: &str, body: &[u8]) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut raw = String::new();
        let _ = s.read_to_string(&mut raw);
        assert!(raw.starts_with("HTTP/1.1 200"), "PUT {path}: {raw}");
    }
}

/// `sightline serve s3://bucket/prefix` against moto: the listing, a download, a new object, and
/// nothing outside the prefix. Without moto the test fails: a passing test that ran nothing would
/// leave S3 serving untested while the suite stays green.
#[test]
fn an_s3_logdir_is_listed_and_served() {
    let moto = Moto::started();
    let fx = fixture_logdir();
    let cnn = "cnn/vm_14499.1790857160456.pt.trace.json.gz";
    let rank1 = "gloo4/vm_23799.1790857400111.pt.trace.json.gz";
    moto.put("/traces", b"");
    moto.put(
        &format!("/traces/logs/{cnn}"),
        &std::fs::read(fx.join(cnn)).unwrap(),
    );
    moto.put(
        &format!("/traces/logs/{rank1}"),
        &std::fs::read(fx.join(rank1)).unwrap(),
    );
    moto.put("/traces/secret.json", b"{\"SECRET-OUTSIDE-PREFIX\": 1}");
    moto.put("/traces/logs/notes.txt", b"not a trace");

    let s = serve_with(moto.serve(&[]));
    assert!(
        s.said
            .contains("LOGDIR s3://traces/logs: 2 runs, 2 trace files"),
        "{}",
        s.said
    );

    let l = get(s.port, "/api/runs").json();
    assert_eq!(l["logdir"], "s3://traces/logs");
    let runs: Vec<&str> = l["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["cnn", "gloo4"]);
    let span = spans_of(&l, "gloo4")[0];
    assert_eq!(span["path"], rank1);
    assert_eq!(span["span"], "1790857400111");
    assert_eq!(
        span["size"].as_u64(),
        Some(std::fs::metadata(fx.join(rank1)).unwrap().len())
    );
    assert_eq!(
        (span["rank"].as_i64(), span["rank_source"].as_str()),
        (Some(1), Some("distributedInfo"))
    );
    assert!(span["mtime_ms"].as_i64().unwrap() > 1_500_000_000_000);
    assert!(!get(s.port, "/api/runs").text().contains("notes.txt"));

    let r = get(s.port, &format!("/logdir/{cnn}"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, std::fs::read(fx.join(cnn)).unwrap());
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );

    // A span written after the server started.
    let later = "cnn/vm_14499.1790857999999.pt.trace.json.gz";
    moto.put(
        &format!("/traces/logs/{later}"),
        &std::fs::read(fx.join(cnn)).unwrap(),
    );
    assert_eq!(spans_of(&get(s.port, "/api/runs").json(), "cnn").len(), 2);

    for a in [
        "/logdir/../secret.json",
        "/logdir/%2e%2e/secret.json",
        "/logdir/%252e%252e/secret.json",
        "/logdir/..%5csecret.json",
        "/logdir//traces/secret.json",
        "/logdir/notes.txt",
        "/logdir/cnn/missing.pt.trace.json.gz",
    ] {
        let r = get(s.port, a);
        assert!(
            (400..500).contains(&r.status),
            "{a}: {} {}",
            r.status,
            r.text()
        );
        assert!(!r.text().contains("SECRET"), "{a}");
    }
}

/// A LOGDIR that stops answering (moto stopped with SIGSTOP: it still accepts connections, as a
/// hung network mount does, and answers nothing) fails each request that needs it at
/// `--deadline`, with a 503 that says why; the server goes on answering what does not need it,
/// however many requests wait for LOGDIR.
#[test]
fn a_logdir_that_stops_answering_fails_its_requests_not_the_server() {
    let moto = Moto::started();
    let cnn = "cnn/vm_14499.1790857160456.pt.trace.json.gz";
    moto.put("/traces", b"");
    moto.put(
        &format!("/traces/logs/{cnn}"),
        &std::fs::read(fixture_logdir().join(cnn)).unwrap(),
    );
    let s = serve_with(moto.serve(&["--deadline", "1.5"]));
    assert_eq!(get(s.port, "/api/runs").status, 200);

    let pid = moto.child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    for _ in 0..3 {
        let asked = std::time::Instant::now();
        let r = get(s.port, "/api/runs");
        let took = asked.elapsed();
        assert_eq!(r.status, 503, "{}", r.text());
        assert!(r.text().contains("did not answer within"), "{}", r.text());
        assert!(
            took >= std::time::Duration::from_millis(1400) && took.as_secs() < 15,
            "answered after {took:?}"
        );
        // What needs no LOGDIR is answered at once meanwhile.
        let asked = std::time::Instant::now();
        assert_eq!(get(s.port, "/api/none").status, 404);
        assert!(asked.elapsed().as_secs() < 2, "{:?}", asked.elapsed());
    }
    // More requests for it than the server has threads: each still fails alone, and the routes
    // that need no LOGDIR keep threads of their own (all eight had waited behind it).
    let port = s.port;
    let many: Vec<_> = (0..10)
        .map(|_| std::thread::spawn(move || get(port, "/api/runs").status))
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let asked = std::time::Instant::now();
    assert_eq!(get(s.port, "/api/none").status, 404);
    assert!(asked.elapsed().as_secs() < 2, "{:?}", asked.elapsed());
    for m in many {
        assert_eq!(m.join().unwrap(), 503);
    }
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
}

/// Downloads from a LOGDIR that stops answering part-way through a file: each chunk read holds
/// one of LOGDIR's slots of the blocking pool and fails its download at `--deadline`, so however
/// many downloads hang, the routes that need no LOGDIR keep answering (ten stuck chunk reads
/// had held every thread of the pool, uncounted).
#[test]
fn downloads_from_a_logdir_that_stops_answering_fail_alone() {
    use std::time::{Duration, Instant};
    let moto = Moto::started();
    let name = "run/vm_1.1790857160456.pt.trace.json";
    let size = 64 << 20;
    moto.put("/traces", b"");
    moto.put(&format!("/traces/logs/{name}"), &vec![b' '; size]);
    let s = serve_with(moto.serve(&["--deadline", "1.5"]));
    assert_eq!(get(s.port, "/api/runs").status, 200);

    // Ten downloads, each read as fast as it comes; moto is stopped once each has its head.
    let port = s.port;
    let (heads, headed) = std::sync::mpsc::channel();
    let downloads: Vec<_> = (0..10)
        .map(|_| {
            let heads = heads.clone();
            std::thread::spawn(move || {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                write!(
                    c,
                    "GET /logdir/{name} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
                )
                .unwrap();
                let mut buf = vec![0; 1 << 16];
                let mut got = c.read(&mut buf).unwrap_or(0);
                heads.send(()).unwrap();
                let asked = Instant::now();
                loop {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got += n,
                    }
                }
                (got, asked.elapsed())
            })
        })
        .collect();
    for _ in 0..10 {
        headed.recv_timeout(Duration::from_secs(20)).unwrap();
    }
    let pid = moto.child.id() as libc::pid_t;
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    std::thread::sleep(Duration::from_millis(500));
    for _ in 0..3 {
        let asked = Instant::now();
        assert_eq!(get(s.port, "/api/none").status, 404);
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{:?}",
            asked.elapsed()
        );
    }
    for d in downloads {
        let (got, took) = d.join().unwrap();
        assert!(got < size, "a download ended whole: {got} bytes");
        assert!(
            took < Duration::from_secs(15),
            "a download hung for {took:?}"
        );
    }
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
}
