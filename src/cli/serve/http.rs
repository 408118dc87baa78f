//! The HTTP of `sightline serve`: hyper's HTTP/1.1 server on a small tokio runtime, with the
//! limits that keep one client from shutting the server for everyone else.
//!
//! - The whole request head must arrive within [`HEAD_TIMEOUT`] of the connection being ready
//!   for it (hyper's `header_read_timeout`, which also closes an idle keep-alive connection):
//!   a client trickling a byte every few seconds is cut off at the deadline, not kept for hours.
//! - Each write must make progress within [`WRITE_TIMEOUT`] ([`WriteDeadline`]): a client that
//!   asks for a trace and never reads the reply is dropped instead of holding its slot.
//! - At most [`MAX_CONNECTIONS`] are served at once. A connection past that is answered 503 with
//!   `Retry-After` by a task of the runtime (no thread), and past [`REFUSING_AT_ONCE`] of those
//!   closed at once, so a flood costs neither threads nor descriptors.
//! - When `accept` fails (out of file descriptors), the loop waits, doubling the wait up to 1 s,
//!   instead of retrying at once and spinning a core.
//! - Keep-alive, `HEAD`, single-range `Range` (206, 416), `ETag` and `Last-Modified` with 304 for
//!   the files a route serves ([`Payload::File`]); 400 for two `Host` headers or a malformed
//!   version (hyper's parser refuses versions other than 1.0 and 1.1).
//!
//! Bodies are read from a blocking [`Blob`] one [`CHUNK`] at a time on the runtime's blocking
//! pool, the next chunk as soon as the last is handed to hyper and no further: a client that
//! stops reading holds two chunks of memory and no thread. The routes themselves are synchronous (they walk folders, read
//! headers, ask object stores) and run on that pool too.

use super::store::Blob;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::io::Read;
use std::net::SocketAddr;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Sleep;

/// The request line and headers may not be longer than this, counted as sent (431 past it).
pub const MAX_HEAD: usize = 32 * 1024;
/// hyper's read buffer, past which hyper answers 431 itself. It is not the head's limit (the
/// buffer also holds what a client pipelines behind a head, and hyper let heads of 48 KB through
/// a buffer of 32 KiB), so it is larger, and [`head_bytes`] is checked against [`MAX_HEAD`].
const READ_BUFFER: usize = 2 * MAX_HEAD;
/// Connections served at once; the next is answered 503. Well under the usual 1,024 descriptors
/// a process may open, so the cap, not the descriptor limit, is what a flood meets first.
pub const MAX_CONNECTIONS: usize = 512;
/// Connections being answered 503 at once; more are closed without an answer.
pub const REFUSING_AT_ONCE: usize = 256;
/// The time a client has to send a whole request head (and an idle keep-alive connection to
/// send the next one). A browser sends a head in one packet.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// The time one write may wait for the client to read. The kernel buffers megabytes per
/// connection, so a client that has not taken a byte of them for this long is not reading.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(15);
/// Threads of the blocking pool, where routes and file reads run.
const BLOCKING_THREADS: usize = 8;
/// Of those, the most that routes needing LOGDIR may hold: a LOGDIR that stopped answering (a
/// hung network mount) keeps each of its requests' threads past the deadline, and had taken the
/// whole pool, so the page's own files and every other route waited behind it.
const LOGDIR_THREADS: usize = 6;
/// What a 503 asks the client to wait, in seconds.
pub const RETRY_AFTER_S: u64 = 1;
/// How much of a file is read at a time.
const CHUNK: usize = 128 * 1024;
/// The listener's backlog: connections the kernel holds until they are accepted.
const BACKLOG: u32 = 1024;

/// A request as the routes see it; the rest of the protocol stays here.
pub struct Request {
    pub method: String,
    /// The request target as sent (`/path?query`), not decoded.
    pub target: String,
    /// The `Host` header, empty when absent.
    pub host: String,
}

/// What a route answers.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Payload,
}

pub enum Payload {
    /// A body made in memory (a listing, a message, a page rewritten on the way).
    Bytes(Vec<u8>),
    /// A file: sent whole or in part (`Range`), with validators (`ETag`, `Last-Modified`) that
    /// conditional requests compare.
    File(Box<dyn Blob>),
}

/// A bound listener and the runtime that will serve it.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    listener: TcpListener,
}

