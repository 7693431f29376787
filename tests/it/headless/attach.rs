//! Windows attached to a server (`paddock --headless`, which `paddock server` is): each keeps
//! replicas of the server's panes over the attach socket, and they must show what the server
//! shows; a window that goes (or sends garbage) takes nothing with it.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use paddock::ctl::attach::{attach_socket, connect};
use paddock::ctl::replicas::{Applied, Replicas};
use paddock::ctl::wire::{read_frame, ToServer, ToWindow, MAX_FRAME};

use super::{alive, wait_for, Instance, Runtime};

const BASH: &[&str] = &["-e", "bash", "--norc", "--noprofile"];

/// A window as the test drives it: its replicas, kept by a reader thread, and its socket.
struct TestWindow {
    replicas: Arc<Mutex<Replicas>>,
    /// What the frames did, in order; a fault ends the list with `Err`.
    log: Arc<Mutex<Vec<Result<Applied, String>>>>,
    stream: UnixStream,
}

impl TestWindow {
    fn attach(instance: &Instance) -> TestWindow {
        Self::attach_reading_slowly(instance, Duration::ZERO)
    }

    /// A window that takes `per_frame` over each frame (a software renderer under a flood).
    fn attach_reading_slowly(instance: &Instance, per_frame: Duration) -> TestWindow {
        let (stream, pid) = connect(&attach_socket(&instance.socket)).expect("attach");
        assert_eq!(pid, instance.child.id());
        let replicas = Arc::new(Mutex::new(Replicas::default()));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (into, record, mut reading) =
            (replicas.clone(), log.clone(), stream.try_clone().expect("clone"));
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            while let Ok(frame) = read_frame(&mut reading, MAX_FRAME, &mut buf) {
                std::thread::sleep(per_frame);
                let applied = ToWindow::decode(frame)
                    .map_err(|e| e.to_string())
                    .and_then(|f| into.lock().unwrap().apply(f).map_err(|e| e.to_string()));
                let failed = applied.is_err();
                record.lock().unwrap().push(applied);
                if failed {
                    return;
                }
            }
        });
        TestWindow { replicas, log, stream }
    }

    /// The replica of `pane`'s screen, as text.
    fn screen(&self, pane: u32) -> Option<String> {
        let replicas = self.replicas.lock().unwrap();
        let term = replicas.get(pane)?.lock().unwrap();
        Some(term.screen_text())
    }

    fn wait_for_text(&self, pane: u32, wanted: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen(pane).unwrap_or_default();
            if screen.contains(wanted) {
                return screen;
            }
            let faults: Vec<_> =
                self.log.lock().unwrap().iter().filter_map(|a| a.clone().err()).collect();
            assert!(faults.is_empty(), "the window's replica failed: {faults:?}");
            assert!(Instant::now() < deadline, "no {wanted:?} in pane {pane}'s replica:\n{screen}");
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn type_in(&self, pane: u32, text: &str) {
        let frame = ToServer::Input { pane, bytes: text.as_bytes().to_vec() }.encode();
        (&self.stream).write_all(&frame).expect("send input");
    }
}

