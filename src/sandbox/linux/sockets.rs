//! The lock's gate on `connect(2)`: a path unix socket is reached only when the lock lists it
//! or the lock itself made it. Landlock before ABI 9 does not govern connecting to a socket by
//! its path, and a socket of the host's (a Docker or Nix daemon) may sit in a folder the lock
//! shows, or appear there later.
//!
//! How: the program's process installs a seccomp filter that hands every `connect` to PID 1
//! (user notification) and passes PID 1 the listener. PID 1 reads the address from the caller's
//! memory, takes a copy of its socket (`pidfd_getfd`) and makes the call itself on that copy,
//! then answers with the result. It never lets the original call go on (a check followed by
//! "continue" races with another thread rewriting the address). PID 1 is inside the lock's
//! namespaces and Landlock domain, so every other connect (TCP, abstract sockets) is judged by
//! the kernel exactly as the caller's would be. A path socket is connected through an `O_PATH`
//! descriptor opened once (`/proc/self/fd/N`), so what was checked is what is connected:
//! - a listed socket, by its configured path, through a descriptor of its folder that PID 1
//!   took before the view was built: an ssh agent that re-creates its socket keeps working,
//!   and the folder itself never appears in the view;
//! - a socket on the lock's own /tmp or /dev/shm, which only the lock can write;
//! - nothing else: EACCES, the error Landlock gives where it governs this.
//!
//! Sending to a path (`sendto`, `sendmsg`) needs a datagram unix socket; the lock's seccomp
//! filter refuses to create those (`filter.rs`), so no other call can reach a path.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use seccompiler::sock_filter;

/// A socket the lock lists: its configured path, and its folder as PID 1 holds it.
struct Listed {
    path: PathBuf,
    folder: OwnedFd,
    name: OsString,
}

/// What PID 1 knows to answer connects.
pub struct Gate {
    listener: OwnedFd,
    listed: Vec<Listed>,
    /// The devices of the lock's own /tmp and /dev/shm.
    own: Vec<u64>,
    /// Without namespaces (`fallback`): the pane's own temporary folder, the one place a
    /// socket of the lock's own may be (the host's /tmp is everyone's); abstract sockets,
    /// shared with the whole host then, are refused.
    own_folder: Option<PathBuf>,
}

/// The listed sockets' folders, opened before the view hides them.
pub struct ListedFolders(Vec<Listed>);

impl ListedFolders {
    pub fn open(sockets: &[PathBuf]) -> Result<ListedFolders, String> {
        let mut listed = Vec::new();
        for path in sockets {
            let (Some(folder), Some(name)) = (path.parent(), path.file_name()) else {
                return Err(format!("{} is not a socket's path", path.display()));
            };
            // Canonical since the configuration was read: no link is followed on the way.
            let folder = super::mounts::open_without_links(folder)
                .map(OwnedFd::from)
                .map_err(|e| format!("cannot open {}: {e}", folder.display()))?;
            listed.push(Listed { path: path.clone(), folder, name: name.to_owned() });
        }
        Ok(ListedFolders(listed))
    }
}

/// The two ends over which the program's process hands PID 1 the filter's listener.
pub fn handoff() -> Result<(OwnedFd, OwnedFd), String> {
    let mut ends = [0; 2];
    // SAFETY: socketpair(2) fills two descriptors.
    let made = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            ends.as_mut_ptr(),
        )
    };
    if made != 0 {
        return Err(format!("cannot make a socket pair: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just made and are ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) })
}

/// In the program's process, just before the exec: send every `connect` to PID 1 and pass it
/// the listener over `to_init`.
pub fn install(to_init: OwnedFd) -> Result<(), String> {
    let program = connect_to_listener();
    let fprog = libc::sock_fprog { len: program.len() as u16, filter: program.as_ptr() as *mut _ };
    // Not SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: a caller's ^C must still interrupt a slow
    // connect, as it would outside the lock (the connect then goes on, as the kernel's own
    // interrupted connect does).
    let flags = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER;
    // SAFETY: seccomp(2) with a valid program that outlives the call.
    let fd =
        unsafe { libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &fprog) };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        return Err(format!("cannot install the socket gate: {error}"));
    }
    // SAFETY: a new descriptor, ours alone.
    let listener = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    send_fd(&to_init, &listener).map_err(|e| format!("cannot hand over the socket gate: {e}"))
}

