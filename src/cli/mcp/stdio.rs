//! The stdio framing of `sightline mcp`, in front of the SDK: newline-delimited JSON-RPC read from
//! stdin one bounded line at a time. The SDK drops a line it cannot parse, or one past its own
//! limit, without a word, and a client then waits for ever; here such a line is answered as
//! JSON-RPC says (-32700 for text that is not JSON, -32600 for a message over
//! [`MAX_MESSAGE_BYTES`], both with a null id, as the id could not be read) and the session goes
//! on. Every other line is handed to the SDK through an in-memory pipe, and its replies and these
//! errors reach stdout whole, one line at a time, through one writer.
//!
//! When stdin ends, the SDK's input ends too: it gives the calls in progress 5 s to answer, and
//! [`serve`] then returns without waiting for the rest (a parse of gigabytes, a read that never
//! returns), leaving their threads to the process's end.

use rmcp::ServiceExt;
use serde_json::json;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest message read: a request names files and a few options, so 8 MiB is far beyond
/// any real one and still bounds what one line can make the server hold.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// JSON-RPC's codes for what is not a request.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// Serves `server` over `input` and `output` on a runtime of its own until `input` ends (or the
/// SDK's session does), then returns at once, whatever its calls are still doing.
pub fn serve<S>(
    server: S,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<(), String>
where
    S: rmcp::ServerHandler,
{
    // Each call runs on the blocking pool (its parse on threads of its own): eight calls at a
    // time, plus the one that reads stdin; the rest wait their turn.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(9)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served = rt.block_on(run(server, input, output));
    // Dropping the runtime would wait for the calls' blocking threads.
    rt.shutdown_background();
    served
}

/// [`serve`]'s session, on the caller's runtime.
async fn run<S>(
    server: S,
    input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<(), String>
where
    S: rmcp::ServerHandler,
{
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (from_sdk, mut to_sdk) = tokio::io::split(ours);
    let (lines, written) = mpsc::channel::<Vec<u8>>(16);
    let writer = tokio::spawn(write_lines(written, output));
    let replies = {
        let lines = lines.clone();
        tokio::spawn(async move {
            let mut from_sdk = BufReader::new(from_sdk);
            loop {
                let mut line = Vec::new();
                match from_sdk.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if lines.send(line).await.is_err() {
                            break;
                        }
                    }
                }
            }
        })
    };
    let reader = tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = Vec::new();
        while let Ok(Some(fits)) = read_message(&mut input, &mut line).await {
            let answer = if !fits {
                Some(error_reply(
                    INVALID_REQUEST,
                    &format!(
                        "a message over {} MiB; it was not read",
                        MAX_MESSAGE_BYTES >> 20
                    ),
                ))
            } else if line.trim_ascii().is_empty() {
                None
            } else if serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_err() {
                Some(error_reply(
                    PARSE_ERROR,
                    "parse error: the message is not JSON",
                ))
            } else {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_sdk.write_all(&line).await.is_err() {
                    break;
                }
                None
            };
            if let Some(answer) = answer {
                if lines.send(answer).await.is_err() {
                    break;
                }
            }
        }
        // The SDK reads the end of its input and ends its session.
        let _ = to_sdk.shutdown().await;
    });
    let session = server
        .serve(theirs)
        .await
        .map_err(|e| format!("the MCP session did not start: {e}"))?;
    let ended = session.waiting().await;
    // The SDK's last replies are written before the process leaves.
    let _ = replies.await;
    reader.abort();
    let _ = reader.await;
    let _ = writer.await;
    ended.map_err(|e| format!("the MCP session ended badly: {e}"))?;
    Ok(())
}

/// Reads one line of `input` into `line`: `Some(true)` when it fits in [`MAX_MESSAGE_BYTES`],
/// `Some(false)` when it did not (it is then read to its end and dropped, never held), `None` at
/// the end of the input.
async fn read_message(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut fits = true;
    let mut any = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(any.then_some(fits));
        }
        any = true;
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if fits && line.len() + take > MAX_MESSAGE_BYTES {
            fits = false;
            *line = Vec::new();
        }
        if fits {
            line.extend_from_slice(&buf[..take]);
        }
        input.consume(take);
        if done {
            return Ok(Some(fits));
        }
    }
}

/// A JSON-RPC error reply to a message whose id could not be read.
fn error_reply(code: i64, message: &str) -> Vec<u8> {
    let mut text = json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": code, "message": message },
    })
    .to_string()
    .into_bytes();
    text.push(b'\n');
    text
}

/// Writes each line whole and flushes it: the one writer of stdout.
async fn write_lines(mut lines: mpsc::Receiver<Vec<u8>>, mut output: impl AsyncWrite + Unpin) {
    while let Some(line) = lines.recv().await {
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequestParams, CallToolResponse, ServerCapabilities, ServerConfig};
    use rmcp::service::RequestContext;
    use rmcp::{ErrorData, RoleServer};
    use std::time::{Duration, Instant};
    use tokio::io::AsyncReadExt;

    /// A server whose one tool never returns: its thread sleeps for an hour.
    struct Stuck;

    impl rmcp::ServerHandler for Stuck {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn call_tool(
            &self,
            _: CallToolRequestParams,
            _: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let _ =
                tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_secs(3600))).await;
            Err(ErrorData::internal_error("woke up", None))
        }
    }

    #[test]
    fn the_server_ends_when_its_input_does_with_a_call_stuck() {
        let messages = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"any","arguments":{}}}"#,
        ];
        let input = format!("{}\n", messages.join("\n")).into_bytes();
        let (output, mut read_back) = tokio::io::duplex(1 << 20);
        let start = Instant::now();
        serve(Stuck, std::io::Cursor::new(input), output).unwrap();
        let took = start.elapsed();
        // The SDK waits 5 s for calls in progress once its input ends; not an hour.
        assert!(took < Duration::from_secs(8), "ended after {took:?}");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut written = Vec::new();
        rt.block_on(read_back.read_to_end(&mut written)).unwrap();
        let written = String::from_utf8(written).unwrap();
        assert!(written.contains("\"id\":1"), "{written}");
    }
}
