//! The way out of a lock whose network is an allow-list. The lock's network namespace stays
//! empty; PID 1 listens on 127.0.0.1:PORT in it (where HTTPS_PROXY points) and carries each
//! connection to the pane's proxy, a unix socket on paddock's side, which decides what it may
//! reach. The proxy's socket is opened before the view hides it, and reached through that
//! descriptor (`/proc/self/fd/N`), as the socket gate reaches listed sockets.

use std::fs::File;
use std::net::TcpListener;
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

/// A bridge ready to serve: its listener, and the proxy's socket.
pub struct Bridge {
    listener: TcpListener,
    proxy: File,
}

impl Bridge {
    /// In the lock's new network namespace (its loopback up), before the view: listen on
    /// 127.0.0.1:`route.port` and open the proxy's socket.
    pub fn open(route: &EgressRoute) -> Result<Bridge, String> {
        let listener = TcpListener::bind(("127.0.0.1", route.port))
            .map_err(|e| format!("cannot listen on 127.0.0.1:{} for the proxy: {e}", route.port))?;
        let proxy = super::mounts::open_without_links(&route.socket)
            .map_err(|e| format!("cannot open the pane's proxy {}: {e}", route.socket.display()))?;
        Ok(Bridge { listener, proxy })
    }

    /// In PID 1, once the program runs: carry every connection to the proxy, each on a thread
    /// of its own, for as long as the lock lives.
    pub fn serve(self) {
        let spawned = std::thread::Builder::new().name("egress-bridge".into()).spawn(move || {
            let proxy = format!("/proc/self/fd/{}", self.proxy.as_raw_fd());
            let open = Arc::new(AtomicUsize::new(0));
            for client in self.listener.incoming() {
                let Ok(mut client) = client else { continue };
                if open.fetch_add(1, Ordering::AcqRel) >= MOST {
                    open.fetch_sub(1, Ordering::AcqRel);
                    continue;
                }
                let (proxy, open) = (proxy.clone(), open.clone());
                let spawned = std::thread::Builder::new().name("egress-relay".into()).spawn({
                    let open = open.clone();
                    move || {
                        if let Ok(mut upstream) = UnixStream::connect(&proxy) {
                            relay(&mut client, &mut upstream, IDLE);
                        }
                        open.fetch_sub(1, Ordering::AcqRel);
                    }
                });
                if spawned.is_err() {
                    open.fetch_sub(1, Ordering::AcqRel);
                }
            }
        });
        if let Err(e) = spawned {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("{} cannot relay to the proxy: {e}\n", super::launch::PREFIX).as_bytes(),
            );
        }
    }
}