/// `connect` goes to the listener; everything else is left to the lock's other filter.
fn connect_to_listener() -> Vec<sock_filter> {
    #[cfg(target_arch = "x86_64")]
    const NATIVE: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const NATIVE: u32 = 0xC000_00B7;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    const NATIVE: u32 = 0;
    let op = |code: u32, k: u32, jt: u8, jf: u8| sock_filter { code: code as u16, jt, jf, k };
    let load = |offset| op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset, 0, 0);
    let ret = |value| op(libc::BPF_RET | libc::BPF_K, value, 0, 0);
    let jeq = |value, jt, jf| op(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, value, jt, jf);
    vec![
        // struct seccomp_data: the number at 0, the architecture at 4.
        load(4),
        jeq(NATIVE, 0, 2),
        load(0),
        jeq(libc::SYS_connect as u32, 1, 0),
        ret(libc::SECCOMP_RET_ALLOW),
        ret(libc::SECCOMP_RET_USER_NOTIF),
    ]
}

/// In PID 1: the listener the program's process sends (`None`: it ended first, and said why).
/// `own_folder`: without namespaces, the pane's temporary folder (see `Gate::own_folder`).
pub fn receive(
    from_program: OwnedFd,
    listed: ListedFolders,
    own_folder: Option<PathBuf>,
) -> Option<Gate> {
    let listener = receive_fd(&from_program)?;
    let own = match own_folder {
        Some(_) => Vec::new(),
        None => ["/tmp", "/dev/shm"]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.dev()))
            .collect(),
    };
    Some(Gate { listener, listed: listed.0, own, own_folder })
}

impl Gate {
    pub fn fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    /// Take one waiting call and answer it on a thread of its own (a connect may block).
    pub fn serve_one(self: &Arc<Gate>) {
        // SAFETY: a zeroed notification for the kernel to fill.
        let mut call: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: SECCOMP_IOCTL_NOTIF_RECV on our listener with a buffer of its size.
        let received =
            unsafe { libc::ioctl(self.fd(), libc::SECCOMP_IOCTL_NOTIF_RECV as _, &mut call) };
        if received != 0 {
            return;
        }
        let gate = Arc::clone(self);
        let spawned = std::thread::Builder::new().spawn(move || gate.answer(&call));
        if spawned.is_err() {
            self.respond(call.id, Err(libc::EAGAIN));
        }
    }

    fn answer(&self, call: &libc::seccomp_notif) {
        let result = self.connect_for(call);
        self.respond(call.id, result);
    }

    fn respond(&self, id: u64, result: Result<(), i32>) {
        let response = libc::seccomp_notif_resp {
            id,
            val: 0,
            error: result.err().map_or(0, |e| -e),
            flags: 0,
        };
        // SAFETY: SECCOMP_IOCTL_NOTIF_SEND with a filled response. A caller that was killed
        // meanwhile makes it fail, which is nothing to us.
        unsafe { libc::ioctl(self.fd(), libc::SECCOMP_IOCTL_NOTIF_SEND as _, &response) };
    }

    fn still_waiting(&self, id: u64) -> bool {
        // SAFETY: SECCOMP_IOCTL_NOTIF_ID_VALID reads the id.
        unsafe { libc::ioctl(self.fd(), libc::SECCOMP_IOCTL_NOTIF_ID_VALID as _, &id) == 0 }
    }

