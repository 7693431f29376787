//! Serving a tunnel the broker opens: TLS with the pane's program (as the host it asked for),
//! HTTP/1.1 or HTTP/2 as it chose (hyper), each request examined (`Grants::examine`), given
//! its secrets, and sent on over TLS to the real host, whose certificate is checked against
//! the roots paddock trusts; the response streams back as it comes, frame by frame. One
//! thread per tunnel (the proxy's), with a small runtime of its own.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Bytes, Frame, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH, HOST};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::scan::{Replacer, Scanner};
use super::{
    replaced, Attempt, Authority, AuthorityError, Grants, Place, SecretState, Use, Watcher,
};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ProxyBody = BoxBody<Bytes, BoxError>;

/// How long a program has to finish its TLS handshake with the broker.
const HANDSHAKE_TIME: Duration = Duration::from_secs(30);
/// Connections to a host kept for reuse, per tunnel (HTTP/1.1 asks one at a time).
const IDLE_UPSTREAMS: usize = 8;
/// HTTP/1.1 connections to a host open at once, per tunnel.
const LIVE_UPSTREAMS: usize = 16;

/// The broker of one paddock instance: its authority, and the roots it checks real hosts
/// against.
pub struct Broker {
    authority: Authority,
    roots: Arc<RootCertStore>,
    /// The roots as PEM, for the panes' bundle.
    roots_pem: String,
    /// Client setups offering HTTP/2 and HTTP/1.1, and HTTP/1.1 only.
    client_h2: Arc<ClientConfig>,
    client_h1: Arc<ClientConfig>,
}

impl Broker {
    /// A new authority, and the roots paddock trusts: the system's, or the file and folder
    /// SSL_CERT_FILE and SSL_CERT_DIR name (as rustls-native-certs reads them).
    pub fn new() -> Result<Broker, AuthorityError> {
        let authority = Authority::generate()?;
        let found = rustls_native_certs::load_native_certs();
        let mut roots = RootCertStore::empty();
        let mut roots_pem = String::new();
        for certificate in found.certs {
            if roots.add(certificate.clone()).is_ok() {
                roots_pem
                    .push_str(&pem::encode(&pem::Pem::new("CERTIFICATE", certificate.to_vec())));
            }
        }
        let roots = Arc::new(roots);
        let client = |alpn: &[&[u8]]| -> Result<Arc<ClientConfig>, AuthorityError> {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()?
                .with_root_certificates(roots.clone())
                .with_no_client_auth();
            config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
            Ok(Arc::new(config))
        };
        Ok(Broker {
            client_h2: client(&[b"h2", b"http/1.1"])?,
            client_h1: client(&[b"http/1.1"])?,
            authority,
            roots,
            roots_pem,
        })
    }

    /// What a brokered pane's programs trust: the authority, then every root paddock trusts
    /// (so that hosts the broker does not open still verify).
    pub fn bundle_pem(&self) -> String {
        format!("{}{}", self.authority.certificate_pem(), self.roots_pem)
    }

    /// How many roots real hosts are checked against.
    pub fn roots(&self) -> usize {
        self.roots.len()
    }
}

/// One pane's broker: the instance's, with the pane's grants and whom to tell.
pub struct PaneBroker {
    broker: Arc<Broker>,
    grants: Grants,
    watcher: Arc<dyn Watcher>,
    pane: u32,
    thread: Option<String>,
}

/// Where a tunnel leads: the host as asked, its port, and the addresses the allow-list gave.
pub struct Target {
    pub host: String,
    pub port: u16,
    pub addresses: Vec<SocketAddr>,
}

impl PaneBroker {
    pub fn new(
        broker: Arc<Broker>,
        grants: Grants,
        watcher: Arc<dyn Watcher>,
        pane: u32,
        thread: Option<String>,
    ) -> PaneBroker {
        PaneBroker { broker, grants, watcher, pane, thread }
    }

    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Tell the watcher of an attempt to send grant `grant`'s placeholder `place`.
    pub fn attempt(&self, grant: usize, host: &str, port: u16, place: Place) {
        self.watcher.blocked(Attempt {
            time: SystemTime::now(),
            pane: self.pane,
            thread: self.thread.clone(),
            secret: self.grants.get(grant).name.clone(),
            host: host.to_owned(),
            port,
            place,
        });
    }

