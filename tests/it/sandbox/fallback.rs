//! The lock without user namespaces (Landlock and seccomp only), attacked as the full lock is:
//! inside a user namespace whose max_user_namespaces is 0 (no namespace can be made, as on a
//! host that turned them off), and inside a Landlock domain, where a namespace can be made but
//! nothing mounted in it (as Ubuntu 24.04's AppArmor leaves it). Both say Degraded and hold
//! what the README says they hold: outside paths refused (EACCES rather than absent), no IP
//! socket with the network off, no host socket but the listed ones, no abstract socket, no
//! namespaces, no capabilities; git's hooks are writable there and named when the command
//! ends.

use std::os::unix::net::UnixListener;
use std::process::{Command, Output, Stdio};

use super::{Fixture, PADDOCK, PROBE, PYTHON};

/// Run `paddock ARGS` where no user namespace can be made (`unshare` makes one as root, sets
/// its limit of nested ones to 0, and runs paddock inside).
fn without_namespaces(fx: &Fixture, args: &[&str]) -> Command {
    let script = "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"";
    let mut command = Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "sh", "-c", script, "sh", PADDOCK])
        .args(args)
        .env("HOME", &fx.home)
        .env("XDG_CONFIG_HOME", &fx.config_home)
        .current_dir(&fx.lock)
        .stdin(Stdio::null());
    command
}

/// Run `paddock ARGS` in a Landlock domain (one that handles only making block devices, so
/// nothing else changes): namespaces can be made there, but nothing mounted in them.
fn where_mounting_is_denied(fx: &Fixture, args: &[&str]) -> Command {
    const LANDLOCKED: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
handled = ctypes.c_uint64(1 << 11)  # LANDLOCK_ACCESS_FS_MAKE_BLOCK
fd = libc.syscall(444, ctypes.byref(handled), 8, 0)  # landlock_create_ruleset
assert fd >= 0 and libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.syscall(446, fd, 0) == 0  # landlock_restrict_self
os.execv(sys.argv[1], sys.argv[1:])
"#;
    let mut command = Command::new(PYTHON);
    command
        .args(["-c", LANDLOCKED, PADDOCK])
        .args(args)
        .env("HOME", &fx.home)
        .env("XDG_CONFIG_HOME", &fx.config_home)
        .current_dir(&fx.lock)
        .stdin(Stdio::null());
    command
}

