//! The connections one tunnel's requests go on by, to the real host: TLS checked against
//! paddock's roots, HTTP/2 when both the program and the host chose it, else HTTP/1.1
//! connections used one request at a time (a few kept for reuse, a bound on how many at once).

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, HOST};
use hyper::{Request, Response, Uri, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::forward::{Broker, ProxyBody, Target, HANDSHAKE_TIME};

/// Connections to a host kept for reuse, per tunnel (HTTP/1.1 asks one at a time).
const IDLE_UPSTREAMS: usize = 8;
/// HTTP/1.1 connections to a host open at once, per tunnel.
const LIVE_UPSTREAMS: usize = 16;

/// The connections one tunnel's requests go on by: one HTTP/2 connection shared, or HTTP/1.1
/// connections used one request at a time.
pub(super) struct Upstream {
    broker: Arc<Broker>,
    pub(super) target: Target,
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
    pub(super) fn new(
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
    pub(super) async fn send(
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
