//! Threads on other hosts: `paddock server --stdio`, the other end of `ssh -T HOST paddock
//! server --stdio`, relays the attach protocol to the host's server (found, or started to
//! open nothing unasked), which outlives the connection. Tested directly and through a real
//! sshd on a loopback port (`sshd.rs`).

mod link;
mod secrets;
mod sshd;
mod threads;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use crossbeam_channel::Receiver;
use paddock::ctl::stdio_relay::PREAMBLE;
use paddock::ctl::wire::{read_frame, ToServer, ToWindow, MAX_FRAME, VERSION};

use super::{text, wait_for, Runtime, PADDOCK};

/// The attach protocol spoken over a child's standard input and output, as a host link
/// speaks it over ssh.
struct StdioLink {
    child: Child,
    to: Option<ChildStdin>,
    frames: Receiver<ToWindow>,
}

impl StdioLink {
    fn spawn(mut command: Command) -> StdioLink {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the relay");
        let (to, mut from) = (child.stdin.take(), child.stdout.take().expect("stdout"));
        let (send, frames) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            // The relay's preamble comes first (after whatever a login printed).
            let mut seen = Vec::new();
            let mut byte = [0u8; 1];
            while !seen.ends_with(PREAMBLE) {
                match std::io::Read::read(&mut from, &mut byte) {
                    Ok(1) => seen.push(byte[0]),
                    _ => return,
                }
            }
            let mut buf = Vec::new();
            while let Ok(frame) = read_frame(&mut from, MAX_FRAME, &mut buf) {
                let frame = ToWindow::decode(frame).expect("a frame the server sent");
                if send.send(frame).is_err() {
                    return;
                }
            }
        });
        StdioLink { child, to, frames }
    }

    fn send(&mut self, frame: &ToServer) {
        let to = self.to.as_mut().expect("standard input still open");
        to.write_all(&frame.encode()).and_then(|()| to.flush()).expect("write a frame");
    }

    /// The next frame `wanted` picks, skipping others; fails after 60 s showing what the
    /// relay said on standard error.
    fn next<T>(&mut self, what: &str, wanted: impl Fn(ToWindow) -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(frame) => {
                    if let Some(found) = wanted(frame) {
                        return found;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    let out = self.child.wait_with_output_of_stderr();
                    panic!("no {what} came over the relay; it said: {out}");
                }
            }
        }
    }

    /// Close standard input (the connection dropped) and wait for the relay to end.
    fn hang_up(mut self) -> (Option<i32>, String) {
        drop(self.to.take());
        let mut status = None;
        wait_for("the relay to end", || {
            status = self.child.try_wait().expect("try_wait");
            status.is_some()
        });
        (status.and_then(|s| s.code()), self.child.wait_with_output_of_stderr())
    }
}

trait StderrOf {
    fn wait_with_output_of_stderr(&mut self) -> String;
}

impl StderrOf for Child {
    fn wait_with_output_of_stderr(&mut self) -> String {
        use std::io::Read;
        let mut said = String::new();
        if let Some(mut stderr) = self.stderr.take() {
            let _ = stderr.read_to_string(&mut said);
        }
        said
    }
}

/// The server a relay started in `runtime`: its control socket, once there is one.
pub(super) fn started_server(runtime: &Runtime) -> PathBuf {
    let folder = runtime.run.join("paddock");
    let mut found = None;
    wait_for("the started server's socket", || {
        found = std::fs::read_dir(&folder).ok().and_then(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.extension().is_some_and(|x| x == "sock"))
        });
        found.is_some()
    });
    found.expect("a socket")
}

/// The configuration's `hosts` with one entry, `name`, reaching `sshd` with its paddock at
/// `paddock` (a wrapper giving it folders of its own, or a fake).
pub(super) fn hosts_entry(sshd: &sshd::Sshd, name: &str, paddock: &Path) -> String {
    let options: Vec<String> = sshd.client_options().iter().map(|o| format!("{o:?}")).collect();
    format!(
        "hosts: {{{name:?}: (destination: {:?}, paddock_path: {:?}, ssh_options: [{}])}},",
        sshd.destination(),
        paddock.display().to_string(),
        options.join(", ")
    )
}

