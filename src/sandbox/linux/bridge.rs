//! The way out of a lock whose network is an allow-list. The lock's network namespace stays
//! empty; PID 1 listens on 127.0.0.1:PORT in it (where HTTPS_PROXY points) and carries each
//! connection to the pane's proxy, a unix socket on paddock's side, which decides what it may
//! reach. A service on the host's loopback that the allow-list names is forwarded: PID 1
//! listens on the same address and port in the lock and asks the proxy for a tunnel to it
//! (`CONNECT`), so programs that know nothing of proxies reach it as they would outside. The
//! proxy's socket is opened before the view hides it, and reached through that descriptor
//! (`/proc/self/fd/N`), as the socket gate reaches listed sockets.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::egress::relay::relay;
use crate::sandbox::policy::EgressRoute;

/// How long a relayed connection may carry nothing; the proxy closes idle tunnels sooner.
const IDLE: Duration = Duration::from_secs(3600);
/// Connections relayed at once; past it a new one is closed at once (the proxy allows fewer).
const MOST: usize = 256;

/// A bridge ready to serve: its listeners (the proxy's port, and each forwarded service with
/// the tunnel it asks for), and the proxy's socket.
pub struct Bridge {
    listeners: Vec<(TcpListener, Option<SocketAddr>)>,
    proxy: File,
}

impl Bridge {
    /// In the lock's new network namespace (its loopback up), before the view: listen on
    /// 127.0.0.1:`route.port` and open the proxy's socket.
    pub fn open(route: &EgressRoute) -> Result<Bridge, String> {
        let listener = TcpListener::bind(("127.0.0.1", route.port))
            .map_err(|e| format!("cannot listen on 127.0.0.1:{} for the proxy: {e}", route.port))?;
        let mut listeners = vec![(listener, None)];
        for service in &route.forwards {
            let listener = TcpListener::bind(service)
                .map_err(|e| format!("cannot listen on {service} to forward it: {e}"))?;
            listeners.push((listener, Some(*service)));
        }
        let proxy = super::mounts::open_without_links(&route.socket)
            .map_err(|e| format!("cannot open the pane's proxy {}: {e}", route.socket.display()))?;
        Ok(Bridge { listeners, proxy })
    }

    /// In PID 1, once the program runs: carry every connection to the proxy, each on a thread
    /// of its own, for as long as the lock lives.
    pub fn serve(self) {
        let proxy = format!("/proc/self/fd/{}", self.proxy.as_raw_fd());
        let open = Arc::new(AtomicUsize::new(0));
        for (listener, service) in self.listeners {
            let (proxy, open) = (proxy.clone(), open.clone());
            let spawned = std::thread::Builder::new()
                .name("egress-bridge".into())
                .spawn(move || accept(&listener, service, &proxy, &open));
            if let Err(e) = spawned {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!("{} cannot relay to the proxy: {e}\n", super::launch::PREFIX)
                        .as_bytes(),
                );
            }
        }
        // The proxy's descriptor lives as long as PID 1: the threads name it by number.
        std::mem::forget(self.proxy);
    }
}

/// Relay each connection `listener` takes to the proxy: as it is, or (a forwarded `service`)
/// through the tunnel the proxy opens to it.
fn accept(
    listener: &TcpListener,
    service: Option<SocketAddr>,
    proxy: &str,
    open: &Arc<AtomicUsize>,
) {
    for client in listener.incoming() {
        let Ok(mut client) = client else { continue };
        if open.fetch_add(1, Ordering::AcqRel) >= MOST {
            open.fetch_sub(1, Ordering::AcqRel);
            continue;
        }
        let (proxy, counted) = (proxy.to_owned(), open.clone());
        let spawned = std::thread::Builder::new().name("egress-relay".into()).spawn(move || {
            if let Ok(mut upstream) = UnixStream::connect(&proxy) {
                let tunnel = service.map_or(Ok(()), |service| ask_tunnel(&mut upstream, service));
                if tunnel.is_ok() {
                    relay(&mut client, &mut upstream, IDLE);
                }
            }
            counted.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Ask the proxy for a tunnel to `service` and read its answer through the blank line: `Ok`
/// when it opened one (the proxy decides, and logs, as for any other request).
fn ask_tunnel(proxy: &mut UnixStream, service: SocketAddr) -> std::io::Result<()> {
    write!(proxy, "CONNECT {service} HTTP/1.1\r\nHost: {service}\r\n\r\n")?;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    // Byte by byte: nothing after the head may be read, it belongs to the client.
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 64 * 1024 || proxy.read(&mut byte)? == 0 {
            return Err(std::io::Error::other("the proxy's answer ended early"));
        }
        head.push(byte[0]);
    }
    match head.starts_with(b"HTTP/1.1 200") {
        true => Ok(()),
        false => Err(std::io::Error::other("the proxy refused the tunnel")),
    }
}
