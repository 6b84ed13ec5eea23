//! The gate between the network and the HTTP server: every connection's
//! bytes pass through it, and it refuses what a hostile or broken client
//! sends before hyper parses it.
//!
//! A [`GateListener`] accepts at most [`Limits::connections`] connections at
//! once and wraps each in a [`Gated`] stream, which reads each request's
//! head (the request line and the headers) itself, whole, and checks it:
//!
//! - the head arrives within [`Limits::head_timeout`] of its first byte, and
//!   is at most [`Limits::head_bytes`] long and [`MAX_HEADERS`] header
//!   lines (else 408 or 431);
//! - it is printable ASCII (else 400), its target at most
//!   [`Limits::uri_bytes`] (else 414), its body announced by one
//!   `Content-Length` of at most [`Limits::body_bytes`] (else 413; a
//!   chunked body is refused with 411);
//! - the body then arrives within [`Limits::body_timeout`] (else the read
//!   fails and the connection ends);
//! - it names this server in one `Host` (else 400 or 421) and, unless it
//!   only asks for the page, comes from no other site's page by its
//!   `Origin` or `Sec-Fetch-Site` (else 403): the [`HostPolicy`], against
//!   DNS rebinding and other sites' requests (see [`host`]);
//! - a connection with no request in progress is closed after
//!   [`Limits::idle_timeout`];
//! - an answer the client takes none of for [`Limits::write_timeout`]
//!   (it reads nothing, and every buffer between is full) ends the
//!   connection.
//!
//! A head that passes is handed to hyper unchanged, followed by exactly its
//! body. A head that fails is never shown to hyper: in its place hyper gets
//! a plain `GET /` that closes the connection, and the gate records the
//! refusal and its message in the connection's [`GateInfo`], which the
//! router's first layer answers as a JSON error. So even what the HTTP
//! layer would refuse with an empty body is answered in the API's own form.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

use super::host::{self, Authority, HostPolicy};

/// What the gate allows one client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more wait to be accepted.
    pub connections: usize,
    /// The longest request head (request line and headers), in bytes.
    pub head_bytes: usize,
    /// The longest request target (path and query), in bytes.
    pub uri_bytes: usize,
    /// The longest request body, in bytes.
    pub body_bytes: u64,
    /// Time from a head's first byte to its end.
    pub head_timeout: Duration,
    /// Time from a head's end to the end of its body.
    pub body_timeout: Duration,
    /// Time a connection may wait with no request in progress.
    pub idle_timeout: Duration,
    /// Time an answer may wait for the client to take any of it.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: 512,
            head_bytes: 16 * 1024,
            uri_bytes: 4 * 1024,
            body_bytes: 256 * 1024,
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// The most header lines a request may have: hyper parses no more, and
/// refuses more with a bare 431 of its own, which the gate answers first.
pub const MAX_HEADERS: usize = 100;

/// Why the gate refused a request: the HTTP status it is answered with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 400: the head is not well formed or not printable ASCII.
    Malformed,
    /// 408: the head did not arrive in time.
    HeadTimeout,
    /// 411: the body is not announced by a `Content-Length`.
    LengthRequired,
    /// 413: the body announced is too large.
    BodyTooLarge,
    /// 414: the request target is too long.
    UriTooLong,
    /// 431: the head is too large, or has too many header lines.
    HeadTooLarge,
    /// 400: HTTP/1.1 without a `Host`, with several, or with one that is
    /// no host and port.
    BadHost,
    /// 421: the `Host` names no address of this server (DNS rebinding).
    ForeignHost,
    /// 403: a page of another site sent the request (its `Origin` or
    /// `Sec-Fetch-Site` says so).
    ForeignOrigin,
}

impl Refusal {
    /// The HTTP status code.
    pub fn status(self) -> u16 {
        match self {
            Refusal::Malformed => 400,
            Refusal::HeadTimeout => 408,
            Refusal::LengthRequired => 411,
            Refusal::BodyTooLarge => 413,
            Refusal::UriTooLong => 414,
            Refusal::HeadTooLarge => 431,
            Refusal::BadHost => 400,
            Refusal::ForeignHost => 421,
            Refusal::ForeignOrigin => 403,
        }
    }

