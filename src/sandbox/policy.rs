//! A folder lock as data: what a locked command may write, read and reach. Pure and serde, so
//! that the launcher can be handed it (as JSON) and tests can build it without a host.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Everything the kernel is asked to enforce for one locked command.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Folders it may read and write.
    pub write: Vec<PathBuf>,
    /// Folders it may only read.
    pub read: Vec<PathBuf>,
    /// Paths inside those folders it may only read (never write, create, rename or delete).
    pub protect: Vec<PathBuf>,
    /// Whether it may use the network (other than unix sockets).
    pub network: bool,
    /// Unix sockets outside its folders it may connect to.
    pub unix_sockets: Vec<PathBuf>,
    /// `/` or the home folder as a writable folder is refused unless this is set.
    pub allow_broad_write: bool,
    /// paddock's own files and folders (its configuration, state and executable): protected
    /// wherever they fall inside a writable folder, compared in canonical form when resolved,
    /// so that a lock folder reached through a symbolic link cannot hide them.
    #[serde(default)]
    pub guarded: Vec<PathBuf>,
    /// paddock's control sockets in use: through one, any process could open an unlocked pane,
    /// so a lock that would show one (in a `write` or `read` folder) is refused.
    #[serde(default)]
    pub control_sockets: Vec<PathBuf>,
    /// The folders instances' control sockets are made in (the one in use, and those a
    /// launcher with another environment would use): none of them may be let through
    /// (`unix_sockets`), be a lock folder or lie in one that the view does not cover. A locked
    /// pane's own endpoint, in a folder below, may be let through.
    #[serde(default)]
    pub control_folders: Vec<PathBuf>,
    /// The session's folders of sockets (the runtime folder: the session bus, the keyring,
    /// Wayland, systemd's user manager; the X server's sockets): a locked program that could
    /// write there could put a socket of its own in place of one the desktop's programs use,
    /// so no lock folder is one or lies in one. A lock folder holding one shows it covered.
    #[serde(default)]
    pub session_folders: Vec<PathBuf>,
    /// The pane's own endpoint among `unix_sockets`: the one socket in the control folder a
    /// lock may reach.
    #[serde(default)]
    pub own_endpoint: Option<PathBuf>,
    /// With the network off, a network allow-list: inside the lock's empty network namespace,
    /// 127.0.0.1:`port` is relayed to `socket`, paddock's proxy for this pane, which decides
    /// what each connection may reach.
    #[serde(default)]
    pub egress: Option<EgressRoute>,
    /// The thread's own home: a folder of paddock's (canonical) shown, writable, where the home
    /// folder is, so that logins, caches and settings persist between runs. None: an empty
    /// read-only folder stands in. Read entries inside the home folder are shown over it.
    #[serde(default)]
    pub home: Option<PathBuf>,
}

/// Where a locked pane's proxied connections go (`Policy::egress`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressRoute {
    /// The pane's proxy, a unix socket in the control folder.
    pub socket: PathBuf,
    /// The port on the lock's own loopback that leads to it.
    pub port: u16,
    /// Services on the host's loopback the allow-list names (`127.0.0.1:11434`): the same
    /// address and port listen in the lock and lead, through the proxy, to the host's.
    #[serde(default)]
    pub forwards: Vec<std::net::SocketAddr>,
}

/// What a lock's programs may reach of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Nothing but the pane's own loopback.
    Nothing,
    /// What the pane's proxy allows, through it.
    AllowList,
    /// Everything the user can reach.
    Everything,
}

/// This user's session folders of sockets (`Policy::session_folders`): the runtime folder
/// (`/run/user/<uid>`, and `$XDG_RUNTIME_DIR` where it names another) and the X server's
/// sockets. None on Windows.
pub fn session_folders() -> Vec<PathBuf> {
    #[cfg(unix)]
    {
        // SAFETY: getuid(2).
        let uid = unsafe { libc::getuid() };
        let runtime =
            std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute());
        let mut folders = vec![PathBuf::from(format!("/run/user/{uid}"))];
        folders.extend(runtime.filter(|r| !folders.contains(r)));
        folders.push(PathBuf::from("/tmp/.X11-unix"));
        folders
    }
    #[cfg(not(unix))]
    return Vec::new();
}

