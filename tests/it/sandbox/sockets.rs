//! Path unix sockets are reached only when the lock lists them or the lock made them: a host
//! socket in a folder the lock shows (a Docker or Nix daemon's), one that appears there after
//! the lock started, or one reached through a link, is refused, and its server sees no
//! connection; no unix datagram socket can send to a path. Positive controls: a listed socket
//! works, and keeps working when its owner makes it again (an ssh agent restarting); a server
//! of the lock's own works; a stream socket pair works.

use std::io::{ErrorKind, Read};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{check, Fixture, PADDOCK, PROBE, PYTHON};

/// A host server on `path`: says what reached it.
struct HostServer {
    listener: UnixListener,
}

impl HostServer {
    fn bind(path: &Path) -> HostServer {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).expect("bind a host socket");
        listener.set_nonblocking(true).expect("nonblocking");
        HostServer { listener }
    }

    /// What the next connection sent, waiting up to `wait`; `None`: nobody connected.
    fn received(&self, wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).expect("blocking");
                    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
                    let mut text = String::new();
                    let _ = stream.read_to_string(&mut text);
                    return Some(text);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(_) => return None,
            }
        }
    }
}

#[test]
fn host_sockets_are_reached_only_when_listed() {
    let fx = Fixture::new("sockets");
    let daemon = fx.ro.join("daemon.sock");
    let host = HostServer::bind(&daemon);
    let agent_path = fx.outside.join("agent.sock");
    let agent = HostServer::bind(&agent_path);
    std::os::unix::fs::symlink(&daemon, fx.lock.join("link.sock")).expect("link");
    let listed = ["--socket", agent_path.to_str().expect("path")];
    let unix = |path: &str| vec!["unix".to_owned(), path.to_owned()];
    let cases: Vec<(Vec<String>, &str)> = vec![
        // A host socket in a read folder, by its path, through a link, relative to the
        // working folder (the lock folder).
        (unix(&fx.path("ro/daemon.sock")), "err EACCES"),
        (unix(&fx.path("lock/link.sock")), "err EACCES"),
        (unix("../ro/daemon.sock"), "err EACCES"),
        // No unix datagram socket: sendto could name any path.
        (vec!["unix_dgram".into(), fx.path("ro/daemon.sock")], "err EPERM"),
        (vec!["socketpair".into(), "dgram".into()], "err EPERM"),
        // Positive controls: a stream pair, a server of the lock's own, the listed socket.
        (vec!["socketpair".into(), "stream".into()], "ok x"),
        (vec!["unix_own".into(), "/tmp/own.sock".into()], "ok hi"),
        (unix(&agent_path.display().to_string()), "ok"),
        // From a second thread (whose id is not its process's): refused, and allowed.
        (vec!["in_thread".into(), "unix".into(), fx.path("ro/daemon.sock")], "err EACCES"),
        (vec!["in_thread".into(), "unix_own".into(), "/tmp/own.sock".into()], "ok hi"),
    ];
    check(&fx, &listed, &cases);
    assert_eq!(host.received(Duration::from_millis(200)), None, "the daemon saw no one");
    assert_eq!(agent.received(Duration::from_secs(10)).as_deref(), Some("pwned"));

    // A socket that appears in a shown folder after the lock started.
    let late = fx.ro.join("late.sock");
    let mut probe = fx.command(&[], &["after", "2", "unix", late.to_str().expect("path")]);
    let running = probe.stdout(Stdio::piped()).spawn().expect("start the lock");
    std::thread::sleep(Duration::from_millis(300));
    let late_server = HostServer::bind(&late);
    let out = running.wait_with_output().expect("lock");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "err EACCES");
    assert_eq!(late_server.received(Duration::from_millis(200)), None);
}

/// An ssh agent that restarts makes its socket again: the listed path keeps working in a lock
/// that started before.
#[test]
fn a_listed_socket_made_again_keeps_working() {
    let fx = Fixture::new("socket-again");
    let path = fx.outside.join("agent.sock");
    let first = HostServer::bind(&path);
    let socket = path.display().to_string();
    let lock = fx.lock.display().to_string();
    let script = format!(
        "{PYTHON} -c \"$PADDOCK_PROBE\" unix {socket}; sleep 2; {PYTHON} -c \"$PADDOCK_PROBE\" unix {socket}"
    );
    let running = Command::new(PADDOCK)
        .args(["sandbox", "run", "--write", &lock, "--socket", &socket, "--", "/bin/sh", "-c"])
        .arg(&script)
        .env("PADDOCK_PROBE", PROBE)
        .env("HOME", &fx.home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the lock");
    assert_eq!(first.received(Duration::from_secs(30)).as_deref(), Some("pwned"));
    drop(first);
    let second = HostServer::bind(&path);
    let out = running.wait_with_output().expect("lock");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\nok\n");
    assert_eq!(second.received(Duration::from_secs(10)).as_deref(), Some("pwned"));
}

/// A listed socket is read-only in the lock wherever it lies, also under the host's /tmp (which
/// the lock's own writable /tmp shows it inside): its mode cannot be widened.
#[test]
fn a_listed_socket_under_tmp_stays_read_only() {
    let fx = Fixture::new("socket-tmp");
    let path =
        std::path::Path::new("/tmp").join(format!("paddock-listed-{}.sock", std::process::id()));
    let _server = HostServer::bind(&path);
    let socket = path.display().to_string();
    let before = std::fs::metadata(&path).expect("socket").permissions();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["chmod".into(), socket.clone()], "err EROFS"),
        (vec!["unix".into(), socket.clone()], "ok"),
    ];
    check(&fx, &["--socket", &socket], &cases);
    assert_eq!(std::fs::metadata(&path).expect("socket").permissions(), before);
    let _ = std::fs::remove_file(&path);
}

/// `--socket` (and `sockets:` in a lock) names sockets, never a folder of them.
#[test]
fn a_folder_given_as_a_socket_refuses_the_lock() {
    let fx = Fixture::new("socket-folder");
    let out = fx.run(&["--socket", &fx.path("outside")], &["ids"]);
    assert_eq!(out.status.code(), Some(125));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not a unix socket"), "{stderr}");
}