/// Stops the server a relay started when the test ends, however it ends.
pub(super) struct StopServer<'a>(&'a Runtime, PathBuf);

impl Drop for StopServer<'_> {
    fn drop(&mut self) {
        let _ = self.0.paddock(&["kill-server", "--socket"]).arg(&self.1).output();
    }
}

/// The hellos, then the first view: the panes the server holds, by id.
fn greet(link: &mut StdioLink) -> (u32, Vec<u64>) {
    link.send(&ToServer::Hello { version: VERSION });
    let server_pid = link.next("the server's hello", |f| match f {
        ToWindow::Hello { version, server_pid } if version == VERSION => Some(server_pid),
        _ => None,
    });
    let view = link.next("the server's view", |f| match f {
        ToWindow::View { json } => Some(serde_json::from_slice::<serde_json::Value>(&json).ok()?),
        _ => None,
    });
    let panes = view["instance"]["panes"]
        .as_array()
        .map(|panes| panes.iter().filter_map(|p| p["id"].as_u64()).collect())
        .unwrap_or_default();
    (server_pid, panes)
}

/// A paddock for the "remote" end: the test's binary with folders of its own, as a host's
/// `paddock_path` would name it.
pub(super) fn remote_paddock(runtime: &Runtime) -> PathBuf {
    let script = runtime.dir.join("remote-paddock");
    let command = runtime.paddock(&[]);
    let mut text = String::from("#!/bin/sh\n");
    for (name, value) in command.get_envs() {
        let name = name.to_string_lossy();
        match value {
            Some(value) => {
                let value = value.to_string_lossy();
                text.push_str(&format!("export {name}='{value}'\n"));
            }
            None => text.push_str(&format!("unset {name}\n")),
        }
    }
    text.push_str(&format!("exec '{PADDOCK}' \"$@\"\n"));
    std::fs::write(&script, text).expect("write the remote paddock");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

/// Without a server, `--stdio` starts one that opens nothing, relays the protocol to it, and
/// leaves it running when the connection drops; the next connection finds the same server and
/// what it runs.
#[test]
fn stdio_relays_to_a_server_that_outlives_the_connection() {
    let runtime = Runtime::new();
    let mut link = StdioLink::spawn(runtime.paddock(&["server", "--stdio"]));
    let (server_pid, panes) = greet(&mut link);
    let socket = started_server(&runtime);
    let _stop = StopServer(&runtime, socket.clone());
    assert!(panes.is_empty(), "a server started for a link opens nothing unasked: {panes:?}");
    // A pane opened on that server reaches the link.
    let pane =
        open_pane(&runtime, &socket, &mut link, "read x; echo remote-$((x*6)); exec sleep 600");
    link.send(&ToServer::Input { pane, bytes: b"7\r".to_vec() });
    link.next("its output", |f| match f {
        ToWindow::Chunk { pane: p, bytes, .. } if p == pane => {
            text(&bytes).contains("remote-42").then_some(())
        }
        _ => None,
    });
    let (code, said) = link.hang_up();
    assert_eq!(code, Some(0), "the relay ends quietly when its input closes: {said}");
    // The server and its pane run on; a second link finds both.
    let mut again = StdioLink::spawn(runtime.paddock(&["server", "--stdio"]));
    let (pid_again, panes) = greet(&mut again);
    assert_eq!(pid_again, server_pid, "the second link reached the same server");
    assert_eq!(panes, vec![u64::from(pane)], "its pane is still there");
    again.send(&ToServer::Detach);
    let (code, said) = again.hang_up();
    assert_eq!(code, Some(0), "{said}");
}

/// A paddock of another protocol version is told so, with both versions named.
#[test]
fn stdio_names_both_versions_when_they_differ() {
    let runtime = Runtime::new();
    let mut link = StdioLink::spawn(runtime.paddock(&["server", "--stdio"]));
    link.send(&ToServer::Hello { version: 999 });
    let reason = link.next("a refusal", |f| match f {
        ToWindow::Refused { reason } => Some(reason),
        _ => None,
    });
    let _stop = StopServer(&runtime, started_server(&runtime));
    assert!(
        reason.contains("version 999") && reason.contains(&format!("speaks {VERSION}")),
        "{reason}"
    );
    let (code, said) = link.hang_up();
    assert_eq!(code, Some(0), "{said}");
}

/// The same through a real sshd: `ssh -T HOST PADDOCK server --stdio` carries the protocol,
/// and the remote server outlives the ssh connection killed under it.
#[test]
fn ssh_carries_the_protocol_and_the_remote_server_outlives_it() {
    let test = "headless::remote::ssh_carries_the_protocol_and_the_remote_server_outlives_it";
    let runtime = Runtime::new();
    let Some(sshd) = sshd::Sshd::start(test, &runtime.dir.join("sshd")) else { return };
    let paddock = remote_paddock(&runtime);
    let remote = |sshd: &sshd::Sshd| {
        let mut command = sshd.ssh(&[&paddock.display().to_string(), "server", "--stdio"]);
        command.env_remove("SSH_AUTH_SOCK");
        StdioLink::spawn(command)
    };
    let mut link = remote(&sshd);
    let (server_pid, panes) = greet(&mut link);
    assert!(panes.is_empty(), "{panes:?}");
    let socket = started_server(&runtime);
    let _stop = StopServer(&runtime, socket.clone());
    let pane = open_pane(&runtime, &socket, &mut link, "cat");
    // Typed over ssh, echoed back over ssh.
    link.send(&ToServer::Input { pane, bytes: b"over-ssh\r".to_vec() });
    link.next("the echo", |f| match f {
        ToWindow::Chunk { pane: p, bytes, .. } if p == pane => {
            text(&bytes).contains("over-ssh").then_some(())
        }
        _ => None,
    });
    // The connection is killed, not closed: the server and its pane run on.
    let _ = link.child.kill();
    let _ = link.child.wait();
    let mut again = remote(&sshd);
    let (pid_again, panes) = greet(&mut again);
    assert_eq!(pid_again, server_pid);
    assert_eq!(panes, vec![u64::from(pane)]);
    assert!(Path::new(&socket).exists());
}

/// Open a pane running `script` on the server at `socket` (as `paddock ctl new` does), and
/// wait for its snapshot over the link: its id.
fn open_pane(runtime: &Runtime, socket: &Path, link: &mut StdioLink, script: &str) -> u32 {
    let opened = runtime
        .paddock(&["ctl", "--socket"])
        .arg(socket)
        .args(["new", "--", "sh", "-c", script])
        .output()
        .expect("ctl new");
    assert!(opened.status.success(), "{}", text(&opened.stderr));
    link.next("the new pane's snapshot", |f| match f {
        ToWindow::Pane { pane, .. } => Some(pane),
        _ => None,
    })
}

/// A locked thread, as the configuration writes it, that reports whether it could write
/// outside its one writable folder (`refused-outside`) and inside it (`wrote-inside`), then
/// echoes what is typed; and the folder outside.
pub(super) fn locked_probe(runtime: &Runtime) -> (String, PathBuf) {
    let (work, outside) = (runtime.dir.join("work"), runtime.dir.join("outside"));
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&outside).expect("outside");
    let script = format!(
        "echo x > {outside}/f 2>/dev/null || echo refused-outside; \
         echo x > {work}/f && echo wrote-inside; exec cat",
        outside = outside.display(),
        work = work.display()
    );
    let thread = format!(
        "(name: \"far\", command: [\"sh\", \"-c\", {script:?}], lock: (write: [{work:?}]))",
        work = work.display().to_string()
    );
    (thread, outside)
}