    /// The one-line message, with the limit it broke. (The gate says more
    /// of a refused Host or Origin: see `admit`.)
    pub fn message(self, limits: &Limits) -> String {
        match self {
            Refusal::Malformed => {
                "the request is not well-formed HTTP/1.1 in printable ASCII (percent-encode other bytes)".into()
            }
            Refusal::HeadTimeout => format!(
                "the request head did not arrive within {} s",
                limits.head_timeout.as_secs()
            ),
            Refusal::LengthRequired => "send the request body with a Content-Length, not chunked".into(),
            Refusal::BodyTooLarge => format!("the request body is larger than {} bytes", limits.body_bytes),
            Refusal::UriTooLong => format!("the request target is longer than {} bytes", limits.uri_bytes),
            Refusal::HeadTooLarge => format!(
                "the request headers are larger than {} bytes or more than {MAX_HEADERS} lines",
                limits.head_bytes
            ),
            Refusal::BadHost => "the request needs one Host header naming this server".into(),
            Refusal::ForeignHost => "the Host is not a name of this server".into(),
            Refusal::ForeignOrigin => "a page of another site may not use this server's API".into(),
        }
    }
}

/// Accepts connections, at most [`Limits::connections`] at once, each
/// behind a [`Gated`] stream.
#[derive(Debug)]
pub struct GateListener {
    listener: TcpListener,
    limits: Arc<Limits>,
    hosts: Arc<HostPolicy>,
    permits: Arc<Semaphore>,
}

impl GateListener {
    /// Gates the connections of `listener`: each request within `limits`,
    /// and with a Host and Origin that `hosts` admits.
    pub fn new(listener: TcpListener, limits: Limits, hosts: HostPolicy) -> GateListener {
        GateListener {
            listener,
            permits: Arc::new(Semaphore::new(limits.connections.max(1))),
            limits: Arc::new(limits),
            hosts: Arc::new(hosts),
        }
    }
}

impl Listener for GateListener {
    type Io = Gated;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Gated, SocketAddr) {
        // Waits for a free place before accepting: the kernel's backlog
        // holds the rest.
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        loop {
            match self.listener.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    let gated = Gated::new(stream, Arc::clone(&self.limits), Arc::clone(&self.hosts), permit);
                    return (gated, addr);
                }
                // Out of file descriptors, say: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// What the router learns of a connection: its peer, and whether the gate
/// refused its request ([`GateInfo::refusal`]).
#[derive(Clone, Debug)]
pub struct GateInfo {
    /// The client's address.
    pub peer: SocketAddr,
    refusal: Arc<OnceLock<(Refusal, String)>>,
}

impl GateInfo {
    /// The refusal of the connection's request, and its message; `None`
    /// while the gate has let everything through.
    pub fn refusal(&self) -> Option<(Refusal, String)> {
        self.refusal.get().cloned()
    }
}

impl Connected<IncomingStream<'_, GateListener>> for GateInfo {
    fn connect_info(stream: IncomingStream<'_, GateListener>) -> GateInfo {
        let gated = stream.io();
        GateInfo {
            peer: *stream.remote_addr(),
            refusal: Arc::clone(&gated.refusal),
        }
    }
}

/// Where a gated connection is in its stream of requests.
#[derive(Debug)]
enum Phase {
    /// Reading a head; `began` is when its first byte came.
    Head { began: Option<Instant> },
    /// Passing on a body: `left` bytes, due by `due`.
    Body { left: u64, due: Instant },
    /// Refused or at its end: hyper gets what is queued, then the end.
    Closed,
}

