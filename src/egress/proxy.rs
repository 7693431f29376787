//! The proxy one locked pane's programs reach the network through: on a unix socket of its
//! own, it takes one HTTP/1 request head per connection (parsed by httparse), either `CONNECT
//! host:port` (a tunnel, what HTTPS goes through) or a plain-HTTP request in absolute form
//! (`GET http://host/path`), decides by the pane's allow-list, connects to the address the
//! decision gives, and relays bytes both ways until either side is done or the tunnel idles.
//! Every connection is reported once it ends, allowed or not.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::broker::{PaneBroker, Place, Target};
use super::relay::relay_watched;
use super::report::Connection;
use super::rules::{AllowList, Rule};

/// How much a proxy lets one pane do.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once; past it a new one is refused (503).
    pub connections: usize,
    /// The longest request head (request line and headers).
    pub head_bytes: usize,
    /// How long a client may take to send its request head.
    pub head_time: Duration,
    /// How long connecting to the host may take.
    pub connect_time: Duration,
    /// A tunnel with no bytes either way for this long is closed.
    pub idle_time: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: 64,
            head_bytes: 64 * 1024,
            head_time: Duration::from_secs(30),
            connect_time: Duration::from_secs(10),
            idle_time: Duration::from_secs(300),
        }
    }
}

/// Who the connections belong to, for their reports.
#[derive(Clone, Debug, Default)]
pub struct Owner {
    pub pane: u32,
    pub thread: Option<String>,
}

/// Where each ended connection is told.
pub type Reporter = Arc<dyn Fn(Connection) + Send + Sync>;

/// A running proxy; dropping it stops taking connections (open tunnels run to their end).
pub struct Proxy {
    stop: Arc<AtomicBool>,
    listener: Option<JoinHandle<()>>,
    shared: Arc<Shared>,
}

struct Shared {
    /// Its rules; more may be added while it runs (`Proxy::allow`), never taken away.
    allow: RwLock<AllowList>,
    owner: Owner,
    report: Reporter,
    limits: Limits,
    open: AtomicUsize,
    /// The pane's secret broker, when it has brokered secrets.
    broker: Option<Arc<PaneBroker>>,
}

impl Proxy {
    /// Serve `listener` on a thread of its own.
    pub fn start(
        listener: UnixListener,
        allow: AllowList,
        owner: Owner,
        report: Reporter,
        limits: Limits,
        broker: Option<Arc<PaneBroker>>,
    ) -> std::io::Result<Proxy> {
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let allow = RwLock::new(allow);
        let open = AtomicUsize::new(0);
        let shared = Arc::new(Shared { allow, owner, report, limits, open, broker });
        let name = format!("pane-{}-egress", shared.owner.pane);
        let (stopping, serving) = (stop.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || accept_until(&listener, &stopping, &serving))?;
        Ok(Proxy { stop, listener: Some(thread), shared })
    }