impl Server {
    pub fn bind(addr: SocketAddr) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(BLOCKING_THREADS)
            .thread_name("sightline-serve")
            .enable_all()
            .build()
            .map_err(|e| format!("starting the server's runtime: {e}"))?;
        let listener = {
            let _inside = runtime.enter();
            let bind = || -> std::io::Result<TcpListener> {
                let socket = if addr.is_ipv4() {
                    TcpSocket::new_v4()?
                } else {
                    TcpSocket::new_v6()?
                };
                // As std's TcpListener::bind does on Unix: a restart may reuse the port at once.
                #[cfg(unix)]
                socket.set_reuseaddr(true)?;
                socket.bind(addr)?;
                socket.listen(BACKLOG)
            };
            bind().map_err(|e| bind_error(addr, &e))?
        };
        Ok(Server { runtime, listener })
    }

    pub fn local_addr(&self) -> Result<SocketAddr, String> {
        self.listener.local_addr().map_err(|e| e.to_string())
    }

    /// Serves until the process is stopped, each request answered by `handle` on the blocking
    /// pool within `deadline`.
    /// `needs_logdir` tells the requests whose route reads LOGDIR (at most [`LOGDIR_THREADS`]
    /// of those run at once).
    pub fn serve<F>(self, handle: F, needs_logdir: fn(&Request) -> bool, deadline: Duration)
    where
        F: Fn(&Request) -> Reply + Send + Sync + 'static,
    {
        let Server { runtime, listener } = self;
        let routes = Routes {
            handle,
            needs_logdir,
            logdir_busy: Arc::new(AtomicUsize::new(0)),
            deadline,
        };
        runtime.block_on(accept_loop(listener, Arc::new(routes)));
    }
}

/// Why `addr` cannot be listened on, in words that say what to do.
fn bind_error(addr: SocketAddr, e: &std::io::Error) -> String {
    let hint = match e.kind() {
        std::io::ErrorKind::AddrInUse => {
            " (another server has the port: pick another with --port, or --port 0 for a free one)"
        }
        std::io::ErrorKind::AddrNotAvailable => {
            " (no network interface of this machine has that address: --host takes one of its \
             own addresses, such as 127.0.0.1, ::1 or 0.0.0.0)"
        }
        _ => "",
    };
    format!("cannot listen on {addr}: {e}{hint}")
}

/// What answers a request, and the time it has.
struct Routes<F> {
    handle: F,
    needs_logdir: fn(&Request) -> bool,
    /// Routes reading LOGDIR, and downloads' chunk reads, whose work has not ended (a stuck one
    /// counts until it does).
    logdir_busy: Arc<AtomicUsize>,
    deadline: Duration,
}

/// Decrements a count when dropped, however the task holding it ends.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    /// Takes one of `limit` slots, if one is free.
    fn take(count: &Arc<AtomicUsize>, limit: usize) -> Option<Slot> {
        count
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Slot(Arc::clone(count)))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn accept_loop<F>(listener: TcpListener, handle: Arc<Routes<F>>)
where
    F: Fn(&Request) -> Reply + Send + Sync + 'static,
{
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    const FIRST_WAIT: Duration = Duration::from_millis(10);
    let mut wait = FIRST_WAIT;
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => {
                wait = FIRST_WAIT;
                stream
            }
            // The client gave up between connecting and being accepted: nothing to wait for.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            // Out of descriptors (or memory): the connection stays queued in the kernel until one
            // closes. Retrying at once would spin a core on the same error.
            Err(e) => {
                if wait == FIRST_WAIT {
                    eprintln!(
                        "sightline serve: cannot accept a connection ({e}); waiting for one to close"
                    );
                }
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        let Some(slot) = Slot::take(&open, MAX_CONNECTIONS) else {
            turn_away(stream, &refusing);
            continue;
        };
        let handle = Arc::clone(&handle);
        tokio::spawn(async move {
            let _slot = slot;
            let _ = stream.set_nodelay(true);
            let io = TokioIo::new(WriteDeadline::new(stream, WRITE_TIMEOUT));
            let service = service_fn(move |req| answer(req, Arc::clone(&handle)));
            let mut conn = http1::Builder::new();
            conn.timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(READ_BUFFER)
                // `Content-Type`, not `content-type`: header names are case-blind, but scripts that
                // read them into a plain dict (Python's `dict(response.headers)`) are not.
                .title_case_headers(true)
                .keep_alive(true);
            // A connection that ends in an error (a timeout, a client gone) has no one to tell.
            let _ = conn.serve_connection(io, service).await;
        });
    }
}