    /// Make the caller's `connect(fd, addr, len)` on a copy of its socket.
    fn connect_for(&self, call: &libc::seccomp_notif) -> Result<(), i32> {
        let [fd, addr, len, ..] = call.data.args;
        let len = usize::try_from(len).map_err(|_| libc::EINVAL)?;
        if len > std::mem::size_of::<libc::sockaddr_storage>() {
            return Err(libc::EINVAL);
        }
        let pid = call.pid;
        // Both taken before the check that the call is still the one received, so that a
        // pid used again meanwhile cannot hand us another process.
        let memory = File::open(format!("/proc/{pid}/mem")).map_err(|_| libc::EPERM)?;
        // The caller may be any thread; its process (which holds the descriptor table) is the
        // one a pidfd names.
        let pidfd = pidfd_open(thread_group(pid)?)?;
        if !self.still_waiting(call.id) {
            return Err(libc::EINTR);
        }
        let mut address = vec![0u8; len];
        if len > 0 && memory.read_exact_at(&mut address, addr).is_err() {
            return Err(libc::EFAULT);
        }
        let socket = pidfd_getfd(&pidfd, fd)?;
        let family = address.get(..2).map(|f| u16::from_ne_bytes([f[0], f[1]]));
        let path = unix_path(&address);
        match (family, path) {
            (Some(f), Some(path)) if f == libc::AF_UNIX as u16 => {
                let path = absolute(path, pid)?;
                let target = self.path_socket(&path)?;
                connect(&socket, &proc_fd_address(&target))
            }
            // An abstract socket without namespaces: the host's (an X server's among them).
            (Some(f), None) if f == libc::AF_UNIX as u16 && self.own_folder.is_some() => {
                Err(libc::EACCES)
            }
            // Any other address (TCP, an abstract socket): judged by the kernel as the
            // caller's own call would be, from the same namespaces and Landlock domain.
            _ => connect(&socket, &address),
        }
    }

    /// The socket `path` names, opened once, if the lock lets it through.
    fn path_socket(&self, path: &Path) -> Result<OwnedFd, i32> {
        if let Some(listed) = self.listed.iter().find(|l| l.path == path) {
            let name = CString::new(listed.name.as_bytes()).map_err(|_| libc::EINVAL)?;
            return open_path_at(&listed.folder, &name);
        }
        let target = open_path(path, 0).map_err(|e| e.raw_os_error().unwrap_or(libc::ENOENT))?;
        let meta = File::from(target.try_clone().map_err(|_| libc::EMFILE)?)
            .metadata()
            .map_err(|_| libc::ECONNREFUSED)?;
        if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) {
            return Err(libc::ECONNREFUSED);
        }
        if self.own.contains(&meta.dev()) {
            return Ok(target);
        }
        // Where the descriptor really is, not where the caller's path said.
        let real = std::fs::read_link(format!("/proc/self/fd/{}", target.as_raw_fd()));
        if let (Some(folder), Ok(real)) = (&self.own_folder, real) {
            if real.starts_with(folder) {
                return Ok(target);
            }
        }
        Err(libc::EACCES)
    }
}

/// The path of a path unix socket's address (`None`: abstract, unnamed or not unix).
fn unix_path(address: &[u8]) -> Option<&OsStr> {
    let path = address.get(2..)?;
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    (end > 0).then(|| OsStr::from_bytes(&path[..end]))
}

/// `path` as the caller means it: relative to its working folder, without `.` and `..` (by
/// name, as the kernel reads `..` here only after the links before it; a link named by the
/// caller is followed when the socket is opened).
fn absolute(path: &OsStr, pid: u32) -> Result<PathBuf, i32> {
    let path = Path::new(path);
    let base = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::fs::read_link(format!("/proc/{pid}/cwd")).map_err(|_| libc::ENOENT)?
    };
    Ok(normalize(&base.join(path)))
}

/// `.` and `..` resolved by name.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// A unix address naming exactly the socket `target` is open on.
fn proc_fd_address(target: &OwnedFd) -> Vec<u8> {
    let mut address = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    address.extend_from_slice(format!("/proc/self/fd/{}", target.as_raw_fd()).as_bytes());
    address.push(0);
    address
}