    /// Let `rule` through too, from the next connection on, for as long as this proxy runs
    /// (the user's allowance for one pane; no configuration is written).
    pub fn allow(&self, rule: Rule) {
        let mut allow = self.shared.allow.write().unwrap_or_else(PoisonError::into_inner);
        if !allow.rules.contains(&rule) {
            allow.rules.push(rule);
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.listener.take() {
            let _ = thread.join();
        }
    }
}

fn accept_until(listener: &UnixListener, stop: &AtomicBool, shared: &Arc<Shared>) {
    while !stop.load(Ordering::Acquire) {
        if !wait_readable(listener.as_raw_fd(), Duration::from_millis(100)) {
            continue;
        }
        let Ok((client, _)) = listener.accept() else { continue };
        let _ = client.set_nonblocking(false);
        if shared.open.fetch_add(1, Ordering::AcqRel) >= shared.limits.connections {
            shared.open.fetch_sub(1, Ordering::AcqRel);
            let mut client = client;
            let _ = client.write_all(&response(503, "too many connections from this pane"));
            continue;
        }
        let shared = shared.clone();
        let spawned = std::thread::Builder::new().name("egress-connection".into()).spawn({
            let shared = shared.clone();
            move || {
                let record = serve(client, &shared);
                // The slot is free before anyone hears the connection ended.
                shared.open.fetch_sub(1, Ordering::AcqRel);
                if let Some(record) = record {
                    (shared.report)(record);
                }
            }
        });
        if spawned.is_err() {
            shared.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// What a client asked for.
struct Ask {
    host: String,
    port: u16,
    /// The head to send on (plain HTTP), or none (a tunnel).
    forward: Option<Vec<u8>>,
}

/// Carry out one client's request; its report, once it asked for a host.
fn serve(mut client: UnixStream, shared: &Shared) -> Option<Connection> {
    let started = Instant::now();
    let _ = client.set_read_timeout(Some(shared.limits.head_time));
    let mut record = Connection {
        time: SystemTime::now(),
        pane: shared.owner.pane,
        thread: shared.owner.thread.clone(),
        host: String::new(),
        port: 0,
        allowed: false,
        reason: None,
        sent: 0,
        received: 0,
        duration: Duration::ZERO,
    };
    // A request that is not one is refused, and reported too: probing leaves a trace.
    let bad = |mut record: Connection, client: &mut UnixStream, target: String, why: String| {
        let _ = client.write_all(&response(400, &why));
        record.host = target;
        record.reason = Some(cut(&why, 2 * SHOWN_TARGET));
        record.duration = started.elapsed();
        Some(record)
    };
    let (head, rest) = match read_head(&mut client, shared.limits.head_bytes) {
        Ok(read) => read,
        Err((why, seen)) => return bad(record, &mut client, target_of(&seen), why),
    };
    let ask = match parse(&head) {
        Ok(ask) => ask,
        Err(why) => return bad(record, &mut client, target_of(&head), why),
    };
    record.host = ask.host.clone();
    record.port = ask.port;
    let resolve = |name: &str, port: u16| (name, port).to_socket_addrs().map(Iterator::collect);
    let decision = {
        let allow = shared.allow.read().unwrap_or_else(PoisonError::into_inner);
        allow.clone()
    };
    let broker = shared.broker.as_ref().filter(|b| !b.grants().is_empty());
    // A placeholder in a plain-HTTP request, or in what asks the proxy for a tunnel (its
    // target, its headers: a name looked up is a message too), goes nowhere.
    if let Some((broker, grant)) = broker.and_then(|b| {
        let found = b.grants().found_in(&head);
        let found = found.or_else(|| ask.forward.as_ref().and_then(|_| b.grants().found_in(&rest)));
        found.map(|g| (b, g))
    }) {
        let name = &broker.grants().get(grant).name;
        let place = if ask.forward.is_some() { Place::PlainHttp } else { Place::ProxyRequest };
        let why = format!("a placeholder of secret \"{name}\" {place}");
        let _ = client.write_all(&response(403, &format!("paddock: {why}; it was stopped")));
        broker.attempt(grant, &ask.host, ask.port, place);
        record.reason = Some(why);
        record.duration = started.elapsed();
        return Some(record);
    }
    let upstream = match decision.decide(&ask.host, ask.port, resolve) {
        Err(denied) => {
            let why = format!("paddock: {}:{} {denied}", ask.host, ask.port);
            let _ = client.write_all(&response(403, &why));
            record.reason = Some(denied.to_string());
            Err(())
        }
        Ok(addresses) => connect(&addresses, shared.limits.connect_time)
            .map(|stream| (stream, addresses))
            .map_err(|why| {
                let _ = client.write_all(&response(502, &format!("paddock: {why}")));
                record.reason = Some(why);
            }),
    };
    if let Ok((mut upstream, addresses)) = upstream {
        record.allowed = true;
        let brokered =
            broker.filter(|b| ask.forward.is_none() && b.grants().intercepts(&ask.host, ask.port));
        if let Some(broker) = brokered {
            // The broker ends TLS here, as the host: the tunnel is open for it.
            if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").is_ok() {
                let _ = client.set_read_timeout(None);
                let target = Target { host: ask.host.clone(), port: ask.port, addresses };
                match broker.serve(client, upstream, target, shared.limits.idle_time) {
                    Ok((sent, received)) => (record.sent, record.received) = (sent, received),
                    Err(why) => record.reason = Some(why),
                }
            }
            record.duration = started.elapsed();
            return Some(record);
        }
        let opened = match &ask.forward {
            None => client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n"),
            Some(head) => upstream.write_all(head),
        };
        if opened.is_ok() && upstream.write_all(&rest).is_ok() {
            let head = ask.forward.as_ref().map_or(0, Vec::len);
            record.sent = (head + rest.len()) as u64;
            let _ = client.set_read_timeout(None);
            // With brokered secrets, what the pane sends is looked at for their placeholders
            // (in a TLS tunnel they cannot be seen, and are of no use).
            let mut scanner = broker.map(|b| b.grants().scanner());
            let mut seen = None;
            let mut watch = |bytes: &[u8]| match scanner.as_mut().and_then(|s| s.feed(bytes)) {
                Some(grant) => {
                    seen = Some(grant);
                    false
                }
                None => true,
            };
            let watch: Option<super::relay::Watch<'_>> = broker.map(|_| &mut watch as _);
            let idle = shared.limits.idle_time;
            let (sent, received) = relay_watched(&mut client, &mut upstream, idle, watch);
            record.sent += sent;
            record.received = received;
            if let Some((broker, grant)) = broker.zip(seen) {
                let place = if ask.forward.is_some() { Place::PlainHttp } else { Place::Tunnel };
                let name = &broker.grants().get(grant).name;
                record.reason =
                    Some(format!("a placeholder of secret \"{name}\" {place}; stopped"));
                broker.attempt(grant, &ask.host, ask.port, place);
            }
        }
    }
    record.duration = started.elapsed();
    Some(record)
}

/// The longest host (or request target) a report holds: a DNS name is at most 253 bytes.
const SHOWN_TARGET: usize = 256;

/// `text`, at most `most` bytes of it (on a character boundary), marked when cut.
fn cut(text: &str, most: usize) -> String {
    if text.len() <= most {
        return text.to_owned();
    }
    let mut end = most;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// What a request head names (its request line's second word), cut to `SHOWN_TARGET` bytes,
/// for the report of a request that was refused before it was understood.
fn target_of(head: &[u8]) -> String {
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let target = line.split(|b| *b == b' ').nth(1).unwrap_or_default();
    let mut shown = String::from_utf8_lossy(&target[..target.len().min(SHOWN_TARGET)]).into_owned();
    if target.len() > SHOWN_TARGET {
        shown.push('…');
    }
    shown
}

/// Why a request head could not be read, and what of it was.
type Unread = (String, Vec<u8>);

/// The request head (through its blank line) and whatever the client sent after it; why not,
/// with what was read.
fn read_head(client: &mut UnixStream, limit: usize) -> Result<(Vec<u8>, Vec<u8>), Unread> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = memchr::memmem::find(&buffer, b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Ok((buffer, rest));
        }
        if buffer.len() > limit {
            return Err((format!("the request head is longer than {limit} bytes"), buffer));
        }
        match client.read(&mut chunk) {
            Ok(0) => return Err(("the connection ended inside the request head".into(), buffer)),
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            Err(e) => return Err((format!("reading the request head: {e}"), buffer)),
        }
    }
}

/// What `head` asks for: a tunnel, or a plain-HTTP request to send on in origin form with the
/// proxy's headers dropped and `Connection: close` (one request per connection).
fn parse(head: &[u8]) -> Result<Ask, String> {
    let mut headers = [httparse::EMPTY_HEADER; 100];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err("an incomplete request head".into()),
        Err(e) => return Err(format!("a bad request head: {e}")),
    }
    let (method, target) = (request.method.unwrap_or(""), request.path.unwrap_or(""));
    if method == "CONNECT" {
        let (host, port) = authority(target, None)?;
        return Ok(Ask { host, port, forward: None });
    }
    let Some(rest) = target.strip_prefix("http://") else {
        return Err(format!(
            "{target:?} is not a proxy request: use CONNECT host:port, or http://host/path"
        ));
    };
    let (authority_part, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
    let (host, port) = authority(authority_part, Some(80))?;
    let mut forward = format!("{method} {path} HTTP/1.{}\r\n", request.version.unwrap_or(1));
    let hop = ["connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"];
    let mut has_host = false;
    for header in request.headers.iter() {
        let name = header.name.to_ascii_lowercase();
        if hop.contains(&name.as_str()) {
            continue;
        }
        has_host |= name == "host";
        forward.push_str(header.name);
        forward.push_str(": ");
        forward.push_str(&String::from_utf8_lossy(header.value));
        forward.push_str("\r\n");
    }
    if !has_host {
        forward.push_str(&format!("Host: {authority_part}\r\n"));
    }
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Ask { host, port, forward: Some(forward.into_bytes()) })
}

/// `host:port` (or `[v6]:port`); `default` when the port may be left out.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("{text:?} is not host:port");
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') || host.starts_with('[') => {
            (host, port.parse::<u16>().map_err(|_| bad())?)
        }
        _ => (text, default.ok_or_else(bad)?),
    };
    if host.is_empty() || port == 0 {
        return Err(bad());
    }
    // No DNS name is longer (and an address is shorter).
    if host.len() > 253 {
        return Err(format!("a host of {} bytes is no host name", host.len()));
    }
    Ok((host.to_owned(), port))
}

