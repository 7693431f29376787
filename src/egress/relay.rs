//! Relaying one connection's bytes both ways, for the proxy (a pane's client to the host) and
//! for the bridge inside a lock (a program's TCP connection to the proxy's unix socket).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// A stream whose writing half can be shut.
pub trait Shut {
    fn shut_write(&self);
}

impl Shut for TcpStream {
    fn shut_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Shut for UnixStream {
    fn shut_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// Copy bytes both ways until both sides are done, or nothing moves for `idle`; the bytes
/// sent (client to upstream) and received. A side that ends has the other's writing half
/// shut, so a request-then-EOF client still gets its answer.
pub fn relay(
    client: &mut (impl Read + Write + AsRawFd + Shut),
    upstream: &mut (impl Read + Write + AsRawFd + Shut),
    idle: Duration,
) -> (u64, u64) {
    let (mut sent, mut received) = (0u64, 0u64);
    let (mut client_open, mut upstream_open) = (true, true);
    let mut buffer = vec![0u8; 64 * 1024];
    let timeout = i32::try_from(idle.as_millis()).unwrap_or(i32::MAX);
    while client_open || upstream_open {
        let mut fds = [
            libc::pollfd {
                fd: client.as_raw_fd(),
                events: if client_open { libc::POLLIN } else { 0 },
                revents: 0,
            },
            libc::pollfd {
                fd: upstream.as_raw_fd(),
                events: if upstream_open { libc::POLLIN } else { 0 },
                revents: 0,
            },
        ];
        // SAFETY: poll(2) on two descriptors this function's streams own, for its duration.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
        if ready == 0
            || (ready < 0
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted)
        {
            break;
        }
        if client_open && fds[0].revents != 0 {
            match client.read(&mut buffer) {
                Ok(n) if n > 0 && upstream.write_all(&buffer[..n]).is_ok() => sent += n as u64,
                _ => {
                    client_open = false;
                    upstream.shut_write();
                }
            }
        }
        if upstream_open && fds[1].revents != 0 {
            match upstream.read(&mut buffer) {
                Ok(n) if n > 0 && client.write_all(&buffer[..n]).is_ok() => received += n as u64,
                _ => {
                    upstream_open = false;
                    client.shut_write();
                }
            }
        }
    }
    (sent, received)
}