    /// Serve one tunnel to a broker host until either side ends it or it idles for `idle`:
    /// `client` is the program's end (the tunnel is already established), `upstream` a first
    /// connection to the target. The bytes each way, as the program's end saw them.
    pub fn serve(
        self: &Arc<Self>,
        client: std::os::unix::net::UnixStream,
        upstream: std::net::TcpStream,
        target: Target,
        idle: Duration,
    ) -> Result<(u64, u64), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| format!("cannot start the broker's runtime: {e}"))?;
        let counts = Arc::new(Counts::new());
        let served =
            runtime.block_on(self.clone().tunnel(client, upstream, target, idle, counts.clone()));
        let (sent, received) =
            (counts.read.load(Ordering::Relaxed), counts.written.load(Ordering::Relaxed));
        served.map(|()| (sent, received))
    }

    async fn tunnel(
        self: Arc<Self>,
        client: std::os::unix::net::UnixStream,
        upstream: std::net::TcpStream,
        target: Target,
        idle: Duration,
        counts: Arc<Counts>,
    ) -> Result<(), String> {
        let config =
            self.broker.authority.server_config(&target.host).map_err(|e| e.to_string())?;
        client.set_nonblocking(true).map_err(|e| e.to_string())?;
        let client = tokio::net::UnixStream::from_std(client).map_err(|e| e.to_string())?;
        let client = Counted { inner: client, counts: counts.clone() };
        let accept = tokio_rustls::TlsAcceptor::from(config).accept(client);
        let tls = match tokio::time::timeout(HANDSHAKE_TIME, accept).await {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => return Err(format!("TLS with the program failed: {e}")),
            Err(_) => return Err("the program did not finish its TLS handshake".into()),
        };
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let upstream = Arc::new(Upstream::new(self.broker.clone(), target, upstream, h2));
        let broker = self.clone();
        let service = hyper::service::service_fn(move |request| {
            let (broker, upstream) = (broker.clone(), upstream.clone());
            async move { Ok::<_, Infallible>(broker.handle(request, &upstream).await) }
        });
        let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        builder.http1().timer(TokioTimer::new()).header_read_timeout(HANDSHAKE_TIME);
        let connection = builder.serve_connection(TokioIo::new(tls), service);
        let mut connection = pin!(connection);
        // Closed once nothing moved for `idle`, looked at every few seconds.
        let look = idle.min(Duration::from_secs(5));
        loop {
            match tokio::time::timeout(look, connection.as_mut()).await {
                Ok(_) => return Ok(()),
                Err(_) if counts.idle_for() >= idle => return Ok(()),
                Err(_) => {}
            }
        }
    }

    /// One request: refused where a placeholder is where its value may not go, else sent on
    /// with its secrets, and the response streamed back.
    async fn handle(
        self: &Arc<Self>,
        request: Request<Incoming>,
        upstream: &Upstream,
    ) -> Response<ProxyBody> {
        let (parts, body) = request.into_parts();
        let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let (host, port) = (upstream.target.host.as_str(), upstream.target.port);
        let headers: Vec<(&str, &[u8])> =
            parts.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
        let injections = match self.grants.examine(host, port, &target, &headers) {
            Ok(injections) => injections,
            Err((grant, place)) => {
                let why = format!(
                    "paddock: the placeholder of secret \"{}\" was sent {place}; its value goes \
                     only to {}",
                    self.grants.get(grant).name,
                    hosts_of(&self.grants, grant)
                );
                self.attempt(grant, host, port, place);
                return text_response(StatusCode::FORBIDDEN, &why);
            }
        };
        // Each secret's state once per request.
        let mut states: Vec<(usize, SecretState)> = Vec::new();
        for injection in &injections {
            if !states.iter().any(|(g, _)| *g == injection.grant) {
                let name = &self.grants.get(injection.grant).name;
                states.push((injection.grant, self.watcher.state(name)));
            }
        }
        let state_of =
            |grant| states.iter().find(|(g, _)| *g == grant).map_or(SecretState::Revoked, |s| s.1);
        let mut out = HeaderMap::with_capacity(parts.headers.len());
        let hop = hop_by_hop(&parts.headers);
        let authority = parts
            .uri
            .authority()
            .map(|a| a.as_str().to_owned())
            .or_else(|| parts.headers.get(HOST).and_then(|h| h.to_str().ok()).map(str::to_owned))
            .unwrap_or_else(|| format!("{host}:{port}"));
        for (index, (name, value)) in parts.headers.iter().enumerate() {
            if hop.contains(name) || name == HOST {
                continue;
            }
            let mut value = value.clone();
            for injection in injections.iter().filter(|i| i.header == index) {
                if state_of(injection.grant) != SecretState::Active {
                    continue;
                }
                let grant = self.grants.get(injection.grant);
                let bytes =
                    replaced(value.as_bytes(), grant.placeholder.as_bytes(), grant.value.bytes());
                match HeaderValue::from_bytes(&bytes) {
                    Ok(mut new) => {
                        new.set_sensitive(true);
                        value = new;
                    }
                    Err(_) => {
                        let why = format!(
                            "paddock: the value of secret \"{}\" cannot go in a header (it holds \
                             a line break or a control character)",
                            grant.name
                        );
                        return text_response(StatusCode::BAD_GATEWAY, &why);
                    }
                }
            }
            out.append(name.clone(), value);
        }
        let blocked = Arc::new(AtomicBool::new(false));
        let body = Scanned {
            inner: body,
            scanner: self.grants.scanner(),
            broker: self.clone(),
            host: host.to_owned(),
            port,
            blocked: blocked.clone(),
        };
        let mut sent = Request::new(BoxBody::new(body));
        *sent.method_mut() = parts.method.clone();
        *sent.headers_mut() = out;
        let path = target.split('?').next().unwrap_or("/").to_owned();
        let answer = upstream.send(sent, &authority, &target).await;
        for (grant, state) in &states {
            self.watcher.used(Use {
                time: SystemTime::now(),
                pane: self.pane,
                thread: self.thread.clone(),
                secret: self.grants.get(*grant).name.clone(),
                host: host.to_owned(),
                port,
                method: parts.method.to_string(),
                path: path.clone(),
                status: answer.as_ref().ok().map(|r| r.status().as_u16()),
                state: *state,
                error: answer.as_ref().err().cloned(),
            });
        }
        match answer {
            Ok(response) => {
                let (mut parts, body) = response.into_parts();
                let hop = hop_by_hop(&parts.headers);
                for name in hop {
                    parts.headers.remove(name);
                }
                parts.version = Version::HTTP_11;
                // A value coming back (a host that echoes what it was sent) goes on as its
                // placeholder: the pane never holds it, whatever the host says.
                let pairs = self.grants.pairs();
                let mut echoed = false;
                for value in parts.headers.values_mut() {
                    let mut replacer = Replacer::default();
                    let (mut bytes, replaced) = replacer.feed(&pairs, value.as_bytes());
                    if replaced {
                        if !echoed {
                            self.echoed(value.as_bytes(), host, port);
                        }
                        echoed = true;
                        bytes.extend(replacer.finish());
                        *value =
                            HeaderValue::from_bytes(&bytes).unwrap_or(HeaderValue::from_static(""));
                    }
                }
                let resized = self.grants.lengths_differ();
                if resized {
                    parts.headers.remove(CONTENT_LENGTH);
                }
                let body = Returned {
                    inner: body,
                    replacer: Replacer::default(),
                    broker: self.clone(),
                    host: host.to_owned(),
                    port,
                    resized,
                    trailers: None,
                    ended: false,
                };
                Response::from_parts(parts, BoxBody::new(body))
            }
            Err(_) if blocked.load(Ordering::Acquire) => text_response(
                StatusCode::FORBIDDEN,
                "paddock: the request body held a brokered secret's placeholder; it was stopped",
            ),
            Err(why) => text_response(StatusCode::BAD_GATEWAY, &format!("paddock: {why}")),
        }
    }
}

