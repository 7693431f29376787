//! The launcher: `paddock __sandbox-exec --policy JSON -- CMD…`, the first program of a locked
//! pane. Single-threaded, in this order: resolve the policy's paths; close inherited file
//! descriptors; enter a user namespace (the user keeps their own uid), a mount namespace, a PID
//! namespace and, with the network off, an empty network namespace with `lo` up; fork into the
//! PID namespace (`init`: the launcher waits outside, its child is PID 1 inside); build the
//! filesystem the command sees (`view`: only the system's folders and the lock's, read-only but
//! for the lock's writable folders, a /tmp of its own and a /proc that shows only the lock's
//! processes); drop every capability; apply Landlock and seccomp; fork and exec the command,
//! which PID 1 waits for. Any failure prints why (prefixed `paddock sandbox:`) and exits 125:
//! the command never runs after a failed step.

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::{filter, init, landlock_rules, view};
use crate::sandbox::policy::Policy;
use crate::sandbox::resolve::resolve;

/// The exit code of a lock that could not be applied (as `env`, `nice` and `timeout` use 125
/// for their own failures).
pub const LOCK_FAILED: i32 = 125;
/// How the launcher's messages start, so a person (and a test) can tell them from the
/// command's.
pub const PREFIX: &str = "paddock sandbox:";

/// Run the launcher with its arguments (after `__sandbox-exec`). Never returns.
pub fn main(args: Vec<OsString>) -> ! {
    let (policy, command) = match parse(args) {
        Ok(parsed) => parsed,
        Err(why) => fail(&why),
    };
    match lock(&policy) {
        Ok(tmpdir) => init::run(move || exec(&command, &tmpdir)),
        Err(why) => fail(&why),
    }
}

fn fail(why: &str) -> ! {
    let _ = writeln!(std::io::stderr(), "{PREFIX} {why}; the command did not run");
    std::process::exit(LOCK_FAILED)
}

fn parse(args: Vec<OsString>) -> Result<(Policy, Vec<OsString>), String> {
    let mut args = args.into_iter();
    if args.next().as_deref() != Some("--policy".as_ref()) {
        return Err("usage: paddock __sandbox-exec --policy JSON -- CMD [ARGS…]".into());
    }
    let json = args.next().ok_or("--policy needs a value")?;
    let policy: Policy = serde_json::from_slice(json.as_bytes())
        .map_err(|e| format!("the policy is not valid: {e}"))?;
    if args.next().as_deref() != Some("--".as_ref()) {
        return Err("expected `--` before the command".into());
    }
    let command: Vec<OsString> = args.collect();
    if command.is_empty() {
        return Err("no command given".into());
    }
    Ok((policy, command))
}

/// Every step before the exec; returns the pane's temporary folder.
fn lock(policy: &Policy) -> Result<PathBuf, String> {
    // Canonical, as every path of the view is (`/home` may be a link to `/var/home`).
    let home = std::env::var_os("HOME").map(|h| {
        let home = PathBuf::from(h);
        home.canonicalize().unwrap_or(home)
    });
    let resolved = resolve(policy, home.as_deref()).map_err(|e| e.to_string())?;
    // What must be known from outside the namespaces: who we are and which terminal is ours
    // (a terminal only: whatever else stdin is gets no rights by being there).
    // SAFETY: plain getters.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let tty = std::fs::read_link("/proc/self/fd/0")
        .ok()
        .filter(|p| p.starts_with("/dev/pts/") || p.to_string_lossy().starts_with("/dev/tty"));
    let cwd = std::env::current_dir().ok();
    if let Some(cwd) = &cwd {
        let shown = resolved.write.iter().chain(&resolved.read).any(|f| cwd.starts_with(f));
        if !shown {
            let _ = writeln!(
                std::io::stderr(),
                "{PREFIX} the working folder {} is outside the lock: the command starts in an \
                 empty stand-in",
                cwd.display()
            );
        }
    }
    close_inherited_fds()?;
    init::block_signals()?;
    enter_namespaces(uid, gid, resolved.network)?;
    // From here on this is PID 1 of the lock; the launcher's first process waits outside.
    init::enter()?;
    let tmpdir = view::build(&resolved, home.as_deref(), cwd.as_deref(), tty.as_deref())?;
    drop_capabilities()?;
    landlock_rules::apply(&resolved, &tmpdir, tty.as_deref())?;
    filter::apply(resolved.network)?;
    Ok(tmpdir)
}

