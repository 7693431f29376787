//! The lock's own PID namespace and its init. After `unshare(CLONE_NEWPID)` the launcher forks:
//! the child is PID 1 of the new namespace and goes on to build the lock; the parent stays
//! outside, passes signals in and exits as the child does. PID 1 forks the program, reaps every
//! orphan the lock leaves it and passes on the signals sent from outside; when the program ends
//! it exits, and the kernel kills whatever else is still in the namespace, so nothing a lock
//! started outlives it. (A program as PID 1 would ignore every default-action signal, and its
//! orphans would be zombies.)
//!
//! Signals are taken from a blocked set (`sigwaitinfo` outside, a signalfd inside, polled with
//! the socket gate's listener): no handler, no global state.

use std::io::Write;
use std::sync::Arc;

use super::sockets::Gate;

/// Passed on to the program when they come from outside (a pane closing, `kill`).
const FORWARDED: &[libc::c_int] = &[
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCONT,
];
/// Job-control stops that the terminal sends its foreground group: they are the program's; the
/// launcher's own processes must not stop with it.
const STOPS: &[libc::c_int] = &[libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];

fn waited() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset and sigaddset initialise and fill it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED.iter().chain(STOPS).chain(&[libc::SIGCHLD]) {
            libc::sigaddset(&mut set, *signal);
        }
        set
    }
}

/// Block the signals the launcher waits for, before it forks, so that none is lost between the
/// fork and the wait.
pub fn block_signals() -> Result<(), String> {
    let set = waited();
    // SAFETY: a valid set; the launcher is single-threaded.
    if unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) } != 0 {
        return Err(format!("cannot block signals: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Fork into the new PID namespace (entered with `unshare` just before). Returns in the child,
/// PID 1 there; the parent stands by outside until the child ends and exits as it did.
pub fn enter() -> Result<(), String> {
    fork_and_stand_by(None)
}

/// Without namespaces (`fallback`): fork before anything is restricted. Returns in the child,
/// which goes on to lock itself and supervise the program; the parent stands by, as outside a
/// PID namespace, and once the child ends removes `leftover` (the pane's temporary folder,
/// which the locked child may empty but not remove: Landlock grants the folder, not its
/// parent) and exits as the child did.
pub fn stand_aside(leftover: std::path::PathBuf) -> Result<(), String> {
    fork_and_stand_by(Some(&leftover))
}

/// Fork; return in the child (ended with its parent); the parent stands by.
fn fork_and_stand_by(leftover: Option<&std::path::Path>) -> Result<(), String> {
    // SAFETY: fork(2) in a single-threaded process.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Err(format!("cannot fork: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        // SAFETY: prctl(2): the launcher's end (SIGKILL from paddock) ends the lock with it.
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
        return Ok(());
    }
    // This process stays outside the lock holding the pane's environment, released secrets
    // included: no other process of the user may read its memory or environment (the child
    // forked before this, so the lock's own /proc files stay the user's to write).
    // SAFETY: prctl(2) with valid arguments.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    stand_by(child, leftover)
}

/// Outside the namespace: pass signals to PID 1 and leave with its status. The terminal's own
/// signals (^C, ^Z, a resize) already reach the program's process group; a hangup goes to the
/// session leader only, which this process is in a pane, so it is passed on.
fn stand_by(init: libc::pid_t, leftover: Option<&std::path::Path>) -> ! {
    loop {
        let Some(info) = wait_signal() else { continue };
        let signal = info.si_signo;
        if signal == libc::SIGCHLD {
            let mut status = 0;
            // SAFETY: waiting for our own child without blocking.
            if unsafe { libc::waitpid(init, &mut status, libc::WNOHANG) } == init {
                if let Some(folder) = leftover {
                    let _ = std::fs::remove_dir_all(folder);
                }
                std::process::exit(exit_code(status));
            }
            continue;
        }
        let from_terminal = info.si_code == libc::SI_KERNEL && signal != libc::SIGHUP;
        if FORWARDED.contains(&signal) && !from_terminal {
            // SAFETY: kill(2) to our own child.
            unsafe { libc::kill(init, signal) };
        }
    }
}

/// Where the lock's supervisor runs.
#[derive(Clone, Debug)]
pub enum Supervisor {
    /// PID 1 of the lock's PID namespace.
    Init,
    /// The launcher's child, a child subreaper, without namespaces (`fallback`; its parent
    /// stands aside, see `stand_aside`): it forwards signals as the launcher outside a
    /// namespace does. `tmp`: the pane's temporary folder.
    Subreaper { tmp: std::path::PathBuf },
}

/// As PID 1 (or the supervisor of a lock without namespaces): fork the program (`start` runs
/// in the child and execs it, or exits), take the socket gate's listener from it (`gate`, in
/// this process), reap every process, answer the gate, pass on signals from outside, and when
/// the program ends, end what it left running and exit with its status.
pub fn run(start: impl FnOnce(), gate: impl FnOnce() -> Option<Gate>, role: Supervisor) -> ! {
    if let Supervisor::Subreaper { .. } = role {
        // SAFETY: prctl(2): orphans of the program become this process's children.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    }
    // SAFETY: fork(2); this process is single-threaded.
    let program = unsafe { libc::fork() };
    if program < 0 {
        let _ = writeln!(
            std::io::stderr(),
            "{} cannot fork: {}; the command did not run",
            super::launch::PREFIX,
            std::io::Error::last_os_error()
        );
        std::process::exit(super::launch::LOCK_FAILED);
    }
    if program == 0 {
        // The program starts as programs expect to: no signal blocked, SIGPIPE at its default
        // (Rust's runtime ignores it in the launcher).
        // SAFETY: an empty set, and signal(2) with a valid disposition.
        unsafe {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        start();
        std::process::exit(super::launch::LOCK_FAILED);
    }
    // The program's ends of what `start` holds are closed here, so that the gate's handoff
    // ends if the program fails before it.
    drop(start);
    let gate = gate().map(Arc::new);
    let signals = signal_fd();
    loop {
        let mut polled = vec![libc::pollfd { fd: signals, events: libc::POLLIN, revents: 0 }];
        if let Some(gate) = &gate {
            polled.push(libc::pollfd { fd: gate.fd(), events: libc::POLLIN, revents: 0 });
        }
        // SAFETY: poll(2) on descriptors we hold.
        if unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as _, -1) } <= 0 {
            continue;
        }
        if let Some(gate) = gate.as_ref().filter(|_| polled.get(1).is_some_and(|p| p.revents != 0))
        {
            gate.serve_one();
        }
        if polled[0].revents != 0 {
            while let Some(info) = read_signal(signals) {
                take_signal(&info, program, &role);
            }
        }
    }
}

/// One signal PID 1 took: a child ended (reap, and leave with the program), or one to pass
/// on. From outside the namespace a sender's pid reads 0. Signals from inside reached their
/// targets themselves; one sent to PID 1 gets nothing, as from any init.
fn take_signal(info: &libc::signalfd_siginfo, program: libc::pid_t, role: &Supervisor) {
    let signal = info.ssi_signo as libc::c_int;
    if signal == libc::SIGCHLD {
        reap_all(program);
        return;
    }
    let from_kernel = info.ssi_code == libc::SI_KERNEL;
    let from_outside = match role {
        Supervisor::Init => !from_kernel && info.ssi_pid == 0,
        // The terminal's own signals reach the program's process group already; a hangup goes
        // to the session leader only, which this process is in a pane.
        Supervisor::Subreaper { .. } => !from_kernel || signal == libc::SIGHUP,
    };
    if FORWARDED.contains(&signal) && from_outside {
        // SAFETY: kill(2) to our own child.
        unsafe { libc::kill(program, signal) };
    }
}

/// The waited signals as a descriptor (they stay blocked, so nothing else takes them).
fn signal_fd() -> libc::c_int {
    let set = waited();
    // SAFETY: signalfd(2) with a valid set.
    unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK) }
}