/// A connection behind the gate: hyper reads through it.
#[derive(Debug)]
pub struct Gated {
    io: TcpStream,
    limits: Arc<Limits>,
    hosts: Arc<HostPolicy>,
    /// The refusal of the connection's request, once there is one: a
    /// refused connection ends with its answer.
    refusal: Arc<OnceLock<(Refusal, String)>>,
    _permit: OwnedSemaphorePermit,
    phase: Phase,
    /// Bytes read from the client and not yet classified.
    input: Vec<u8>,
    /// Bytes checked and waiting for hyper to read them, from `handed`.
    output: Vec<u8>,
    handed: usize,
    /// Whether a request was handed on and no byte of an answer has been
    /// written since: hyper is working on it, and the idle clock waits.
    busy: bool,
    /// When the connection last had something to do: its start, a request
    /// handed on, an answer written. The idle clock runs from here.
    active: Instant,
    timer: Pin<Box<Sleep>>,
    /// While the client takes none of an answer: the clock that ends the
    /// connection, from the first write it would not take.
    stalled: Option<Pin<Box<Sleep>>>,
    /// Who to wake when hyper starts its answer, if a read waited on that:
    /// the idle clock (or the end) starts then, not at the client's word.
    reader: Option<Waker>,
}

/// The request hyper is given in place of a refused one.
const STAND_IN: &[u8] = b"GET / HTTP/1.1\r\nhost: refused\r\nconnection: close\r\n\r\n";

impl Gated {
    fn new(io: TcpStream, limits: Arc<Limits>, hosts: Arc<HostPolicy>, permit: OwnedSemaphorePermit) -> Gated {
        let now = Instant::now();
        let idle = now + limits.idle_timeout;
        Gated {
            io,
            limits,
            hosts,
            refusal: Arc::new(OnceLock::new()),
            _permit: permit,
            phase: Phase::Head { began: None },
            input: Vec::new(),
            output: Vec::new(),
            handed: 0,
            busy: false,
            active: now,
            timer: Box::pin(tokio::time::sleep_until(idle)),
            stalled: None,
            reader: None,
        }
    }

    /// Refuses the request being read with `message`: hyper gets the
    /// stand-in, then the end once it has answered.
    fn refuse(&mut self, refusal: Refusal, message: String) {
        let _ = self.refusal.set((refusal, message));
        self.input.clear();
        self.output.clear();
        self.output.extend_from_slice(STAND_IN);
        self.handed = 0;
        self.busy = true;
        self.phase = Phase::Closed;
    }

    /// The end of what hyper reads: at once when it has nothing in hand,
    /// else once it has begun its answer. (Hyper drops the answer it is
    /// working on when its reads end, so a client that sent its request
    /// and closed its side still gets the answer.)
    fn end(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        if self.busy {
            self.reader = Some(cx.waker().clone());
            Poll::Pending
        } else {
            Poll::Ready(Ok(()))
        }
    }

    /// Classifies what `input` holds: a whole head is checked and queued
    /// for hyper (or refused); a body's bytes are queued. Returns whether
    /// anything changed.
    fn advance(&mut self) -> bool {
        match self.phase {
            Phase::Closed => false,
            Phase::Body { left, due } => {
                if left == 0 {
                    self.phase = Phase::Head { began: None };
                    return true;
                }
                if self.input.is_empty() {
                    return false;
                }
                let n = (left.min(self.input.len() as u64)) as usize;
                self.output.extend(self.input.drain(..n));
                self.phase = Phase::Body {
                    left: left - n as u64,
                    due,
                };
                true
            }
            Phase::Head { began } => {
                // Empty lines before a request line are allowed (RFC 9112 2.2).
                let blank = self.input.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
                if blank > 0 {
                    self.input.drain(..blank);
                }
                if self.input.is_empty() {
                    return blank > 0;
                }
                let began = began.unwrap_or_else(Instant::now);
                match head_end(&self.input) {
                    Some(end) => {
                        let head = &self.input[..end];
                        let checked = check_head(head, &self.limits)
                            .map_err(|refusal| (refusal, refusal.message(&self.limits)))
                            .and_then(|head| admit(&head, &self.hosts).map(|()| head.body));
                        match checked {
                            Ok(body) => {
                                self.output.extend(self.input.drain(..end));
                                self.busy = true;
                                self.active = Instant::now();
                                self.phase = Phase::Body {
                                    left: body,
                                    due: Instant::now() + self.limits.body_timeout,
                                };
                            }
                            Err((refusal, message)) => self.refuse(refusal, message),
                        }
                        true
                    }
                    None if self.input.len() > self.limits.head_bytes => {
                        self.refuse(Refusal::HeadTooLarge, Refusal::HeadTooLarge.message(&self.limits));
                        true
                    }
                    None => {
                        self.phase = Phase::Head { began: Some(began) };
                        false
                    }
                }
            }
        }
    }

