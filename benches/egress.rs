//! The network allow-list's cost beside a direct connection, in one run: a 100 MiB download from
//! a server on this host's loopback, direct and through the path a locked program's connection
//! takes (a TCP hop standing in for the lock's bridge, relaying to the pane's proxy on its unix
//! socket, which tunnels to the server), and the time to a first byte both ways. Prints the
//! table committed in benches/README.md. `cargo bench --bench egress`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use paddock::egress::relay::{relay, Shut};
use paddock::egress::{AllowList, Limits, Owner, Proxy, Rule};

const BIG: usize = 100 << 20;
const DOWNLOADS: usize = 7;
const SETUPS: usize = 300;

/// A server that answers `BIG` with 100 MiB and anything else with one byte, then closes.
fn server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut ask = [0u8; 5];
                if stream.read_exact(&mut ask).is_err() {
                    return;
                }
                if &ask == b"BIG\r\n" {
                    let block = vec![b'x'; 1 << 20];
                    for _ in 0..BIG / block.len() {
                        if stream.write_all(&block).is_err() {
                            return;
                        }
                    }
                } else {
                    let _ = stream.write_all(b"!");
                }
            });
        }
    });
    address
}

/// The lock's side: a TCP listener whose every connection is relayed to the proxy's socket.
fn bridge(proxy: std::path::PathBuf) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let proxy = proxy.clone();
            std::thread::spawn(move || {
                if let Ok(mut upstream) = UnixStream::connect(&proxy) {
                    relay(&mut client, &mut upstream, Duration::from_secs(60));
                }
            });
        }
    });
    address
}

/// The least two hops can do, for comparison: the same path (TCP, then a unix socket, then
/// TCP to the server) with nothing but a blocking copy each way on a thread of its own: no
/// request to read, no decision, no poll.
fn bare_hops(server: SocketAddr, dir: &std::path::Path) -> SocketAddr {
    let socket = dir.join("bare.sock");
    let inner = UnixListener::bind(&socket).expect("bind");
    std::thread::spawn(move || {
        for client in inner.incoming() {
            let Ok(client) = client else { return };
            let upstream = TcpStream::connect(server).expect("connect");
            pump(client.try_clone().expect("clone"), upstream.try_clone().expect("clone"));
            pump(upstream, client);
        }
    });
    let outer = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = outer.local_addr().expect("address");
    std::thread::spawn(move || {
        for client in outer.incoming() {
            let Ok(client) = client else { return };
            let upstream = UnixStream::connect(&socket).expect("connect");
            pump(client.try_clone().expect("clone"), upstream.try_clone().expect("clone"));
            pump(upstream, client);
        }
    });
    address
}

/// Copy `from` to `to` on a thread of its own, a MiB at a time; then shut `to`'s writing half.
fn pump(mut from: impl Read + Send + 'static, mut to: impl Write + Shut + Send + 'static) {
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 1 << 20];
        while let Ok(n) = from.read(&mut buffer) {
            if n == 0 || to.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        to.shut_write();
    });
}

/// Connect to the server, directly or through the bridge and proxy, and ask for `what`.
fn open(server: SocketAddr, via: Option<SocketAddr>, what: &[u8]) -> TcpStream {
    let mut stream = TcpStream::connect(via.unwrap_or(server)).expect("connect");
    if via.is_some() {
        write!(stream, "CONNECT {server} HTTP/1.1\r\n\r\n").expect("CONNECT");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).expect("the proxy's answer");
            head.push(byte[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
    }
    stream.write_all(what).expect("ask");
    stream
}

/// MiB/s of one 100 MiB download.
fn download(server: SocketAddr, via: Option<SocketAddr>) -> f64 {
    let started = Instant::now();
    let mut stream = open(server, via, b"BIG\r\n");
    assert_eq!(drain(&mut stream), BIG);
    BIG as f64 / (1 << 20) as f64 / started.elapsed().as_secs_f64()
}

/// MiB/s of one 100 MiB download through the two bare hops (no CONNECT: they lead to the
/// server).
fn download_bare(hops: SocketAddr) -> f64 {
    let started = Instant::now();
    let mut stream = TcpStream::connect(hops).expect("connect");
    stream.write_all(b"BIG\r\n").expect("ask");
    assert_eq!(drain(&mut stream), BIG);
    BIG as f64 / (1 << 20) as f64 / started.elapsed().as_secs_f64()
}

/// Read `stream` to its end: how many bytes came.
fn drain(stream: &mut TcpStream) -> usize {
    let mut buffer = vec![0u8; 1 << 20];
    let mut got = 0;
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return got,
            Ok(n) => got += n,
            Err(e) => panic!("download: {e}"),
        }
    }
}

/// Time from connecting to the first byte of a one-byte answer.
fn first_byte(server: SocketAddr, via: Option<SocketAddr>) -> Duration {
    let started = Instant::now();
    let mut stream = open(server, via, b"ONE\r\n");
    let mut byte = [0u8; 1];
    stream.read_exact(&mut byte).expect("the byte");
    started.elapsed()
}

fn median<T: PartialOrd + Copy>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    values[values.len() / 2]
}

fn main() {
    let server = server();
    let dir = std::env::temp_dir().join(format!("paddock-egress-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a folder for the socket");
    let socket = dir.join("proxy.sock");
    let allow = AllowList {
        rules: Rule::parse(&server.to_string()).expect("the server's rule"),
        ..AllowList::default()
    };
    let limits = Limits { connections: 1024, ..Limits::default() };
    let listener = UnixListener::bind(&socket).expect("bind the proxy");
    let _proxy = Proxy::start(listener, allow, Owner::default(), Arc::new(|_| {}), limits, None)
        .expect("start the proxy");
    let via = Some(bridge(socket));
    let bare = bare_hops(server, &dir);
    // Warm up every path.
    download(server, None);
    download(server, via);
    download_bare(bare);
    let mut direct = Vec::new();
    let mut proxied = Vec::new();
    let mut two_hops = Vec::new();
    for _ in 0..DOWNLOADS {
        direct.push(download(server, None));
        proxied.push(download(server, via));
        two_hops.push(download_bare(bare));
    }
    let (direct, proxied, two_hops) = (median(direct), median(proxied), median(two_hops));
    let mut direct_setup = Vec::new();
    let mut proxied_setup = Vec::new();
    for _ in 0..SETUPS {
        direct_setup.push(first_byte(server, None));
        proxied_setup.push(first_byte(server, via));
    }
    let (direct_setup, proxied_setup) = (median(direct_setup), median(proxied_setup));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("| 100 MiB from loopback, median of {DOWNLOADS} | MiB/s | ratio |");
    println!("| --- | ---: | ---: |");
    println!("| direct | {direct:.0} | 1.00 |");
    println!("| bridge + proxy (CONNECT) | {proxied:.0} | {:.2} |", proxied / direct);
    println!(
        "| two bare hops (the most any two-hop path does here) | {two_hops:.0} | {:.2} |",
        two_hops / direct
    );
    println!();
    println!("| first byte of a one-byte answer, median of {SETUPS} | ms | added |");
    println!("| --- | ---: | ---: |");
    println!("| direct | {:.3} | |", ms(direct_setup));
    println!(
        "| bridge + proxy (CONNECT) | {:.3} | {:.3} |",
        ms(proxied_setup),
        ms(proxied_setup) - ms(direct_setup)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
