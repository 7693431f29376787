//! Everything a lock started ends with it, and the user's terminal is never inside it: the lock
//! has a PID namespace of its own whose init ends with the command, and `paddock sandbox run`
//! gives the command a terminal of its own behind a relay.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Fixture, PADDOCK};

fn run_shell(fx: &Fixture, script: &str) -> std::process::Output {
    let lock = fx.lock.display().to_string();
    Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", &lock, "--", "/bin/sh", "-c", script])
        .env("HOME", &fx.home)
        .current_dir(&fx.lock)
        .stdin(Stdio::null())
        .output()
        .expect("run paddock sandbox")
}

/// A daemon that leaves the command's session (`setsid`) and would act a second later is gone
/// when the command returns; the same daemon waited for does act (the positive control).
#[test]
fn a_daemon_the_lock_started_ends_with_it() {
    let fx = Fixture::new("lifetime");
    let late = fx.lock.join("late");
    let daemon = format!("setsid /bin/sh -c 'sleep 1; echo late > {}' &", late.display());
    let out = run_shell(&fx, &format!("{daemon} exit 0"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!late.exists(), "the daemon outlived the lock");

    let out = run_shell(&fx, &format!("{daemon} wait"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&late).expect("the waited daemon wrote"), "late\n");
}

/// The command's exit code comes back through the lock's init and the relay.
#[test]
fn the_commands_exit_code_comes_back() {
    let fx = Fixture::new("exit-code");
    assert_eq!(run_shell(&fx, "exit 7").status.code(), Some(7));
    assert_eq!(run_shell(&fx, "kill -TERM $$").status.code(), Some(128 + 15));
}

/// A pseudo-terminal standing in for the user's: the master (what the user's terminal app
/// holds) and the slave (what the shell and `paddock sandbox run` read from).
struct UserTerminal {
    master: File,
    slave: File,
    slave_name: String,
}

impl UserTerminal {
    fn open() -> UserTerminal {
        // SAFETY: posix_openpt and friends on a fresh descriptor; the slave is opened by name.
        unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(master >= 0, "openpt");
            assert_eq!(libc::grantpt(master), 0);
            assert_eq!(libc::unlockpt(master), 0);
            let name = std::ffi::CStr::from_ptr(libc::ptsname(master)).to_owned();
            let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
            assert!(slave >= 0, "open the slave");
            libc::fcntl(master, libc::F_SETFL, libc::O_NONBLOCK);
            UserTerminal {
                master: File::from(OwnedFd::from_raw_fd(master)),
                slave: File::from(OwnedFd::from_raw_fd(slave)),
                slave_name: name.to_string_lossy().into_owned(),
            }
        }
    }

    /// What the terminal app has received so far, read until `until` shows or a minute passes.
    fn read_until(&mut self, until: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while Instant::now() < deadline && !String::from_utf8_lossy(&seen).contains(until) {
            match self.master.read(&mut buf) {
                Ok(n) if n > 0 => seen.extend_from_slice(&buf[..n]),
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        String::from_utf8_lossy(&seen).into_owned()
    }
}

/// Run from a terminal, the command sees a terminal of its own, never the user's; a process it
/// leaves reading the terminal gets nothing typed after the command returned: the user's next
/// program (here: the test) reads it.
#[test]
fn keys_typed_after_the_command_returned_stay_with_the_user() {
    let fx = Fixture::new("terminal");
    let mut user = UserTerminal::open();
    let leaked = fx.lock.join("leaked");
    let lock = fx.lock.display().to_string();
    let script = format!(
        "tty; setsid /bin/sh -c 'cat > {}' < /dev/stdin & sleep 0.5; echo done",
        leaked.display()
    );
    let stdio = || Stdio::from(user.slave.try_clone().expect("slave"));
    let status = Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", &lock, "--", "/bin/sh", "-c", &script])
        .env("HOME", &fx.home)
        .current_dir(&fx.lock)
        .stdin(stdio())
        .stdout(stdio())
        .stderr(stdio())
        .status()
        .expect("run paddock sandbox");
    assert!(status.success());
    let shown = user.read_until("done");
    let inner = shown.lines().find(|l| l.starts_with("/dev/")).unwrap_or_default().trim();
    assert!(inner.starts_with("/dev/pts/"), "the command has a terminal: {shown:?}");
    assert_ne!(inner, user.slave_name, "the command's terminal is not the user's");

    user.master.write_all(b"hunter2\n").expect("type");
    let mut typed = [0u8; 64];
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut next_program = Vec::new();
    // SAFETY: poll(2) on the slave, then a read that will not block.
    while Instant::now() < deadline && !next_program.ends_with(b"\n") {
        let mut fd = libc::pollfd { fd: user.slave.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        if unsafe { libc::poll(&mut fd, 1, 100) } == 1 {
            let n = user.slave.read(&mut typed).expect("read the terminal");
            next_program.extend_from_slice(&typed[..n]);
        }
    }
    assert_eq!(String::from_utf8_lossy(&next_program), "hunter2\n");
    let stolen = std::fs::read_to_string(&leaked).unwrap_or_default();
    assert!(!stolen.contains("hunter2"), "the leftover read the password: {stolen:?}");
}