/// Answers 503 with `Retry-After` on a task of its own (bounded to 1 s), or closes the connection
/// at once when [`REFUSING_AT_ONCE`] are being answered already.
fn turn_away(mut stream: TcpStream, refusing: &Arc<AtomicUsize>) {
    let Some(slot) = Slot::take(refusing, REFUSING_AT_ONCE) else {
        return;
    };
    tokio::spawn(async move {
        let _slot = slot;
        let text = "503 busy: too many connections; try again shortly\n";
        let head = format!(
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
             Retry-After: {RETRY_AFTER_S}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
            text.len()
        );
        let _ = tokio::time::timeout(Duration::from_secs(1), async {
            stream.write_all(head.as_bytes()).await?;
            stream.shutdown().await?;
            // Closing a socket with unread input resets it, and the client may lose the answer
            // before reading it: read what it sent first (a request head, at most 64 KiB).
            let mut buf = [0u8; 4096];
            let mut read = 0;
            while read < 64 * 1024 {
                match stream.read(&mut buf).await? {
                    0 => break,
                    n => read += n,
                }
            }
            Ok::<(), std::io::Error>(())
        })
        .await;
    });
}

/// A stream whose writes fail when the peer has not taken a byte for `limit`.
struct WriteDeadline<S> {
    io: S,
    limit: Duration,
    /// Armed when a write first waits; disarmed by any progress.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<S> WriteDeadline<S> {
    fn new(io: S, limit: Duration) -> WriteDeadline<S> {
        WriteDeadline {
            io,
            limit,
            waiting: None,
        }
    }

    /// What a write that returned `poll` becomes: progress disarms the deadline, waiting arms it,
    /// and waiting past it is an error that ends the connection.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match poll {
            Poll::Ready(r) => {
                self.waiting = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let limit = self.limit;
                let sleep = self
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
                match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing for the write timeout",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, poll)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, poll)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.io).poll_flush(cx);
        this.watch(cx, poll)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let poll = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, poll)
    }
}

/// The conditional and range headers of a request, as sent.
#[derive(Default)]
struct Conditions {
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    range: Option<String>,
    if_range: Option<String>,
}

async fn answer<F>(
    req: hyper::Request<Incoming>,
    handle: Arc<Routes<F>>,
) -> Result<hyper::Response<ServeBody>, Infallible>
where
    F: Fn(&Request) -> Reply + Send + Sync + 'static,
{
    let text = |h: &HeaderValue| String::from_utf8_lossy(h.as_bytes()).into_owned();
    let one = |name: &str| -> Option<String> {
        let mut all = req.headers().get_all(name).iter();
        match (all.next(), all.next()) {
            (Some(v), None) => Some(text(v)),
            // Two of a header that is one value (two ranges' lists) are not understood: ignored.
            _ => None,
        }
    };
    if head_bytes(&req) > MAX_HEAD {
        return Ok(plain(
            431,
            &format!("the request head is over {} KiB", MAX_HEAD >> 10),
        ));
    }
    let hosts = req.headers().get_all(HOST).iter().count();
    if hosts > 1 {
        // Proxies and servers may disagree on which one counts (the last won before): refused.
        return Ok(plain(400, "two Host headers: a request names one host"));
    }
    let head = req.method() == hyper::Method::HEAD;
    let conditions = Conditions {
        if_none_match: one("if-none-match"),
        if_modified_since: one("if-modified-since"),
        range: one("range"),
        if_range: one("if-range"),
    };
    // An absolute-form target (`GET http://HOST:PORT/path`, which RFC 9112 has servers accept)
    // names its host itself, and that authority counts instead of the Host header; the routes
    // get its path. Whether the host is this server's is the routes' loopback check, as for
    // a Host header.
    let uri = req.uri();
    let (target, host) = match (uri.authority(), uri.path_and_query()) {
        (Some(authority), path) => (
            path.map_or_else(|| "/".to_string(), ToString::to_string),
            authority.to_string(),
        ),
        (None, _) => (uri.to_string(), one("host").unwrap_or_default()),
    };
    let request = Request {
        method: req.method().as_str().to_string(),
        target,
        host,
    };
    drop(req);
    // A route stuck in the file system (a network mount that stopped answering) fails its own
    // request at the deadline; the others keep their threads and their answers.
    let deadline = handle.deadline;
    // The slot goes with the work, not the request: a stuck read keeps it past the deadline.
    let slot = if (handle.needs_logdir)(&request) {
        let Some(slot) = Slot::take(&handle.logdir_busy, LOGDIR_THREADS) else {
            return Ok(plain(
                503,
                "LOGDIR is not answering: earlier requests still wait for it",
            ));
        };
        Some(slot)
    } else {
        None
    };
    let reads = Reads {
        slots: Arc::clone(&handle.logdir_busy),
        deadline,
    };
    let work = tokio::task::spawn_blocking(move || {
        let _slot = slot;
        (handle.handle)(&request)
    });
    let reply = match tokio::time::timeout(deadline, work).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(_)) => return Ok(plain(500, "the request failed inside the server")),
        Err(_) => {
            return Ok(plain(
                503,
                "the file system did not answer within the request's deadline",
            ))
        }
    };
    Ok(finish(reply, &conditions, head, reads))
}

