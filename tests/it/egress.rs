//! The egress proxy with real sockets: a client on its unix socket, servers on this host's
//! loopback, named as a locked agent would name them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Receiver;
use paddock::egress::{AllowList, Connection, Limits, Owner, Proxy, Rule};

/// A server on loopback that echoes every byte, its port, and a record of what it was sent
/// first (the request head, for plain HTTP).
fn echo_server() -> (u16, Receiver<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (heard, hearing) = crossbeam_channel::unbounded();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let heard = heard.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buffer) {
                    if n == 0 {
                        break;
                    }
                    let _ = heard.send(buffer[..n].to_vec());
                    if stream.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    (port, hearing)
}

struct Running {
    socket: PathBuf,
    reports: Receiver<Connection>,
    _proxy: Proxy,
}

fn proxy(rules: &[&str], limits: Limits) -> Running {
    // An empty list is one the user may add to while it runs.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "egress-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("a folder for the socket");
    let socket = dir.join("egress.sock");
    let listener = UnixListener::bind(&socket).expect("bind the proxy's socket");
    let mut allow = AllowList {
        rules: rules.iter().flat_map(|r| Rule::parse(r).expect(r)).collect(),
        ..AllowList::default()
    };
    allow.hosts.insert("fake.test".into(), "127.0.0.1".parse().unwrap());
    let (tell, reports) = crossbeam_channel::unbounded();
    let owner = Owner { pane: 7, thread: Some("claude".into()) };
    let report = Arc::new(move |c: Connection| {
        let _ = tell.send(c);
    });
    let proxy =
        Proxy::start(listener, allow, owner, report, limits, None).expect("start the proxy");
    Running { socket, reports, _proxy: proxy }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u8(0);
    hasher.finish()
}

/// Send `head` through the proxy; the status line it answers and the client's stream.
fn ask(running: &Running, head: &str) -> (String, BufReader<UnixStream>) {
    let mut client = UnixStream::connect(&running.socket).expect("reach the proxy");
    client.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // A proxy that refuses at once (503) may have closed before the request is all sent: its
    // answer is there to read all the same.
    let _ = client.write_all(head.as_bytes());
    let mut reader = BufReader::new(client);
    let mut status = String::new();
    reader.read_line(&mut status).expect("a status line");
    (status.trim_end().to_owned(), reader)
}

fn skip_headers(reader: &mut BufReader<UnixStream>) -> String {
    let mut all = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a header line");
        if line == "\r\n" || line.is_empty() {
            return all;
        }
        all.push_str(&line);
    }
}

fn report(running: &Running) -> Connection {
    running.reports.recv_timeout(Duration::from_secs(10)).expect("the connection is reported")
}

#[test]
fn a_listed_host_is_tunnelled_and_reported_with_its_bytes() {
    let (port, heard) = echo_server();
    let running = proxy(&[&format!("fake.test:{port}")], Limits::default());
    let (status, mut reader) = ask(&running, &format!("CONNECT fake.test:{port} HTTP/1.1\r\n\r\n"));
    assert_eq!(status, "HTTP/1.1 200 Connection Established");
    skip_headers(&mut reader);
    reader.get_mut().write_all(b"hello through the lock").unwrap();
    let mut echoed = [0u8; 22];
    reader.read_exact(&mut echoed).expect("the echo");
    assert_eq!(&echoed, b"hello through the lock");
    assert_eq!(heard.recv_timeout(Duration::from_secs(5)).unwrap(), b"hello through the lock");
    drop(reader);
    let done = report(&running);
    assert!(done.allowed, "{done:?}");
    assert_eq!((done.pane, done.thread.as_deref()), (7, Some("claude")));
    assert_eq!((done.host.as_str(), done.port), ("fake.test", port));
    assert_eq!((done.sent, done.received), (22, 22));
}

