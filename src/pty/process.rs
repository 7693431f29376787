//! Signalling a pane's processes and seeing its program exit, without ever reaping it early.
//!
//! A pane's program leads its own session (portable-pty calls setsid). An interactive shell puts
//! each job in its own process group, so "the pane's processes" is the session, not one group:
//! closing a pane signals every process group in it and, on Linux, every process still in the
//! session. A process that starts a new session of its own (a daemon) has left the pane and is
//! not signalled. The program is not reaped until the pane closes, so its pid, which is also the
//! session id and its group id, cannot be reused by a stranger while we may signal it.

use portable_pty::Child;

use super::PaneStatus;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Signal {
    Hangup,
    Kill,
}

/// Signal the session the child leads: every process in it (Linux), else its process group.
#[cfg(unix)]
pub(super) fn signal_session(child: &mut (dyn Child + Send + Sync), signal: Signal) {
    let Some(leader) = child.process_id().and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let signo = match signal {
        Signal::Hangup => libc::SIGHUP,
        Signal::Kill => libc::SIGKILL,
    };
    // Processes fork while we signal them; a few rounds catch the children of the last one.
    let rounds = if signal == Signal::Kill { 4 } else { 1 };
    for _ in 0..rounds {
        kill(-leader, signo);
        let members = session_members(leader);
        for &(pid, group) in &members {
            if group != leader {
                kill(-group, signo);
            }
            kill(pid, signo);
        }
        if members.iter().all(|&(pid, _)| pid == leader) {
            break;
        }
    }
}

/// Whether any process other than the (exited) leader is still in the session: what the
/// hangup grace period waits for. Where members cannot be listed, only the leader counts.
#[cfg(unix)]
pub(super) fn session_has_others(leader: u32) -> bool {
    let Ok(leader) = i32::try_from(leader) else {
        return false;
    };
    session_members(leader).iter().any(|&(pid, _)| pid != leader)
}

#[cfg(not(unix))]
pub(super) fn session_has_others(_leader: u32) -> bool {
    false
}

#[cfg(unix)]
fn kill(pid: i32, signo: i32) {
    // SAFETY: kill(2) sends a signal; it touches no memory.
    unsafe {
        libc::kill(pid, signo);
    }
}

/// Every live process of session `sid`, with its process group: `/proc/*/stat`, fields 5 and 6.
#[cfg(target_os = "linux")]
fn session_members(sid: i32) -> Vec<(i32, i32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: the fields start after the last ')'.
        let Some((_, fields)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = fields.split_whitespace().collect();
        let (Some(state), Some(group), Some(session)) =
            (fields.first(), fields.get(2), fields.get(3))
        else {
            continue;
        };
        if *state == "Z" || session.parse() != Ok(sid) {
            continue;
        }
        if let Ok(group) = group.parse() {
            members.push((pid, group));
        }
    }
    members
}

/// Elsewhere the process group is what can be found cheaply; jobs in other groups of the
/// session are reached only through the hangup the shell passes on.
#[cfg(all(unix, not(target_os = "linux")))]
fn session_members(_sid: i32) -> Vec<(i32, i32)> {
    Vec::new()
}

#[cfg(not(unix))]
pub(super) fn signal_session(child: &mut (dyn Child + Send + Sync), _signal: Signal) {
    let _ = child.kill();
}

/// Whether the child `pid` has exited, without reaping it: `Some(Running)` or `Some(Exited)`,
/// or `None` where this check is not available.
#[cfg(any(target_os = "linux", target_os = "macos"))]
pub(super) fn peek_exit(pid: u32) -> Option<PaneStatus> {
    let id = libc::id_t::try_from(pid).ok()?;
    // SAFETY: an all-zero siginfo_t is valid, and waitid only writes into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waitid with a valid pointer; WNOWAIT leaves the child waitable (and its pid taken).
    if unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) } != 0 {
        return None;
    }
    let (exited_pid, code) = siginfo_parts(&info);
    if exited_pid == 0 {
        return Some(PaneStatus::Running);
    }
    Some(PaneStatus::Exited((info.si_code == libc::CLD_EXITED).then_some(code)))
}

#[cfg(target_os = "linux")]
fn siginfo_parts(info: &libc::siginfo_t) -> (libc::pid_t, i32) {
    // SAFETY: for a SIGCHLD-style siginfo from waitid these fields are the ones set.
    unsafe { (info.si_pid(), info.si_status()) }
}

#[cfg(target_os = "macos")]
fn siginfo_parts(info: &libc::siginfo_t) -> (libc::pid_t, i32) {
    (info.si_pid, info.si_status)
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
pub(super) fn peek_exit(_pid: u32) -> Option<PaneStatus> {
    None
}
