//! Who is on the other end of a Unix socket.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

/// The uid of the process that connected.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    peer_cred(stream).map(|cred| cred.uid)
}

/// Who connected, as the kernel recorded it (SO_PEERCRED).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_cred(stream: &UnixStream) -> std::io::Result<libc::ucred> {
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
    Ok(cred)
}

/// The process id of the process that connected, where the kernel tells it.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn connected_pid(stream: &UnixStream) -> Option<u32> {
    peer_cred(stream).ok().and_then(|cred| u32::try_from(cred.pid).ok()).filter(|&p| p > 0)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn connected_pid(_stream: &UnixStream) -> Option<u32> {
    None
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

/// Refuse a peer that runs in another user or PID namespace than this instance (a lock, a
/// container). The peer is named by a pidfd where the kernel gives one (SO_PEERPIDFD, Linux
/// 6.5), so that its pid cannot have been reused by the time its namespaces are read; older
/// kernels give only the pid of SO_PEERCRED, which is weaker.
#[cfg(target_os = "linux")]
pub(super) fn peer_outside_our_namespaces(stream: &UnixStream) -> Result<(), String> {
    let Some(pidfd) = peer_pidfd(stream) else {
        return same_namespaces(peer_pid(stream)?);
    };
    let pid =
        pidfd_pid(&pidfd)?.filter(|pid| *pid > 0).ok_or("the client ended before it was seen")?;
    same_namespaces(pid)?;
    // Still alive, so `pid` named it when its namespaces were read.
    if !pidfd_alive(&pidfd) {
        return Err("the client ended before it was seen".into());
    }
    Ok(())
}

/// The peer's pidfd, where the kernel gives one (SO_PEERPIDFD, Linux 6.5).
#[cfg(target_os = "linux")]
fn peer_pidfd(stream: &UnixStream) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    const SO_PEERPIDFD: libc::c_int = 77;
    let mut pidfd: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes one int.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut pidfd as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    // SAFETY: a new descriptor, ours alone.
    (rc == 0 && pidfd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(pidfd) })
}

/// The pid a pidfd names, seen from here: `Some(0)` for a process outside our PID namespace,
/// `None` for one that has ended.
#[cfg(target_os = "linux")]
fn pidfd_pid(pidfd: &std::os::fd::OwnedFd) -> Result<Option<i32>, String> {
    let fdinfo = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd()))
        .map_err(|e| format!("cannot tell who is at the other end: {e}"))?;
    let pid = fdinfo
        .lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse::<i32>().ok())
        .ok_or("cannot tell who is at the other end")?;
    Ok((pid >= 0).then_some(pid))
}

/// Whether the process a pidfd names has not ended. (A process in a namespace that is not
/// ours or beneath it cannot be signalled at all, which says nothing of its end: alive.)
#[cfg(target_os = "linux")]
fn pidfd_alive(pidfd: &std::os::fd::OwnedFd) -> bool {
    // SAFETY: pidfd_send_signal(2) with signal 0 only checks.
    let rc = unsafe {
        libc::syscall(libc::SYS_pidfd_send_signal, pidfd.as_raw_fd(), 0, std::ptr::null::<u8>(), 0)
    };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(target_os = "linux")]
fn peer_pid(stream: &UnixStream) -> Result<i32, String> {
    match peer_cred(stream) {
        Ok(cred) if cred.pid > 0 => Ok(cred.pid),
        _ => Err("cannot tell who is connecting".into()),
    }
}

/// Where a process (`self`, or a pid) runs: the depth of its PID namespace (the `NSpid` line of
/// its status) and its user namespace's uid map.
#[cfg(target_os = "linux")]
struct Namespaces {
    depth: Option<usize>,
    uid_map: String,
}

#[cfg(target_os = "linux")]
fn namespaces_of(process: &str) -> std::io::Result<Namespaces> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status"))?;
    let depth = status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .map(|ids| ids.split_whitespace().count());
    let uid_map = std::fs::read_to_string(format!("/proc/{process}/uid_map"))?;
    Ok(Namespaces { depth, uid_map })
}