#[test]
fn anything_else_is_refused_with_the_reason_and_reported() {
    let (port, _heard) = echo_server();
    let running = proxy(&[&format!("fake.test:{port}")], Limits::default());
    for (target, says) in [
        (format!("localhost:{port}"), "not in the thread's network allow-list"),
        (format!("127.0.0.1:{port}"), "not in the thread's network allow-list"),
        (
            format!("fake.test:{}", port.wrapping_add(1).max(1)),
            "not in the thread's network allow-list",
        ),
        ("example.com:443".to_owned(), "not in the thread's network allow-list"),
    ] {
        let (status, mut reader) = ask(&running, &format!("CONNECT {target} HTTP/1.1\r\n\r\n"));
        assert_eq!(status, "HTTP/1.1 403 Forbidden", "{target}");
        skip_headers(&mut reader);
        let mut body = String::new();
        reader.read_to_string(&mut body).unwrap();
        assert!(body.contains(&target) && body.contains(says), "{target}: {body}");
        let refused = report(&running);
        assert!(!refused.allowed && refused.reason.as_deref() == Some(says), "{refused:?}");
    }
    // What is not a request is refused, and reported too: probing leaves a trace.
    let (status, _) = ask(&running, "GET /index.html HTTP/1.1\r\n\r\n");
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    let probe = report(&running);
    assert!(!probe.allowed && probe.host == "/index.html", "{probe:?}");
    assert!(probe.reason.as_deref().is_some_and(|r| r.contains("not a proxy request")));
    // A host no name could be is refused before anything is looked up, and reported cut short.
    let long = "a".repeat(60_000);
    let (status, _) = ask(&running, &format!("CONNECT {long}:443 HTTP/1.1\r\n\r\n"));
    assert_eq!(status, "HTTP/1.1 400 Bad Request");
    let refused = report(&running);
    assert!(
        refused.host.chars().count() <= 257 && refused.host.ends_with('…'),
        "{}",
        refused.host.len()
    );
    assert!(refused.reason.as_deref().is_some_and(|r| r.len() < 600), "{:?}", refused.reason);
}

#[test]
fn plain_http_goes_on_in_origin_form_one_request_per_connection() {
    let (port, heard) = echo_server();
    let running = proxy(&[&format!("fake.test:{port}")], Limits::default());
    let head = format!(
        "GET http://fake.test:{port}/v1/models?x=1 HTTP/1.1\r\nHost: fake.test:{port}\r\n\
         Proxy-Authorization: Basic c2VjcmV0\r\nUser-Agent: t\r\n\r\n"
    );
    // The echo server sends the forwarded head back as its "response".
    let (first_line, mut reader) = ask(&running, &head);
    assert_eq!(first_line, "GET /v1/models?x=1 HTTP/1.1");
    let rest = skip_headers(&mut reader);
    assert!(!rest.contains("Proxy-Authorization"), "the proxy's own headers stay: {rest}");
    assert!(rest.contains("Connection: close") && rest.contains("User-Agent: t"), "{rest}");
    let sent = heard.recv_timeout(Duration::from_secs(5)).unwrap();
    assert!(sent.starts_with(b"GET /v1/models?x=1 HTTP/1.1\r\n"));
}

#[test]
fn a_pane_gets_only_so_many_connections_and_idle_tunnels_close() {
    let (port, _heard) = echo_server();
    let limits =
        Limits { connections: 1, idle_time: Duration::from_millis(300), ..Limits::default() };
    let running = proxy(&[&format!("fake.test:{port}")], limits);
    let connect = format!("CONNECT fake.test:{port} HTTP/1.1\r\n\r\n");
    let (status, mut open) = ask(&running, &connect);
    assert_eq!(status, "HTTP/1.1 200 Connection Established");
    skip_headers(&mut open);
    let (second, _) = ask(&running, &connect);
    assert_eq!(second, "HTTP/1.1 503 Service Unavailable", "one connection at a time");
    // Nothing moves: the proxy closes the tunnel (the read ends instead of timing out).
    let mut rest = Vec::new();
    open.read_to_end(&mut rest).expect("the tunnel closes by itself");
    assert!(report(&running).allowed);
    let (third, _) = ask(&running, &connect);
    assert_eq!(third, "HTTP/1.1 200 Connection Established", "the slot is free again");
}

#[test]
fn a_host_allowed_while_the_proxy_runs_goes_through_from_then_on() {
    let (port, _heard) = echo_server();
    let running = proxy(&[], Limits::default());
    let connect = format!("CONNECT fake.test:{port} HTTP/1.1\r\n\r\n");
    assert_eq!(ask(&running, &connect).0, "HTTP/1.1 403 Forbidden");
    running._proxy.allow(Rule::parse(&format!("fake.test:{port}")).unwrap().remove(0));
    assert_eq!(ask(&running, &connect).0, "HTTP/1.1 200 Connection Established");
    assert_eq!(
        ask(&running, "CONNECT example.com:443 HTTP/1.1\r\n\r\n").0,
        "HTTP/1.1 403 Forbidden"
    );
}
