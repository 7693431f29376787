//! The control socket under abuse, finding instances, and stopping them.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use serde_json::Value;

use super::{alive, socket_exists, text, wait_for, Runtime};

/// Send raw bytes on one connection and read one reply line.
fn raw_exchange(stream: &mut UnixStream, bytes: &[u8]) -> Value {
    stream.write_all(bytes).expect("write");
    let mut line = String::new();
    BufReader::new(stream.try_clone().expect("clone")).read_line(&mut line).expect("read reply");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("reply {line:?} is not JSON: {e}"))
}

fn connect(path: &std::path::Path) -> UnixStream {
    let stream = UnixStream::connect(path).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    stream
}

#[test]
fn hostile_requests_get_json_errors_and_the_instance_keeps_running() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sh", "-c", "echo alive; sleep 1000"]);
    let cases: &[(&[u8], &str)] = &[
        (b"this is not json\n", "malformed"),
        (b"\xff\xfe\x00\x01\n", "malformed"),
        (b"[1,2,3]\n", "malformed"),
        (b"{\"verb\":\"ls\"}\n", "version"),
        (b"{\"protocol\":99,\"verb\":\"ls\"}\n", "version"),
        (b"{\"protocol\":1,\"verb\":\"format-disk\"}\n", "unknown_verb"),
        (b"{\"protocol\":1,\"verb\":\"capture\",\"pane\":999}\n", "no_such_pane"),
        (b"{\"protocol\":1,\"verb\":\"send\",\"pane\":999,\"text\":\"x\"}\n", "no_such_pane"),
        (b"{\"protocol\":1,\"verb\":\"send\",\"pane\":1,\"keys\":\"C-\"}\n", "bad_request"),
        (b"{\"protocol\":1,\"verb\":\"resize\",\"pane\":1,\"cols\":0,\"rows\":5}\n", "bad_request"),
        // A thread that is not configured, and a command for one (`ctl` itself refuses both
        // together before asking).
        (b"{\"protocol\":1,\"verb\":\"new\",\"thread\":\"nope\"}\n", "bad_request"),
        (
            b"{\"protocol\":1,\"verb\":\"resize\",\"pane\":1,\"cols\":99999,\"rows\":5}\n",
            "bad_request",
        ),
        (b"{\"protocol\":1,\"verb\":\"new\",\"command\":[\"/no/such/program\"]}\n", "failed"),
        (b"{\"protocol\":1,\"verb\":\"new\",\"cwd\":\"/no/such/dir\"}\n", "failed"),
        (
            b"{\"protocol\":1,\"verb\":\"split\",\"pane\":7,\"direction\":\"right\"}\n",
            "no_such_pane",
        ),
    ];
    // All on one connection: an error does not end the conversation.
    let mut stream = connect(&instance.socket);
    for (bytes, code) in cases {
        let reply = raw_exchange(&mut stream, bytes);
        assert_eq!(reply["ok"], false, "{}", text(bytes));
        assert_eq!(reply["protocol"], 1);
        assert_eq!(reply["error"]["code"], *code, "{}: {reply}", text(bytes));
        assert!(!reply["error"]["message"].as_str().unwrap_or("").is_empty());
    }
    let nested = format!("{}\n", "[".repeat(1_000_000 - 1));
    assert_eq!(raw_exchange(&mut stream, nested.as_bytes())["error"]["code"], "malformed");

    // Oversized: an error, then the connection is closed.
    let mut big = connect(&instance.socket);
    let huge = vec![b'a'; 3 << 20];
    let _ = big.write_all(&huge);
    let mut reply = String::new();
    let _ = BufReader::new(&big).read_line(&mut reply);
    assert!(reply.contains("\"too_large\""), "{reply}");

    // Clients that stop halfway, or connect and say nothing, hold only themselves up.
    let mut half = connect(&instance.socket);
    half.write_all(b"{\"protocol\":1,\"ver").expect("write");
    let silent: Vec<UnixStream> = (0..20).map(|_| connect(&instance.socket)).collect();
    drop(half);

    // Through all of that the instance answers and its pane runs.
    assert_eq!(instance.pane(1)["status"], "running");
    assert!(instance.capture("1").contains("alive"));
    let ok = raw_exchange(&mut stream, b"{\"protocol\":1,\"verb\":\"ls\"}\n");
    assert_eq!(ok["ok"], true);
    assert_eq!(ok["instance"]["panes"][0]["id"], 1);
    drop(silent);
}

