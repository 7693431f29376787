//! The launcher: `paddock __sandbox-exec --policy JSON -- CMD…`, the first program of a locked
//! pane. Single-threaded, in this order: resolve the policy's paths; close inherited file
//! descriptors; enter a user namespace (the user keeps their own uid), a mount namespace, a PID
//! namespace and, with the network off, an empty network namespace with `lo` up; fork into the
//! PID namespace (`init`: the launcher waits outside, its child is PID 1 inside); build the
//! filesystem the command sees (`mounts`: only the system's folders and the lock's, read-only but
//! for the lock's writable folders, a /tmp of its own and a /proc that shows only the lock's
//! processes); drop every capability; apply Landlock and seccomp; fork and exec the command,
//! which PID 1 waits for. With `--landlock-only` (no usable user namespaces here), the same
//! without namespaces or a view: see `fallback`. Any failure prints why (prefixed
//! `paddock sandbox:`) and exits 125: the command never runs after a failed step.

use std::ffi::{CString, OsString};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::bridge::Bridge;
use super::sockets::{self, ListedFolders};
use super::{caps, fallback, filter, init, landlock_rules, mounts};
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
    let (policy, command, landlock_only) = match parse(args) {
        Ok(parsed) => parsed,
        Err(why) => fail(&why),
    };
    let locked = if landlock_only { lock_without_namespaces(&policy) } else { lock(&policy) };
    let Locked { tmpdir, listed, bridge, role } = locked.unwrap_or_else(|why| fail(&why));
    let own_folder = match &role {
        init::Supervisor::Subreaper { tmp } => Some(tmp.clone()),
        init::Supervisor::Init => None,
    };
    let (init_end, program_end) = sockets::handoff().unwrap_or_else(|why| fail(&why));
    let program = move || {
        // Ended with its supervisor, which without a PID namespace nothing else would do.
        // SAFETY: prctl(2) with valid arguments.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        // The program keeps no capability at all; then every connect it makes goes to PID 1.
        if let Err(why) = caps::drop_kept().and_then(|()| sockets::install(program_end)) {
            fail(&why);
        }
        exec(&command, &tmpdir)
    };
    let gate = move || {
        if let Some(bridge) = bridge {
            bridge.serve();
        }
        sockets::receive(init_end, listed, own_folder)
    };
    init::run(program, gate, role)
}

/// What the locked PID 1 keeps for the program: its temporary folder, and the folders of the
/// sockets the lock lets through.
struct Locked {
    tmpdir: PathBuf,
    listed: ListedFolders,
    /// The way to the pane's proxy, with a network allow-list.
    bridge: Option<Bridge>,
    /// PID 1 of the lock's namespaces, or the launcher itself without them.
    role: init::Supervisor,
}

fn fail(why: &str) -> ! {
    // A path in `why` may hold what a lock wrote (a folder's name): never raw to a terminal.
    let why = crate::sandbox::visible(why);
    let _ = writeln!(std::io::stderr(), "{PREFIX} {why}; the command did not run");
    std::process::exit(LOCK_FAILED)
}

/// The policy, the command, and whether the lock is Landlock and seccomp only (`fallback`).
fn parse(args: Vec<OsString>) -> Result<(Policy, Vec<OsString>, bool), String> {
    let mut args = args.into_iter();
    if args.next().as_deref() != Some("--policy".as_ref()) {
        return Err(
            "usage: paddock __sandbox-exec --policy JSON [--landlock-only] -- CMD [ARGS…]".into()
        );
    }
    let json = args.next().ok_or("--policy needs a value")?;
    let policy: Policy = serde_json::from_slice(json.as_bytes())
        .map_err(|e| format!("the policy is not valid: {e}"))?;
    let mut next = args.next();
    let landlock_only = next.as_deref() == Some(LANDLOCK_ONLY.as_ref());
    if landlock_only {
        next = args.next();
    }
    if next.as_deref() != Some("--".as_ref()) {
        return Err("expected `--` before the command".into());
    }
    let command: Vec<OsString> = args.collect();
    if command.is_empty() {
        return Err("no command given".into());
    }
    Ok((policy, command, landlock_only))
}

/// The launcher's flag for a lock without namespaces.
pub const LANDLOCK_ONLY: &str = "--landlock-only";