impl Drop for TestWindow {
    fn drop(&mut self) {
        // As a window's process ending closes its socket (the reader thread holds a copy).
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// The screen as `ctl capture` prints it and as a replica's `screen_text` gives it, compared
/// line by line with trailing blanks cut.
fn lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// The replica shows what the server's model shows, once both are quiet.
fn same_as_server(instance: &Instance, window: &TestWindow, pane: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let server = lines(&instance.capture(&pane.to_string()));
        let replica = lines(&window.screen(pane).unwrap_or_default());
        if server == replica {
            return;
        }
        assert!(Instant::now() < deadline, "server:\n{server:#?}\nreplica:\n{replica:#?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_window_follows_every_pane_and_types_into_them() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    instance.send_keys("1", "echo before $((6*7)) Enter");
    instance.wait_for_text("1", "before 42");
    let window = TestWindow::attach(&instance);
    // What came before the window is in its snapshot.
    window.wait_for_text(1, "before 42");
    same_as_server(&instance, &window, 1);
    // Output the server parses afterwards reaches the replica, and so does a new pane.
    instance.ctl(&["new", "--", "bash", "--norc", "--noprofile"]);
    window.wait_for_text(2, "bash-");
    window.type_in(2, "echo typed $((2*21)) in the window\r");
    window.wait_for_text(2, "typed 42 in the window");
    instance.wait_for_text("2", "typed 42 in the window");
    same_as_server(&instance, &window, 2);
    // A resize starts the replica again from the server's reflowed model.
    instance.ctl(&["resize", "--pane", "1", "--size", "50x10"]);
    wait_for("the resized replica", || {
        let replicas = window.replicas.lock().unwrap();
        let size = replicas.get(1).map(|t| t.lock().unwrap().size());
        size.is_some_and(|s| (s.cols, s.lines) == (50, 10))
    });
    same_as_server(&instance, &window, 1);
    instance.ctl(&["close", "--pane", "2"]);
    wait_for("the closed pane to leave the window", || {
        window.replicas.lock().unwrap().get(2).is_none()
    });
}

#[test]
fn two_windows_show_what_either_types() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let (one, two) = (TestWindow::attach(&instance), TestWindow::attach(&instance));
    one.type_in(1, "echo from the first $((40+2))\r");
    two.wait_for_text(1, "from the first 42");
    two.type_in(1, "echo from the second $((40+3))\r");
    one.wait_for_text(1, "from the second 43");
    same_as_server(&instance, &one, 1);
    same_as_server(&instance, &two, 1);
    // `paddock ls` lists them, with their process (this test's).
    let windows = instance.ls()["instances"][0]["windows"].clone();
    let ours = serde_json::json!({ "pid": std::process::id() });
    assert_eq!(windows, serde_json::json!([ours.clone(), ours]), "{windows}");
    let table = instance.run(&["ls"]);
    let table = super::text(&table.stdout);
    assert!(table.contains("2 windows attached (pids"), "{table}");
    drop(one);
    wait_for("ls to count one window", || {
        instance.ls()["instances"][0]["windows"].as_array().map(Vec::len) == Some(1)
    });
}

#[test]
fn a_window_that_goes_takes_nothing_with_it() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let pid = instance.pane(1)["pid"].as_i64().expect("the pane's pid");
    let window = TestWindow::attach(&instance);
    window.type_in(1, "for i in $(seq 1 300); do echo line $i; done; sleep 1; echo after\r");
    window.wait_for_text(1, "line 300");
    // The window dies mid-output, as a killed process's socket does.
    drop(window);
    instance.wait_for_text("1", "after");
    assert!(alive(pid), "the pane's program outlives the window");
    // A new window gets the screen as it is now, with the rows above it kept.
    let again = TestWindow::attach(&instance);
    again.wait_for_text(1, "after");
    same_as_server(&instance, &again, 1);
    let replicas = again.replicas.lock().unwrap();
    let term = replicas.get(1).expect("pane 1").lock().unwrap();
    assert!(term.scrollback_text().contains("line 250"), "{}", term.scrollback_text());
}

#[test]
fn bad_frames_close_the_window_and_the_server_stays_up() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let path = attach_socket(&instance.socket);
    let refusal = |stream: &UnixStream| {
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut buf = Vec::new();
        let mut reading = stream;
        loop {
            match read_frame(&mut reading, MAX_FRAME, &mut buf).map(ToWindow::decode) {
                Ok(Ok(ToWindow::Refused { reason })) => return Some(reason),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    };
    // Not a hello, another version, a length past the limit, garbage after a good hello.
    let cases: Vec<Vec<u8>> = vec![
        ToServer::Input { pane: 1, bytes: b"x".to_vec() }.encode(),
        ToServer::Hello { version: 999 }.encode(),
        vec![0xff, 0xff, 0xff, 0xff, 1],
    ];
    for bytes in &cases {
        let mut stream = UnixStream::connect(&path).expect("connect");
        stream.write_all(bytes).unwrap();
        let reason = refusal(&stream).expect("a refusal");
        assert!(!reason.is_empty());
    }
    let window = TestWindow::attach(&instance);
    window.wait_for_text(1, "bash-");
    (&window.stream).write_all(&[5, 0, 0, 0, 0xee, 1, 2, 3, 4]).unwrap();
    let refused = || {
        window.log.lock().unwrap().iter().find_map(|a| match a {
            Ok(Applied::Refused(reason)) => Some(reason.clone()),
            _ => None,
        })
    };
    wait_for("the window to be refused", || refused().is_some());
    let reason = refused().unwrap_or_default();
    assert!(reason.contains("unknown kind"), "{reason}");
    // An input frame for a pane that is not there is no one's.
    let other = TestWindow::attach(&instance);
    other.type_in(77, "nothing\r");
    other.type_in(1, "echo still here\r");
    other.wait_for_text(1, "still here");
    assert_eq!(instance.pane(1)["status"], "running");
}

#[test]
fn paddock_server_is_the_headless_server_windows_attach_to() {
    use std::io::BufRead;
    let runtime = Runtime::new();
    let mut child = runtime
        .paddock(&["server", "-e", "bash", "--norc", "--noprofile"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start paddock server");
    let mut line = String::new();
    let stdout = child.stdout.take().expect("stdout");
    std::io::BufReader::new(stdout).read_line(&mut line).expect("the socket path");
    let instance =
        Instance { child, socket: line.trim_end().into(), runtime_dir: runtime.run.clone() };
    let window = TestWindow::attach(&instance);
    window.wait_for_text(1, "bash-");
    window.type_in(1, "echo served $((6*7))\r");
    window.wait_for_text(1, "served 42");
}

#[test]
fn a_window_is_told_the_tabs_splits_and_each_panes_pulse() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let window = TestWindow::attach(&instance);
    let layout = |window: &TestWindow| {
        let replicas = window.replicas.lock().unwrap();
        replicas.layout().map(|mux| {
            let tab = mux.active_tab().expect("a tab");
            (mux.tabs().len(), tab.panes().iter().map(|p| p.0).collect::<Vec<_>>(), tab.focus().0)
        })
    };
    wait_for("the first view", || layout(&window) == Some((1, vec![1], 1)));
    instance.ctl(&["split", "--pane", "1", "--right", "--", "bash", "--norc", "--noprofile"]);
    wait_for("the split", || layout(&window) == Some((1, vec![1, 2], 2)));
    window.wait_for_text(2, "bash-");
    // The pulse of a busy pane reaches the window within its sampling period.
    window.type_in(2, "while :; do :; done\r");
    wait_for("pane 2 to work", || {
        let replicas = window.replicas.lock().unwrap();
        let panes = replicas.view().map(|v| v.instance.panes.clone()).unwrap_or_default();
        let pane = panes.iter().find(|p| p.id == 2).and_then(|p| p.pulse.clone());
        pane.is_some_and(|p| p.state == "working")
    });
    window.type_in(2, "\x03");
}

/// The attach socket types into any pane: a lock never lets it through (it lies in the control
/// folder every lock hides), and a client in other namespaces that reaches it all the same is
/// refused by the server, as the control socket's are.
#[test]
fn a_client_inside_a_lock_cannot_attach() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let path = attach_socket(&instance.socket).display().to_string();
    let version = paddock::ctl::wire::VERSION.to_string();
    let out = runtime
        .paddock(&["sandbox", "run", "--write", &work.display().to_string(), "--socket", &path])
        .args(["--", "true"])
        .output()
        .expect("run");
    let stderr = super::text(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("is a paddock control socket"), "{stderr}");
    // Hello (in this paddock's protocol version), then (were it greeted) `id` typed into pane 1.
    let hello = "import socket, struct, sys\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.connect(sys.argv[1])\n\
        try:\n\
        \x20   s.sendall(struct.pack('<IBH', 3, 1, int(sys.argv[2])))\n\
        except OSError:\n\
        \x20   pass  # refused before its hello was read\n\
        answer = s.recv(65536)\n\
        print(answer)\n\
        if answer[4:5] == b'\\x01':\n\
        \x20   s.sendall(struct.pack('<IBII', 12, 2, 1, 3) + b'id\\r')\n";
    let out = std::process::Command::new("unshare")
        .args(["--user", "--pid", "--fork", "python3", "-c", hello, &path, &version])
        .output()
        .expect("unshare");
    let stdout = super::text(&out.stdout);
    assert!(stdout.contains("another PID namespace"), "{stdout} {}", super::text(&out.stderr));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!instance.capture("1").contains("uid="), "the refused client typed nothing");
    // The same client outside any namespace of its own is greeted and types.
    let out = std::process::Command::new("python3").args(["-c", hello, &path, &version]).output();
    assert!(out.expect("python3").status.success());
    instance.wait_for_text("1", "uid=");
}

impl TestWindow {
    fn send(&self, frame: ToServer) {
        (&self.stream).write_all(&frame.encode()).expect("send a frame");
    }

