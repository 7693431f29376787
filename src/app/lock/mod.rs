//! A thread's lock as the kernel is asked to enforce it: the configuration's `lock`, with what
//! every lock adds (git's files in each writable folder, paddock's own files guarded, its
//! control sockets kept out). The sandbox knows neither the configuration nor where paddock
//! keeps its files; this is where the two meet.

pub mod home;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::config::{LockPolicy, Network};
use crate::sandbox::Policy;

/// The policy for `lock`, with git's files protected in each writable folder and `guarded`
/// (paddock's own files, see `guarded_paths`) wherever they fall inside one, and what a commit
/// in a writable worktree needs of its repository (`sandbox::worktree`).
pub fn policy_for(lock: &LockPolicy, guarded: &[PathBuf]) -> Policy {
    let policy = Policy {
        write: lock.write.clone(),
        read: lock.read.clone(),
        protect: lock.protect.clone(),
        network: lock.network == Network::On,
        unix_sockets: lock.sockets.clone(),
        allow_broad_write: lock.allow_broad_write,
        guarded: guarded.to_vec(),
        ..Policy::default()
    }
    .protecting_git();
    crate::sandbox::worktree::with_worktrees(policy)
}

/// `policy` for a pane of `thread`, whose PATH is `path_var`: on Linux the thread's own home
/// (`home::own_home`) stands in for the home folder; everywhere the default read list of the
/// real home (`home::home_reads`) is added, but for what lies in a writable folder (a read
/// entry there would make it read-only).
pub fn with_home(
    mut policy: Policy,
    thread: &str,
    path_var: Option<&OsStr>,
) -> Result<Policy, String> {
    let Some(real) = dirs::home_dir().and_then(|h| h.canonicalize().ok()) else {
        return Ok(policy);
    };
    let reads = home::home_reads(&real, path_var);
    let writable = |p: &Path| policy.write.iter().any(|w| p.starts_with(w));
    let added: Vec<PathBuf> = reads.read.into_iter().filter(|p| !writable(p)).collect();
    policy.read.extend(added);
    #[cfg(target_os = "linux")]
    {
        let own = home::own_home(thread)?;
        home::make_links(&own, &reads.links);
        policy.home = Some(own);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = thread;
    Ok(policy)
}

/// paddock's own configuration, state and data folders: protected wherever they fall inside a
/// lock, so a locked agent cannot rewrite its own lock, approvals or audit log, nor another
/// thread's home or worktree. The state folder is the vault's (`vault::state_folder`), the one
/// definition on every OS.
pub fn guarded_folders() -> Vec<PathBuf> {
    let config = crate::config::default_path().and_then(|p| p.parent().map(Path::to_owned));
    // The data folder holds the threads' homes and worktrees and the broker's bundles: one
    // thread's lock may not write another's.
    let data = dirs::data_dir().map(|dir| dir.join("paddock"));
    config.into_iter().chain(crate::vault::state_folder()).chain(data).collect()
}

/// Everything of paddock's that every lock guards: `guarded_folders`, the default configuration
/// file and the one in use (a `--config` may lie anywhere, even in a lock folder; either may be a
/// link into one, as dotfile managers make them; a rewritten one would loosen the lock at the
/// next start) and the paddock executable (every lock's launcher).
pub fn guarded_paths(config_file: Option<&Path>, exe: &Path) -> Vec<PathBuf> {
    let mut guarded = guarded_folders();
    // A missing default file needs nothing more: its folder, guarded above, cannot gain it.
    guarded.extend(crate::config::default_path().filter(|file| file.symlink_metadata().is_ok()));
    guarded.extend(config_file.map(|file| std::path::absolute(file).unwrap_or(file.to_owned())));
    guarded.push(exe.to_owned());
    guarded.extend(ssh_folder());
    guarded
}

/// The user's `~/.ssh`, guarded by every lock: paddock's server runs the user's `ssh` for
/// threads on other hosts, and `~/.ssh/config` decides what that runs (`ProxyCommand`,
/// `LocalCommand`, `Match exec`), while `authorized_keys` decides who logs in. Made (0700, as
/// ssh makes it) when missing, so that a lock with the home writable covers it rather than
/// letting it be made with the locked program's contents; where it cannot be made, a lock
/// that could make it is refused.
pub fn ssh_folder() -> Option<PathBuf> {
    let ssh = dirs::home_dir()?.join(".ssh");
    #[cfg(unix)]
    if ssh.symlink_metadata().is_err() {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&ssh);
    }
    Some(ssh)
}

/// The control sockets a lock must not show (`Policy::control_sockets`): `socket` and the
/// attach socket beside it (where windows type into any pane), unless they lie in the socket
/// folder every lock's view already hides; a `--listen` path elsewhere does not (a lock that
/// would show them is refused).
pub fn exposed_control_sockets(socket: &Path) -> Vec<PathBuf> {
    match control_folders().into_iter().find(|folder| socket.starts_with(folder)) {
        Some(_) => Vec::new(),
        #[cfg(unix)]
        _ => vec![socket.to_owned(), crate::ctl::attach::attach_socket(socket)],
        #[cfg(not(unix))]
        _ => vec![socket.to_owned()],
    }
}

/// The folders instances' control sockets are made in, which every lock hides and none may
/// let a socket through from (`Policy::control_folders`): the one in use, and every other one
/// paddock could use for this user (`ctl::socket_dirs`), since a window or `paddock ctl`
/// started with another environment looks there. None where there is no control socket.
pub fn control_folders() -> Vec<PathBuf> {
    #[cfg(unix)]
    {
        let folders = crate::ctl::socket_dirs();
        // Made now if no instance made them yet: a lock hides a folder by covering it, and one
        // that is not there yet could be made by the locked program, sockets and all. One that
        // cannot be made (another user's) is one no paddock client of ours would use.
        if let Some(in_use) = folders.first() {
            let _ = crate::ctl::prepare_socket_dir(in_use);
        }
        // The others only where their parent is there (no runtime folder is made up).
        for other in folders.iter().skip(1) {
            use std::os::unix::fs::DirBuilderExt;
            let _ = std::fs::DirBuilder::new().mode(0o700).create(other);
        }
        folders
    }
    #[cfg(not(unix))]
    return Vec::new();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One state folder: the one the vault keeps its approvals and audit log in is the one every
    /// lock guards, on every OS.
    #[test]
    fn the_vaults_state_folder_is_the_one_locks_guard() {
        let state = crate::vault::state_folder().expect("a state folder (HOME is set)");
        assert!(guarded_folders().contains(&state), "{state:?}");
    }

    #[test]
    fn a_lock_gets_git_and_paddock_protections_inside_its_writable_folders() {
        let lock = LockPolicy {
            write: vec!["/home/u/app".into()],
            read: vec!["/usr".into()],
            protect: vec!["/home/u/app/.env".into()],
            network: Network::Off,
            sockets: vec![],
            allow_broad_write: false,
        };
        let guarded = ["/home/u/app/.paddock".into(), "/home/u/.config/paddock".into()];
        let policy = policy_for(&lock, &guarded);
        let protect: Vec<&str> = policy.protect.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(
            protect,
            ["/home/u/app/.env", "/home/u/app/.git/config", "/home/u/app/.git/hooks"]
        );
        assert_eq!(policy.guarded, guarded, "kept for resolving, where links are followed");
        assert!(!policy.network && !policy.allow_broad_write);
    }
}
