//! Windows come and go; the server keeps the panes. Under Xvfb: a window killed with SIGKILL,
//! a display that dies, and two windows on one server, each checked as a person would (the
//! programs keep running, `paddock attach` shows them again, typing in one window reaches the
//! pane and both windows draw it).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::window::{distinct_colors, run, runtime_dir, session_run, wait_for, Windowed, Xvfb};

const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");

/// `paddock attach` on `app`'s server, shown on `x`: the window process and its X window.
fn attach(x: &Xvfb, app: &Windowed) -> (Child, String) {
    let before = windows(x);
    let child = x
        .command(PADDOCK)
        .args(["attach", "--socket", &app.socket])
        .env("XDG_RUNTIME_DIR", crate::window::session_run(&app.runtime))
        .env("XDG_CONFIG_HOME", app.runtime.join("config"))
        .stdin(Stdio::null())
        .spawn()
        .expect("paddock attach");
    let mut window = None;
    wait_for("the attached window", || {
        window = windows(x).into_iter().find(|w| !before.contains(w));
        window.is_some()
    });
    let window = window.expect("a new window");
    (child, window)
}

/// The X windows named paddock, once shown (a window is shown when it can draw).
fn windows(x: &Xvfb) -> Vec<String> {
    let out =
        x.command("xdotool").args(["search", "--onlyvisible", "--name", "^paddock$"]).output();
    let out = out.expect("xdotool search");
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

/// One window's picture, as PNG bytes.
fn picture(x: &Xvfb, window: &str, shot: &Path) -> crate::images::Image {
    run(x.command("import").args(["-window", window]).arg(format!("PNG32:{}", shot.display())));
    crate::images::read_png(shot).expect("read the screenshot")
}

/// Wait until `window`'s picture is no longer `old`, and return it.
fn picture_changes(
    x: &Xvfb,
    window: &str,
    shot: &Path,
    old: &crate::images::Image,
    what: &str,
) -> crate::images::Image {
    let mut now = picture(x, window, shot);
    wait_for(what, || {
        now = picture(x, window, shot);
        now.rgba != old.rgba
    });
    now
}

/// The pixels of `[left, top, right, bottom)` of `image`.
fn region(image: &crate::images::Image, [left, top, right, bottom]: [u32; 4]) -> Vec<u8> {
    let mut pixels = Vec::new();
    for y in top..bottom.min(image.height) {
        let row = (y * image.width) as usize * 4;
        let (from, to) = (row + left as usize * 4, row + right.min(image.width) as usize * 4);
        pixels.extend_from_slice(&image.rgba[from..to]);
    }
    pixels
}

fn shots(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir.join(name)
}

fn type_line(x: &Xvfb, window: &str, line: &str) {
    run(x.command("xdotool").args(["windowfocus", "--sync", window]));
    run(x.command("xdotool").args(["type", "--delay", "30", line]));
    run(x.command("xdotool").args(["key", "Return"]));
}

/// `paddock --exit-with-child -e sh -c SCRIPT` in a window on `x`, with `runtime`'s folders,
/// until it ends: its exit code and what it said on stderr.
fn window_for(x: &Xvfb, runtime: &Path, script: &str) -> (Option<i32>, String) {
    let mut paddock = x
        .command(PADDOCK)
        .args(["--exit-with-child", "-e", "sh", "-c", script])
        .env("XDG_RUNTIME_DIR", session_run(runtime))
        .env("XDG_CONFIG_HOME", runtime.join("config"))
        .env("XDG_STATE_HOME", runtime.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start paddock");
    let mut status = None;
    wait_for("the window to end with its program", || {
        status = paddock.try_wait().expect("try_wait");
        status.is_some()
    });
    let mut said = String::new();
    std::io::Read::read_to_string(paddock.stderr.as_mut().expect("stderr"), &mut said).unwrap();
    (status.and_then(|s| s.code()), said)
}

fn gone(child: &mut Child) -> bool {
    child.try_wait().expect("try_wait").is_some()
}

#[test]
fn a_killed_window_leaves_its_programs_running_and_attach_shows_them_with_their_scrollback() {
    let x = Xvfb::start();
    let mut app = Windowed::start(&x, "attach-kill");
    wait_for("the first prompt", || app.ctl(&["capture", "--pane", "1"]).contains("bash-"));
    // An agent's stand-in: it keeps working (counting into a file) whatever the windows do,
    // after printing more lines than a window is sent up front.
    let count = app.runtime.join("count");
    let script = format!(
        "(i=0; while :; do i=$((i+1)); echo $i > {}; sleep 0.1; done) & seq 1 3000\n",
        count.display()
    );
    app.ctl(&["send", "--pane", "1", "--text", &script]);
    wait_for("the count to start", || count.exists());
    wait_for("the output to end", || app.ctl(&["capture", "--pane", "1"]).contains("\n3000\n"));

    app.child.kill().expect("SIGKILL the window");
    app.child.wait().expect("wait");
    let counted =
        || std::fs::read_to_string(&count).ok().and_then(|t| t.trim().parse::<u64>().ok());
    let then = counted().expect("a count");
    wait_for("the program to go on with no window", || counted().is_some_and(|n| n > then + 5));
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(!ls.contains("attached"), "no window is left: {ls}");
    assert!(ls.contains(" running "), "{ls}");

    let (window, id) = attach(&x, &app);
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(ls.contains(&format!("1 window attached (pid {})", window.id())), "{ls}");
    let shot = shots("attach-kill.png");
    let mut bottom = picture(&x, &id, &shot);
    wait_for("the attached window to draw", || {
        bottom = picture(&x, &id, &shot);
        distinct_colors(&bottom) >= 3
    });
    // Back to the oldest line the window holds, then again once the server has sent older
    // ones: each shows other lines.
    run(x.command("xdotool").args(["windowfocus", "--sync", &id]));
    run(x.command("xdotool").args(["key", "shift+Home"]));
    let held = picture_changes(&x, &id, &shot, &bottom, "the view to scroll back");
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut older = held.clone();
    while older.rgba == held.rgba && Instant::now() < deadline {
        run(x.command("xdotool").args(["key", "shift+Home"]));
        std::thread::sleep(Duration::from_millis(300));
        older = picture(&x, &id, &shot);
    }
    assert!(older.rgba != held.rgba, "no rows older than the first {} came", shot.display());
    run(x.command("xdotool").args(["key", "shift+End"]));
    type_line(&x, &id, "echo back-again");
    wait_for("typing in the attached window", || {
        app.ctl(&["capture", "--pane", "1"]).contains("\nback-again\n")
    });
    // The window ends, successfully, when the server stops.
    app.child = window;
    app.stop();
}

#[test]
fn a_display_that_dies_is_a_detach() {
    let x = Xvfb::start();
    let mut app = Windowed::start(&x, "attach-xvfb");
    wait_for("the first prompt", || app.ctl(&["capture", "--pane", "1"]).contains("bash-"));
    app.ctl(&["send", "--pane", "1", "--text", "echo before-the-display-died\n"]);
    // SIGKILL: the X server gets no chance to say goodbye.
    let mut x = x;
    x.child.kill().expect("kill Xvfb");
    drop(x);
    wait_for("the window to end with its display", || gone(&mut app.child));
    app.ctl(&["send", "--pane", "1", "--text", "echo no-display-now\n"]);
    wait_for("the pane to run on", || {
        app.ctl(&["capture", "--pane", "1"]).contains("\nno-display-now\n")
    });
    let y = Xvfb::start();
    let (window, id) = attach(&y, &app);
    let shot = shots("attach-xvfb.png");
    wait_for("the attached window to draw", || distinct_colors(&picture(&y, &id, &shot)) >= 3);
    type_line(&y, &id, "echo on-a-new-display");
    wait_for("typing on the new display", || {
        app.ctl(&["capture", "--pane", "1"]).contains("\non-a-new-display\n")
    });
    app.child = window;
    app.stop();
}

#[test]
fn two_windows_on_one_server_show_what_one_types_and_keep_their_own_tabs() {
    let x = Xvfb::start();
    // New tabs run $SHELL: a plain one, so the tab's prompt owes nothing to this machine's rc
    // files.
    let args = ["-e", "bash", "--norc", "--noprofile"];
    let app = Windowed::start_with_env(&x, "attach-two", &args, &[("SHELL", "/bin/sh")]);
    wait_for("the first prompt", || app.ctl(&["capture", "--pane", "1"]).contains("bash-"));
    let (mut second, id) = attach(&x, &app);
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(ls.contains("2 windows attached"), "{ls}");
    // Side by side as far as the screen allows: the first window's top left (where the
    // prompt is) stays in sight; a covered window's pixels cannot be read.
    run(x.command("xdotool").args(["windowmove", "--sync", &id, "480", "200"]));
    let shot = shots("attach-two.png");
    let in_first = |image: &crate::images::Image| region(image, [0, 0, 480, 200]);
    let in_second = |image: &crate::images::Image| region(image, [480, 200, 1280, 800]);
    std::thread::sleep(Duration::from_millis(500));
    let before = picture(&x, "root", &shot);
    type_line(&x, &id, "echo typed-in-the-second-window");
    wait_for("typing in the second window", || {
        app.ctl(&["capture", "--pane", "1"]).contains("\ntyped-in-the-second-window\n")
    });
    wait_for("both windows to draw it", || {
        let now = picture(&x, "root", &shot);
        in_first(&now) != in_first(&before) && in_second(&now) != in_second(&before)
    });

    // A new tab from the second window: it shows it; the first stays on its tab, so what is
    // typed there goes to the first pane.
    run(x.command("xdotool").args(["windowfocus", "--sync", &id]));
    run(x.command("xdotool").args(["key", "ctrl+shift+t"]));
    let ls = || run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    wait_for("the second tab", || ls().lines().any(|l| l.trim_start().starts_with("2* ")));
    type_line(&x, &id, "echo in-the-new-tab");
    wait_for("typing in the new tab", || {
        app.ctl(&["capture", "--pane", "2"]).contains("\nin-the-new-tab\n")
    });
    type_line(&x, &app.window, "echo still-on-the-first-tab");
    wait_for("the first window typing into its own tab", || {
        app.ctl(&["capture", "--pane", "1"]).contains("\nstill-on-the-first-tab\n")
    });
    assert!(!app.ctl(&["capture", "--pane", "2"]).contains("still-on-the-first-tab"));

    // Detaching (Ctrl+Shift+Q) closes a window and nothing else.
    run(x.command("xdotool").args(["windowfocus", "--sync", &id]));
    run(x.command("xdotool").args(["key", "ctrl+shift+q"]));
    wait_for("the second window to detach", || gone(&mut second));
    assert!(second.wait().expect("wait").success());
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(ls.contains("1 window attached") && ls.matches(" running ").count() == 2, "{ls}");
    app.stop();
}

#[test]
fn a_window_on_a_server_that_ends_with_its_program_exits_with_that_programs_code() {
    let x = Xvfb::start();
    let args = ["--exit-with-child", "-e", "sh", "-c", "echo ready; read answer; exit 7"];
    let mut app = Windowed::start_with_env(&x, "attach-exit", &args, &[]);
    wait_for("the program to start", || app.ctl(&["capture", "--pane", "1"]).contains("ready"));
    type_line(&x, &app.window, "done");
    // The server ends with the program (`--exit-with-child`), and the window with the server,
    // with the program's code, as the window that owned its panes did.
    let mut status = None;
    wait_for("the window to end", || {
        status = app.child.try_wait().expect("try_wait");
        status.is_some()
    });
    assert_eq!(status.and_then(|s| s.code()), Some(7), "the window's exit status");

    // A program that ends at once, before its window has attached or as it says its size:
    // the server waits for the window and the window reads to the server's last word, so it
    // exits with the program's code every time, not with "the server ended as it started" or
    // "connection reset by peer".
    for run in 0..8 {
        let (code, said) = window_for(&x, &app.runtime, "exit 7");
        assert_eq!(code, Some(7), "run {run}: the window's exit status; it said:\n{said}");
    }
    let _ = std::fs::remove_dir_all(&app.runtime);
}

#[test]
fn a_window_that_cannot_open_runs_nothing_and_a_program_that_cannot_start_is_named() {
    // The window starts its server while it opens the display; the server opens its tabs only
    // once a window has attached. No display: the window fails, its server is stopped, and
    // the program never ran.
    let runtime = runtime_dir("no-display");
    let ran = runtime.join("ran");
    let paddock = |display: Option<&str>| {
        let mut command = Command::new(PADDOCK);
        match display {
            Some(display) => command.env("DISPLAY", display),
            None => command.env_remove("DISPLAY"),
        };
        command
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_RUNTIME_DIR", session_run(&runtime))
            .env("XDG_CONFIG_HOME", runtime.join("config"))
            .env("XDG_STATE_HOME", runtime.join("state"));
        command
    };
    let out = paddock(None)
        .args(["--exit-with-child", "-e", "touch"])
        .arg(&ran)
        .output()
        .expect("run paddock");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a window without a display succeeded; it said:\n{said}");
    let sockets = session_run(&runtime).join("paddock");
    let servers = || {
        std::fs::read_dir(&sockets).map_or(0, |entries| {
            entries.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "sock")).count()
        })
    };
    // Stopped by the window, well before it would end on its own (10 s without a window).
    let deadline = Instant::now() + Duration::from_secs(5);
    while servers() > 0 {
        assert!(Instant::now() < deadline, "the window left its server running");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!ran.exists(), "the program ran for a window that never opened; it said:\n{said}");

    // A program that cannot start: the window says why and exits with 1, not 0.
    let x = Xvfb::start();
    let out = paddock(Some(&x.display))
        .args(["--exit-with-child", "-e", "/nonexistent/program"])
        .stdout(Stdio::null())
        .output()
        .expect("run paddock");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the window's exit status; it said:\n{said}");
    assert!(said.contains("cannot start \"/nonexistent/program\""), "it said:\n{said}");
    wait_for("the second server to stop", || servers() == 0);
    let _ = std::fs::remove_dir_all(&runtime);
}

#[test]
fn a_program_started_with_its_window_starts_at_the_windows_size() {
    // The server a window starts opens its tabs once the window has said its size (which it
    // does before its GPU is ready), so the program's first look at its terminal is the size it
    // is shown at: no SIGWINCH as it starts, no reflow of its first output. Before, it started
    // at the server's 80x24 and was resized tens of milliseconds later.
    let x = Xvfb::start();
    let runtime = runtime_dir("first-size");
    let seen = runtime.join("seen");
    let script = format!(
        "trap 'echo resized >> {seen}' WINCH; stty size >> {seen}; sleep 1; stty size >> {seen}",
        seen = seen.display()
    );
    let (code, said) = window_for(&x, &runtime, &script);
    assert_eq!(code, Some(0), "paddock failed; it said:\n{said}");
    let seen = std::fs::read_to_string(&seen).expect("the program wrote what it saw");
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines.len(), 2, "the program was resized after it started; it saw:\n{seen}");
    assert_eq!(lines[0], lines[1], "the program's size changed; it saw:\n{seen}");
    assert_ne!(lines[0], "24 80", "the program started at the server's own size, not the window's");
    let _ = std::fs::remove_dir_all(&runtime);
}