    fn size(&self, pane: u32) -> Option<(usize, usize)> {
        let replicas = self.replicas.lock().unwrap();
        let size = replicas.get(pane).map(|t| t.lock().unwrap().size());
        size.map(|s| (s.cols, s.lines))
    }
}

#[test]
fn the_panes_take_the_size_of_the_window_active_last() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let (one, two) = (TestWindow::attach(&instance), TestWindow::attach(&instance));
    one.send(ToServer::Area { cols: 100, rows: 30 });
    // A window draws a title strip above each pane: its row is not the program's.
    wait_for("the first window's size", || two.size(1) == Some((100, 29)));
    one.type_in(1, "echo one\r");
    // The second window says its size, but the first is the one in use.
    two.send(ToServer::Area { cols: 60, rows: 20 });
    one.wait_for_text(1, "one");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(instance.pane(1)["cols"], 100);
    // Typing makes the second window the active one: its size wins.
    two.type_in(1, "echo two\r");
    wait_for("the second window's size", || one.size(1) == Some((60, 19)));
    two.wait_for_text(1, "two");
    same_as_server(&instance, &one, 1);
    // No window lays panes out in more cells than a screen can show.
    two.send(ToServer::Area { cols: u16::MAX, rows: u16::MAX });
    wait_for("the largest area", || one.size(1) == Some((2048, 1023)));
}