/// Every step before the program's fork, in PID 1.
fn lock(policy: &Policy) -> Result<Locked, String> {
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
                crate::sandbox::visible(&cwd.display().to_string())
            );
        }
    }
    close_inherited_fds()?;
    init::block_signals()?;
    enter_namespaces(uid, gid, resolved.network)?;
    // In the lock's own network namespace, before the view hides the proxy's socket.
    let bridge = resolved.egress.as_ref().map(Bridge::open).transpose()?;
    // From here on this is PID 1 of the lock; the launcher's first process waits outside.
    init::enter()?;
    let listed = ListedFolders::open(&resolved.unix_sockets)?;
    // paddock itself stays runnable inside (`paddock ctl notify` from an agent's hook).
    let exe = std::env::current_exe().ok().filter(|exe| exe.is_file());
    let (home, cwd, tty, exe) = (home.as_deref(), cwd.as_deref(), tty.as_deref(), exe.as_deref());
    let tmpdir = mounts::build(&resolved, home, cwd, tty, exe)?;
    caps::drop_all_but_the_gates()?;
    leave_the_session_keyring()?;
    let places = landlock_rules::Places { tty, exe, home, own_view: true };
    landlock_rules::apply(&resolved, &tmpdir, places)?;
    filter::apply(resolved.network, true)?;
    Ok(Locked { tmpdir, listed, bridge, role: init::Supervisor::Init })
}

/// Every step before the program's fork, without namespaces (see `fallback`): the same checks,
/// a temporary folder of the pane's own, Landlock and seccomp on the host's filesystem; the
/// launcher stays as the program's supervisor.
fn lock_without_namespaces(policy: &Policy) -> Result<Locked, String> {
    let home = std::env::var_os("HOME").map(|h| {
        let home = PathBuf::from(h);
        home.canonicalize().unwrap_or(home)
    });
    let resolved = resolve(policy, home.as_deref()).map_err(|e| e.to_string())?;
    if let Some(why) = fallback::refusal(&resolved, &mounts::hidden_folders(&resolved)) {
        return Err(why);
    }
    fallback::gate_possible()?;
    let tty = std::fs::read_link("/proc/self/fd/0")
        .ok()
        .filter(|p| p.starts_with("/dev/pts/") || p.to_string_lossy().starts_with("/dev/tty"));
    close_inherited_fds()?;
    init::block_signals()?;
    let listed = ListedFolders::open(&resolved.unix_sockets)?;
    // Where it starts: here if the lock shows it, else its first writable folder.
    let shown =
        |dir: &Path| resolved.write.iter().chain(&resolved.read).any(|f| dir.starts_with(f));
    let cwd = std::env::current_dir().ok().filter(|cwd| shown(cwd));
    if cwd.is_none() {
        let start = resolved.write.first().map_or(Path::new("/"), PathBuf::as_path);
        std::env::set_current_dir(start)
            .map_err(|e| format!("cannot enter {}: {e}", start.display()))?;
    }
    let tmpdir = fallback::own_tmp()?;
    init::stand_aside(tmpdir.clone())?;
    let exe = std::env::current_exe().ok().filter(|exe| exe.is_file());
    caps::drop_without_namespaces()?;
    leave_the_session_keyring()?;
    let places = landlock_rules::Places {
        tty: tty.as_deref(),
        exe: exe.as_deref(),
        home: None,
        own_view: false,
    };
    landlock_rules::apply(&resolved, &tmpdir, places)?;
    filter::apply(resolved.network, false)?;
    Ok(Locked {
        tmpdir: tmpdir.clone(),
        listed,
        bridge: None,
        role: init::Supervisor::Subreaper { tmp: tmpdir },
    })
}

/// A new, empty session keyring: the user's session keys (the vault's, with keyutils) are not
/// the lock's to possess. (The filter then refuses every key call.)
fn leave_the_session_keyring() -> Result<(), String> {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl(2) joining a new anonymous session keyring (a null name).
    let joined = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
    if joined < 0 {
        let error = errno();
        // A kernel without keys has nothing to leave.
        if error.raw_os_error() != Some(libc::ENOSYS) {
            return Err(format!("cannot leave the session keyring: {error}"));
        }
    }
    Ok(())
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
    let program = crate::sandbox::visible(&program.to_string_lossy());
    let _ = writeln!(std::io::stderr(), "{PREFIX} cannot run {program}: {error}");
    // As shells do: 127 when the command is not there, 126 when it cannot be run.
    let code = if error.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 };
    std::process::exit(code)
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}