impl PaneBroker {
    /// Tell the watcher that a host sent a secret's value back in `text` (its first secret
    /// when the value was cut across pieces).
    fn echoed(&self, text: &[u8], host: &str, port: u16) {
        let found =
            self.grants.iter().position(|g| memchr::memmem::find(text, g.value.bytes()).is_some());
        self.attempt(found.unwrap_or(0), host, port, Place::Response);
    }
}

/// A response body on its way back to the pane, with every secret value in it replaced by
/// its placeholder.
struct Returned {
    inner: Incoming,
    replacer: Replacer,
    broker: Arc<PaneBroker>,
    host: String,
    port: u16,
    /// Whether replacing changes the body's length.
    resized: bool,
    /// Trailers that came while some text was held back: sent after it.
    trailers: Option<Frame<Bytes>>,
    ended: bool,
}

impl Body for Returned {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if let Some(trailers) = this.trailers.take() {
            return Poll::Ready(Some(Ok(trailers)));
        }
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            let frame = match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(None) => {
                    this.ended = true;
                    let held = this.replacer.finish();
                    if held.is_empty() {
                        return Poll::Ready(None);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(held)))));
                }
                Poll::Ready(Some(Ok(frame))) => frame,
            };
            match frame.into_data() {
                Ok(data) => {
                    let pairs = this.broker.grants.pairs();
                    let (out, replaced) = this.replacer.feed(&pairs, &data);
                    if replaced {
                        this.broker.echoed(&data, &this.host, this.port);
                    }
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(Bytes::from(out)))));
                    }
                }
                Err(trailers) => {
                    let held = this.replacer.finish();
                    if held.is_empty() {
                        return Poll::Ready(Some(Ok(trailers)));
                    }
                    this.trailers = Some(trailers);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(held)))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.trailers.is_none()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self.resized {
            true => hyper::body::SizeHint::default(),
            false => self.inner.size_hint(),
        }
    }
}