    /// When the gate stops waiting for the client, given the phase; `None`
    /// while hyper works on a request (its own answer is not the client's
    /// to hurry).
    fn deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Head { began: Some(began) } => Some(began + self.limits.head_timeout),
            Phase::Head { began: None } if self.busy => None,
            Phase::Head { began: None } => Some(self.active + self.limits.idle_timeout),
            Phase::Body { due, .. } => Some(due),
            Phase::Closed => None,
        }
    }

    /// Waits on the clock for `deadline`: `Ready` once it has passed.
    fn poll_deadline(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        if self.timer.deadline() != deadline {
            self.timer.as_mut().reset(deadline);
        }
        self.timer.as_mut().poll(cx)
    }
}

impl Gated {
    /// Notes that hyper wrote: its answer has begun, the connection is
    /// active, the client takes what it is sent.
    fn wrote(&mut self, written: &io::Result<usize>) {
        if matches!(written, Ok(n) if *n > 0) {
            self.busy = false;
            self.stalled = None;
            self.active = Instant::now();
            if let Some(reader) = self.reader.take() {
                reader.wake();
            }
        }
    }

    /// A write the client's socket would not take: `Pending` until the
    /// client has taken nothing for [`Limits::write_timeout`], then the
    /// error that ends the connection (a client that reads none of its
    /// answers would otherwise hold its place for ever).
    fn stalled<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let due = Instant::now() + self.limits.write_timeout;
        let clock = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        ready!(clock.as_mut().poll(cx));
        Poll::Ready(Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client took none of the answer in time",
        )))
    }
}

/// The length of the head at the start of `input`, through its blank line,
/// if it is all there.
fn head_end(input: &[u8]) -> Option<usize> {
    let crlf = input.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    let lf = input.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// What the gate reads of a head that passes [`check_head`], for [`admit`].
#[derive(Debug, Default)]
struct Head<'a> {
    /// The length of the body it announces.
    body: u64,
    /// Whether it is HTTP/1.0, where a Host is optional.
    http10: bool,
    /// Whether it must be this server's page's, if a page's at all
    /// ([`host::is_guarded`]).
    guarded: bool,
    /// The authority of an absolute-form target (`GET http://host/ …`),
    /// which stands for the Host.
    target: Option<String>,
    /// The values of its first two `Host` headers, and how many it has.
    hosts: [&'a [u8]; 2],
    host_count: usize,
    /// The values of its `Origin` headers (at most [`MAX_HEADERS`]).
    origins: Vec<&'a [u8]>,
    /// The first `Sec-Fetch-Site` that says another site's page sent it.
    cross_site: Option<&'a [u8]>,
}

/// Checks a whole head: its form and its limits. What it says of its Host
/// and Origin is checked by [`admit`].
fn check_head<'a>(head: &'a [u8], limits: &Limits) -> Result<Head<'a>, Refusal> {
    if head.len() > limits.head_bytes {
        return Err(Refusal::HeadTooLarge);
    }
    let printable = |b: u8| (0x20..0x7f).contains(&b) || b == b'\t';
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .take_while(|line| !line.is_empty());
    let request = lines.next().ok_or(Refusal::Malformed)?;
    if !request.iter().all(|&b| printable(b) && b != b'\t') {
        return Err(Refusal::Malformed);
    }
    let mut parts = request.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Malformed);
    };
    if method.is_empty() || !method.iter().all(u8::is_ascii_uppercase) || target.is_empty() {
        return Err(Refusal::Malformed);
    }
    if target.len() > limits.uri_bytes {
        return Err(Refusal::UriTooLong);
    }
    // The target must be one hyper accepts, or hyper would refuse it with
    // a bare status of its own.
    let Ok(uri) = axum::http::Uri::try_from(target) else {
        return Err(Refusal::Malformed);
    };
    if version != b"HTTP/1.1" && version != b"HTTP/1.0" {
        return Err(Refusal::Malformed);
    }
    let mut seen = Head {
        http10: version == b"HTTP/1.0",
        guarded: host::is_guarded(method, uri.path()),
        target: uri.authority().map(|a| a.as_str().to_owned()),
        ..Head::default()
    };
    let mut length: Option<u64> = None;
    for (n, line) in lines.enumerate() {
        if n == MAX_HEADERS {
            return Err(Refusal::HeadTooLarge);
        }
        let colon = line.iter().position(|&b| b == b':').ok_or(Refusal::Malformed)?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let token = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
        if name.is_empty() || !name.iter().all(token) || !value.iter().all(|&b| printable(b)) {
            return Err(Refusal::Malformed);
        }
        let value = value.trim_ascii();
        if name.eq_ignore_ascii_case(b"transfer-encoding") {
            return Err(Refusal::LengthRequired);
        }
        if name.eq_ignore_ascii_case(b"host") {
            if seen.host_count < 2 {
                seen.hosts[seen.host_count] = value;
            }
            seen.host_count += 1;
        } else if name.eq_ignore_ascii_case(b"origin") {
            seen.origins.push(value);
        } else if name.eq_ignore_ascii_case(b"sec-fetch-site") && host::is_cross_site(value) {
            seen.cross_site = seen.cross_site.or(Some(value));
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = std::str::from_utf8(value)
                .ok()
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse::<u64>().ok());
            match (n, length) {
                (None, _) => return Err(Refusal::Malformed),
                (Some(n), Some(before)) if n != before => return Err(Refusal::Malformed),
                (Some(n), _) if n > limits.body_bytes => return Err(Refusal::BodyTooLarge),
                (Some(n), _) => length = Some(n),
            }
        }
    }
    seen.body = length.unwrap_or(0);
    Ok(seen)
}

