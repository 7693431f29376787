//! The lock where this user cannot have namespaces (unprivileged user namespaces off, or, as
//! Ubuntu 24.04's AppArmor does, allowed but without the right to mount in them): Landlock and
//! seccomp alone, on the host's own filesystem. The launcher is then the program's supervisor
//! (a child subreaper, not a PID 1): it answers the socket gate and ends what the program
//! leaves behind.
//!
//! What holds: reading, writing and running only where the lock says (Landlock, by path; the
//! rest of the filesystem cannot even be listed), no IP socket at all with the network off
//! (seccomp), no path socket but the listed ones and the pane's own, and no abstract socket
//! (the gate), a temporary folder of its own. What does not, said in the lock's Degraded text
//! (`GAPS`): no private view (paths outside the lock exist, they are refused), no PID namespace
//! (the host's processes are listed in /proc), no home of its own, no private localhost, and
//! protections inside writable folders: Landlock grants a folder whole, so git's hooks and
//! config there are only checked when the program ends (`git_planted`). A lock that needs more
//! is refused: a network allow-list (no namespace to keep direct connections out), a
//! protection of yours or of paddock's own files inside a writable folder, a lock folder that
//! shows what every view hides.

use std::path::{Path, PathBuf};

use crate::sandbox::resolve::Resolved;

/// What a Landlock-only lock does not enforce, for its Degraded text.
pub const GAPS: &str = "no user namespaces here, so Landlock and seccomp only: no private view \
                        (paths outside the lock are refused, not hidden), no PID namespace (your \
                        processes are listed), no home of its own, no private localhost, and \
                        git's hooks and config in writable folders are checked when it ends, \
                        not protected";

/// Why a Landlock-only lock cannot hold `resolved`, if it cannot. `hidden`: what every view
/// hides (the control sockets' folder, the session's runtime folder, the threads' homes).
pub fn refusal(resolved: &Resolved, hidden: &[PathBuf]) -> Option<String> {
    let without = "without user namespaces";
    if resolved.egress.is_some() {
        return Some(format!(
            "a network allow-list needs a network namespace of its own, which this host does not \
             give ({without} a program could connect past the proxy)"
        ));
    }
    if let Some(path) = resolved.protect.iter().find(|p| !is_gits(p)) {
        return Some(format!(
            "{} cannot be protected {without}: Landlock grants a writable folder whole (take it \
             out of `protect`, or out of the writable folder)",
            path.display()
        ));
    }
    let shown = resolved.write.iter().chain(&resolved.read);
    for folder in shown {
        if let Some(kept) = hidden.iter().find(|h| h.starts_with(folder)) {
            return Some(format!(
                "the lock folder {} holds {}, which a lock must not show, and {without} it \
                 cannot be hidden",
                folder.display(),
                kept.display()
            ));
        }
    }
    // A thread's own home is not refused: the thread simply has none here (see GAPS).
    None
}

/// Whether `path` is one of git's files every lock protects (hooks, config, a `.git` pointer,
/// a worktree's pointers): left to the check when the program ends.
fn is_gits(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_git_folder = path.parent().is_some_and(|parent| {
        parent.ends_with(".git")
            || parent.parent().is_some_and(|p| p.ends_with("worktrees"))
            || ["HEAD", "objects", "refs"].iter().all(|n| parent.join(n).exists())
    });
    name == ".git"
        || (in_git_folder
            && matches!(name, "hooks" | "config" | "commondir" | "gitdir" | "config.worktree"))
}

/// A temporary folder of the pane's own in the host's /tmp (0700), for TMPDIR.
pub fn own_tmp() -> Result<PathBuf, String> {
    let mut template = b"/tmp/paddock-lock-XXXXXX\0".to_vec();
    // SAFETY: mkdtemp(3) fills the X's of a NUL-terminated template we own.
    let made = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(format!("cannot make a temporary folder: {}", std::io::Error::last_os_error()));
    }
    template.pop();
    Ok(PathBuf::from(String::from_utf8_lossy(&template).into_owned()))
}

/// Whether this process may read other processes' memory as the gate must (ptrace's Yama
/// scope 2 and 3 allow only an administrator, or no one).
pub fn gate_possible() -> Result<(), String> {
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope").unwrap_or_default();
    match scope.trim().parse::<u32>() {
        Ok(scope) if scope >= 2 => Err(format!(
            "kernel.yama.ptrace_scope is {scope}, so the lock's socket gate cannot read a \
             program's connect"
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved() -> Resolved {
        Resolved {
            write: vec!["/home/u/app".into()],
            read: vec!["/usr/share/doc".into()],
            protect: vec!["/home/u/app/.git/hooks".into(), "/home/u/app/.git/config".into()],
            unix_sockets: vec![],
            network: false,
            control_folders: vec![],
            egress: None,
            home: None,
        }
    }

    #[test]
    fn git_protections_are_left_to_the_check_but_yours_and_an_allow_list_refuse() {
        let hidden = [PathBuf::from("/run/user/1000")];
        assert_eq!(refusal(&resolved(), &hidden), None);
        let mut yours = resolved();
        yours.protect.push("/home/u/app/.env".into());
        let why = refusal(&yours, &hidden).expect("refused");
        assert!(why.starts_with("/home/u/app/.env cannot be protected"), "{why}");
        let mut allow = resolved();
        allow.egress = Some(crate::sandbox::EgressRoute {
            socket: "/run/p.sock".into(),
            port: 3128,
            forwards: vec![],
        });
        assert!(refusal(&allow, &hidden).expect("refused").contains("allow-list"));
        let mut broad = resolved();
        broad.read.push("/run".into());
        assert!(refusal(&broad, &hidden).expect("refused").contains("/run/user/1000"));
    }
}
