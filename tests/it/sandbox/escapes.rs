//! The escape suite. Each case names the attack, the probe's expected line, and what is checked
//! from outside. Expected errors: ENOENT where the lock's view does not have the path at all
//! (outside files, /run, paddock's binary), EACCES where Landlock refuses (other processes'
//! /proc files, other terminals), EROFS for read-only mounts, EBUSY for protected paths (mount
//! points), EPERM for the seccomp filter and dropped capabilities.

use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{check, snapshot, state, Fixture, PADDOCK, PROBE, PYTHON};

#[test]
fn files_outside_the_lock_cannot_be_read_or_changed_and_inside_they_can() {
    let fx = Fixture::new("files");
    let before = snapshot(&fx.outside);
    let rc = fx.home.join(".bashrc");
    let rc_before = state(&rc);
    let (outside, secret) = (fx.path("outside"), fx.path("outside/secret.txt"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        // Positive controls.
        (vec!["read".into(), fx.path("lock/file.txt")], "ok 6"),
        (vec!["read".into(), fx.path("ro/data.txt")], "ok 4"),
        (vec!["write".into(), fx.path("lock/new.txt")], "ok"),
        (vec!["mkdir".into(), fx.path("lock/sub/dir")], "ok"),
        (vec!["rename".into(), fx.path("lock/new.txt"), fx.path("lock/sub/moved.txt")], "ok"),
        (vec!["write".into(), "/tmp/scratch".into()], "ok"),
        (vec!["write".into(), "/dev/shm/scratch".into()], "ok"),
        // Reading outside: the files are not in the lock's view at all.
        (vec!["read".into(), secret.clone()], "err ENOENT"),
        (vec!["read".into(), fx.path("outside/.ssh/id_rsa")], "err ENOENT"),
        (vec!["listdir".into(), outside.clone()], "err ENOENT"),
        (vec!["read".into(), format!("/proc/self/root{secret}")], "err ENOENT"),
        // The home folder is an empty stand-in (whatever is written there stays in the view:
        // the real ~/.bashrc is checked below).
        (vec!["read".into(), rc.display().to_string()], "err ENOENT"),
        // Changing outside.
        (vec!["write".into(), secret.clone()], "err ENOENT"),
        (vec!["append".into(), secret.clone()], "err ENOENT"),
        (vec!["truncate".into(), secret.clone()], "err ENOENT"),
        (vec!["delete".into(), secret.clone()], "err ENOENT"),
        (vec!["chmod".into(), secret.clone()], "err ENOENT"),
        (vec!["touch".into(), secret.clone()], "err ENOENT"),
        (vec!["setxattr".into(), secret.clone()], "err ENOENT"),
        // Read-only folders stay read-only.
        (vec!["write".into(), fx.path("ro/data.txt")], "err EROFS"),
        (vec!["chmod".into(), fx.path("ro/data.txt")], "err EROFS"),
        (vec!["touch".into(), fx.path("ro/data.txt")], "err EROFS"),
        (vec!["delete".into(), fx.path("ro/data.txt")], "err EROFS"),
        // Links and renames across the boundary.
        (vec!["symlink".into(), secret.clone(), fx.path("lock/link")], "ok"),
        (vec!["read".into(), fx.path("lock/link")], "err ENOENT"),
        (vec!["hardlink".into(), secret.clone(), fx.path("lock/hard")], "err ENOENT"),
        (
            vec!["rename".into(), fx.path("lock/file.txt"), format!("{outside}/stolen")],
            "err ENOENT",
        ),
        (vec!["rename".into(), fx.path("lock/file.txt"), fx.path("ro/stolen")], "err EXDEV"),
        (vec!["hardlink".into(), fx.path("ro/data.txt"), fx.path("lock/data-link")], "err EXDEV"),
        // Devices.
        (vec!["mknod".into(), fx.path("lock/null")], "err EPERM"),
        (vec!["write".into(), "/dev/null".into()], "ok"),
        (vec!["read".into(), "/dev/sda".into()], "err ENOENT"),
        // The kernel's key lists (the vault's keys by name and size) are covered.
        (vec!["read".into(), "/proc/keys".into()], "err EACCES"),
        (vec!["read".into(), "/proc/key-users".into()], "err EACCES"),
    ];
    check(&fx, &[], &cases);
    // Attempts whose answer depends on where the stand-in lies (read-only root, or the pane's
    // own /tmp): what matters is that the real files do not change.
    fx.probe(&["write", &rc.display().to_string()]);
    fx.probe(&["append", &rc.display().to_string()]);
    assert_eq!(snapshot(&fx.outside), before, "nothing outside changed");
    assert_eq!(state(&rc), rc_before, "~/.bashrc unchanged");
    let moved = std::fs::read_to_string(fx.lock.join("sub/moved.txt")).expect("written inside");
    assert_eq!(moved, "pwned", "the write inside reached the real folder");
    assert!(fx.lock.join("file.txt").exists(), "renames out failed");
}

#[test]
fn protected_paths_inside_the_lock_stay_as_they_are() {
    let mut fx = Fixture::new("protected");
    fx.config_home = fx.lock.join(".config");
    // A worktree inside the lock: its `.git` file names the repository.
    let worktree = fx.root.join("worktree");
    std::fs::create_dir_all(&worktree).expect("worktree");
    std::fs::write(worktree.join(".git"), "gitdir: /elsewhere\n").expect(".git file");
    let worktree_lock = worktree.display().to_string();
    let config = fx.lock.join(".config/paddock");
    std::fs::create_dir_all(&config).expect("paddock config folder");
    std::fs::write(config.join("config.ron"), "()").expect("config");
    let protect = fx.path("lock/notes.md");
    std::fs::write(&protect, "keep").expect("notes");
    // The home's ~/.ssh kept in the lock folder, as dotfile managers link it: paddock's server
    // runs ssh, and ~/.ssh/config says what that runs (ProxyCommand).
    let ssh = fx.lock.join("dotfiles/ssh");
    std::fs::create_dir_all(&ssh).expect("ssh folder");
    std::fs::write(ssh.join("config"), "Host *\n").expect("ssh config");
    std::os::unix::fs::symlink(&ssh, fx.home.join(".ssh")).expect("~/.ssh linked");
    let before = snapshot(&fx.lock.join(".git"));
    let config_before = state(&config.join("config.ron"));
    let extra = ["--protect", protect.as_str(), "--write", worktree_lock.as_str()];
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["write".into(), fx.path("lock/.git/hooks/pre-commit")], "err EROFS"),
        (vec!["write".into(), fx.path("lock/.git/config")], "err EROFS"),
        (vec!["append".into(), fx.path("lock/.git/config")], "err EROFS"),
        (vec!["rename".into(), fx.path("lock/.git/hooks"), fx.path("lock/.git/h2")], "err EBUSY"),
        (vec!["rmtree".into(), fx.path("lock/.git/hooks")], "err EBUSY"),
        // Nor can the folder holding them be swapped for a fresh one.
        (vec!["rename".into(), fx.path("lock/.git"), fx.path("lock/git2")], "err EBUSY"),
        (vec!["rename".into(), fx.path("lock/.config"), fx.path("lock/c2")], "err EBUSY"),
        (vec!["rename".into(), fx.path("lock/file.txt"), fx.path("lock/.git/config")], "err EXDEV"),
        (vec!["delete".into(), fx.path("lock/.git/config")], "err EBUSY"),
        // paddock's own configuration, inside the lock here, cannot be rewritten.
        (vec!["write".into(), fx.path("lock/.config/paddock/config.ron")], "err EROFS"),
        (vec!["write".into(), protect.clone()], "err EROFS"),
        (vec!["write".into(), format!("{worktree_lock}/.git")], "err EROFS"),
        (vec!["delete".into(), format!("{worktree_lock}/.git")], "err EBUSY"),
        (vec!["append".into(), fx.path("lock/dotfiles/ssh/config")], "err EROFS"),
        (vec!["write".into(), fx.path("lock/dotfiles/ssh/authorized_keys")], "err EROFS"),
        (vec!["rename".into(), fx.path("lock/dotfiles/ssh"), fx.path("lock/s2")], "err EXDEV"),
        (vec!["rename".into(), fx.path("lock/dotfiles"), fx.path("lock/d2")], "err EBUSY"),
        // Positive control: the rest of the repository folder is writable.
        (vec!["write".into(), fx.path("lock/.git/HEAD")], "ok"),
    ];
    check(&fx, &extra, &cases);
    let after: Vec<_> =
        snapshot(&fx.lock.join(".git")).into_iter().filter(|(p, _)| !p.ends_with("HEAD")).collect();
    assert_eq!(after, before, "hooks and config unchanged");
    assert_eq!(state(&config.join("config.ron")), config_before);
    assert_eq!(std::fs::read_to_string(&protect).expect("notes"), "keep");
    let git_file = std::fs::read_to_string(worktree.join(".git")).expect(".git file");
    assert_eq!(git_file, "gitdir: /elsewhere\n");
    assert_eq!(std::fs::read_to_string(ssh.join("config")).expect("ssh config"), "Host *\n");
    assert!(!ssh.join("authorized_keys").exists());
}