fn locked_args<'a>(fx: &'a Fixture, lock: &'a str, ro: &'a str, probe: &[&'a str]) -> Vec<&'a str> {
    let _ = fx;
    let mut args = vec!["sandbox", "run", "--write", lock, "--read", ro, "--", PYTHON, "-c", PROBE];
    args.extend_from_slice(probe);
    args
}

fn text(out: &Output) -> (String, String) {
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (stdout, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn without_user_namespaces_a_lock_is_landlock_and_seccomp_only_and_says_so() {
    let fx = Fixture::new("fallback");
    let probe = without_namespaces(&fx, &["sandbox", "probe"]).output().expect("probe");
    let (said, _) = text(&probe);
    assert!(said.contains("user namespaces: no"), "{said}");
    assert!(said.contains("locks: degraded (no user namespaces here"), "{said}");
    let outside_socket = fx.outside.join("daemon.sock");
    let _daemon = UnixListener::bind(&outside_socket).expect("a daemon's socket outside");
    let abstract_name = format!("paddock-fallback-{}", std::process::id());
    let _abstract =
        <std::os::unix::net::SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(
            abstract_name.as_bytes(),
        )
        .and_then(|addr| UnixListener::bind_addr(&addr))
        .expect("an abstract socket of the host's");
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("a service on the host");
    let port = tcp.local_addr().expect("port").port().to_string();
    let (lock, ro) = (fx.lock.display().to_string(), fx.ro.display().to_string());
    let secret = fx.path("outside/secret.txt");
    let socket = outside_socket.display().to_string();
    let at = format!("@{abstract_name}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["read", "lock/file.txt"], "ok 6"),
        (vec!["write", "lock/new.txt"], "ok"),
        (vec!["read", "ro/data.txt"], "ok 4"),
        (vec!["read", &secret], "err EACCES"),
        (vec!["listdir", "outside"], "err EACCES"),
        (vec!["write", &secret], "err EACCES"),
        (vec!["write", "ro/data.txt"], "err EACCES"),
        (vec!["write", "/tmp/paddock-fallback-scratch"], "err EACCES"),
        (vec!["listdir", "/"], "err EACCES"),
        (vec!["tcp", "127.0.0.1", &port], "err EPERM"),
        (vec!["socket", "inet6"], "err EPERM"),
        (vec!["unix", &socket], "err EACCES"),
        (vec!["unix", &at], "err EACCES"),
        (vec!["unshare"], "err EPERM"),
        (vec!["keyctl"], "err EPERM"),
        (vec!["ids"], "ok 0 0 0000000000000000"),
    ];
    let root = fx.root.display().to_string();
    let mut wrong = Vec::new();
    for (probe, expected) in &cases {
        let probe: Vec<String> = probe
            .iter()
            .map(|a| {
                if a.starts_with("lock/") || a.starts_with("ro/") || *a == "outside" {
                    format!("{root}/{a}")
                } else {
                    a.to_string()
                }
            })
            .collect();
        let probe: Vec<&str> = probe.iter().map(String::as_str).collect();
        let out =
            without_namespaces(&fx, &locked_args(&fx, &lock, &ro, &probe)).output().expect("run");
        let (found, stderr) = text(&out);
        if found != *expected {
            wrong.push(format!("{probe:?}: expected {expected:?}, found {found:?} ({stderr})"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Its own temporary folder, gone when it ends.
    let out = without_namespaces(&fx, &locked_args(&fx, &lock, &ro, &["env", "TMPDIR"]))
        .output()
        .expect("run");
    let (tmp, stderr) = text(&out);
    let tmp = tmp.strip_prefix("ok ").unwrap_or(&tmp).to_owned();
    assert!(tmp.starts_with("/tmp/paddock-lock-"), "{tmp}");
    assert!(!std::path::Path::new(&tmp).exists(), "removed when the command ended");
    assert!(stderr.contains("Degraded: no user namespaces here"), "{stderr}");
    // git's hooks are not protected here: written, and named when the command ends.
    let repo = fx.lock.join("repo");
    let made = Command::new("git").args(["init", "-q"]).arg(&repo).status().expect("git init");
    assert!(made.success());
    let plant = "printf '#!/bin/sh\\n' > repo/.git/hooks/pre-commit && chmod +x repo/.git/hooks/pre-commit && echo planted";
    let args = ["sandbox", "run", "--write", &lock, "--", "sh", "-c", plant];
    let out = without_namespaces(&fx, &args).output().expect("run");
    let (found, stderr) = text(&out);
    assert_eq!(found, "planted", "{stderr}");
    assert!(stderr.contains("left for git to run outside the lock"), "{stderr}");
    assert!(stderr.contains("pre-commit"), "{stderr}");
    // No leaving the pane's session: a kill of the session is what ends everything it started.
    // (From a child, which is no process group's leader: only the filter can refuse it.)
    let leave = "import os, sys\nif os.fork() == 0:\n    try:\n        os.setsid(); print('left')\n    except OSError as e:\n        print('stayed', e.errno)\n    sys.stdout.flush(); os._exit(0)\nos.wait()";
    let args = ["sandbox", "run", "--write", &lock, "--", PYTHON, "-c", leave];
    let out = without_namespaces(&fx, &args).output().expect("run");
    let (found, stderr) = text(&out);
    assert_eq!(found, format!("stayed {}", libc::EPERM), "{stderr}");
    // A lock it cannot hold is refused: a protection of yours inside the writable folder.
    let env = fx.path("lock/file.txt");
    let mut args = locked_args(&fx, &lock, &ro, &["read", &env]);
    args.splice(2..2, ["--protect", &env]);
    let out = without_namespaces(&fx, &args).output().expect("run");
    let (found, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(125), "{found} {stderr}");
    assert!(stderr.contains("cannot be protected without user namespaces"), "{stderr}");
}

#[test]
fn where_namespaces_may_not_mount_a_lock_falls_back_too() {
    let fx = Fixture::new("fallback-mount");
    let probe = where_mounting_is_denied(&fx, &["sandbox", "probe"]).output().expect("probe");
    let (said, stderr) = text(&probe);
    assert!(said.contains("cannot mount a /proc of its own"), "{said} {stderr}");
    assert!(said.contains("locks: degraded (no user namespaces here"), "{said}");
    let (lock, ro) = (fx.lock.display().to_string(), fx.ro.display().to_string());
    let secret = fx.path("outside/secret.txt");
    for (probe, expected) in [
        (vec!["write".to_owned(), fx.path("lock/new.txt")], "ok"),
        (vec!["read".to_owned(), secret], "err EACCES"),
    ] {
        let probe: Vec<&str> = probe.iter().map(String::as_str).collect();
        let out = where_mounting_is_denied(&fx, &locked_args(&fx, &lock, &ro, &probe))
            .output()
            .expect("run");
        let (found, stderr) = text(&out);
        assert_eq!(found, expected, "{probe:?}: {stderr}");
    }
}