#[test]
fn scrollback_left_on_the_server_is_fetched_when_scrolled_to() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    instance.send_keys("1", "seq 1 3000 Enter");
    instance.wait_for_text("1", "\n3000\n");
    let window = TestWindow::attach(&instance);
    window.wait_for_text(1, "3000");
    let held = |w: &TestWindow| {
        let replicas = w.replicas.lock().unwrap();
        let term = replicas.get(1).expect("pane 1").lock().unwrap();
        (term.first_line(), term.scrollback_len())
    };
    let (first, len) = held(&window);
    assert_eq!(len, 1000, "the snapshot holds the newest rows only");
    window.send(ToServer::Scrollback { pane: 1, before: first, count: 1500 });
    wait_for("the rows fetched", || held(&window).1 == 2500);
    let replicas = window.replicas.lock().unwrap();
    let term = replicas.get(1).expect("pane 1").lock().unwrap();
    let text = term.scrollback_text();
    let server = instance.ctl(&["capture", "--pane", "1", "--scrollback"]);
    assert!(server.ends_with(&(text + &term.screen_text())), "the replica's rows are the server's");
}

#[test]
fn a_window_slower_than_a_flood_is_caught_up_not_dropped() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let window = TestWindow::attach_reading_slowly(&instance, Duration::from_millis(2));
    window.wait_for_text(1, "bash");
    // About 40 MB: thousands of chunks, read at 2 ms each by this window.
    let flood = "seq -f '%09g of the flood, and some more text' 1 1000000; echo END-OF-$((6*7))\r";
    instance.ctl(&["send", "--pane", "1", "--text", flood]);
    instance.wait_for_text("1", "END-OF-42");
    window.wait_for_text(1, "END-OF-42");
    same_as_server(&instance, &window, 1);
    let log = window.log.lock().unwrap();
    assert!(!log.iter().any(|a| matches!(a, Ok(Applied::Refused(_)))), "the window was dropped");
    let snapshots = log.iter().filter(|a| matches!(a, Ok(Applied::Pane(1)))).count();
    assert!(snapshots >= 2, "the window was caught up with a snapshot ({snapshots} in all)");
    let chunks = log.iter().filter(|a| matches!(a, Ok(Applied::Output(1)))).count();
    assert!(chunks < 20_000, "the window was sent every chunk ({chunks})");
}