/// A home without ~/.ssh gets one before the lock starts (0700, as ssh makes it), so a lock
/// that covers the home covers it, rather than letting the locked program make it.
#[test]
fn a_missing_ssh_folder_is_made_before_the_lock() {
    let fx = Fixture::new("ssh-made");
    assert!(!fx.home.join(".ssh").exists());
    assert_eq!(fx.probe(&["write", &fx.path("lock/ran")]), "ok");
    let made = std::fs::metadata(fx.home.join(".ssh")).expect("~/.ssh made");
    assert!(made.is_dir());
    assert_eq!(made.mode() & 0o777, 0o700);
}

/// A protection that could not hold is no protection: a protected path that does not exist
/// (it could be created) or is a symbolic link (it could be swapped) refuses the whole lock,
/// and the command does not run.
#[test]
fn protections_that_could_not_hold_refuse_the_lock() {
    let fx = Fixture::new("unprotectable");
    std::os::unix::fs::symlink(fx.lock.join("file.txt"), fx.lock.join("alias")).expect("link");
    let cases = [
        ("lock/missing.env", "does not exist, so nothing could stop its creation"),
        ("lock/alias", "is a symbolic link, so nothing could stop its replacement"),
    ];
    for (path, why) in cases {
        let path = fx.path(path);
        let out = fx.run(&["--protect", &path], &["write", &fx.path("lock/ran")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{stderr}");
        assert!(stderr.contains(&format!("Refused: the protected path {path} {why}")), "{stderr}");
        assert!(!fx.lock.join("ran").exists(), "the command did not run");
    }
}

#[test]
fn processes_outside_the_lock_are_out_of_reach() {
    let fx = Fixture::new("processes");
    let mut victim = Command::new("sleep").arg("60").spawn().expect("victim");
    let pid = victim.id().to_string();
    let me = std::process::id().to_string();
    // The lock has a PID namespace of its own: processes outside it have no pid there.
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["kill".into(), pid.clone()], "err ESRCH"),
        (vec!["ptrace".into(), pid.clone()], "err EPERM"),
        (vec!["read".into(), format!("/proc/{pid}/environ")], "err ENOENT"),
        (vec!["read".into(), format!("/proc/{me}/environ")], "err ENOENT"),
        (vec!["read".into(), format!("/proc/{me}/mem")], "err ENOENT"),
        (vec!["listdir".into(), format!("/proc/{me}/root/")], "err ENOENT"),
        (vec!["listdir".into(), format!("/proc/{me}/cwd/")], "err ENOENT"),
        // Only the lock's own processes: its init (the launcher) and the probe.
        (vec!["pids".into()], "ok 1 2"),
        (vec!["unshare".into()], "err EPERM"),
        (vec!["tiocsti".into()], "err EPERM"),
        (vec!["keyctl".into()], "err EPERM"),
        // The same call through the x32 ABI, which the rules by number would not see.
        #[cfg(target_arch = "x86_64")]
        (vec!["x32_keyctl".into()], "err EPERM"),
        (vec!["io_uring".into()], "err EPERM"),
        // No capability, and no way to gain one (setuid binaries, file capabilities).
        (vec!["status".into(), "CapEff".into()], "ok 0000000000000000"),
        (vec!["status".into(), "CapBnd".into()], "ok 0000000000000000"),
        (vec!["status".into(), "NoNewPrivs".into()], "ok 1"),
        // paddock is there (for `paddock ctl notify`), but never writable, and its launcher
        // cannot make a wider lock from inside: no new user namespace (exit 125).
        (vec!["chmod".into(), PADDOCK.into()], "err EROFS"),
        (
            vec![
                "spawn".into(),
                PADDOCK.into(),
                "__sandbox-exec".into(),
                "--policy".into(),
                "{}".into(),
                "--".into(),
                "/bin/true".into(),
            ],
            "ok 125",
        ),
        // Positive control: its own children it may signal.
        (vec!["spawn".into(), "/bin/sh".into(), "-c".into(), "sleep 5 & kill $!".into()], "ok 0"),
    ];
    check(&fx, &[], &cases);
    assert!(victim.try_wait().expect("victim").is_none(), "the victim is alive");
    let _ = victim.kill();
    let _ = victim.wait();
}

