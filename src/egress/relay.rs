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
    relay_watched(client, upstream, idle, None)
}

/// What looks at the bytes a client sends before they go on: false stops the relay (both
/// sides are shut, and the bytes it saw are not sent).
pub type Watch<'a> = &'a mut dyn FnMut(&[u8]) -> bool;

/// What a `Watch` points at.
type WatchFn<'a> = dyn FnMut(&[u8]) -> bool + 'a;

/// `relay`, with the client's bytes shown to `watch` first (those then pass through paddock's
/// memory rather than a pipe).
pub fn relay_watched(
    client: &mut (impl Read + Write + AsRawFd + Shut),
    upstream: &mut (impl Read + Write + AsRawFd + Shut),
    idle: Duration,
    mut watch: Option<Watch<'_>>,
) -> (u64, u64) {
    let (mut sent, mut received) = (0u64, 0u64);
    let (mut client_open, mut upstream_open) = (true, true);
    let mut outward = match watch.is_some() {
        true => Mover::buffered(),
        false => Mover::new(),
    };
    let mut inward = Mover::new();
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
            match outward.step_watched(client, upstream, watch.as_deref_mut()) {
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    client.shut_write();
                    upstream.shut_write();
                    break;
                }
                Ok(Some(0)) | Err(_) => {
                    client_open = false;
                    upstream.shut_write();
                }
                Ok(moved) => sent += moved.unwrap_or(0) as u64,
            }
        }
        if upstream_open && fds[1].revents != 0 {
            match inward.step(upstream, client) {
                Ok(Some(0)) | Err(_) => {
                    upstream_open = false;
                    client.shut_write();
                }
                Ok(moved) => received += moved.unwrap_or(0) as u64,
            }
        }
    }
    (sent, received)
}

/// The most one step moves.
const CHUNK: usize = 1 << 20;

/// Moves what one side has ready to the other. On Linux through a pipe with splice(2), so the
/// bytes never come up into paddock's memory (a relay is two of these per connection, and a
/// locked program's connection passes two relays); elsewhere, or without a pipe, through a
/// buffer.
struct Mover {
    #[cfg(target_os = "linux")]
    pipe: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    buffer: Vec<u8>,
}

impl Mover {
    fn new() -> Mover {
        Mover {
            #[cfg(target_os = "linux")]
            pipe: pipe(),
            buffer: Vec::new(),
        }
    }

    /// One that always moves through a buffer (so the bytes can be looked at).
    fn buffered() -> Mover {
        Mover {
            #[cfg(target_os = "linux")]
            pipe: None,
            buffer: Vec::new(),
        }
    }

    /// `step`, through the buffer and `watch` when there is one; what `watch` refuses is not
    /// sent (PermissionDenied).
    fn step_watched(
        &mut self,
        from: &mut (impl Read + AsRawFd),
        to: &mut (impl Write + AsRawFd),
        watch: Option<&mut WatchFn<'_>>,
    ) -> std::io::Result<Option<usize>> {
        let Some(watch) = watch else { return self.step(from, to) };
        if self.buffer.is_empty() {
            self.buffer = vec![0u8; CHUNK];
        }
        match from.read(&mut self.buffer) {
            Ok(0) => Ok(Some(0)),
            Ok(n) if !watch(&self.buffer[..n]) => {
                Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "stopped"))
            }
            Ok(n) => to.write_all(&self.buffer[..n]).map(|()| Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Move what `from` has now to `to`: how much (`Some(0)`: `from` has ended; `None`:
    /// nothing was there after all).
    fn step(
        &mut self,
        from: &mut (impl Read + AsRawFd),
        to: &mut (impl Write + AsRawFd),
    ) -> std::io::Result<Option<usize>> {
        #[cfg(target_os = "linux")]
        if let Some((read_end, write_end)) = &self.pipe {
            use std::os::fd::AsRawFd as _;
            // SAFETY: splice(2) between descriptors held for the call; no offsets.
            let got = unsafe {
                libc::splice(
                    from.as_raw_fd(),
                    std::ptr::null_mut(),
                    write_end.as_raw_fd(),
                    std::ptr::null_mut(),
                    CHUNK,
                    libc::SPLICE_F_MOVE | libc::SPLICE_F_NONBLOCK,
                )
            };
            if got < 0 {
                let error = std::io::Error::last_os_error();
                return match error.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => Ok(None),
                    _ => Err(error),
                };
            }
            let mut left = got as usize;
            while left > 0 {
                // SAFETY: as above; the pipe holds `left` bytes for `to`.
                let put = unsafe {
                    libc::splice(
                        read_end.as_raw_fd(),
                        std::ptr::null_mut(),
                        to.as_raw_fd(),
                        std::ptr::null_mut(),
                        left,
                        libc::SPLICE_F_MOVE,
                    )
                };
                if put <= 0 {
                    let error = std::io::Error::last_os_error();
                    if put < 0 && error.kind() == std::io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(error);
                }
                left -= put as usize;
            }
            return Ok(Some(got as usize));
        }
        if self.buffer.is_empty() {
            self.buffer = vec![0u8; CHUNK];
        }
        match from.read(&mut self.buffer) {
            Ok(n) => to.write_all(&self.buffer[..n]).map(|()| Some(n)),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A pipe for splicing, as large as one step.
#[cfg(target_os = "linux")]
fn pipe() -> Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut ends = [0; 2];
    // SAFETY: pipe2(2) fills two descriptors.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // A larger pipe moves more per step; the system's limit may refuse it, which only costs
    // speed.
    // SAFETY: fcntl(2) on the pipe just made.
    unsafe { libc::fcntl(ends[1], libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
    // SAFETY: both descriptors were just made and are ours alone.
    Some(unsafe {
        (std::os::fd::OwnedFd::from_raw_fd(ends[0]), std::os::fd::OwnedFd::from_raw_fd(ends[1]))
    })
}