/// Admits a checked head by its Host, Origin and Sec-Fetch-Site
/// ([`host`](super::host)), or says why not, in one line that quotes what
/// it refuses clipped.
fn admit(head: &Head<'_>, hosts: &HostPolicy) -> Result<(), (Refusal, String)> {
    let bad_host = |message: String| Err((Refusal::BadHost, message));
    let host = match (head.host_count, head.http10) {
        (0, true) => None,
        (0, false) => return bad_host("the request has no Host header: HTTP/1.1 needs one".into()),
        (1, _) => match Authority::parse(head.hosts[0]) {
            Some(authority) => Some(authority),
            None => {
                return bad_host(format!(
                    "the Host `{}` is not a host name or address with an optional port",
                    host::quote(head.hosts[0])
                ));
            }
        },
        _ => return bad_host("the request has several Host headers: send one".into()),
    };
    if let Some(authority) = &host
        && !hosts.admits(authority)
    {
        return Err((Refusal::ForeignHost, hosts.foreign_host_message(head.hosts[0])));
    }
    // An absolute-form target names the host in place of the Host header.
    if let Some(target) = &head.target {
        match Authority::parse(target.as_bytes()) {
            Some(authority) if hosts.admits(&authority) => {}
            Some(_) => return Err((Refusal::ForeignHost, hosts.foreign_host_message(target.as_bytes()))),
            None => {
                return bad_host(format!(
                    "the request's target names `{}`, which is not a host name or address with an optional port",
                    host::quote(target.as_bytes())
                ));
            }
        }
    }
    if !head.guarded {
        return Ok(());
    }
    let foreign = |what: String| {
        Err((
            Refusal::ForeignOrigin,
            format!("a page of another site ({what}) may not use this server's API: open the page this server serves"),
        ))
    };
    if let Some(origin) = head.origins.iter().find(|o| !hosts.admits_origin(o, host.as_ref())) {
        return foreign(format!("Origin `{}`", host::quote(origin)));
    }
    if let Some(site) = head.cross_site {
        return foreign(format!("Sec-Fetch-Site `{}`", host::quote(site)));
    }
    Ok(())
}

