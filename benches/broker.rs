//! The secret broker's cost, in one run: an HTTPS server on this host's loopback (HTTP/1.1 with
//! keep-alive, its own test CA), asked directly, through a pane's proxy (a CONNECT tunnel, the
//! program's TLS end to end) and through the broker (the proxy ends the program's TLS, puts the
//! key in place of the placeholder and opens TLS again to the server). For each: the time to a
//! response's first byte on an open connection (median of many), a new connection's first
//! response, and the throughput of a 100 MiB response. Beside them, the floor for any broker:
//! a bare relay that ends TLS and opens it again, copying bytes and nothing else (on a machine
//! whose cores the client, the server and the relay share, a second TLS hop costs throughput
//! that no broker can win back). Prints the table in benches/README.md.
//! `cargo bench --bench broker`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use paddock::egress::broker::{
    Attempt, Broker, BrokerHost, Grant, Grants, PaneBroker, SecretState, SecretValue, Use, Watcher,
};
use paddock::egress::{AllowList, Limits, Owner, Proxy, Rule};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

const HOST: &str = "bench.test";
const KEY: &str = "sk-ant-api03-bench-key-0123456789abcdefghijklmnopqrstuvwxyz";
const PLACEHOLDER: &str = "sk-ant-api03-PLACEHOLDERxx0123456789abcdefghijklmnopqrstuvw";
const BIG: usize = 100 << 20;
const ASKS: usize = 400;
const OPENS: usize = 60;
const DOWNLOADS: usize = 5;

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A test CA and a TLS server for `HOST` it signed: GET /big answers 100 MiB, anything else
/// five bytes; connections are kept alive. The CA's certificate, in PEM, and the server's TLS
/// setup (which the bare relay answers with too).
fn server() -> (SocketAddr, String, Arc<rustls::ServerConfig>) {
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "bench CA");
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec![HOST.to_owned()]).expect("params");
    let cert = params.signed_by(&key, &issuer).expect("certificate");
    let private = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], private)
        .expect("server config");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    let serving = config.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let config = serving.clone();
            std::thread::spawn(move || serve(stream, config));
        }
    });
    (address, ca_cert.pem(), config)
}

/// The floor for any broker: a relay that ends TLS and opens it again to the server, copying
/// bytes both ways and nothing else (no HTTP, no key), on tokio-rustls as the broker is.
fn bare_relay(
    server: SocketAddr,
    answer_as: Arc<rustls::ServerConfig>,
    client: Arc<rustls::ClientConfig>,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (answer_as, client) = (answer_as.clone(), client.clone());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_io()
                    .build()
                    .expect("runtime");
                runtime.block_on(async move {
                    stream.set_nonblocking(true).expect("nonblocking");
                    let _ = stream.set_nodelay(true);
                    let stream = tokio::net::TcpStream::from_std(stream).expect("stream");
                    let acceptor = tokio_rustls::TlsAcceptor::from(answer_as);
                    let Ok(mut near) = acceptor.accept(stream).await else { return };
                    let upstream = tokio::net::TcpStream::connect(server).await.expect("connect");
                    let _ = upstream.set_nodelay(true);
                    let name = ServerName::try_from(HOST).expect("name");
                    let connector = tokio_rustls::TlsConnector::from(client);
                    let Ok(mut far) = connector.connect(name, upstream).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut near, &mut far).await;
                });
            });
        }
    });
    address
}

fn serve(stream: TcpStream, config: Arc<rustls::ServerConfig>) {
    let _ = stream.set_nodelay(true);
    let connection = rustls::ServerConnection::new(config).expect("connection");
    let mut tls = rustls::StreamOwned::new(connection, stream);
    let block = vec![b'x'; 1 << 20];
    loop {
        let Some(head) = read_head(&mut tls) else { return };
        let big = head.starts_with("GET /big ");
        let length = if big { BIG } else { 5 };
        let answer = format!("HTTP/1.1 200 OK\r\ncontent-length: {length}\r\n\r\n");
        if tls.write_all(answer.as_bytes()).is_err() {
            return;
        }
        let sent = match big {
            true => (0..BIG / block.len()).try_for_each(|_| tls.write_all(&block)),
            false => tls.write_all(b"hello"),
        };
        if sent.and_then(|()| tls.flush()).is_err() {
            return;
        }
    }
}

/// A request or response head, through its blank line.
fn read_head(from: &mut (impl Read + ?Sized)) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if from.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    String::from_utf8(head).ok()
}

struct Key;
impl SecretValue for Key {
    fn bytes(&self) -> &[u8] {
        KEY.as_bytes()
    }
}

struct Quiet;
impl Watcher for Quiet {
    fn state(&self, _secret: &str) -> SecretState {
        SecretState::Active
    }
    fn used(&self, _record: Use) {}
    fn blocked(&self, _attempt: Attempt) {}
}

/// A pane's proxy for `HOST` at `server` (with a broker when `broker` is given), on a unix
/// socket in `dir`.
fn proxy(
    server: SocketAddr,
    dir: &std::path::Path,
    broker: Option<Arc<Broker>>,
) -> (Proxy, std::path::PathBuf) {
    let socket = dir.join(if broker.is_some() { "broker.sock" } else { "proxy.sock" });
    let listener = UnixListener::bind(&socket).expect("bind");
    let rules = Rule::parse(&format!("{HOST}:{}", server.port())).expect("rule");
    let allow = AllowList { rules, hosts: [(HOST.to_owned(), server.ip())].into() };
    let pane = broker.map(|broker| {
        let grant = Grant {
            name: "bench-key".into(),
            placeholder: PLACEHOLDER.into(),
            value: Arc::new(Key),
            hosts: vec![BrokerHost { name: HOST.into(), port: server.port() }],
            headers: vec!["x-api-key".into()],
        };
        Arc::new(PaneBroker::new(broker, Grants::new(vec![grant]), Arc::new(Quiet), 1, None))
    });
    let proxy =
        Proxy::start(listener, allow, Owner::default(), Arc::new(|_| {}), Limits::default(), pane)
            .expect("proxy");
    (proxy, socket)
}