/// The size of `req`'s head as a client sends it: the request line, each header as
/// `Name: value` and the line ends.
fn head_bytes<B>(req: &hyper::Request<B>) -> usize {
    let line =
        req.method().as_str().len() + 1 + req.uri().to_string().len() + " HTTP/1.1\r\n".len();
    let headers: usize = req
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + 2 + value.len() + 2)
        .sum();
    line + headers + 2
}

/// A plain-text answer made here, not by a route.
fn plain(status: u16, why: &str) -> hyper::Response<ServeBody> {
    respond(
        status,
        &[("Content-Type", "text/plain; charset=utf-8".into())],
        ServeBody::bytes(format!("{status} {why}\n").into_bytes()),
        None,
    )
}

/// The response: `body`, or for HEAD no body and `Content-Length` saying how long it would be.
fn respond(
    status: u16,
    headers: &[(&'static str, String)],
    body: ServeBody,
    head_len: Option<u64>,
) -> hyper::Response<ServeBody> {
    let mut b = hyper::Response::builder().status(status);
    for (k, v) in headers {
        b = b.header(*k, v.as_str());
    }
    let body = match head_len {
        Some(len) => {
            b = b.header("Content-Length", len.to_string());
            ServeBody::bytes(Vec::new())
        }
        None => body,
    };
    b.body(body).unwrap_or_else(|e| {
        let mut r = hyper::Response::new(ServeBody::bytes(
            format!("500 the response could not be made: {e}\n").into_bytes(),
        ));
        *r.status_mut() = hyper::StatusCode::INTERNAL_SERVER_ERROR;
        r
    })
}

fn finish(reply: Reply, c: &Conditions, head: bool, reads: Reads) -> hyper::Response<ServeBody> {
    let Reply {
        status,
        mut headers,
        body,
    } = reply;
    let blob = match body {
        Payload::Bytes(b) => {
            let len = b.len() as u64;
            return respond(status, &headers, ServeBody::bytes(b), head.then_some(len));
        }
        Payload::File(blob) => blob,
    };
    let size = blob.size();
    let modified = blob.modified();
    let etag = modified.map(|m| etag_of(size, m));
    if let (Some(tag), Some(m)) = (&etag, modified) {
        headers.push(("ETag", tag.clone()));
        headers.push(("Last-Modified", httpdate::fmt_http_date(m)));
    }
    headers.push(("Accept-Ranges", "bytes".into()));
    if status == 200 && not_modified(c, etag.as_deref(), modified) {
        headers.retain(|(k, _)| !k.eq_ignore_ascii_case("Content-Type"));
        return respond(304, &headers, ServeBody::bytes(Vec::new()), None);
    }
    let wanted = c
        .range
        .as_deref()
        .filter(|_| status == 200 && if_range_holds(c, etag.as_deref(), modified));
    let range = match wanted.map(|r| parse_range(r, size)) {
        None | Some(RangeAsk::Ignored) => 0..size,
        Some(RangeAsk::Unsatisfiable) => {
            headers.retain(|(k, _)| !k.eq_ignore_ascii_case("Content-Type"));
            headers.push(("Content-Type", "text/plain; charset=utf-8".into()));
            headers.push(("Content-Range", format!("bytes */{size}")));
            let text = format!("416 the range is outside the file's {size} bytes\n");
            let len = text.len() as u64;
            return respond(
                416,
                &headers,
                ServeBody::bytes(text.into_bytes()),
                head.then_some(len),
            );
        }
        Some(RangeAsk::Bytes(r)) => r,
    };
    let status = if range.end - range.start == size {
        status
    } else {
        headers.push((
            "Content-Range",
            format!("bytes {}-{}/{size}", range.start, range.end - 1),
        ));
        206
    };
    let len = range.end - range.start;
    if head {
        return respond(status, &headers, ServeBody::bytes(Vec::new()), Some(len));
    }
    respond(status, &headers, ServeBody::file(blob, range, reads), None)
}

/// A strong validator from the size and the modification time (as nginx makes its ETags): a
/// file rewritten in place gets a new one.
fn etag_of(size: u64, modified: SystemTime) -> String {
    let ns = modified
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("\"{size:x}-{ns:x}\"")
}

/// `If-None-Match` (weak comparison, RFC 9110 13.1.2), else `If-Modified-Since`.
fn not_modified(c: &Conditions, etag: Option<&str>, modified: Option<SystemTime>) -> bool {
    if let Some(list) = &c.if_none_match {
        let Some(etag) = etag else { return false };
        let bare = |t: &str| t.trim().trim_start_matches("W/").to_string();
        return list.trim() == "*" || list.split(',').any(|t| bare(t) == bare(etag));
    }
    match (&c.if_modified_since, modified) {
        (Some(since), Some(m)) => match httpdate::parse_http_date(since) {
            // HTTP dates have whole seconds.
            Ok(since) => seconds(m) <= seconds(since),
            Err(_) => false,
        },
        _ => false,
    }
}

fn seconds(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `If-Range`: the range applies only to the version the client has (a strong ETag, or the
/// exact `Last-Modified` date); otherwise the whole file is sent.
fn if_range_holds(c: &Conditions, etag: Option<&str>, modified: Option<SystemTime>) -> bool {
    let Some(v) = c.if_range.as_deref().map(str::trim) else {
        return true;
    };
    if v.starts_with('"') {
        return etag == Some(v);
    }
    match (httpdate::parse_http_date(v), modified) {
        (Ok(d), Some(m)) => seconds(d) == seconds(m),
        _ => false,
    }
}

#[derive(Debug, PartialEq, Eq)]
enum RangeAsk {
    /// Not a single byte range this server reads (another unit, several ranges, bad syntax): the
    /// whole file is sent, as RFC 9110 14.2 allows.
    Ignored,
    /// 416.
    Unsatisfiable,
    Bytes(Range<u64>),
}

/// `bytes=A-B`, `bytes=A-` or `bytes=-N` against a file of `size` bytes.
fn parse_range(header: &str, size: u64) -> RangeAsk {
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return RangeAsk::Ignored;
    };
    if spec.contains(',') {
        return RangeAsk::Ignored;
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return RangeAsk::Ignored;
    };
    let num = |s: &str| -> Option<Option<u64>> {
        let s = s.trim();
        if s.is_empty() {
            Some(None)
        } else if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok().map(Some)
        } else {
            None
        }
    };
    match (num(a), num(b)) {
        (Some(Some(first)), Some(last)) => {
            if last.is_some_and(|l| l < first) {
                return RangeAsk::Ignored;
            }
            if first >= size {
                return RangeAsk::Unsatisfiable;
            }
            let end = last.map_or(size, |l| l.saturating_add(1).min(size));
            RangeAsk::Bytes(first..end)
        }
        (Some(None), Some(Some(suffix))) => {
            if suffix == 0 || size == 0 {
                return RangeAsk::Unsatisfiable;
            }
            RangeAsk::Bytes(size.saturating_sub(suffix)..size)
        }
        _ => RangeAsk::Ignored,
    }
}

/// A response body: bytes in memory, or a file read a chunk at a time.
pub enum ServeBody {
    Bytes(Option<Bytes>),
    File(FileBody),
}

impl ServeBody {
    fn bytes(b: Vec<u8>) -> ServeBody {
        ServeBody::Bytes((!b.is_empty()).then(|| Bytes::from(b)))
    }

    fn file(blob: Box<dyn Blob>, range: Range<u64>, reads: Reads) -> ServeBody {
        ServeBody::File(FileBody {
            left: range.end - range.start,
            state: FileState::Next(Next::Open(blob, range.start), Instant::now(), None),
            reads,
        })
    }
}

/// What a download's chunk reads share with the routes: LOGDIR's slots of the blocking pool,
/// and the time one read may take. A download from a LOGDIR that stopped answering (a hung
/// network mount, an object store gone quiet) had held a pool thread per chunk read uncounted,
/// so eight of them stopped every route.
pub struct Reads {
    slots: Arc<AtomicUsize>,
    deadline: Duration,
}

pub struct FileBody {
    /// Bytes still to send: exactly the length announced, even if the file grew meanwhile.
    left: u64,
    state: FileState,
    reads: Reads,
}

type Reader = Box<dyn Read + Send>;

/// The read a download asks for next.
enum Next {
    /// Open the blob at this offset, then read the first chunk.
    Open(Box<dyn Blob>, u64),
    /// Read the next chunk from the opened blob.
    Read(Reader),
}

impl Next {
    fn run(self, want: usize, left: u64) -> std::io::Result<(Reader, Vec<u8>)> {
        let reader = match self {
            Next::Open(blob, start) => blob.read(start..start + left)?,
            Next::Read(reader) => reader,
        };
        read_chunk(reader, want)
    }
}

/// How often a download waiting for a LOGDIR slot tries again.
const SLOT_RETRY: Duration = Duration::from_millis(25);

enum FileState {
    /// The next read, waiting since the instant for a LOGDIR slot (the timer, when one is set,
    /// says when to try again).
    Next(Next, Instant, Option<Pin<Box<Sleep>>>),
    /// A chunk being read on the blocking pool, holding a LOGDIR slot, until the timer's
    /// deadline (the next one is asked for as soon as one is handed to hyper, so reading the
    /// disk and writing the socket overlap).
    Reading(
        JoinHandle<std::io::Result<(Reader, Vec<u8>)>>,
        Pin<Box<Sleep>>,
    ),
    Done,
}

impl Body for ServeBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.get_mut() {
            ServeBody::Bytes(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            ServeBody::File(f) => f.poll_chunk(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ServeBody::Bytes(b) => b.is_none(),
            ServeBody::File(f) => f.left == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ServeBody::Bytes(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            ServeBody::File(f) => SizeHint::with_exact(f.left),
        }
    }
}

impl FileBody {
    fn poll_chunk(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        loop {
            if self.left == 0 {
                self.state = FileState::Done;
                return Poll::Ready(None);
            }
            match std::mem::replace(&mut self.state, FileState::Done) {
                FileState::Done => return Poll::Ready(None),
                FileState::Next(next, since, Some(mut timer)) => {
                    if timer.as_mut().poll(cx).is_pending() {
                        self.state = FileState::Next(next, since, Some(timer));
                        return Poll::Pending;
                    }
                    self.state = FileState::Next(next, since, None);
                }
                FileState::Next(next, since, None) => {
                    if !self.start(next, since) {
                        if since.elapsed() >= self.reads.deadline {
                            return Poll::Ready(Some(Err(std::io::Error::new(
                                std::io::ErrorKind::TimedOut,
                                "LOGDIR is not answering: earlier reads still wait for it",
                            ))));
                        }
                        let FileState::Next(_, _, timer) = &mut self.state else {
                            unreachable!("start leaves the read waiting when it takes no slot")
                        };
                        *timer = Some(Box::pin(tokio::time::sleep(SLOT_RETRY)));
                    }
                }
                FileState::Reading(mut job, mut timer) => {
                    let got = match Pin::new(&mut job).poll(cx) {
                        Poll::Pending => {
                            if timer.as_mut().poll(cx).is_ready() {
                                // The read keeps its slot until it returns, if ever.
                                return Poll::Ready(Some(Err(std::io::Error::new(
                                    std::io::ErrorKind::TimedOut,
                                    "the file system did not answer within the deadline",
                                ))));
                            }
                            self.state = FileState::Reading(job, timer);
                            return Poll::Pending;
                        }
                        Poll::Ready(Ok(got)) => got,
                        Poll::Ready(Err(e)) => Err(std::io::Error::other(e.to_string())),
                    };
                    let (reader, chunk) = match got {
                        Ok(got) => got,
                        Err(e) => return Poll::Ready(Some(Err(e))),
                    };
                    if chunk.is_empty() {
                        return Poll::Ready(Some(Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the file is shorter than when its length was sent",
                        ))));
                    }
                    self.left -= chunk.len() as u64;
                    if self.left > 0 {
                        self.start(Next::Read(reader), Instant::now());
                    }
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(chunk)))));
                }
            }
        }
    }

    /// Starts `next` on the blocking pool if a LOGDIR slot is free (true), else leaves it
    /// waiting, as it has since `since`.
    fn start(&mut self, next: Next, since: Instant) -> bool {
        let Some(slot) = Slot::take(&self.reads.slots, LOGDIR_THREADS) else {
            self.state = FileState::Next(next, since, None);
            return false;
        };
        let (want, left) = (self.chunk(), self.left);
        let job = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            next.run(want, left)
        });
        let timer = Box::pin(tokio::time::sleep(self.reads.deadline));
        self.state = FileState::Reading(job, timer);
        true
    }

    fn chunk(&self) -> usize {
        usize::try_from(self.left).map_or(CHUNK, |l| l.min(CHUNK))
    }
}