/// Whether process `pid` shares this process's user and PID namespaces, read from files anyone
/// may read (a namespace link needs ptrace rights over the peer, which an undumpable peer, a
/// lock's init answering for its program, does not grant): its PID namespace depth (the
/// `NSpid` line of its status) and its user namespace's uid map.
#[cfg(target_os = "linux")]
fn same_namespaces(pid: i32) -> Result<(), String> {
    let unreadable =
        |e: std::io::Error| format!("cannot tell which namespaces the client runs in: {e}");
    let ours = namespaces_of("self").map_err(unreadable)?;
    let theirs = namespaces_of(&pid.to_string()).map_err(unreadable)?;
    let other = if ours.depth != theirs.depth {
        Some("PID")
    } else if ours.uid_map != theirs.uid_map {
        Some("user")
    } else {
        None
    };
    match other {
        Some(kind) => Err(format!(
            "the client runs in another {kind} namespace (a locked pane, a container): it may \
             not control this instance (a locked pane talks to its own endpoint, $PADDOCK_SOCKET)"
        )),
        None => Ok(()),
    }
}

#[cfg(not(target_os = "linux"))]
pub(super) fn peer_outside_our_namespaces(_stream: &UnixStream) -> Result<(), String> {
    Ok(())
}

/// A client's check of the socket it reached: the process listening there must be alive and
/// not run in a namespace nested in ours (a lock, which could have made the socket where a lock
/// folder reaches the socket folder, to pose as the server and read what is typed). A server
/// outside our namespaces (we are the locked pane, at its endpoint) is not visible to us, and
/// fine. The listener is held by a pidfd where the kernel gives one, so a pid reused by another
/// process of ours cannot stand in for a lock's listener that has ended; older kernels give
/// only a pid, which is weaker.
#[cfg(target_os = "linux")]
pub(super) fn listener_not_inside_a_lock(stream: &UnixStream) -> Result<(), String> {
    let ended = "the process that made this socket has ended: it is no paddock server (its \
                 socket was kept by another process), and nothing is sent to it";
    let (pid, pidfd) = match peer_pidfd(stream) {
        Some(pidfd) => match pidfd_pid(&pidfd)? {
            None => return Err(ended.into()),
            Some(pid) => (pid, Some(pidfd)),
        },
        None => match peer_cred(stream) {
            Ok(cred) => (cred.pid, None),
            Err(e) => return Err(format!("cannot tell who listens there: {e}")),
        },
    };
    // Not in our PID namespace, so in an outer one: the server of the lock we run in.
    if pid == 0 {
        return Ok(());
    }
    let unreadable = |e: std::io::Error| format!("cannot tell where its server runs: {e}");
    let ours = namespaces_of("self").map_err(unreadable)?;
    let theirs = namespaces_of(&pid.to_string()).map_err(unreadable)?;
    // Nested in ours: a deeper PID namespace, or a user namespace of its own at our depth. (A
    // client that is itself in a deeper namespace leaves the judging to the server, which
    // refuses it.)
    let nested = theirs.depth > ours.depth;
    if nested || (theirs.depth == ours.depth && theirs.uid_map != ours.uid_map) {
        return Err(format!(
            "the process listening there (pid {pid}) runs inside a lock or another namespace: \
             it is not a paddock server of yours, and nothing is sent to it"
        ));
    }
    // Still alive: `pid` named the listener itself when its namespaces were read.
    if pidfd.is_some_and(|pidfd| !pidfd_alive(&pidfd)) {
        return Err(ended.into());
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub(super) fn listener_not_inside_a_lock(_stream: &UnixStream) -> Result<(), String> {
    Ok(())
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
    fn a_peer_in_our_own_namespaces_is_let_in() {
        let (a, _b) = UnixStream::pair().expect("pair");
        assert_eq!(peer_outside_our_namespaces(&a), Ok(()));
    }

    #[test]
    fn a_socket_pair_reports_our_own_uid() {
        let (a, _b) = UnixStream::pair().expect("pair");
        assert_eq!(peer_uid(&a).expect("uid"), super::super::paths::own_uid());
    }
}