fn read_signal(fd: libc::c_int) -> Option<libc::signalfd_siginfo> {
    // SAFETY: reading one whole signalfd_siginfo into zeroed plain data.
    unsafe {
        let mut info: libc::signalfd_siginfo = std::mem::zeroed();
        let size = std::mem::size_of::<libc::signalfd_siginfo>();
        let read = libc::read(fd, (&mut info as *mut libc::signalfd_siginfo).cast(), size);
        (read == size as isize).then_some(info)
    }
}

/// Reap every ended child; once the program is among them, end what it left running (in a
/// PID namespace the kernel would, without one nothing else does) and exit with its status.
fn reap_all(program: libc::pid_t) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) for any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if pid == program {
            end_descendants();
            std::process::exit(exit_code(status));
        }
    }
}

/// SIGKILL to every process below this one, found through /proc's children lists (a process
/// the program left becomes this subreaper's child; one whose parent still runs is found
/// below that parent).
fn end_descendants() {
    let children_of = |pid: u32| -> Vec<u32> {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten();
        tasks
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|list| {
                list.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<_>>()
            })
            .collect()
    };
    // Again while any is left: one may have forked between the reading and the kill (its
    // child then comes to this subreaper).
    for _ in 0..8 {
        let mut found = children_of(std::process::id());
        let mut next = 0;
        while next < found.len() && found.len() < 100_000 {
            let below = children_of(found[next]);
            found.extend(below);
            next += 1;
        }
        if found.is_empty() {
            return;
        }
        for pid in found {
            // SAFETY: kill(2) to a process below this one.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
        // SAFETY: waitpid(2) for any ended child, without blocking.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
    }
}

fn wait_signal() -> Option<libc::siginfo_t> {
    let set = waited();
    // SAFETY: a valid set and an out-pointer to zeroed plain data.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        (libc::sigwaitinfo(&set, &mut info) > 0).then_some(info)
    }
}

/// As shells report it: the exit code, or 128 plus the signal that ended the process.
fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        libc::WEXITSTATUS(status)
    }
}
