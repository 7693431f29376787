//! `paddock sandbox run`'s command runs in a session of its own and, where the user's streams
//! are a terminal, on a pseudo-terminal of its own that this process relays to theirs (as
//! `script` does). Nothing in the lock ever holds the user's terminal, so nothing it leaves
//! behind can read what is typed after it returns (a password at the next prompt) or change the
//! terminal's modes. With no terminal the command still gets a session of its own, without one.
//!
//! Signals sent to this process (SIGTERM, a hangup, ^C while the terminal is not in raw mode)
//! are passed to the command; a resize is copied to its terminal.

use std::ffi::OsString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Passed on to the command.
const FORWARDED: &[libc::c_int] =
    &[libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGWINCH];
/// How long the output may keep coming after the command ended (on Linux the lock's last
/// process is gone by then and the output ends at once; elsewhere a leftover may hold it).
const DRAIN: Duration = Duration::from_millis(500);

/// Run `argv` with exactly `env`; returns its exit code (128 plus the signal that ended it).
pub fn run(argv: &[String], env: Vec<(OsString, OsString)>) -> std::io::Result<i32> {
    let set = signal_set();
    // SAFETY: a valid set; no other thread runs yet, so every later thread inherits the mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    // SAFETY: isatty(3) on the standard descriptors.
    let terminals: Vec<i32> = (0..3).filter(|fd| unsafe { libc::isatty(*fd) } == 1).collect();
    let pty = match terminals.first() {
        Some(&user) => Some(Pty::open(user)?),
        None => None,
    };
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).env_clear().envs(env);
    if let Some(pty) = &pty {
        for &fd in &terminals {
            let slave = Stdio::from(pty.slave.try_clone()?);
            match fd {
                0 => command.stdin(slave),
                1 => command.stdout(slave),
                _ => command.stderr(slave),
            };
        }
    }
    let controlling = pty.as_ref().and(terminals.first().copied());
    // SAFETY: between fork and exec only async-signal-safe calls: sigprocmask, setsid, ioctl.
    unsafe {
        command.pre_exec(move || {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(fd) = controlling {
                if libc::ioctl(fd, libc::TIOCSCTTY as _, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let raw = match (&pty, terminals.first()) {
        (Some(_), Some(0)) => RawMode::enter(0),
        _ => None,
    };
    let mut child = command.spawn()?;
    let pid = child.id() as libc::pid_t;
    let output = pty.map(|pty| pty.relay(&terminals)).transpose()?;
    let terminal = terminals.first().copied();
    let master = output.as_ref().map(|o| o.master.try_clone()).transpose()?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || pass_signals(set, pid, terminal, master))?;
    let status = child.wait()?;
    #[cfg(not(target_os = "linux"))]
    {
        // No PID namespace ends the lock's processes here: end what is left in its session.
        // SAFETY: kill(2) to the process group the command led.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    if let Some(output) = output {
        let _ = output.done.recv_timeout(DRAIN);
    }
    drop(raw);
    Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset and sigaddset initialise and fill it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in FORWARDED {
            libc::sigaddset(&mut set, *signal);
        }
        set
    }
}

fn pass_signals(
    set: libc::sigset_t,
    child: libc::pid_t,
    terminal: Option<i32>,
    master: Option<File>,
) {
    loop {
        let mut signal = 0;
        // SAFETY: a valid, initialised set and an out-pointer.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            continue;
        }
        match (signal, terminal, &master) {
            (libc::SIGWINCH, Some(terminal), Some(master)) => {
                copy_size(terminal, master.as_raw_fd())
            }
            (libc::SIGWINCH, ..) => {}
            // SAFETY: kill(2) to our own child (not yet reaped while this thread may run).
            (signal, ..) => unsafe {
                libc::kill(child, signal);
            },
        }
    }
}

fn copy_size(from: i32, to: i32) {
    // SAFETY: TIOCGWINSZ fills a zeroed winsize; TIOCSWINSZ reads it.
    unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        if libc::ioctl(from, libc::TIOCGWINSZ, &mut size) == 0 {
            libc::ioctl(to, libc::TIOCSWINSZ, &size);
        }
    }
}

struct Pty {
    master: File,
    slave: File,
}

impl Pty {
    /// A new pseudo-terminal with the size and modes of the user's terminal `user`.
    fn open(user: i32) -> std::io::Result<Pty> {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty(3) fills two descriptors; tcgetattr/ioctl fill zeroed plain data.
        unsafe {
            let mut modes: libc::termios = std::mem::zeroed();
            let mut size: libc::winsize = std::mem::zeroed();
            let modes_ptr = if libc::tcgetattr(user, &mut modes) == 0 {
                &mut modes as *mut libc::termios
            } else {
                std::ptr::null_mut()
            };
            let size_ptr = if libc::ioctl(user, libc::TIOCGWINSZ, &mut size) == 0 {
                &mut size as *mut libc::winsize
            } else {
                std::ptr::null_mut()
            };
            let opened = libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                modes_ptr as _,
                size_ptr as _,
            );
            if opened != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for fd in [master, slave] {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
            Ok(Pty {
                master: File::from(OwnedFd::from_raw_fd(master)),
                slave: File::from(OwnedFd::from_raw_fd(slave)),
            })
        }
    }

    /// Start copying: the user's input (when stdin is a terminal) to the command, its output to
    /// the user's first terminal among stdout and stderr. The slave is closed here, so the
    /// output ends when the lock's last process lets go of it.
    fn relay(self, terminals: &[i32]) -> std::io::Result<Output> {
        let Pty { master, slave } = self;
        drop(slave);
        let resize = master.try_clone()?;
        if terminals.contains(&0) {
            let mut to_command = master.try_clone()?;
            let mut input = File::from(std::io::stdin().as_fd().try_clone_to_owned()?);
            std::thread::Builder::new().name("input".into()).spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n @ 1..) = input.read(&mut buf) {
                    if to_command.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            })?;
        }
        let shown = terminals.iter().copied().find(|fd| *fd > 0);
        let mut out = match shown {
            Some(1) => Some(File::from(std::io::stdout().as_fd().try_clone_to_owned()?)),
            Some(_) => Some(File::from(std::io::stderr().as_fd().try_clone_to_owned()?)),
            None => None,
        };
        let (finished, done) = crossbeam_channel::bounded(1);
        let mut from_command = master;
        std::thread::Builder::new().name("output".into()).spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            // EIO once the last holder of the slave has closed it.
            while let Ok(n @ 1..) = from_command.read(&mut buf) {
                if let Some(out) = out.as_mut() {
                    let _ = out.write_all(&buf[..n]);
                }
            }
            let _ = finished.send(());
        })?;
        Ok(Output { master: resize, done })
    }
}

/// The relay's running side: the master (to copy resizes to) and a message when the output
/// has ended.
struct Output {
    master: File,
    done: crossbeam_channel::Receiver<()>,
}

/// The user's terminal in raw mode while the command runs (its own terminal does the cooking);
/// restored when dropped.
struct RawMode {
    fd: i32,
    saved: libc::termios,
}

impl RawMode {
    fn enter(fd: i32) -> Option<RawMode> {
        // SAFETY: tcgetattr fills zeroed plain data; cfmakeraw and tcsetattr use it.
        unsafe {
            let mut saved: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(fd, &mut saved) != 0 {
                return None;
            }
            let mut raw = saved;
            libc::cfmakeraw(&mut raw);
            (libc::tcsetattr(fd, libc::TCSANOW, &raw) == 0).then_some(RawMode { fd, saved })
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restoring the modes read in `enter` on the same descriptor.
        unsafe { libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.saved) };
    }
}