#[test]
fn no_fd_leaks_in_and_another_terminal_cannot_be_opened() {
    let fx = Fixture::new("fds");
    // A file descriptor the launcher inherits (as from a careless parent) is closed.
    let secret = std::ffi::CString::new(fx.path("outside/secret.txt")).expect("path");
    let mut command = Command::new(PADDOCK);
    let lock = fx.lock.display().to_string();
    command.args(["sandbox", "run", "--write", &lock, "--", PYTHON, "-c", PROBE, "fds"]);
    // SAFETY: open(2) and dup2(2) in the child between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            let fd = libc::open(secret.as_ptr(), libc::O_RDONLY);
            if fd >= 0 {
                libc::dup2(fd, 9);
            }
            Ok(())
        });
    }
    let out = command.stdin(Stdio::null()).output().expect("run");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok 0 1 2 3",
        "only stdio (and the listing's own)"
    );
    // Another pane's terminal: a pseudo-terminal of the host.
    // SAFETY: posix_openpt and friends on a fresh descriptor.
    let pts = unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "openpt");
        libc::grantpt(master);
        libc::unlockpt(master);
        std::ffi::CStr::from_ptr(libc::ptsname(master)).to_string_lossy().into_owned()
    };
    // Not there at all: the lock's /dev/pts holds its pane's terminal alone (a terminal it
    // could see, it could watch with inotify, learning when each key is typed).
    assert_eq!(fx.probe(&["write", &pts]), "err ENOENT");
    assert_eq!(fx.probe(&["read", &pts]), "err ENOENT");
}