impl AsyncRead for Gated {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.handed < this.output.len() {
                let n = buf.remaining().min(this.output.len() - this.handed);
                buf.put_slice(&this.output[this.handed..this.handed + n]);
                this.handed += n;
                if this.handed == this.output.len() {
                    this.output.clear();
                    this.handed = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.advance() {
                continue;
            }
            if matches!(this.phase, Phase::Closed) {
                return this.end(cx);
            }
            // Read more from the client: a body straight into hyper's
            // buffer, at most what is left of it; a head into `input`.
            let mut chunk = [0u8; 8192];
            let want = match this.phase {
                Phase::Body { left, .. } => (left.min(chunk.len() as u64)) as usize,
                _ => chunk.len(),
            };
            let mut read = ReadBuf::new(&mut chunk[..want]);
            match Pin::new(&mut this.io).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if read.filled().is_empty() => {
                    // The client is done: a half-sent head is dropped; a
                    // half-sent body ends here, and hyper gives up on it.
                    let mid_body = matches!(this.phase, Phase::Body { .. });
                    this.input.clear();
                    this.phase = Phase::Closed;
                    return if mid_body { Poll::Ready(Ok(())) } else { this.end(cx) };
                }
                Poll::Ready(Ok(())) => {
                    this.input.extend_from_slice(read.filled());
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => {
                    let Some(deadline) = this.deadline() else {
                        this.reader = Some(cx.waker().clone());
                        return Poll::Pending;
                    };
                    ready!(this.poll_deadline(cx, deadline));
                    match this.phase {
                        Phase::Head { began: Some(_) } => {
                            let message = Refusal::HeadTimeout.message(&this.limits);
                            this.refuse(Refusal::HeadTimeout, message);
                        }
                        Phase::Head { began: None } => {
                            // Idle too long: end the connection quietly.
                            this.phase = Phase::Closed;
                            return this.end(cx);
                        }
                        Phase::Body { .. } => {
                            this.phase = Phase::Closed;
                            return Poll::Ready(Err(io::Error::new(
                                io::ErrorKind::TimedOut,
                                "the request body did not arrive in time",
                            )));
                        }
                        Phase::Closed => {}
                    }
                }
            }
        }
    }
}

