//! A pane split from a locked pane is locked the same way: its program gets the thread's lock
//! and environment allow-list (never its secrets), and starts where the locked program really
//! is, as the kernel says, not where the program says it is (OSC 7 is the program's to write).

use std::path::{Path, PathBuf};

use crate::config::{ClipboardRule, LockPolicy, ThreadSpec};
use crate::pty::PaneSession;

/// The lock a split inherits from the pane it was split from.
#[derive(Clone, Debug)]
pub struct InheritedLock {
    /// The thread whose lock (and home) it is.
    pub thread: String,
    pub lock: LockPolicy,
    pub env_pass: Vec<String>,
    /// What its clipboard writes do, as in the pane it was split from.
    pub clipboard: ClipboardRule,
}

/// What a split of a pane running `thread` inherits: its lock, if it has one.
pub fn inherited(thread: Option<&ThreadSpec>) -> Option<InheritedLock> {
    let thread = thread?;
    let mut lock = thread.lock.clone()?;
    // Its worktree, which the thread's pane made when it started.
    let worktree = thread.worktree.as_ref().and_then(crate::app::worktree::existing);
    lock.write.extend(worktree.filter(|w| !lock.write.contains(w)));
    let clipboard = thread.clipboard_rule();
    let name = thread.name.clone();
    Some(InheritedLock { thread: name, lock, env_pass: thread.env_pass.clone(), clipboard })
}

/// Why no pane may be opened from a pane of `thread` when it runs on another host: a split or
/// tab would run here, with none of its lock (which is the host's), named after the thread.
pub fn remote_source(thread: Option<&ThreadSpec>) -> Option<String> {
    let remote = thread?.remote.as_ref()?;
    Some(format!(
        "this pane runs on {}: a pane opened from it would run here, outside its lock; open \
         threads on that host from the configuration",
        remote.host.name
    ))
}

/// Where the split starts: the locked program's working folder as the kernel knows it, when
/// the lock shows that folder; else the lock's first writable folder.
pub fn start_dir(session: &PaneSession, lock: &LockPolicy) -> Option<PathBuf> {
    let kernel = session
        .pid()
        .map(locked_program)
        .and_then(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).ok());
    kernel.filter(|dir| shown_by(lock, dir)).or_else(|| lock.write.first().cloned())
}

/// The program of a locked pane whose process is `launcher`: on Linux the launcher waits
/// outside the lock's PID namespace, its child is the lock's init, and the init's first child
/// is the program. Elsewhere (and if the chain cannot be read) the pane's process itself.
fn locked_program(launcher: u32) -> u32 {
    let first_child = |pid: u32| {
        let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
        children.split_whitespace().next()?.parse::<u32>().ok()
    };
    first_child(launcher).and_then(first_child).unwrap_or(launcher)
}

/// Whether `dir` is one of the lock's folders or inside one, compared in canonical form.
fn shown_by(lock: &LockPolicy, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else { return false };
    lock.write
        .iter()
        .chain(&lock.read)
        .filter_map(|f| f.canonicalize().ok())
        .any(|f| dir.starts_with(f))
}