#[test]
fn past_64_connections_the_instance_says_it_is_busy_and_recovers() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sleep", "1000"]);
    let held: Vec<UnixStream> = (0..64).map(|_| connect(&instance.socket)).collect();
    // The listener counts a connection once it has handed it to its thread; give it a moment.
    let mut busy = Value::Null;
    wait_for("a busy reply", || {
        let mut extra = connect(&instance.socket);
        let mut line = String::new();
        let _ = extra.write_all(b"{\"protocol\":1,\"verb\":\"ls\"}\n");
        let _ = BufReader::new(&extra).read_line(&mut line);
        busy = serde_json::from_str(&line).unwrap_or(Value::Null);
        busy["error"]["code"] == "busy"
    });
    assert!(busy["error"]["message"].as_str().unwrap_or("").contains("64"), "{busy}");
    drop(held);
    wait_for("ls to answer again", || instance.run(&["ls"]).status.success());
}

#[test]
fn listen_replaces_a_stale_socket_but_never_a_file() {
    let runtime = Runtime::new();
    let notes = runtime.dir.join("notes.txt");
    std::fs::write(&notes, "keep me").expect("write");
    let out = runtime
        .paddock(&["--headless", "--listen", notes.to_str().unwrap(), "-e", "true"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a socket"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&notes).expect("read"), "keep me");

    let path = runtime.dir.join("chosen.sock");
    drop(UnixListener::bind(&path).expect("bind"));
    let mut child = runtime
        .paddock(&["--headless", "--listen", path.to_str().unwrap(), "-e", "sleep", "1000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read");
    assert_eq!(line.trim_end(), path.to_str().unwrap());
    let ls = runtime.paddock(&["ls", "--socket", path.to_str().unwrap()]).output().expect("ls");
    assert!(text(&ls.stdout).contains("sleep 1000"), "{}", text(&ls.stdout));
    // A second instance on the same path is refused while the first one lives.
    let second = runtime
        .paddock(&["--headless", "--listen", path.to_str().unwrap(), "-e", "true"])
        .output()
        .expect("run");
    assert!(text(&second.stderr).contains("another paddock instance is listening"));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    assert_eq!(child.wait().expect("wait").code(), Some(0));
    assert!(!socket_exists(&path));
}

#[test]
fn a_last_request_without_a_newline_is_still_answered() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sleep", "1000"]);
    let mut stream = connect(&instance.socket);
    stream.write_all(b"{\"protocol\":1,\"verb\":\"ls\"}").expect("write");
    stream.shutdown(std::net::Shutdown::Write).expect("shutdown");
    let mut reply = String::new();
    stream.read_to_string(&mut reply).expect("read");
    assert!(reply.starts_with("{\"protocol\":1,\"ok\":true"), "{reply}");
}

#[test]
fn the_socket_is_private() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sleep", "1000"]);
    let mode = |path: &std::path::Path| {
        std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    };
    assert_eq!(mode(&instance.socket), 0o600);
    assert_eq!(mode(instance.socket.parent().expect("dir")), 0o700);
}

#[test]
fn another_user_is_refused() {
    if !crate::needs_root("another_user_is_refused", "switching to another user") {
        return;
    }
    let runtime = Runtime::reachable_by_other_users();
    let instance = runtime.start(&["-e", "sleep", "1000"]);
    // Open the way on purpose (as a careless chmod would), so only the uid check stands.
    for dir in
        [runtime.dir.as_path(), runtime.run.as_path(), instance.socket.parent().expect("dir")]
    {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).expect("chmod");
    }
    // The other user runs its own copy of paddock: the one cargo built lies in the clone, which
    // another user may not reach (a clone under a 0700 home folder).
    let bin = runtime.dir.join("bin");
    std::fs::create_dir(&bin).expect("mkdir bin");
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let paddock = bin.join("paddock");
    std::fs::copy(super::PADDOCK, &paddock).expect("copy paddock where nobody can run it");
    std::fs::set_permissions(&instance.socket, std::fs::Permissions::from_mode(0o666))
        .expect("chmod");
    use std::os::unix::process::CommandExt;
    // The instance checks who connects: a raw request from uid 65534 (perl-base, which every
    // Debian system has) gets a refusal. The refusal may come before the request is written,
    // so the script must survive writing to a closed socket to read it.
    let script = r#"use IO::Socket::UNIX; $SIG{PIPE} = "IGNORE"; my $s = IO::Socket::UNIX->new(Peer => $ARGV[0]) or die "connect: $!"; print $s qq({"protocol":1,"verb":"ls"}\n); print scalar(<$s>);"#;
    let out = std::process::Command::new("perl")
        .args(["-e", script])
        .arg(&instance.socket)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("run perl as nobody");
    let reply: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(reply["error"]["code"], "refused", "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap_or("").contains("uid 65534 may not"));
    assert!(reply.get("instance").is_none(), "nothing about the panes leaks: {reply}");
    // And paddock's own client will not talk to a socket another user listens on.
    let out = std::process::Command::new(&paddock)
        .args(["ls", "--socket"])
        .arg(&instance.socket)
        .uid(65534)
        .gid(65534)
        .output()
        .expect("run paddock as nobody");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("belongs to uid 0, not to you (uid 65534)"), "{stderr}");
    // And the instance is unharmed.
    assert_eq!(instance.pane(1)["status"], "running");
}