impl AsyncWrite for Gated {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let Poll::Ready(written) = Pin::new(&mut this.io).poll_write(cx, data) else {
            return this.stalled(cx);
        };
        this.wrote(&written);
        Poll::Ready(written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let Poll::Ready(written) = Pin::new(&mut this.io).poll_write_vectored(cx, bufs) else {
            return this.stalled(cx);
        };
        this.wrote(&written);
        Poll::Ready(written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(head: &str) -> Result<u64, Refusal> {
        check_head(head.as_bytes(), &Limits::default()).map(|h| h.body)
    }

    /// Checks `head` whole, as the gate does, for a server on
    /// 127.0.0.1:8080: its status if refused, and the message.
    fn gate(head: &str) -> Result<(), (u16, String)> {
        let hosts = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[]);
        check_head(head.as_bytes(), &Limits::default())
            .map_err(|r| (r, r.message(&Limits::default())))
            .and_then(|h| admit(&h, &hosts))
            .map_err(|(r, message)| (r.status(), message))
    }

    #[test]
    fn well_formed_heads_pass_with_their_body_length() {
        assert_eq!(check("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Ok(0));
        assert_eq!(check("GET /api/query?position=5_4_a1-a3_e1-e3 HTTP/1.0\n\n"), Ok(0));
        let most = format!("GET / HTTP/1.1\r\n{}\r\n", "x: a\r\n".repeat(MAX_HEADERS));
        assert_eq!(check(&most), Ok(0));
        assert_eq!(
            check("POST /api/verify HTTP/1.1\r\ncontent-length: 12\r\nContent-Length: 12\r\n\r\n"),
            Ok(12)
        );
    }

    #[test]
    fn each_kind_of_bad_head_gets_its_status() {
        let limits = Limits::default();
        let cases = [
            ("GET /\u{ff} HTTP/1.1\r\n\r\n".to_owned(), Refusal::Malformed),
            ("GET / HTTP/1.1\r\nx: caf\u{e9}\r\n\r\n".to_owned(), Refusal::Malformed),
            ("GET / HTTP/2.0\r\n\r\n".to_owned(), Refusal::Malformed),
            ("GET /< HTTP/1.1\r\n\r\n".to_owned(), Refusal::Malformed),
            ("get / HTTP/1.1\r\n\r\n".to_owned(), Refusal::Malformed),
            ("GET  / HTTP/1.1\r\n\r\n".to_owned(), Refusal::Malformed),
            ("GET / HTTP/1.1\r\nno colon\r\n\r\n".to_owned(), Refusal::Malformed),
            (
                "POST / HTTP/1.1\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n".to_owned(),
                Refusal::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\ncontent-length: -1\r\n\r\n".to_owned(),
                Refusal::Malformed,
            ),
            (
                "POST / HTTP/1.1\r\ncontent-length: 99999999999\r\n\r\n".to_owned(),
                Refusal::BodyTooLarge,
            ),
            (
                "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n".to_owned(),
                Refusal::LengthRequired,
            ),
            (
                format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(limits.uri_bytes)),
                Refusal::UriTooLong,
            ),
            (
                format!("GET / HTTP/1.1\r\nx: {}\r\n\r\n", "a".repeat(limits.head_bytes)),
                Refusal::HeadTooLarge,
            ),
            (
                format!("GET / HTTP/1.1\r\n{}\r\n", "x: a\r\n".repeat(MAX_HEADERS + 1)),
                Refusal::HeadTooLarge,
            ),
        ];
        for (head, refusal) in cases {
            assert_eq!(
                check_head(head.as_bytes(), &limits).map(|h| h.body),
                Err(refusal),
                "{head:?}"
            );
            assert!(!refusal.message(&limits).contains('\n'));
        }
    }

    #[test]
    fn heads_are_admitted_by_their_host_and_origin() {
        for head in [
            "GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
            "GET / HTTP/1.1\r\nhost:127.0.0.1\r\n\r\n",
            "GET /api/variants HTTP/1.0\r\n\r\n",
            "GET http://localhost:8080/api/variants HTTP/1.1\r\nHost: localhost:8080\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: [::1]:8080\r\nOrigin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n\r\n",
            "POST /api/verify HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://localhost:8080\r\nSec-Fetch-Site: same-origin\r\nContent-Length: 2\r\n\r\n",
        ] {
            assert_eq!(gate(head), Ok(()), "{head:?}");
        }
        let cases = [
            ("GET / HTTP/1.1\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: localhost\r\nHost: localhost\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost:\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: localhost:123456\r\n\r\n", 400),
            ("GET http://u@localhost/ HTTP/1.1\r\nHost: localhost\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n", 421),
            ("GET / HTTP/1.0\r\nHost: evil.example\r\n\r\n", 421),
            ("GET /app.js HTTP/1.1\r\nHost: localhost:8081\r\n\r\n", 421),
            ("GET http://evil.example/ HTTP/1.1\r\nHost: localhost\r\n\r\n", 421),
            (
                "GET /api/query HTTP/1.1\r\nHost: localhost\r\nOrigin: null\r\n\r\n",
                403,
            ),
            (
                "GET /api/query HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\n\r\n",
                403,
            ),
            ("GET /api/variants HTTP/1.0\r\nSec-Fetch-Site: same-site\r\n\r\n", 403),
            (
                "POST / HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: cross-site\r\n\r\n",
                403,
            ),
        ];
        for (head, status) in cases {
            let (got, message) = gate(head).expect_err(head);
            assert_eq!(got, status, "{head:?}: {message}");
            assert!(!message.contains('\n') && message.len() < 300, "{message}");
        }
        let huge = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", "a".repeat(10_000));
        let (status, message) = gate(&huge).unwrap_err();
        assert!(status == 400 && message.contains("(10000 bytes)"), "{message}");
    }

    #[test]
    fn heads_end_at_the_first_blank_line() {
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nGET"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\n\nX"), Some(16));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\nHost: x\r\n"), None);
    }
}