fn close_inherited_fds() -> Result<(), String> {
    // SAFETY: close_range(2) on descriptors above stderr; nothing of ours is open there.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if closed != 0 {
        return Err(format!("cannot close inherited file descriptors: {}", errno()));
    }
    Ok(())
}

fn enter_namespaces(uid: u32, gid: u32, network: bool) -> Result<(), String> {
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    // SAFETY: unshare(2) in a single-threaded process.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(format!(
            "cannot enter new namespaces (are user namespaces allowed?): {}",
            errno()
        ));
    }
    // The user keeps their own uid and gid: an identity map of one id each.
    write_proc("/proc/self/setgroups", "deny")?;
    write_proc("/proc/self/uid_map", &format!("{uid} {uid} 1"))?;
    write_proc("/proc/self/gid_map", &format!("{gid} {gid} 1"))?;
    if !network {
        loopback_up()?;
    }
    Ok(())
}

fn write_proc(path: &str, text: &str) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("cannot write {path}: {e}"))
}

/// `lo` up in the new network namespace, so servers inside the pane work on localhost.
fn loopback_up() -> Result<(), String> {
    // SAFETY: a datagram socket and two interface ioctls on a zeroed, NUL-terminated ifreq.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(format!("cannot bring up the loopback interface: {}", errno()));
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *to = *from as libc::c_char;
        }
        let mut result = libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut request);
        if result == 0 {
            request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            result = libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &request);
        }
        let error = errno();
        libc::close(fd);
        if result != 0 {
            return Err(format!("cannot bring up the loopback interface: {error}"));
        }
    }
    Ok(())
}

/// No capability survives, in the namespace or across the exec: the bounding set is emptied,
/// root's exec gains nothing (secure bits, locked), and the sets are cleared.
fn drop_capabilities() -> Result<(), String> {
    let last: libc::c_ulong = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    // SAFETY: prctl(2) and capset(2) with valid arguments, on this thread only.
    unsafe {
        for cap in 0..=last {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno_raw() != libc::EINVAL
            {
                return Err(format!("cannot drop capability {cap}: {}", errno()));
            }
        }
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_KEEP_CAPS_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 {
            return Err(format!("cannot lock the secure bits: {}", errno()));
        }
        libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header { version: 0x2008_0522, pid: 0 };
        let data = [Data { effective: 0, permitted: 0, inheritable: 0 }; 2];
        if libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) != 0 {
            return Err(format!("cannot drop capabilities: {}", errno()));
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!("cannot set no_new_privs: {}", errno()));
        }
    }
    Ok(())
}

fn exec(command: &[OsString], tmpdir: &Path) -> ! {
    std::env::set_var("TMPDIR", tmpdir);
    // The view hides the session's runtime folder; the variable was only for building it.
    std::env::remove_var(crate::sandbox::env::RUNTIME_DIR);
    let program = command[0].clone();
    let args: Vec<CString> =
        command.iter().map(|a| CString::new(a.clone().into_vec()).unwrap_or_default()).collect();
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // SAFETY: a NULL-terminated argv of NUL-terminated strings that outlive the call.
    unsafe { libc::execvp(argv[0], argv.as_ptr()) };
    let error = std::io::Error::last_os_error();
    let _ =
        writeln!(std::io::stderr(), "{PREFIX} cannot run {}: {error}", program.to_string_lossy());
    // As shells do: 127 when the command is not there, 126 when it cannot be run.
    let code = if error.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
    std::process::exit(code)
}

fn errno_raw() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}
