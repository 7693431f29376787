//! Who is on the other end of a Unix socket.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// The uid of the process that connected.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    // SAFETY: an all-zero ucred is valid; getsockopt writes at most `len` bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid socket fd, a pointer to a ucred and its length.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// The uid of the process that connected.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: a valid socket fd and two out-pointers.
    if unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(uid)
}

/// Whether a peer may talk to this instance: only its own user (root included: root's
/// processes have other ways in, but paddock does not offer it one).
pub(super) fn may_connect(peer: u32, own: u32) -> bool {
    peer == own
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_user_may_connect() {
        assert!(may_connect(1000, 1000));
        assert!(!may_connect(1001, 1000));
        assert!(!may_connect(0, 1000));
        assert!(!may_connect(1000, 0));
    }

    #[test]
    fn a_socket_pair_reports_our_own_uid() {
        let (a, _b) = UnixStream::pair().expect("pair");
        assert_eq!(peer_uid(&a).expect("uid"), super::super::paths::own_uid());
    }
}
