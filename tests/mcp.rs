//! `sightline mcp` as an MCP client meets it: the binary started with pipes, the protocol's
//! handshake, the tools listed, and the answers of `report`, `path --what-if` and a paged table
//! checked against the CLI's `--json` on the same fixture.

use crate::common;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

/// A server started for one test, spoken to in newline-delimited JSON-RPC (MCP's stdio
/// transport). Every wait is bounded, and dropping it closes stdin, which ends the server.
pub(crate) struct Session {
    pub(crate) child: Child,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    /// A server started with `sightline mcp ARGS`.
    pub(crate) fn start_with(args: &[&str]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sightline"))
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Session {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits (two minutes at most: a debug build parses slowly) for the
    /// answer with its id; the server sends nothing else unasked here.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// The handshake a client opens with.
    pub(crate) fn initialized() -> Session {
        Session::initialized_with(&[])
    }

    /// The handshake, with a server started with `sightline mcp ARGS`.
    pub(crate) fn initialized_with(args: &[&str]) -> Session {
        let mut s = Session::start_with(args);
        let init = s.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "sightline-tests", "version": "1" }
            }),
        );
        let r = &init["result"];
        assert_eq!(r["serverInfo"]["name"], "sightline", "{init}");
        assert_eq!(r["protocolVersion"], "2025-06-18", "{init}");
        assert!(r["capabilities"]["tools"].is_object(), "{init}");
        s.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        s
    }

    /// A tool's result: its text blocks, and whether it is flagged an error.
    pub(crate) fn call(&mut self, tool: &str, arguments: Value) -> (Vec<String>, bool) {
        let v = self.request(
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        );
        let r = &v["result"];
        assert!(r.is_object(), "{tool}: {v}");
        let texts = r["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["text"].as_str().unwrap().to_string())
            .collect();
        (texts, r["isError"] == json!(true))
    }

    /// The JSON of a tool's answer that must not fail.
    fn json(&mut self, tool: &str, arguments: Value) -> Value {
        let (texts, error) = self.call(tool, arguments);
        assert!(!error, "{tool}: {texts:?}");
        serde_json::from_str(&texts[0]).unwrap()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stdin.take();
        // The server ends when its input does; kill it only if it did not within 10 s.
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn cli_json(args: &[&str]) -> Value {
    let (code, out, err) = common::run_cli(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// `v` without the fields that time the run.
fn untimed(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("parse_seconds");
        o.remove("analysis_seconds");
        o.remove("mb_per_s");
    }
    v
}

fn storm() -> String {
    common::local_fixture("judge/small_op_storm.base.pt.trace.json.gz")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_client_lists_the_tools_and_gets_the_clis_report_and_what_if() {
    let file = storm();
    let mut s = Session::initialized();

    let listed = s.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for want in [
        "open", "runs", "summary", "report", "ops", "kernels", "labels", "compiled", "modules",
        "flops", "idle", "steps", "path", "memory", "ranks", "diff", "graphs", "snapshot",
    ] {
        assert!(names.contains(&want), "{want} is not in {names:?}");
    }
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().unwrap().is_empty(), "{t}");
    }

    // report: the CLI's JSON, operators cut to the same top.
    let report = s.json("report", json!({ "file": file, "top": 5 }));
    let cli = cli_json(&["report", &file, "--json", "--top", "5"]);
    assert_eq!(untimed(report.clone()), untimed(cli));
    assert_eq!(report["findings"][0]["id"], "small_op_storm");

    // snapshot: the CLI's JSON for a memory snapshot, and its diff with another.
    let snap = common::local_fixture("snapshot/training.pickle.gz");
    let snap = snap.to_str().unwrap();
    let answer = s.json("snapshot", json!({ "file": snap, "top": 3 }));
    assert_eq!(
        answer,
        cli_json(&["snapshot", snap, "--json", "--top", "3"])
    );
    let other = common::local_fixture("snapshot/every_key.pickle");
    let other = other.to_str().unwrap();
    let answer = s.json("snapshot", json!({ "file": snap, "new": other }));
    assert_eq!(answer, cli_json(&["snapshot", snap, other, "--json"]));

    // A second question about the file reads the trace kept from the first: the same parse.
    let again = s.json("report", json!({ "file": file, "top": 5 }));
    assert_eq!(again["parse_seconds"], report["parse_seconds"]);
    let summary = s.json("summary", json!({ "file": file }));
    assert_eq!(summary["parse_seconds"], report["parse_seconds"]);

    // path with the finding's own what-if: the CLI's prediction, step by step.
    let edits: Vec<String> = report["findings"][0]["saving"]["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    assert!(!edits.is_empty());
    let path = s.json("path", json!({ "files": [file], "what_if": edits }));
    let mut args = vec!["path".to_string(), file.clone(), "--json".to_string()];
    for e in &edits {
        args.extend(["--what-if".to_string(), e.clone()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let cli = cli_json(&args);
    assert_eq!(path["what_if"], cli["what_if"]);
    let (ours, theirs) = (
        path["paths"].as_array().unwrap(),
        cli["paths"].as_array().unwrap(),
    );
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(theirs) {
        for key in ["rank", "step", "length_us", "bound_by"] {
            assert_eq!(o[key], t[key], "{key}");
        }
        // The longest segments, each one of the CLI's.
        let all = t["segments"].as_array().unwrap();
        let kept = o["segments"].as_array().unwrap();
        assert_eq!(kept.len(), 10.min(all.len()));
        assert!(kept.iter().all(|k| all.contains(k)));
    }
}

#[test]
fn a_table_is_paged_and_a_failure_is_the_clis_message() {
    let file = storm();
    let mut s = Session::initialized();
    let all = cli_json(&["ops", &file, "--json"]);
    let rows = all["rows"].as_array().unwrap();
    assert!(rows.len() > 6);

    // The first page is `ops --json --top 3`, to the byte (keys in the same order); the second,
    // the next three rows.
    let (texts, _) = s.call("ops", json!({ "file": file, "top": 3 }));
    let (code, out, _) = common::run_cli(&["ops", &file, "--json", "--top", "3"]);
    assert_eq!(code, 0);
    assert_eq!(texts[0], out.trim_end());
    assert!(texts[1].contains("offset=3"), "{texts:?}");
    let second = s.json("ops", json!({ "file": file, "top": 3, "offset": 3 }));
    assert_eq!(second["rows"].as_array().unwrap()[..], rows[3..6]);

    // Not a trace: the CLI's message, as a tool error the agent reads.
    let not_a_trace = common::local_fixture("README.md")
        .to_string_lossy()
        .into_owned();
    let (code, _, err) = common::run_cli(&["report", &not_a_trace]);
    assert_eq!(code, 2);
    let (texts, error) = s.call("report", json!({ "file": not_a_trace }));
    assert!(error);
    assert_eq!(format!("sightline: {}\n", texts[0]), err);

    // An edit that matches nothing is the CLI's error too.
    let (texts, error) = s.call(
        "path",
        json!({ "files": [file], "what_if": ["no_such_op=0"] }),
    );
    assert!(error && texts[0].contains("matches no slice"), "{texts:?}");

    // A tool that does not exist is a protocol error, not a result.
    let v = s.request("tools/call", json!({ "name": "nope", "arguments": {} }));
    assert!(v["error"].is_object(), "{v}");
}

#[test]
fn graphs_with_a_capture_are_the_clis_rows() {
    let dir = common::local_fixture("graphs");
    let replay = dir
        .join("sglang_decode.replay.json.gz")
        .to_string_lossy()
        .into_owned();
    let capture = dir
        .join("sglang_decode.capture.json.gz")
        .to_string_lossy()
        .into_owned();
    let mut s = Session::initialized();
    let got = s.json(
        "graphs",
        json!({ "file": replay, "capture": capture, "top": 3 }),
    );
    let cli = cli_json(&["graphs", &replay, "--capture", &capture, "--json"]);
    assert_eq!(got["graphs"], cli["graphs"]);
    assert_eq!(got["capture"], cli["capture"]);
    assert_eq!(
        got["captured_ops"].as_array().unwrap()[..],
        cli["captured_ops"].as_array().unwrap()[..3]
    );
    // The op-by-op replay stays out of the tool's answer unless asked for: 544 entries.
    assert!(got.get("first_replays").is_none());

    // The capture was this answer's only: the kept trace's tables and graphs are charged with
    // none, as the CLI's are with `--capture none` (which finds none beside the trace).
    let ops = s.json("ops", json!({ "file": replay, "top": 5 }));
    let cli = cli_json(&["ops", &replay, "--capture", "none", "--json", "--top", "5"]);
    assert_eq!(ops["rows"], cli["rows"]);
    let bare = s.json("graphs", json!({ "file": replay, "top": 3 }));
    let cli = cli_json(&["graphs", &replay, "--capture", "none", "--json"]);
    assert_eq!(bare["graphs"], cli["graphs"]);
    assert!(bare.get("captured_ops").is_none() && cli.get("captured_ops").is_none());
    // The request's own fields are the tool's: `replays` is the CLI's op-by-op first replays.
    let replays = s.json(
        "graphs",
        json!({ "file": replay, "replays": true, "top": 1 }),
    );
    assert_eq!(replays["first_replays"], cli["first_replays"]);
}

/// `step`, a question added as a request type and its answer (`sightline::query::Step`): one
/// step of `steps --json`, with what bounds its path as `path --json --step` says it.
#[test]
fn one_step_is_the_steps_row_and_its_paths_bounds() {
    let file = common::shared_fixtures()
        .join("pytorch-cpu/cnn_dataloader_sched.pt.trace.json.gz")
        .to_string_lossy()
        .into_owned();
    let steps = cli_json(&["steps", &file, "--json"]);
    let row = &steps["steps"][1];
    let name = row["name"].as_str().unwrap();
    let path = cli_json(&["path", &file, "--json", "--step", name]);
    let mut s = Session::initialized();
    let step = s.json("step", json!({ "file": file, "name": name }));
    assert_eq!(&step["step"], row);
    assert_eq!(step["bound_by"], path["paths"][0]["bound_by"]);
    let longest = step["longest_segments"].as_array().unwrap();
    assert!(!longest.is_empty() && longest.len() <= 5);
    let (texts, error) = s.call("step", json!({ "file": file, "name": "nope" }));
    assert!(error && texts[0].contains("no step 'nope'"), "{texts:?}");
}

/// A call past `--deadline` is answered with an error that names the deadline, and the session
/// goes on: the next request is answered while the late call's thread finishes alone.
#[test]
fn a_call_past_the_deadline_fails_alone() {
    let dir = std::env::temp_dir().join(format!("sightline-mcp-deadline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 100,000 nested slices (7.7 MB): a parse of milliseconds at best, past 1 ms.
    let file = dir.join("nested.json");
    std::fs::write(&file, common::shape(common::Shape::Nested, 100_000)).unwrap();
    let mut s = Session::initialized_with(&["--deadline", "0.001"]);
    let asked = std::time::Instant::now();
    let (texts, error) = s.call("report", json!({ "file": file }));
    assert!(error, "{texts:?}");
    assert!(texts[0].contains("no answer within 0.001 s"), "{texts:?}");
    assert!(asked.elapsed().as_secs() < 5, "{:?}", asked.elapsed());
    let listed = s.request("tools/list", json!({}));
    assert!(
        listed["result"]["tools"].as_array().unwrap().len() > 10,
        "{listed}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