fn connect(socket: &OwnedFd, address: &[u8]) -> Result<(), i32> {
    let pointer = if address.is_empty() { std::ptr::null() } else { address.as_ptr() };
    // SAFETY: connect(2) on our copy of the caller's socket with a buffer of the length given.
    let result = unsafe {
        libc::connect(socket.as_raw_fd(), pointer as *const libc::sockaddr, address.len() as _)
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}

/// The process (thread group) thread `tid` belongs to.
fn thread_group(tid: u32) -> Result<u32, i32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))
        .and_then(|tgid| tgid.trim().parse().ok())
        .ok_or(libc::ESRCH)
}

fn pidfd_open(pid: u32) -> Result<OwnedFd, i32> {
    // SAFETY: pidfd_open(2) returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    if fd < 0 {
        return Err(libc::ESRCH);
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn pidfd_getfd(pidfd: &OwnedFd, fd: u64) -> Result<OwnedFd, i32> {
    let fd = i32::try_from(fd).map_err(|_| libc::EBADF)?;
    // SAFETY: pidfd_getfd(2) returns a new descriptor or -1.
    let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if copy < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EBADF));
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(copy as RawFd) })
}

fn open_path(path: &Path, extra: libc::c_int) -> std::io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: open(2) with a NUL-terminated path.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | extra) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn open_path_at(folder: &OwnedFd, name: &CString) -> Result<OwnedFd, i32> {
    // SAFETY: openat(2) relative to a folder we hold, with a NUL-terminated name.
    let fd =
        unsafe { libc::openat(folder.as_raw_fd(), name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::ENOENT));
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Send `fd` over the unix stream `over` (SCM_RIGHTS).
fn send_fd(over: &OwnedFd, fd: &OwnedFd) -> std::io::Result<()> {
    let mut buffers = OneFd::new();
    // SAFETY: a msghdr over `buffers`; CMSG_FIRSTHDR points into its control part, which has
    // room for one descriptor.
    unsafe {
        let message = buffers.message();
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd.as_raw_fd());
        if libc::sendmsg(over.as_raw_fd(), &message, 0) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receive one descriptor sent by `send_fd` (`None`: the other end closed first).
fn receive_fd(over: &OwnedFd) -> Option<OwnedFd> {
    let mut buffers = OneFd::new();
    // SAFETY: a msghdr over `buffers`; the control message, if any, is read within them.
    unsafe {
        let mut message = buffers.message();
        if libc::recvmsg(over.as_raw_fd(), &mut message, libc::MSG_CMSG_CLOEXEC) != 1 {
            return None;
        }
        let header = libc::CMSG_FIRSTHDR(&message);
        if header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
        Some(OwnedFd::from_raw_fd(fd))
    }
}

/// The buffers of a one-byte message carrying one descriptor.
struct OneFd {
    byte: [u8; 1],
    iov: libc::iovec,
    control: Vec<u8>,
}

impl OneFd {
    fn new() -> OneFd {
        // SAFETY: CMSG_SPACE is a size computation.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
        let iov = libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 1 };
        OneFd { byte: [0], iov, control: vec![0u8; space] }
    }

    /// A msghdr over these buffers (valid while they are neither moved nor dropped).
    fn message(&mut self) -> libc::msghdr {
        self.iov.iov_base = self.byte.as_mut_ptr().cast();
        // SAFETY: msghdr is plain data; zeroed, then pointed at our buffers.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_iov = &mut self.iov;
        message.msg_iovlen = 1;
        message.msg_control = self.control.as_mut_ptr().cast();
        message.msg_controllen = self.control.len() as _;
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_absolute_by_name() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../etc")), PathBuf::from("/etc"));
        assert_eq!(normalize(Path::new("/a//b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn a_unix_address_names_a_path_or_nothing() {
        let family = (libc::AF_UNIX as u16).to_ne_bytes();
        let with = |rest: &[u8]| [&family[..], rest].concat();
        assert_eq!(unix_path(&with(b"/run/x.sock\0junk")), Some(OsStr::new("/run/x.sock")));
        assert_eq!(unix_path(&with(b"rel.sock")), Some(OsStr::new("rel.sock")));
        // Abstract (a NUL first) and unnamed addresses name no path.
        assert_eq!(unix_path(&with(b"\0abstract")), None);
        assert_eq!(unix_path(&family), None);
    }
}