/// The hosts grant `grant`'s value may go to, as a refusal says them.
fn hosts_of(grants: &Grants, grant: usize) -> String {
    let hosts: Vec<String> = grants.get(grant).hosts.iter().map(ToString::to_string).collect();
    hosts.join(", ")
}

/// The headers that belong to one connection, not to the request: never sent on.
fn hop_by_hop(headers: &HeaderMap) -> Vec<HeaderName> {
    let mut names: Vec<HeaderName> = [
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ]
    .iter()
    .map(|n| HeaderName::from_static(n))
    .collect();
    for value in headers.get_all("connection") {
        let listed = value.to_str().unwrap_or_default().split(',');
        names.extend(listed.filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok()));
    }
    names
}

fn text_response(status: StatusCode, why: &str) -> Response<ProxyBody> {
    let body = Full::new(Bytes::from(format!("{why}\n"))).map_err(|never| match never {}).boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert("content-type", HeaderValue::from_static("text/plain"));
    response
}

/// A request body on its way out, searched for the pane's placeholders: one found stops it.
struct Scanned {
    inner: Incoming,
    scanner: Scanner,
    broker: Arc<PaneBroker>,
    host: String,
    port: u16,
    blocked: Arc<AtomicBool>,
}

impl Body for Scanned {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(grant) = frame.data_ref().and_then(|data| this.scanner.feed(data)) {
                    this.blocked.store(true, Ordering::Release);
                    this.broker.attempt(grant, &this.host, this.port, Place::Body);
                    return Poll::Ready(Some(Err(
                        "a brokered secret's placeholder in the body".into()
                    )));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// The connections one tunnel's requests go on by: one HTTP/2 connection shared, or HTTP/1.1
/// connections used one request at a time.
struct Upstream {
    broker: Arc<Broker>,
    target: Target,
    /// The connection the proxy opened, used first.
    first: Mutex<Option<std::net::TcpStream>>,
    /// Whether the program chose HTTP/2 (then the host is offered it too).
    h2_wanted: bool,
    h2: Mutex<Option<hyper::client::conn::http2::SendRequest<ProxyBody>>>,
    h1: Mutex<Vec<hyper::client::conn::http1::SendRequest<ProxyBody>>>,
    /// HTTP/1.1 connections open now.
    live: Arc<AtomicUsize>,
}

enum Sender {
    H1(hyper::client::conn::http1::SendRequest<ProxyBody>),
    H2(hyper::client::conn::http2::SendRequest<ProxyBody>),
}

impl Upstream {
    fn new(
        broker: Arc<Broker>,
        target: Target,
        first: std::net::TcpStream,
        h2_wanted: bool,
    ) -> Upstream {
        Upstream {
            broker,
            target,
            first: Mutex::new(Some(first)),
            h2_wanted,
            h2: Mutex::new(None),
            h1: Mutex::new(Vec::new()),
            live: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Send `request` (headers ready, no URI yet) to the host as `authority` asks for
    /// `target`; its response head.
    async fn send(
        &self,
        mut request: Request<ProxyBody>,
        authority: &str,
        target: &str,
    ) -> Result<Response<Incoming>, String> {
        let sender = match self.ready_sender() {
            Some(sender) => sender,
            None => self.connect().await?,
        };
        match sender {
            Sender::H2(mut sender) => {
                *request.version_mut() = Version::HTTP_2;
                *request.uri_mut() = Uri::try_from(format!("https://{authority}{target}"))
                    .map_err(|e| format!("a bad request target: {e}"))?;
                sender.send_request(request).await.map_err(|e| describe(&e))
            }
            Sender::H1(mut sender) => {
                *request.version_mut() = Version::HTTP_11;
                *request.uri_mut() =
                    Uri::try_from(target).map_err(|e| format!("a bad request target: {e}"))?;
                let host = HeaderValue::from_str(authority).map_err(|e| e.to_string())?;
                request.headers_mut().insert(HOST, host);
                let answer = sender.send_request(request).await.map_err(|e| describe(&e));
                let mut idle = self.h1.lock().unwrap_or_else(PoisonError::into_inner);
                if idle.len() < IDLE_UPSTREAMS && !sender.is_closed() {
                    idle.push(sender);
                }
                answer
            }
        }
    }

    /// A connection that can take a request now.
    fn ready_sender(&self) -> Option<Sender> {
        if let Some(h2) = self.h2.lock().unwrap_or_else(PoisonError::into_inner).as_ref() {
            if !h2.is_closed() {
                return Some(Sender::H2(h2.clone()));
            }
        }
        let mut idle = self.h1.lock().unwrap_or_else(PoisonError::into_inner);
        idle.retain(|s| !s.is_closed());
        let ready = idle.iter().position(|s| s.is_ready())?;
        Some(Sender::H1(idle.swap_remove(ready)))
    }

    /// A new TLS connection to the host (the proxy's first one, if unused), checked against
    /// paddock's roots, speaking what the host chose of what the program chose.
    async fn connect(&self) -> Result<Sender, String> {
        // HTTP/2 from the program to an HTTP/1.1 host takes a connection per request at once:
        // a bound, so that one tunnel cannot open hundreds.
        if self.live.fetch_add(1, Ordering::AcqRel) >= LIVE_UPSTREAMS {
            self.live.fetch_sub(1, Ordering::AcqRel);
            return Err(format!(
                "more than {LIVE_UPSTREAMS} requests at once to {} from one connection",
                self.target.host
            ));
        }
        let connected = self.connect_counted().await;
        if connected.as_ref().is_ok_and(|s| matches!(s, Sender::H2(_))) || connected.is_err() {
            // Only HTTP/1.1 connections are counted while they live.
            self.live.fetch_sub(1, Ordering::AcqRel);
        }
        connected
    }

    async fn connect_counted(&self) -> Result<Sender, String> {
        let first = self.first.lock().unwrap_or_else(PoisonError::into_inner).take();
        let tcp = match first {
            Some(stream) => {
                stream.set_nonblocking(true).map_err(|e| e.to_string())?;
                tokio::net::TcpStream::from_std(stream).map_err(|e| e.to_string())?
            }
            None => self.reconnect().await?,
        };
        let _ = tcp.set_nodelay(true);
        let config = if self.h2_wanted { &self.broker.client_h2 } else { &self.broker.client_h1 };
        let host = self.target.host.trim_start_matches('[').trim_end_matches(']');
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let name = ServerName::try_from(host).map_err(|e| e.to_string())?;
        let connect = tokio_rustls::TlsConnector::from(config.clone()).connect(name, tcp);
        let tls = match tokio::time::timeout(HANDSHAKE_TIME, connect).await {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => return Err(format!("TLS with {}: {e}", self.target.host)),
            Err(_) => return Err(format!("TLS with {} took too long", self.target.host)),
        };
        let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
        let io = TokioIo::new(Lenient(tls));
        if h2 {
            let (sender, connection) =
                hyper::client::conn::http2::Builder::new(TokioExecutor::new())
                    .timer(TokioTimer::new())
                    .handshake(io)
                    .await
                    .map_err(|e| describe(&e))?;
            tokio::spawn(connection);
            *self.h2.lock().unwrap_or_else(PoisonError::into_inner) = Some(sender.clone());
            return Ok(Sender::H2(sender));
        }
        let (sender, connection) =
            hyper::client::conn::http1::handshake(io).await.map_err(|e| describe(&e))?;
        let live = self.live.clone();
        tokio::spawn(async move {
            let _ = connection.await;
            live.fetch_sub(1, Ordering::AcqRel);
        });
        Ok(Sender::H1(sender))
    }

    /// Another connection to the addresses the allow-list gave for this tunnel.
    async fn reconnect(&self) -> Result<tokio::net::TcpStream, String> {
        let mut last = String::from("no address to connect to");
        for address in &self.target.addresses {
            let connect = tokio::net::TcpStream::connect(address);
            match tokio::time::timeout(Duration::from_secs(10), connect).await {
                Ok(Ok(stream)) => return Ok(stream),
                Ok(Err(e)) => last = format!("cannot connect to {address}: {e}"),
                Err(_) => last = format!("cannot connect to {address}: timed out"),
            }
        }
        Err(last)
    }
}

/// An error with its causes, as one line.
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A host's TLS stream whose end without TLS's close_notify counts as its end: servers that
/// end a response by closing the connection often skip it (browsers and curl accept that), and
/// a response cut short that way is the host's to answer for, not a secret's.
struct Lenient<S>(S);

impl<S: AsyncRead + Unpin> AsyncRead for Lenient<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => Poll::Ready(Ok(())),
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Lenient<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

/// Bytes read from and written to the program's end, and when anything last moved.
struct Counts {
    read: AtomicU64,
    written: AtomicU64,
    start: Instant,
    /// Milliseconds from `start`.
    last: AtomicU64,
}

impl Counts {
    fn new() -> Counts {
        Counts {
            read: AtomicU64::new(0),
            written: AtomicU64::new(0),
            start: Instant::now(),
            last: AtomicU64::new(0),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn touch(&self) {
        self.last.store(self.now(), Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        Duration::from_millis(self.now().saturating_sub(self.last.load(Ordering::Relaxed)))
    }
}

/// A stream that counts what passes.
struct Counted<S> {
    inner: S,
    counts: Arc<Counts>,
}

impl<S: AsyncRead + Unpin> AsyncRead for Counted<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let moved = buf.filled().len() - before;
        if moved > 0 {
            self.counts.read.fetch_add(moved as u64, Ordering::Relaxed);
            self.counts.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Counted<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &polled {
            self.counts.written.fetch_add(*n as u64, Ordering::Relaxed);
            self.counts.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