#[test]
fn finding_instances_none_one_several_and_stale() {
    let runtime = Runtime::new();
    let none = runtime.paddock(&["ls"]).output().expect("ls");
    assert!(none.status.success());
    assert_eq!(text(&none.stdout), "no paddock instance is running\n");
    let none = runtime.paddock(&["ls", "--json"]).output().expect("ls");
    assert_eq!(text(&none.stdout), "{\"instances\":[]}\n");
    let ctl = runtime.paddock(&["ctl", "capture", "--pane", "1"]).output().expect("ctl");
    assert_eq!(ctl.status.code(), Some(1));
    assert!(text(&ctl.stderr).contains("no paddock instance is running"));

    // A socket left by a dead instance is removed when instances are looked for.
    let dir = runtime.run.join("paddock");
    let first = runtime.start(&["-e", "sleep", "1000"]);
    let stale = dir.join("4000000.sock");
    drop(UnixListener::bind(&stale).expect("bind"));
    assert!(socket_exists(&stale));
    let ls = runtime.paddock(&["ls", "--json"]).output().expect("ls");
    let ls: Value = serde_json::from_slice(&ls.stdout).expect("json");
    assert_eq!(ls["instances"].as_array().map(Vec::len), Some(1));
    assert!(!socket_exists(&stale), "the stale socket is gone");
    let found = runtime.paddock(&["ctl", "send", "--pane", "1", "--text", "x"]).output();
    assert!(found.expect("ctl").status.success(), "the only instance is found");

    let second = runtime.start(&["-e", "sleep", "1000"]);
    let ls = runtime.paddock(&["ls", "--json"]).output().expect("ls");
    let ls: Value = serde_json::from_slice(&ls.stdout).expect("json");
    assert_eq!(ls["instances"].as_array().map(Vec::len), Some(2), "ls shows every instance");
    let ctl = runtime.paddock(&["ctl", "capture", "--pane", "1"]).output().expect("ctl");
    let stderr = text(&ctl.stderr);
    assert_eq!(ctl.status.code(), Some(1));
    assert!(stderr.contains("several paddock instances are running"), "{stderr}");
    assert!(stderr.contains(first.socket.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains(second.socket.to_str().unwrap()), "{stderr}");
    // $PADDOCK_SOCKET picks one, as it does for programs inside a pane.
    let picked = runtime
        .paddock(&["ctl", "capture", "--pane", "1"])
        .env("PADDOCK_SOCKET", &second.socket)
        .output()
        .expect("ctl");
    assert!(picked.status.success(), "{}", text(&picked.stderr));
}

#[test]
fn panes_know_their_instance_and_can_drive_it() {
    let runtime = Runtime::new();
    let script = format!(
        "{} ctl split --right -- sh -c 'echo from-the-split; sleep 1000'; echo \"split=$?\"; sleep 1000",
        super::PADDOCK
    );
    let instance = runtime.start(&["-e", "sh", "-c", &script]);
    instance.wait_for_text("1", "split=0");
    instance.wait_for_text("2", "from-the-split");
}

#[test]
fn stop_and_signals_end_the_instance_and_its_panes() {
    let runtime = Runtime::new();
    let mut instance = runtime.start(&["-e", "sleep", "1000"]);
    instance.ctl(&["split", "--pane", "1", "--down", "--", "sleep", "1000"]);
    let pids: Vec<i64> = instance.ls()["instances"][0]["panes"]
        .as_array()
        .map(|panes| panes.iter().filter_map(|p| p["pid"].as_i64()).collect())
        .unwrap_or_default();
    assert_eq!(pids.len(), 2);
    instance.ctl(&["stop"]);
    assert_eq!(instance.wait_exit(), Some(0));
    assert!(pids.iter().all(|pid| !alive(*pid)), "every pane's program ended");
    assert!(!socket_exists(&instance.socket));

    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let mut instance = runtime.start(&["-e", "sleep", "1000"]);
        let pid = instance.pane(1)["pid"].as_i64().expect("pid");
        // SAFETY: kill(2) on our own child.
        unsafe {
            libc::kill(instance.child.id() as i32, signal);
        }
        assert_eq!(instance.wait_exit(), Some(0), "signal {signal}");
        wait_for("the pane's program to end", || !alive(pid));
        assert!(!socket_exists(&instance.socket));
    }
}

