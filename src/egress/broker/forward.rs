//! Serving a tunnel the broker opens: TLS with the pane's program (as the host it asked for),
//! HTTP/1.1 or HTTP/2 as it chose (hyper), each request examined (`Grants::examine`), given
//! its secrets, and sent on over TLS to the real host, whose certificate is checked against
//! the roots paddock trusts; the response streams back as it comes, frame by frame. One
//! thread per tunnel (the proxy's), with a small runtime of its own.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, HOST,
    TRANSFER_ENCODING,
};
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::{ClientConfig, RootCertStore};

use super::scan::{replace_any_case, Pair, Replacer};
use super::streams::{Counted, Counts, Returned, Scanned};
use super::upstream::Upstream;
use super::{
    replaced, Attempt, Authority, AuthorityError, Grants, Place, SecretState, Use, Watcher,
};

pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;
pub(super) type ProxyBody = BoxBody<Bytes, BoxError>;

/// How long a program has to finish its TLS handshake with the broker.
pub(super) const HANDSHAKE_TIME: Duration = Duration::from_secs(30);

/// The broker of one paddock instance: its authority, and the roots it checks real hosts
/// against.
pub struct Broker {
    authority: Authority,
    roots: Arc<RootCertStore>,
    /// The roots as PEM, for the panes' bundle.
    roots_pem: String,
    /// Client setups offering HTTP/2 and HTTP/1.1, and HTTP/1.1 only.
    pub(super) client_h2: Arc<ClientConfig>,
    pub(super) client_h1: Arc<ClientConfig>,
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
        // A tunnel inside the tunnel, or a request the host echoes whole: neither is an API
        // call, and both would carry the value somewhere the broker cannot follow.
        // Only the methods an API is called with: `CONNECT` (a tunnel inside the tunnel),
        // `TRACE` (the request echoed whole) and anything a host might take for them are not.
        let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
        if !methods.contains(&parts.method.as_str()) {
            let why = format!("paddock: {} is not sent on to a broker host", parts.method);
            return text_response(StatusCode::METHOD_NOT_ALLOWED, &why);
        }
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
        // The host the value goes to is the one the tunnel was opened to, whatever the request
        // says: a shared front end routes by Host (or :authority), and another name there
        // would be another tenant.
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        let authority = match port {
            443 => name,
            _ => format!("{name}:{port}"),
        };
        for (index, (name, value)) in parts.headers.iter().enumerate() {
            // Compressed answers could not be searched for a value sent back: none is asked.
            if hop.contains(name) || name == HOST || name == ACCEPT_ENCODING {
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
        out.insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
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
                // A body in a transfer coding other than chunked (gzip, deflate) could carry a
                // value back unsearched: refused, as a content coding is below.
                let coded = parts.headers.get_all(TRANSFER_ENCODING).iter().any(|v| {
                    v.to_str().map_or(true, |v| {
                        v.split(',').map(str::trim).any(|c| {
                            !c.eq_ignore_ascii_case("chunked")
                                && !c.eq_ignore_ascii_case("identity")
                        })
                    })
                });
                if coded {
                    let why = format!(
                        "paddock: {host} answered in a transfer coding the broker cannot search \
                         for a secret sent back, so it does not pass"
                    );
                    return text_response(StatusCode::BAD_GATEWAY, &why);
                }
                let hop = hop_by_hop(&parts.headers);
                for name in hop {
                    parts.headers.remove(name);
                }
                parts.version = Version::HTTP_11;
                // The status line's words are the host's to choose: the standard ones go back.
                parts.extensions.remove::<hyper::ext::ReasonPhrase>();
                let encoded = parts
                    .headers
                    .get_all(CONTENT_ENCODING)
                    .iter()
                    .find(|e| !e.as_bytes().eq_ignore_ascii_case(b"identity") && !e.is_empty());
                if let Some(encoding) = encoded {
                    let why = format!(
                        "paddock: {host} answered in the encoding {} though none was asked for; \
                         the broker cannot search it for a secret sent back, so it does not pass",
                        String::from_utf8_lossy(encoding.as_bytes())
                    );
                    return text_response(StatusCode::BAD_GATEWAY, &why);
                }
                // A value coming back (a host that echoes what it was sent) goes on as its
                // placeholder: the pane never holds it, whatever the host says.
                if let Some(text) = mask_headers(&mut parts.headers, &self.grants.pairs()) {
                    self.echoed(&text, host, port);
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
    pub(super) fn echoed(&self, text: &[u8], host: &str, port: u16) {
        let found = self
            .grants
            .iter()
            .position(|g| super::scan::find_any_case(text, g.value.bytes(), 0).is_some());
        self.attempt(found.unwrap_or(0), host, port, Place::Response);
    }
}

/// The hosts grant `grant`'s value may go to, as a refusal says them.
fn hosts_of(grants: &Grants, grant: usize) -> String {
    let hosts: Vec<String> = grants.get(grant).hosts.iter().map(ToString::to_string).collect();
    hosts.join(", ")
}

/// Each value in `headers` (in any letters' case) replaced by its placeholder; a header whose
/// name holds one is dropped. What held a value, if anything did.
pub(super) fn mask_headers(headers: &mut HeaderMap, pairs: &[Pair<'_>]) -> Option<Vec<u8>> {
    let mut found = None;
    let names: Vec<HeaderName> = headers.keys().cloned().collect();
    for name in names {
        if replace_any_case(name.as_str().as_bytes(), pairs).is_some() {
            found = Some(name.as_str().as_bytes().to_vec());
            headers.remove(&name);
        }
    }
    for value in headers.values_mut() {
        if let Some(bytes) = replace_any_case(value.as_bytes(), pairs) {
            found.get_or_insert_with(|| value.as_bytes().to_vec());
            *value = HeaderValue::from_bytes(&bytes).unwrap_or(HeaderValue::from_static(""));
        }
    }
    found
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