/// A program that runs another in a terminal of its own (an agent's shell tool, tmux, script)
/// gets one: from the lock's own devpts, never one of the host's; the lock's `/dev/pts` holds
/// its own terminal alone. Run in a terminal (`script`), as in a pane.
#[test]
fn a_locked_program_makes_terminals_of_its_own() {
    let fx = Fixture::new("ptys");
    let probe = "import os, pty\nprint('listed', os.listdir('/dev/pts') == [os.ttyname(0).split('/')[-1]])\npid, fd = pty.fork()\nif pid == 0:\n    os.execvp('tty', ['tty'])\nout = b''\nwhile True:\n    try:\n        data = os.read(fd, 1024)\n    except OSError:\n        break\n    if not data:\n        break\n    out += data\nos.waitpid(pid, 0)\nprint('inner', out.decode().strip())";
    std::fs::write(fx.lock.join("ptys.py"), probe).expect("probe");
    let inside = format!(
        "{PADDOCK} sandbox run --write {lock} -- {PYTHON} {lock}/ptys.py",
        lock = fx.lock.display()
    );
    let out = Command::new("script")
        .args(["-qec", &inside, "/dev/null"])
        .current_dir(&fx.lock)
        .stdin(Stdio::null())
        .output()
        .expect("script runs");
    let said = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(
        said.contains("listed True\ninner /dev/.paddock-pts/"),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_network_is_off_but_localhost_inside_the_pane_works() {
    let fx = Fixture::new("network");
    let host = TcpListener::bind("127.0.0.1:0").expect("host listener");
    host.set_nonblocking(true).expect("nonblocking");
    let port = host.local_addr().expect("addr").port().to_string();
    let unix = UnixListener::bind(fx.outside.join("host.sock")).expect("unix listener");
    unix.set_nonblocking(true).expect("nonblocking");
    let control = crate::headless::Runtime::new();
    let instance = control.start(&["-e", "sleep", "60"]);
    let control_socket = instance.socket.display().to_string();
    let abstract_name = format!("@paddock-escape-{}", std::process::id());
    let abstract_listener = {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name[1..])
            .expect("abstract address");
        UnixListener::bind_addr(&addr).expect("abstract listener")
    };
    abstract_listener.set_nonblocking(true).expect("nonblocking");
    let cases: Vec<(Vec<String>, &str)> = vec![
        // Positive control: a server inside the pane, on its own loopback.
        (vec!["loopback_server".into()], "ok hi"),
        // The host's loopback is another one: nothing listens there.
        (vec!["tcp".into(), "127.0.0.1".into(), port.clone()], "err ECONNREFUSED"),
        (vec!["tcp".into(), "1.1.1.1".into(), "80".into()], "err ENETUNREACH"),
        (vec!["udp".into(), "1.1.1.1".into(), "53".into()], "err ENETUNREACH"),
        (vec!["socket".into(), "raw".into()], "err EPERM"),
        (vec!["socket".into(), "packet".into()], "err EPERM"),
        (vec!["socket".into(), "netlink".into()], "err EPERM"),
        (vec!["socket".into(), "mptcp".into()], "err EPERM"),
        (vec!["unix".into(), fx.path("outside/host.sock")], "err ENOENT"),
        (vec!["unix".into(), control_socket.clone()], "err ENOENT"),
        (vec!["unix".into(), abstract_name.clone()], "err ECONNREFUSED"),
        (vec!["listdir".into(), "/run".into()], "err ENOENT"),
    ];
    check(&fx, &[], &cases);
    assert!(host.accept().is_err(), "the host's TCP listener received nothing");
    assert!(unix.accept().is_err(), "the host's unix listener received nothing");
    assert!(abstract_listener.accept().is_err(), "the abstract listener received nothing");
    assert!(fx.probe(&["dns", "example.com"]).starts_with("err"), "no name resolution");

    // Positive control: a socket the lock lets through is reached, and only that one.
    let allowed = UnixListener::bind(fx.outside.join("allowed.sock")).expect("allowed listener");
    let allowed_path = fx.path("outside/allowed.sock");
    let reader = std::thread::spawn(move || {
        let (mut stream, _) = allowed.accept().expect("accept");
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        got
    });
    let through = ["--socket", allowed_path.as_str()];
    assert_eq!(fx.probe_with(&through, &["unix", &allowed_path]), "ok");
    assert_eq!(reader.join().expect("reader"), "pwned");
    assert_eq!(fx.probe_with(&through, &["unix", &fx.path("outside/host.sock")]), "err ENOENT");

    // A port opened inside cannot be reached from the host.
    let lock = fx.lock.display().to_string();
    let mut inside = Command::new(PADDOCK)
        .args([
            "sandbox", "run", "--write", &lock, "--", PYTHON, "-c", PROBE, "listen", "47613", "3",
        ])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .expect("listen inside");
    let mut line = String::new();
    BufReader::new(inside.stdout.as_mut().expect("stdout")).read_line(&mut line).expect("line");
    assert_eq!(line.trim(), "ok listening");
    let reached = TcpStream::connect_timeout(
        &"127.0.0.1:47613".parse().expect("addr"),
        Duration::from_secs(1),
    );
    assert!(reached.is_err(), "the host reached a port inside the lock");
    let _ = inside.wait();
    drop(instance);
}

#[test]
fn with_the_network_on_tcp_works_and_the_files_stay_locked() {
    let fx = Fixture::new("network-on");
    let host = TcpListener::bind("127.0.0.1:0").expect("host listener");
    let port = host.local_addr().expect("addr").port().to_string();
    let accept = std::thread::spawn(move || {
        let (mut stream, _) = host.accept().expect("accept");
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        got
    });
    let found = fx.probe_with(&["--net", "on"], &["tcp", "127.0.0.1", &port]);
    assert_eq!(found, "ok");
    assert_eq!(accept.join().expect("accept thread"), "pwned");
    assert_eq!(
        fx.probe_with(&["--net", "on"], &["read", &fx.path("outside/secret.txt")]),
        "err ENOENT"
    );
    assert_eq!(fx.probe_with(&["--net", "on"], &["socket", "packet"]), "err EPERM");
}

#[test]
fn git_commits_inside_the_lock() {
    let fx = Fixture::new("git");
    let repo = fx.lock.join("repo");
    let git = |args: &[&str]| {
        let out = Command::new("git").arg("-C").arg(&repo).args(args).output().expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    std::fs::create_dir_all(&repo).expect("repo");
    git(&["init", "-q"]);
    std::fs::write(repo.join("a.txt"), "a").expect("file");
    let script = format!(
        "cd {} && git add a.txt && git -c user.name=agent -c user.email=agent@example.com commit -q -m locked",
        repo.display()
    );
    let out = fx.probe(&["spawn", "/bin/sh", "-c", &script]);
    assert_eq!(out, "ok 0", "git commit ran inside the lock");
    assert!(git(&["log", "--format=%s"]).contains("locked"));
}

/// A lock that cannot be applied never runs the command: a missing folder, a writable home.
#[test]
fn a_lock_that_cannot_be_applied_does_not_run_the_command() {
    let fx = Fixture::new("refused");
    let marker = fx.lock.join("ran");
    // A missing folder; the home folder; a folder holding it.
    for folder in [fx.path("nope"), fx.home.display().to_string(), fx.root.display().to_string()] {
        let out = Command::new(PADDOCK)
            .args(["sandbox", "run", "--write", &folder, "--", "/usr/bin/touch"])
            .arg(&marker)
            .env("HOME", &fx.home)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(125), "{folder}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("the command did not run"), "{stderr}");
        assert!(!marker.exists());
    }
}

/// paddock's control socket is not reachable from a lock even when a lock folder holds it (a
/// lock on the runtime folder): it is hidden under an empty folder, as is the session's
/// runtime folder.
#[test]
fn the_control_socket_stays_out_of_reach_when_a_lock_folder_holds_it() {
    let fx = Fixture::new("control");
    let control = crate::headless::Runtime::new();
    let instance = control.start(&["-e", "sleep", "60"]);
    let socket = instance.socket.display().to_string();
    let runtime = control.dir.display().to_string();
    let out = Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", &runtime, "--", PYTHON, "-c", PROBE, "unix", &socket])
        .env("XDG_RUNTIME_DIR", &control.run)
        .env("HOME", &fx.home)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.trim(), "err ENOENT", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(instance.ls()["instances"][0]["panes"].as_array().is_some_and(|p| p.len() == 1));
}

/// The session's runtime folder ($XDG_RUNTIME_DIR: D-Bus, the keyring, Wayland, an ssh agent)
/// is hidden even where a lock folder holds it; another host socket in the lock folder is
/// refused unless the lock lists it (see sockets.rs), and then reached.
#[test]
fn the_session_runtime_folder_is_hidden_inside_a_lock_folder() {
    let fx = Fixture::new("runtime");
    let run = fx.lock.join("run");
    std::fs::create_dir_all(&run).expect("runtime folder");
    let _bus = UnixListener::bind(run.join("bus")).expect("bus listener");
    let _other = UnixListener::bind(fx.lock.join("other.sock")).expect("other listener");
    let probe = |socket: &str, extra: &[&str]| with_runtime(&fx, &run, extra, &["unix", socket]);
    let (found, stderr) = probe(&fx.path("lock/run/bus"), &[]);
    assert_eq!(found, "err ENOENT", "{stderr}");
    let other = fx.path("lock/other.sock");
    let (found, stderr) = probe(&other, &[]);
    assert_eq!(found, "err EACCES", "{stderr}");
    let (found, stderr) = probe(&other, &["--socket", &other]);
    assert_eq!(found, "ok", "{stderr}");
}

/// The environment inside a lock is built, not inherited: a token, a cloud key and an agent
/// socket in the caller's environment stay out; `--env-pass` lets one named variable in; the
/// allow-list (HOME, LANG, PATH) passes; the runtime folder's variable does not.
#[test]
fn tokens_in_the_environment_stay_outside_the_lock() {
    let fx = Fixture::new("env");
    let runtime = fx.path("outside");
    let outer = [
        ("GITHUB_TOKEN", "ghp_leak"),
        ("AWS_SECRET_ACCESS_KEY", "aws_leak"),
        ("SSH_AUTH_SOCK", "/tmp/agent.sock"),
        ("NPM_TOKEN", "npm_leak"),
        ("LANG", "C.UTF-8"),
        ("XDG_RUNTIME_DIR", runtime.as_str()),
    ];
    let probe = |extra: &[&str], name: &str| {
        let out = fx.command(extra, &["env", name]).envs(outer).output().expect("run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    for name in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "NPM_TOKEN"] {
        assert_eq!(probe(&[], name), "ok", "{name} stays outside");
    }
    assert_eq!(probe(&[], "XDG_RUNTIME_DIR"), "ok", "the runtime folder is hidden, and unnamed");
    // Positive controls: what every lock passes, and a variable named with --env-pass.
    assert_eq!(probe(&[], "LANG"), "ok C.UTF-8");
    assert_eq!(probe(&[], "HOME"), format!("ok {}", fx.home.display()));
    assert_eq!(probe(&["--env-pass", "NPM_TOKEN"], "NPM_TOKEN"), "ok npm_leak");
}

/// paddock's configuration kept elsewhere and linked in place (as dotfile managers do) is
/// protected where it really is, also when that is inside the lock; so is a `--config` given
/// before `sandbox`. Found by an attack on the binary.
#[test]
fn a_linked_or_given_configuration_inside_the_lock_stays_read_only() {
    let fx = Fixture::new("linked-config");
    let real = fx.lock.join("dotfiles.ron");
    std::fs::write(&real, "()").expect("config");
    std::fs::create_dir_all(fx.config_home.join("paddock")).expect("config folder");
    std::os::unix::fs::symlink(&real, fx.config_home.join("paddock/config.ron")).expect("link");
    let out = fx.run(&[], &["append", &real.display().to_string()]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "err EROFS");
    // A --config given before `sandbox`, inside the lock.
    let given = fx.lock.join("given.ron");
    std::fs::write(&given, "()").expect("config");
    let lock = fx.lock.display().to_string();
    let out = Command::new(PADDOCK)
        .arg("--config")
        .arg(&given)
        .args(["sandbox", "run", "--write", &lock, "--", PYTHON, "-c", PROBE, "append"])
        .arg(&given)
        .env("HOME", &fx.home)
        .env("XDG_CONFIG_HOME", &fx.config_home)
        .current_dir(&fx.lock)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "err EROFS");
    assert_eq!(std::fs::read_to_string(&real).expect("real"), "()");
    assert_eq!(std::fs::read_to_string(&given).expect("given"), "()");
}

#[test]
fn a_lock_given_the_temp_folder_sees_the_hosts_temp_folder_and_nothing_of_its_own_root() {
    // The view is assembled on the host's /tmp before it becomes the root: a lock given /tmp
    // must see the host's /tmp there, not the view's own root with the system's folders
    // writable under it.
    let mut fx = Fixture::new("tmp-grant");
    // Home and configuration folders outside /tmp: a lock folder holding the home, or where
    // paddock's configuration would be, is refused, and a clone (the fixture's folders with
    // it) may lie in /tmp.
    fx.home = std::path::PathBuf::from("/nonexistent-paddock-home");
    fx.config_home = fx.home.join(".config");
    // A copy of paddock of its own: the one cargo built has a second name (a hard link), which
    // a lock folder holding it refuses, and a clone may lie in /tmp.
    fx.exe = fx.root.join("paddock");
    std::fs::copy(PADDOCK, &fx.exe).expect("a copy of paddock");
    let pid = std::process::id();
    let shown = format!("/tmp/paddock-tmp-grant-{pid}");
    let cases: Vec<(Vec<String>, &str)> = vec![
        // Positive control: the host's /tmp is written.
        (vec!["write".into(), shown.clone()], "ok"),
        (vec!["write".into(), format!("/tmp/etc/paddock-escape-{pid}")], "err ENOENT"),
        (vec!["write".into(), format!("/tmp/usr/paddock-escape-{pid}")], "err ENOENT"),
        (vec!["listdir".into(), "/tmp/proc".into()], "err ENOENT"),
    ];
    check(&fx, &["--write", "/tmp"], &cases);
    // Given to read, the host's /tmp is read-only where the pane's own /tmp would be.
    let read = vec![(vec!["write".into(), format!("/tmp/paddock-tmp-read-{pid}")], "err EROFS")];
    check(&fx, &["--read", "/tmp"], &read);
    assert!(!std::path::Path::new(&format!("/tmp/paddock-tmp-read-{pid}")).exists());
    let written = std::fs::read_to_string(&shown);
    let _ = std::fs::remove_file(&shown);
    assert_eq!(written.expect("written through the lock"), "pwned");
    for system in ["/etc", "/usr"] {
        let escaped = std::path::Path::new(system).join(format!("paddock-escape-{pid}"));
        assert!(!escaped.exists(), "{escaped:?} was written from the lock");
    }
}

/// A covered folder deep in a lock folder cannot be moved out from under its cover: every
/// folder between is a mount point of its own (found by an attack on the binary: renaming the
/// runtime folder's parent, then making it again, put a socket of the lock's where the session
/// bus's would be).
#[test]
fn the_folders_above_a_covered_folder_cannot_be_renamed() {
    let fx = Fixture::new("covered-parents");
    let run = fx.lock.join("a/b/run");
    std::fs::create_dir_all(&run).expect("runtime folder");
    let _bus = UnixListener::bind(run.join("bus")).expect("bus listener");
    let probe = |args: &[&str]| with_runtime(&fx, &run, &[], args);
    for (from, to) in [("lock/a", "lock/a2"), ("lock/a/b", "lock/a/b2")] {
        let (found, stderr) = probe(&["rename", &fx.path(from), &fx.path(to)]);
        assert_eq!(found, "err EBUSY", "{from}: {stderr}");
    }
    // Positive control: a folder beside them is the lock's to rename.
    std::fs::create_dir_all(fx.lock.join("c")).expect("folder");
    let (found, stderr) = probe(&["rename", &fx.path("lock/c"), &fx.path("lock/c2")]);
    assert_eq!(found, "ok", "{stderr}");
    assert!(run.join("bus").exists() && fx.lock.join("c2").is_dir());
}

/// The probe's line and the lock's stderr for `args`, in a lock on `fx.lock` (with `extra`)
/// launched with the session's runtime folder at `run`.
fn with_runtime(
    fx: &Fixture,
    run: &std::path::Path,
    extra: &[&str],
    args: &[&str],
) -> (String, String) {
    let out = Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", &fx.lock.display().to_string()])
        .args(extra)
        .args(["--", PYTHON, "-c", PROBE])
        .args(args)
        .env("XDG_RUNTIME_DIR", run)
        .env("HOME", &fx.home)
        .stdin(Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (String::from_utf8_lossy(&out.stdout).trim().to_owned(), stderr)
}

/// paddock's data folder (the threads' homes and worktrees, the broker's bundles) stays
/// read-only in a lock folder that holds it (found by an attack on the binary: a lock on
/// `~/.local` wrote into another thread's worktree).
#[test]
fn paddocks_data_folder_inside_a_lock_folder_stays_read_only() {
    let fx = Fixture::new("data-folder");
    let data = fx.lock.join("data");
    let worktree = data.join("paddock/worktrees/r1/branch");
    std::fs::create_dir_all(&worktree).expect("a worktree");
    let planted = worktree.join("planted");
    let beside = data.join("beside");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["write".into(), planted.display().to_string()], "err EROFS"),
        (vec!["mkdir".into(), data.join("paddock/broker").display().to_string()], "err EROFS"),
        // Positive control: the rest of the folder holding it is the lock's.
        (vec!["write".into(), beside.display().to_string()], "ok"),
    ];
    let mut wrong = Vec::new();
    for (args, expected) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = fx.command(&[], &args).env("XDG_DATA_HOME", &data).output().expect("run");
        let found = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if found != *expected {
            wrong.push(format!("{args:?}: {found} {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(!planted.exists() && beside.exists());
}