/// Up to `want` bytes (fewer only at the end of the file).
fn read_chunk(mut reader: Reader, want: usize) -> std::io::Result<(Reader, Vec<u8>)> {
    let mut chunk = Vec::with_capacity(want);
    (&mut reader).take(want as u64).read_to_end(&mut chunk)?;
    Ok((reader, chunk))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeAsk::*;
        assert_eq!(parse_range("bytes=0-99", 1000), Bytes(0..100));
        assert_eq!(parse_range("bytes=900-", 1000), Bytes(900..1000));
        assert_eq!(parse_range("bytes=900-5000", 1000), Bytes(900..1000));
        assert_eq!(parse_range("bytes=-100", 1000), Bytes(900..1000));
        assert_eq!(parse_range("bytes=-5000", 1000), Bytes(0..1000));
        assert_eq!(parse_range("bytes=1000-", 1000), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 1000), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-", 0), Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 1000), Ignored);
        assert_eq!(parse_range("bytes=0-1,5-9", 1000), Ignored);
        assert_eq!(parse_range("items=0-1", 1000), Ignored);
        assert_eq!(parse_range("bytes=a-b", 1000), Ignored);
        assert_eq!(parse_range("bytes=+1-2", 1000), Ignored);
    }

    #[test]
    fn validators() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_500);
        let tag = etag_of(10, t);
        let c = |inm: Option<&str>, ims: Option<&str>| Conditions {
            if_none_match: inm.map(str::to_string),
            if_modified_since: ims.map(str::to_string),
            ..Conditions::default()
        };
        assert!(not_modified(&c(Some(&tag), None), Some(&tag), Some(t)));
        assert!(not_modified(
            &c(Some(&format!("\"x\", W/{tag}")), None),
            Some(&tag),
            Some(t)
        ));
        assert!(!not_modified(&c(Some("\"x\""), None), Some(&tag), Some(t)));
        let date = httpdate::fmt_http_date(t);
        assert!(not_modified(&c(None, Some(&date)), Some(&tag), Some(t)));
        let before = httpdate::fmt_http_date(t - Duration::from_secs(5));
        assert!(!not_modified(&c(None, Some(&before)), Some(&tag), Some(t)));
        // If-None-Match wins over If-Modified-Since.
        assert!(!not_modified(
            &c(Some("\"x\""), Some(&date)),
            Some(&tag),
            Some(t)
        ));
        let r = |v: &str| Conditions {
            if_range: Some(v.to_string()),
            ..Conditions::default()
        };
        assert!(if_range_holds(&r(&tag), Some(&tag), Some(t)));
        assert!(!if_range_holds(
            &r(&format!("W/{tag}")),
            Some(&tag),
            Some(t)
        ));
        assert!(if_range_holds(&r(&date), Some(&tag), Some(t)));
        assert!(!if_range_holds(&r(&before), Some(&tag), Some(t)));
    }
}
