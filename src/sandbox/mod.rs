//! The folder and network lock: what a locked thread's commands can touch, enforced by the
//! kernel. [`Isolation`] is what a platform can do (`probe`) and how it runs a command under a
//! [`Policy`] (`wrap`); a lock that cannot be enforced as written refuses to run the command.
//!
//! Linux: user, mount, PID and network namespaces, Landlock and seccomp, applied by a launcher
//! (`paddock __sandbox-exec`) that runs first in the pane's PTY. macOS: Seatbelt through
//! `/usr/bin/sandbox-exec` (`seatbelt`). Elsewhere: not yet, and a lock is refused (`Unsupported`). [`Unlocked`] is
//! the explicit absence of a lock, never a fallback.

pub mod env;
mod git;
pub mod git_planted;
pub mod policy;
pub mod resolve;
pub mod seatbelt;
pub mod worktree;

#[cfg(target_os = "linux")]
pub mod linux;

pub use policy::{EgressRoute, Enforcement, Policy, Reach};

/// What the host can enforce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// One line per mechanism, for `paddock sandbox probe`.
    pub lines: Vec<String>,
    /// Why no lock can be enforced here at all, if that is so.
    pub blocker: Option<String>,
    /// Parts of a lock this host cannot enforce (a lock is then degraded, and says so).
    pub gaps: Vec<String>,
}

/// How to run a command under a lock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The program and arguments to start instead of the command; `None` when refused.
    pub argv: Option<Vec<String>>,
    /// What the lock will enforce.
    pub enforcement: Enforcement,
}

impl Launch {
    /// Refused, saying why (with any control character a path held shown as an escape).
    pub fn refused(why: String) -> Launch {
        Launch { argv: None, enforcement: Enforcement::Refused(visible(&why)) }
    }
}

/// A platform's way of locking commands.
pub trait Isolation {
    fn probe(&self) -> Probe;
    /// The command to run in place of `command` so that it runs under `policy`.
    fn wrap(&self, policy: &Policy, command: &[String]) -> Launch;
}

/// Where no lock can be enforced: every lock is refused.
pub struct Unsupported;

impl Isolation for Unsupported {
    fn probe(&self) -> Probe {
        let why = "paddock cannot lock commands on this platform yet".to_owned();
        Probe { lines: vec![why.clone()], blocker: Some(why), gaps: Vec::new() }
    }

    fn wrap(&self, _policy: &Policy, _command: &[String]) -> Launch {
        Launch::refused("paddock cannot lock commands on this platform yet".into())
    }
}

/// The explicit absence of a lock: the command runs as it is, with the user's rights, and the
/// pane says so. Used only where no lock was asked for or the config chose `unlocked: true`;
/// never as a fallback for a lock that could not be enforced.
pub struct Unlocked {
    pub chosen: bool,
}

impl Isolation for Unlocked {
    fn probe(&self) -> Probe {
        let line = "unlocked: nothing is enforced; commands run with your own rights".to_owned();
        Probe { lines: vec![line], blocker: None, gaps: Vec::new() }
    }

    fn wrap(&self, _policy: &Policy, command: &[String]) -> Launch {
        Launch {
            argv: Some(command.to_vec()),
            enforcement: Enforcement::Unlocked { chosen: self.chosen },
        }
    }
}

/// `text` with every control character, and every character that reorders text on screen
/// (bidirectional controls), shown as an escape (`\u{1b}`, `\u{202e}`): what a lock wrote (a
/// folder's name, a planted setting) cannot move the cursor, erase a report or set a title
/// where paddock shows it.
pub fn visible(text: &str) -> String {
    let reorders = |c: char| matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || reorders(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// This platform's isolation; `exe` is the paddock binary (the Linux launcher).
pub fn host(exe: std::path::PathBuf) -> Box<dyn Isolation + Send + Sync> {
    #[cfg(target_os = "linux")]
    {
        Box::new(linux::Linux { exe })
    }
    #[cfg(target_os = "macos")]
    {
        let _ = exe;
        Box::new(seatbelt::Seatbelt)
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = exe;
        Box::new(Unsupported)
    }
}