/// How a client reaches the server.
#[derive(Clone, Copy)]
enum Path<'a> {
    Direct(SocketAddr),
    /// Through a proxy's socket, with a CONNECT; the port asked for.
    Proxied(&'a std::path::Path, u16),
}

trait Stream: Read + Write {}
impl<S: Read + Write> Stream for S {}

/// A TLS connection to `HOST` along `path`, trusting `roots`.
fn open(path: Path<'_>, client: &Arc<rustls::ClientConfig>) -> Box<dyn Stream> {
    let name = ServerName::try_from(HOST).expect("name");
    let connection = rustls::ClientConnection::new(client.clone(), name).expect("client");
    match path {
        Path::Direct(address) => {
            let stream = TcpStream::connect(address).expect("connect");
            let _ = stream.set_nodelay(true);
            Box::new(rustls::StreamOwned::new(connection, stream))
        }
        Path::Proxied(socket, port) => {
            let mut stream = UnixStream::connect(socket).expect("connect to the proxy");
            let ask = format!("CONNECT {HOST}:{port} HTTP/1.1\r\nHost: {HOST}:{port}\r\n\r\n");
            stream.write_all(ask.as_bytes()).expect("CONNECT");
            let head = read_head(&mut stream).expect("the proxy's answer");
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            Box::new(rustls::StreamOwned::new(connection, stream))
        }
    }
}

/// Ask `path` on `stream`: the time to the response's first body byte, and the body's length.
fn ask(stream: &mut dyn Stream, path: &str, key: &str) -> (Duration, usize) {
    let started = Instant::now();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {HOST}\r\nx-api-key: {key}\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("request");
    stream.flush().expect("flush");
    let head = read_head(stream).expect("response head");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no length in {head}"));
    let mut buffer = vec![0u8; 256 << 10];
    let room = length.min(buffer.len());
    let mut got = stream.read(&mut buffer[..room]).expect("body");
    let first = started.elapsed();
    while got < length {
        let n = stream.read(&mut buffer[..(length - got).min(256 << 10)]).expect("body");
        assert!(n > 0, "the body ended early");
        got += n;
    }
    (first, got)
}

fn median<T: PartialOrd + Copy>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    values[values.len() / 2]
}

fn main() {
    let dir = std::env::temp_dir().join(format!("paddock-bench-broker-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    let (server, ca, answer_as) = server();
    // The broker checks the server against what SSL_CERT_FILE names, as paddock does.
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca).expect("CA file");
    std::env::set_var("SSL_CERT_FILE", &ca_file);
    let broker = Arc::new(Broker::new().expect("broker"));
    let (_plain, plain_socket) = proxy(server, &dir, None);
    let (_brokered, broker_socket) = proxy(server, &dir, Some(broker.clone()));
    let mut roots = rustls::RootCertStore::empty();
    for pem in [ca.clone(), broker.bundle_pem()] {
        for certificate in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let _ = roots.add(certificate.expect("a certificate"));
        }
    }
    let mut client = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"http/1.1".to_vec()];
    let client = Arc::new(client);
    let relay = bare_relay(server, answer_as, client.clone());
    let paths = [
        ("direct", Path::Direct(server), KEY),
        ("proxy (tunnel)", Path::Proxied(&plain_socket, server.port()), KEY),
        ("bare TLS relay", Path::Direct(relay), KEY),
        ("broker", Path::Proxied(&broker_socket, server.port()), PLACEHOLDER),
    ];
    println!("HTTPS through the broker beside the plain proxy and direct (median; one run)");
    println!(
        "{:<16} {:>16} {:>20} {:>16} {:>10}",
        "path", "first byte (µs)", "new connection (µs)", "100 MiB (MiB/s)", "vs direct"
    );
    let mut direct_rate = 0.0;
    let mut direct_first = Duration::ZERO;
    for (name, path, key) in paths {
        // Warm: a connection's first request opens the broker's own to the server.
        let mut stream = open(path, &client);
        ask(stream.as_mut(), "/small", key);
        let first = median((0..ASKS).map(|_| ask(stream.as_mut(), "/small", key).0).collect());
        let opened = median(
            (0..OPENS)
                .map(|_| {
                    let started = Instant::now();
                    let mut stream = open(path, &client);
                    ask(stream.as_mut(), "/small", key);
                    started.elapsed()
                })
                .collect(),
        );
        let rate = median(
            (0..DOWNLOADS)
                .map(|_| {
                    let started = Instant::now();
                    let (_, got) = ask(stream.as_mut(), "/big", key);
                    assert_eq!(got, BIG);
                    BIG as f64 / (1 << 20) as f64 / started.elapsed().as_secs_f64()
                })
                .collect(),
        );
        if name == "direct" {
            (direct_rate, direct_first) = (rate, first);
        }
        let added = first.as_secs_f64() * 1e6 - direct_first.as_secs_f64() * 1e6;
        println!(
            "{name:<16} {:>16.0} {:>20.0} {:>16.0} {:>9.2}x   (+{added:.0} µs to a first byte)",
            first.as_secs_f64() * 1e6,
            opened.as_secs_f64() * 1e6,
            rate,
            rate / direct_rate
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