#[test]
fn bad_arguments_get_clear_messages() {
    let runtime = Runtime::new();
    let cases: &[(&[&str], &str)] = &[
        (&["ctl", "send", "--pane", "1"], "--text"),
        (&["ctl", "send", "--pane", "x", "--text", "a"], "invalid value 'x'"),
        (&["ctl", "resize", "--pane", "1", "--size", "0x5"], "out of range"),
        (&["ctl", "split", "--pane", "1"], "--right"),
        (&["ctl", "frobnicate"], "unrecognized subcommand"),
        (&["--headless", "--size", "80"], "COLSxROWS"),
    ];
    for (args, message) in cases {
        let out = runtime.paddock(args).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains(message), "{args:?}: {}", text(&out.stderr));
    }
    // Without a display the window cannot open: a message that points at the server, and no
    // server started for a window that never came.
    let windowed = runtime
        .paddock(&[])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("run");
    assert_eq!(windowed.status.code(), Some(1), "{}", text(&windowed.stderr));
    assert!(text(&windowed.stderr).contains("paddock server"), "{}", text(&windowed.stderr));
    let sockets = std::fs::read_dir(runtime.run.join("paddock")).into_iter().flatten().count();
    assert_eq!(sockets, 0, "a server was started for no window");
    let missing = runtime.paddock(&["--headless", "-e", "/no/such/program"]).output().expect("run");
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("/no/such/program"), "{}", text(&missing.stderr));
}

/// The instance holds released secrets: another process of the same user cannot read its
/// memory, and a crash writes no core file.
#[test]
fn the_instance_keeps_its_memory_to_itself() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sleep", "1000"]);
    let pid = instance.child.id();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let core = limits.lines().find(|l| l.starts_with("Max core file size")).expect("core line");
    assert_eq!(core.split_whitespace().skip(4).take(2).collect::<Vec<_>>(), ["0", "0"], "{core}");
    // Root may read any process's memory; a user may read a dumpable one of their own.
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        let mem = std::fs::File::open(format!("/proc/{pid}/mem"));
        assert!(mem.is_err(), "the same user opened the instance's memory");
    }
}