/// The view's entry for `pane`, from the next view that has it and satisfies `wanted`.
fn pane_in_view(
    link: &mut StdioLink,
    pane: u32,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    link.next("the pane in a view", |f| match f {
        ToWindow::View { json } => {
            let view: serde_json::Value = serde_json::from_slice(&json).ok()?;
            let found = view["instance"]["panes"]
                .as_array()?
                .iter()
                .find(|p| p["id"] == u64::from(pane))
                .cloned()?;
            wanted(&found).then_some(found)
        }
        _ => None,
    })
}

/// A link hands the server a thread as the configuration writes it: the server checks it as
/// its own, runs it locked by its own kernel in a pane sized by the link, and refuses a
/// definition with problems, naming them.
#[test]
fn a_link_opens_a_locked_thread_checked_and_sized_here() {
    let runtime = Runtime::new();
    let (thread, outside) = locked_probe(&runtime);
    let mut link = StdioLink::spawn(runtime.paddock(&["server", "--stdio"]));
    greet(&mut link);
    let _stop = StopServer(&runtime, started_server(&runtime));
    let open = |request, thread: String| {
        ToServer::Act(paddock::ctl::protocol::WindowAction::OpenThread {
            request,
            thread,
            cols: 100,
            rows: 30,
        })
    };
    link.send(&open(7, thread));
    let pane = link.next("the answer", |f| match f {
        ToWindow::Opened { request: 7, pane, .. } => Some(pane),
        ToWindow::NotOpened { reason, .. } => panic!("not opened: {reason}"),
        _ => None,
    });
    let entry = pane_in_view(&mut link, pane, |p| p["lock"]["level"] == "locked");
    assert_eq!((entry["cols"].as_u64(), entry["rows"].as_u64()), (Some(100), Some(30)));
    assert_eq!(entry["thread"], "far", "{entry}");
    let socket = started_server(&runtime);
    let capture = |pane: u32| {
        let out = runtime
            .paddock(&["ctl", "--socket"])
            .arg(&socket)
            .args(["capture", "--pane", &pane.to_string()])
            .output()
            .expect("capture");
        text(&out.stdout)
    };
    wait_for("the locked program's report", || {
        let screen = capture(pane);
        screen.contains("refused-outside") && screen.contains("wrote-inside")
    });
    assert!(!outside.join("f").exists(), "the lock kept the program out of {outside:?}");
    // The link sizes its pane; the server's own layout does not.
    link.send(&ToServer::Act(paddock::ctl::protocol::WindowAction::SizePane {
        pane,
        cols: 61,
        rows: 17,
    }));
    link.send(&ToServer::Area { cols: 200, rows: 60 });
    let entry = pane_in_view(&mut link, pane, |p| p["cols"] == 61);
    assert_eq!(entry["rows"], 17, "{entry}");
    // A definition with a problem is refused, naming it.
    link.send(&open(8, "(name: \"bad\", lock: (write: [\"relative/path\"]))".into()));
    let reason = link.next("the refusal", |f| match f {
        ToWindow::NotOpened { request: 8, reason } => Some(reason),
        ToWindow::Opened { request: 8, .. } => panic!("a bad definition was opened"),
        _ => None,
    });
    assert!(reason.contains("lock.write[0]"), "{reason}");
    // A link that gave up waiting for an answer closes what it asked for by its request,
    // from any connection.
    let mut again = StdioLink::spawn(runtime.paddock(&["server", "--stdio"]));
    greet(&mut again);
    again.send(&ToServer::Act(paddock::ctl::protocol::WindowAction::CloseOpened { request: 7 }));
    again.next("the pane closed", |f| match f {
        ToWindow::Closed { pane: closed } if closed == pane => Some(()),
        _ => None,
    });
}
