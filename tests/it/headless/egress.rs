//! A locked thread whose network is an allow-list, end to end: its programs reach a listed host
//! through the pane's proxy (plain HTTP, and a CONNECT tunnel), everything else is refused and
//! logged, and nothing leaves the lock by any other way.

use std::io::{Read, Write};
use std::net::TcpListener;

use super::config::write_config;
use super::{wait_for, Runtime};

/// A web server on this host's loopback that answers every request with `from the fake`.
fn fake_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                let body = "from the fake";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            });
        }
    });
    port
}

/// What the agent inside tries, each result on a line of its own.
const PROBE: &str = r#"
import os, socket, sys, urllib.request
port, service = int(sys.argv[1]), int(sys.argv[2])
def attempt(name, action):
    try:
        print(name, "=", action())
    except Exception as e:
        print(name, "=", type(e).__name__, str(e)[:60])
attempt("plain", lambda: urllib.request.urlopen(f"http://fake.test:{port}/", timeout=10).read().decode())
def tunnel():
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(f"CONNECT fake.test:{port} HTTP/1.1\r\n\r\n".encode())
    status = s.recv(200).split(b"\r\n")[0].decode()
    s.sendall(b"GET / HTTP/1.1\r\nHost: fake.test\r\n\r\n")
    answer = b""
    while chunk := s.recv(4096):
        answer += chunk
    return status + " / " + answer.decode().split("\r\n\r\n")[-1]
attempt("tunnel", tunnel)
attempt("unlisted", lambda: urllib.request.urlopen("http://example.com/", timeout=10).status)
attempt("direct", lambda: socket.create_connection(("127.0.0.1", port), timeout=3) and "connected")
attempt("dns", lambda: socket.getaddrinfo("example.com", 80))
# A service on the host's loopback the rules name by address: there at the same address.
attempt("forward", lambda: urllib.request.urlopen(f"http://127.0.0.1:{service}/", timeout=10).read().decode())
attempt("proxy", lambda: os.environ.get("HTTPS_PROXY"))
print("probe done")
"#;

#[test]
fn an_allow_listed_thread_reaches_its_hosts_through_the_proxy_and_nothing_else() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    std::fs::write(work.join("probe.py"), PROBE).expect("probe");
    let port = fake_server();
    let service = fake_server();
    let script = format!("python3 {}/probe.py {port} {service}; exec sleep 600", work.display());
    write_config(
        &runtime,
        &format!(
            r#"(
                proxy_hosts: {{"fake.test": "127.0.0.1"}},
                threads: [(name: "agent", command: ["sh", "-c", {script:?}],
                    lock: (write: ["{work}"], network: Allow(["fake.test:{port}", "127.0.0.1:{service}"])))],
            )"#,
            work = work.display()
        ),
    );
    let instance = runtime.start(&[]);
    let screen = instance.wait_for_text("1", "probe done");
    let line = |name: &str| {
        screen.lines().find(|l| l.starts_with(&format!("{name} ="))).unwrap_or_default().to_owned()
    };
    assert_eq!(line("plain"), "plain = from the fake", "{screen}");
    assert_eq!(line("tunnel"), "tunnel = HTTP/1.1 200 Connection Established / from the fake");
    assert!(line("unlisted").contains("403"), "{screen}");
    assert!(line("direct").contains("ConnectionRefusedError"), "{screen}");
    assert!(line("dns").contains("gaierror"), "{screen}");
    assert_eq!(line("forward"), "forward = from the fake", "{screen}");
    assert_eq!(line("proxy"), "proxy = http://127.0.0.1:3128");
    let mut net = serde_json::Value::Null;
    wait_for("the proxy's counts", || {
        net = instance.pane(1)["net"].clone();
        net["allowed"] == 3 && net["denied"] == 1
    });
    assert_eq!(net["mode"], "allow");
    assert_eq!(net["last_denied"], "example.com:80");
    assert_eq!(instance.pane(1)["lock"]["detail"], "files; allow-listed network");
    let log = std::fs::read_to_string(runtime.dir.join("state/paddock/egress.log")).expect("log");
    let lines: Vec<serde_json::Value> =
        log.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect();
    assert_eq!(lines.len(), 4, "{log}");
    let denied = lines.iter().find(|l| l["allowed"] == false).expect("the refusal is logged");
    assert_eq!(
        (&denied["host"], &denied["port"], &denied["thread"]),
        (&"example.com".into(), &80.into(), &"agent".into())
    );
    let allowed: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["allowed"] == true).map(|l| &l["host"]).collect();
    assert_eq!(allowed.iter().filter(|h| **h == "fake.test").count(), 2, "{log}");
    assert!(allowed.contains(&&serde_json::Value::from("127.0.0.1")), "{log}");
    assert!(lines.iter().any(|l| l["received"].as_u64() > Some(0)), "{log}");
    // The same, as a person reads it.
    let shown = runtime.paddock(&["net", "log", "--pane", "1"]).output().expect("net log");
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    let refusal = "pane 1 thread agent  example.com:80  REFUSED: not in the thread's network \
                   allow-list";
    assert!(shown.contains(refusal), "{shown}");
    assert_eq!(shown.lines().filter(|l| l.contains("allowed")).count(), 3, "{shown}");
    let other =
        runtime.paddock(&["net", "log", "--pane", "2", "--json"]).output().expect("net log");
    assert!(other.status.success() && other.stdout.is_empty(), "no pane 2 connections");
}