impl Policy {
    /// What this policy lets its programs reach.
    pub fn reach(&self) -> Reach {
        match (self.network, &self.egress) {
            (true, _) => Reach::Everything,
            (false, Some(_)) => Reach::AllowList,
            (false, None) => Reach::Nothing,
        }
    }
}

/// Paths every lock protects inside each writable folder: git runs hooks and reads its config
/// from there, so writing them is running code outside the lock at the user's next commit.
pub const PROTECTED_IN_EACH_FOLDER: &[&str] = &[".git/hooks", ".git/config"];

impl Policy {
    /// This policy with the protections every lock adds: git's hooks and config in each
    /// writable folder (`PROTECTED_IN_EACH_FOLDER`), in order and without repeats.
    pub fn protecting_git(mut self) -> Policy {
        for folder in &self.write {
            self.protect.extend(PROTECTED_IN_EACH_FOLDER.iter().map(|p| folder.join(p)));
        }
        self.protect.sort();
        self.protect.dedup();
        self
    }
}

/// What a pane's lock actually is, as its title strip, its tab and `paddock ls` say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Enforcement {
    /// Every part of the lock is enforced by the kernel.
    Locked { network: Reach },
    /// Some part is not: what.
    Degraded(String),
    /// No lock: `chosen` when the thread's config says `unlocked: true`, rather than simply
    /// asking for no lock (a plain pane, a thread without one).
    Unlocked { chosen: bool },
    /// A lock was asked for and cannot be enforced: the command did not run. Why.
    Refused(String),
}

impl Enforcement {
    /// One word, as `paddock ls --json` gives it: locked, degraded, unlocked or refused.
    pub fn level(&self) -> &'static str {
        match self {
            Enforcement::Locked { .. } => "locked",
            Enforcement::Degraded(_) => "degraded",
            Enforcement::Unlocked { .. } => "unlocked",
            Enforcement::Refused(_) => "refused",
        }
    }

    /// What is enforced, or not, or why not.
    pub fn detail(&self) -> String {
        match self {
            Enforcement::Locked { network: Reach::Nothing } => "files + network".into(),
            Enforcement::Locked { network: Reach::AllowList } => {
                "files; allow-listed network".into()
            }
            Enforcement::Locked { network: Reach::Everything } => "files; network on".into(),
            Enforcement::Degraded(what) | Enforcement::Refused(what) => what.clone(),
            Enforcement::Unlocked { chosen: true } => "by choice: unlocked: true".into(),
            Enforcement::Unlocked { chosen: false } => "no lock asked for".into(),
        }
    }
}

impl fmt::Display for Enforcement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Enforcement::Locked { network: _ } => write!(f, "Locked ({})", self.detail()),
            Enforcement::Degraded(what) => write!(f, "Degraded: {what}"),
            Enforcement::Unlocked { .. } => f.write_str("Unlocked"),
            Enforcement::Refused(why) => write!(f, "Refused: {why}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_gets_git_protections_inside_its_writable_folders() {
        let policy = Policy {
            write: vec!["/home/u/app".into()],
            read: vec!["/usr".into()],
            protect: vec!["/home/u/app/.env".into(), "/home/u/app/.git/hooks".into()],
            ..Policy::default()
        }
        .protecting_git();
        let protect: Vec<&str> = policy.protect.iter().filter_map(|p| p.to_str()).collect();
        assert_eq!(
            protect,
            ["/home/u/app/.env", "/home/u/app/.git/config", "/home/u/app/.git/hooks"]
        );
        assert_eq!(policy.read, [PathBuf::from("/usr")], "nothing else changes");
    }

    #[test]
    fn enforcement_reads_as_the_title_strip_shows_it() {
        let locked = |network| Enforcement::Locked { network }.to_string();
        assert_eq!(locked(Reach::Nothing), "Locked (files + network)");
        assert_eq!(locked(Reach::AllowList), "Locked (files; allow-listed network)");
        assert_eq!(locked(Reach::Everything), "Locked (files; network on)");
        let refused = Enforcement::Refused("no user namespaces".into());
        assert_eq!(refused.to_string(), "Refused: no user namespaces");
        assert_eq!((refused.level(), refused.detail().as_str()), ("refused", "no user namespaces"));
    }
}
