//! The little HTTP/1.1 that `sightline serve` speaks, on `std::net`: one request per connection
//! (every response says `Connection: close` and has a `Content-Length`), GET and HEAD only, the
//! request head read up to [`MAX_HEAD`] bytes with a timeout, one thread per connection up to
//! [`MAX_CONNECTIONS`].
//!
//! Why not a crate: tiny_http 0.12 was tried first; under Chromium with request interception (as
//! the e2e tests drive it) page loads stalled in about half the runs, responses it reported as
//! sent never completing in the browser, while Node's `http` server served the same files every
//! time. A server this small is easier to trust than to debug.

use super::store::Body;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The request line and headers may not be longer than this.
pub const MAX_HEAD: usize = 32 * 1024;
/// Connections served at once; more are answered 503 at once.
pub const MAX_CONNECTIONS: usize = 64;
const READ_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Request {
    pub method: String,
    /// The request target as sent (`/path?query`), not decoded.
    pub target: String,
    /// The `Host` header, empty when absent.
    pub host: String,
    stream: TcpStream,
}

/// What went wrong reading a request: the status to answer with, if the connection can still take one.
enum ReadError {
    Answer(u16, &'static str),
    Gone,
}

fn read_head(stream: &TcpStream) -> Result<(String, String, String), ReadError> {
    let mut reader = BufReader::new(stream.take(MAX_HEAD as u64 + 1));
    let mut line = String::new();
    let mut total = 0;
    let mut next = |line: &mut String| -> Result<(), ReadError> {
        line.clear();
        let n = reader.read_line(line).map_err(|_| ReadError::Gone)?;
        total += n;
        if total > MAX_HEAD {
            return Err(ReadError::Answer(431, "request head too large"));
        }
        if n == 0 {
            return Err(ReadError::Gone);
        }
        Ok(())
    };
    next(&mut line)?;
    let mut parts = line.trim_end().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Answer(400, "malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(ReadError::Answer(505, "HTTP/1.0 and 1.1 only"));
    }
    let (method, target) = (method.to_string(), target.to_string());
    let mut host = String::new();
    loop {
        next(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.trim().eq_ignore_ascii_case("host") {
                host = v.trim().to_string();
            }
        }
    }
    Ok((method, target, host))
}

impl Request {
    /// Sends the response and closes the connection. HEAD gets the headers only. Errors (the
    /// client gone) are ignored: there is no one to tell.
    pub fn respond(mut self, status: u16, headers: &[(&str, String)], mut body: Body) {
        if body.len.is_none() {
            // Every response has a Content-Length: a body of unknown length is read first.
            let mut all = Vec::new();
            if body.reader.read_to_end(&mut all).is_err() {
                all.clear();
            }
            body = Body {
                len: Some(all.len() as u64),
                reader: Box::new(std::io::Cursor::new(all)),
            };
        }
        let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let len = body.len.unwrap_or(0);
        head.push_str(&format!(
            "Content-Length: {len}\r\nConnection: close\r\n\r\n"
        ));
        // A client gone mid-response is nobody to tell.
        let _ = (|| -> std::io::Result<()> {
            let mut out = std::io::BufWriter::with_capacity(64 * 1024, &self.stream);
            out.write_all(head.as_bytes())?;
            if self.method != "HEAD" {
                // Exactly the length announced, even if the file grew meanwhile.
                std::io::copy(&mut (&mut body.reader).take(len), &mut out)?;
            }
            out.flush()
        })();
        let _ = self.stream.shutdown(Shutdown::Write);
        // Let the client read the response before the socket goes: drain what it still sends.
        let _ = self.stream.set_read_timeout(Some(Duration::from_secs(1)));
        let _ = std::io::copy(
            &mut (&mut self.stream).take(64 * 1024),
            &mut std::io::sink(),
        );
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

fn plain(stream: TcpStream, status: u16, text: &str) {
    let body = format!("{status} {text}\n").into_bytes();
    let req = Request {
        method: "GET".into(),
        target: String::new(),
        host: String::new(),
        stream,
    };
    let len = Some(body.len() as u64);
    req.respond(
        status,
        &[("Content-Type", "text/plain; charset=utf-8".into())],
        Body {
            reader: Box::new(std::io::Cursor::new(body)),
            len,
        },
    );
}

/// Accepts connections for ever, each on its own thread, and hands each request to `handle`.
pub fn serve<F>(listener: TcpListener, handle: F)
where
    F: Fn(Request) + Send + Sync + 'static,
{
    let handle = Arc::new(handle);
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            std::thread::spawn(move || plain(stream, 503, "busy: too many connections"));
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (handle, open) = (Arc::clone(&handle), Arc::clone(&open));
        std::thread::spawn(move || {
            let _ = stream.set_read_timeout(Some(READ_TIMEOUT));
            let _ = stream.set_nodelay(true);
            match read_head(&stream) {
                Ok((method, target, host)) => handle(Request {
                    method,
                    target,
                    host,
                    stream,
                }),
                Err(ReadError::Answer(status, why)) => plain(stream, status, why),
                Err(ReadError::Gone) => {}
            }
            open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}
