//! The Linux lock: user, mount, PID and network namespaces, Landlock and seccomp, applied by the
//! launcher (`launch`) that a locked pane runs first.

mod bridge;
mod caps;
mod fallback;
mod filter;
mod init;
mod landlock_rules;
pub mod launch;
mod mounts;
mod sockets;

use std::path::PathBuf;

use super::policy::{Enforcement, Policy};
use super::resolve::resolve;
use super::{Isolation, Launch, Probe};

/// The launcher's hidden subcommand of the paddock binary.
pub const LAUNCHER_VERB: &str = "__sandbox-exec";

pub struct Linux {
    /// The paddock binary that runs the launcher.
    pub exe: PathBuf,
}

/// The Landlock ABI of the running kernel, or why there is none.
pub fn landlock_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset(2) asking for the ABI version only.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        let error = std::io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel has no Landlock".into(),
            Some(libc::EOPNOTSUPP) => "Landlock is not enabled (boot with lsm=…,landlock)".into(),
            _ => format!("cannot ask the kernel for Landlock: {error}"),
        });
    }
    Ok(version as u32)
}

/// Whether this user may create the lock's namespaces and mount a /proc of its own in them
/// (tried in child processes, which exit).
fn user_namespaces() -> Result<(), String> {
    const NO_NAMESPACES: i32 = 1;
    const NO_PROC: i32 = 2;
    // SAFETY: fork(2); the children call only async-signal-safe system calls and _exit(2).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("cannot fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: in the child: unshare, fork, mount, waitpid and _exit only.
        unsafe {
            let flags =
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET | libc::CLONE_NEWPID;
            if libc::unshare(flags) != 0 {
                libc::_exit(NO_NAMESPACES);
            }
            let init = libc::fork();
            if init == 0 {
                let private = libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                );
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let proc = libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    flags,
                    std::ptr::null(),
                );
                libc::_exit(if private == 0 && proc == 0 { 0 } else { NO_PROC });
            }
            let mut status = NO_PROC << 8;
            if init > 0 {
                libc::waitpid(init, &mut status, 0);
            }
            let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { NO_PROC };
            libc::_exit(code);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    match libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)) {
        Some(0) => Ok(()),
        Some(NO_PROC) => Err(format!(
            "the lock's PID namespace cannot mount a /proc of its own ({})",
            mounts::PROC_HINT
        )),
        _ => Err(
            "this user may not create user namespaces (see /proc/sys/user/max_user_namespaces, \
             kernel.apparmor_restrict_unprivileged_userns)"
                .into(),
        ),
    }
}

impl Linux {
    /// What this host can enforce, and whether a lock here is Landlock and seccomp only (no
    /// user namespaces, or none that may mount: `fallback`).
    fn probe_host(&self) -> (Probe, bool) {
        let mut lines = Vec::new();
        let landlock = landlock_abi();
        match &landlock {
            Ok(abi) => lines.push(format!("Landlock: ABI {abi} (paddock needs 2, uses up to 7)")),
            Err(why) => lines.push(format!("Landlock: no: {why}")),
        }
        let userns = user_namespaces();
        match &userns {
            Ok(()) => lines.push("user, mount, PID and network namespaces: yes".into()),
            Err(why) => lines.push(format!("user namespaces: no: {why}")),
        }
        lines.push("seccomp: yes (filter mode)".into());
        let mut blocker = match &landlock {
            Err(why) => Some(why.clone()),
            Ok(abi) if *abi < 2 => Some(format!("Landlock ABI {abi} is too old (needs 2)")),
            Ok(_) => None,
        };
        let mut gaps = match landlock {
            Ok(abi) if abi < 6 => vec![format!(
                "Landlock ABI {abi} cannot stop signals to your other processes (needs 6)"
            )],
            _ => Vec::new(),
        };
        let landlock_only = userns.is_err();
        if let Err(why) = &userns {
            match fallback::gate_possible() {
                Ok(()) => {
                    lines.push("locks without namespaces: Landlock and seccomp only".into());
                    gaps.insert(0, fallback::GAPS.into());
                }
                Err(gate) => blocker = blocker.or(Some(format!("{why}; and {gate}"))),
            }
        }
        (Probe { lines, blocker, gaps }, landlock_only)
    }
}

impl Isolation for Linux {
    fn probe(&self) -> Probe {
        self.probe_host().0
    }

    fn wrap(&self, policy: &Policy, command: &[String]) -> Launch {
        // What the launcher will refuse is refused here, before anything starts.
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let resolved = match resolve(policy, home.as_deref()) {
            Ok(resolved) => resolved,
            Err(why) => return Launch::refused(why.to_string()),
        };
        let (probe, landlock_only) = self.probe_host();
        if let Some(why) = probe.blocker {
            return Launch::refused(format!("this system cannot enforce a lock: {why}"));
        }
        if landlock_only {
            if let Some(why) = fallback::refusal(&resolved, &mounts::hidden_folders(&resolved)) {
                return Launch::refused(why);
            }
        }
        let mut gaps = probe.gaps;
        // Without the network the pane's own network namespace keeps abstract sockets apart;
        // without namespaces the socket gate refuses them.
        if policy.network && !landlock_only {
            if let Some(abi) = landlock_abi().ok().filter(|abi| *abi < 6) {
                gaps.push(format!(
                    "Landlock ABI {abi} cannot keep it from the abstract unix sockets of your \
                     other programs (an X server among them; needs 6)"
                ));
            }
        }
        let enforcement = if gaps.is_empty() {
            Enforcement::Locked { network: policy.reach() }
        } else {
            Enforcement::Degraded(gaps.join("; "))
        };
        let json = serde_json::to_string(policy).unwrap_or_default();
        let mut argv =
            vec![self.exe.display().to_string(), LAUNCHER_VERB.into(), "--policy".into(), json];
        if landlock_only {
            argv.push(launch::LANDLOCK_ONLY.into());
        }
        argv.push("--".into());
        argv.extend(command.iter().cloned());
        Launch { argv: Some(argv), enforcement }
    }
}