fn connect(addresses: &[SocketAddr], timeout: Duration) -> Result<TcpStream, String> {
    let mut last = String::from("no address to connect to");
    for address in addresses {
        match TcpStream::connect_timeout(address, timeout) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = format!("cannot connect to {address}: {e}"),
        }
    }
    Err(last)
}

/// A short response saying why, which a person reading a failed `curl -v` understands.
fn response(status: u16, why: &str) -> Vec<u8> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    let body = format!("{why}\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn wait_readable(fd: std::os::fd::RawFd, timeout: Duration) -> bool {
    let mut pollfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let timeout = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: poll(2) on one descriptor the caller owns.
    unsafe { libc::poll(&mut pollfd, 1, timeout) > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_read_as_proxies_get_them() {
        let connect =
            parse(b"CONNECT api.example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").expect("CONNECT");
        assert_eq!(
            (connect.host.as_str(), connect.port, connect.forward),
            ("api.example.com", 443, None)
        );
        let v6 = parse(b"CONNECT [::1]:8080 HTTP/1.1\r\n\r\n").expect("v6");
        assert_eq!((v6.host.as_str(), v6.port), ("[::1]", 8080));
        let plain = parse(
            b"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .expect("GET");
        assert_eq!((plain.host.as_str(), plain.port), ("example.com", 80));
        let sent = String::from_utf8(plain.forward.expect("a head to send")).unwrap();
        assert_eq!(
            sent,
            "GET /a?b HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let bare = parse(b"GET http://example.com:8080 HTTP/1.0\r\n\r\n").expect("no path");
        let sent = String::from_utf8(bare.forward.unwrap()).unwrap();
        assert_eq!(bare.port, 8080);
        assert!(sent.starts_with("GET / HTTP/1.0\r\nHost: example.com:8080\r\n"), "{sent}");
    }

    #[test]
    fn what_is_not_a_proxy_request_is_refused_with_a_reason() {
        for (head, says) in [
            (&b"GET /index.html HTTP/1.1\r\n\r\n"[..], "not a proxy request"),
            (b"GET https://example.com/ HTTP/1.1\r\n\r\n", "not a proxy request"),
            (b"CONNECT example.com HTTP/1.1\r\n\r\n", "not host:port"),
            (b"CONNECT :443 HTTP/1.1\r\n\r\n", "not host:port"),
            (b"CONNECT example.com:0 HTTP/1.1\r\n\r\n", "not host:port"),
            (b"\x00\x01 garbage\r\n\r\n", "bad request head"),
        ] {
            let why = parse(head).err().unwrap_or_default();
            assert!(why.contains(says), "{head:?}: {why}");
        }
    }
}
