//! A real window end to end under Xvfb: paddock draws its panes on the X server (through the
//! software Vulkan adapter), keys typed with xdotool reach the focused pane, key bindings move
//! the focus and split, and a screenshot of the root window shows panes and a divider. `cargo xtask ci` installs
//! xvfb, xdotool and imagemagick; the screenshot is kept under target/window-test.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use paddock::render::scene::Theme;

const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");

/// An X server on a display of its own, stopped on drop.
pub(crate) struct Xvfb {
    pub(crate) child: Child,
    pub(crate) display: String,
}

impl Xvfb {
    /// An X server on a free display: Xvfb picks the number itself (`-displayfd`) and writes it
    /// once it accepts connections, so parallel tests and stale sockets of killed servers never
    /// collide. `-noreset`, as a desktop's server: by default Xvfb resets when its last client
    /// goes, and a window opened during the reset (`paddock attach` after the only window was
    /// killed) is refused its connection.
    pub(crate) fn start() -> Xvfb {
        let mut child = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .arg("-noreset")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start Xvfb ({e}); `cargo xtask ci` installs xvfb"));
        let mut number = String::new();
        let stdout = child.stdout.take().expect("Xvfb's stdout");
        BufReader::new(stdout).read_line(&mut number).expect("Xvfb's display number");
        let number = number.trim();
        assert!(!number.is_empty(), "Xvfb did not start (no display number)");
        let x = Xvfb { child, display: format!(":{number}") };
        // Once a client gets through: on a loaded machine, a display number taken over from a
        // server killed a moment ago has refused the first connection (CI saw `paddock attach`
        // fail there to open its window).
        let deadline = Instant::now() + Duration::from_secs(20);
        while !x
            .command("xdotool")
            .arg("getdisplaygeometry")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            assert!(Instant::now() < deadline, "Xvfb on {} takes no connections", x.display);
            std::thread::sleep(Duration::from_millis(50));
        }
        x
    }

    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("DISPLAY", &self.display).env_remove("WAYLAND_DISPLAY");
        command
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        // SIGTERM, so the server removes its socket and lock file.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Screenshots of the whole screen into `shot` until one `shows` what is wanted, for as long as
/// `wait_for` would wait (frames follow output asynchronously, and a busy machine draws late):
/// whether one did, and the last screenshot.
pub(crate) fn screenshot_until(
    x: &Xvfb,
    shot: &Path,
    shows: impl Fn(&crate::images::Image) -> bool,
) -> (bool, crate::images::Image) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        run(x.command("import").args(["-window", "root"]).arg(format!("PNG32:{}", shot.display())));
        let image = crate::images::read_png(shot).expect("read the screenshot");
        if shows(&image) {
            return (true, image);
        }
        if Instant::now() >= deadline {
            return (false, image);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub(crate) fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_window_shows_two_panes_and_takes_typing() {
    let x = Xvfb::start();
    let app = Windowed::start(&x, "window");
    let ctl = |args: &[&str]| app.ctl(args);
    wait_for("the first prompt", || ctl(&["capture", "--pane", "1"]).contains("bash-"));
    assert_eq!(ctl(&["split", "--pane", "1", "--right", "--", "bash", "--norc"]).trim(), "2");
    wait_for("the second prompt", || ctl(&["capture", "--pane", "2"]).contains("bash-"));
    // The split took the focus; the window has it.
    run(x.command("xdotool").args(["windowfocus", "--sync", &app.window]));
    run(x.command("xdotool").args(["type", "--delay", "30", "echo typed-in-the-window"]));
    run(x.command("xdotool").args(["key", "Return"]));
    wait_for("typing to reach the focused pane", || {
        ctl(&["capture", "--pane", "2"]).contains("\ntyped-in-the-window\n")
    });

    // Key bindings act on the layout: focus moves left, then that pane splits downwards.
    run(x.command("xdotool").args(["key", "ctrl+shift+Left"]));
    let focused = |id: &str| {
        let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
        ls.lines().any(|l| l.trim_start().starts_with(&format!("{id}* ")))
    };
    wait_for("focus to move to pane 1", || focused("1"));
    run(x.command("xdotool").args(["key", "ctrl+shift+o"]));
    wait_for("a third pane, focused", || focused("3"));

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let shot = shots.join("two-panes.png");
    // Frames follow output asynchronously: look until the divider is on screen.
    let (found, image) = screenshot_until(&x, &shot, shows_split);
    eprintln!("screenshot: {}", shot.display());
    assert!(distinct_colors(&image) >= 3, "the window is blank: {}", shot.display());
    assert!(found, "no divider between two panes in {}", shot.display());
    assert!(shows_active_tab(&image), "no active tab in the tab bar of {}", shot.display());

    app.stop();
}

fn pixel(image: &crate::images::Image, x: u32, y: u32) -> [u8; 3] {
    let i = ((y * image.width + x) * 4) as usize;
    [image.rgba[i], image.rgba[i + 1], image.rgba[i + 2]]
}

/// A column of the divider's color, most of the window tall, with pane background on both sides.
fn shows_split(image: &crate::images::Image) -> bool {
    let theme = Theme::default();
    let divider = [theme.divider.r, theme.divider.g, theme.divider.b];
    let background = [theme.background.r, theme.background.g, theme.background.b];
    let tall = |x: u32, color: [u8; 3]| {
        let rows = (0..image.height).filter(|&y| pixel(image, x, y) == color).count();
        rows as u32 >= image.height / 3
    };
    (1..image.width - 1).any(|x| {
        tall(x, divider)
            && (1..x).any(|l| tall(l, background))
            && (x + 1..image.width).any(|r| tall(r, background))
    })
}

/// The tab bar's first row shows the active tab in inverse video: a patch of the theme's
/// foreground color at the top left.
fn shows_active_tab(image: &crate::images::Image) -> bool {
    let theme = Theme::default();
    let foreground = [theme.foreground.r, theme.foreground.g, theme.foreground.b];
    let patch = (0..8).flat_map(|y| (0..40).map(move |x| (x, y)));
    patch.filter(|&(x, y)| pixel(image, x, y) == foreground).count() >= 100
}

pub(crate) fn distinct_colors(image: &crate::images::Image) -> usize {
    let mut seen = std::collections::HashSet::new();
    for p in image.rgba.chunks(4) {
        seen.insert([p[0], p[1], p[2]]);
        if seen.len() > 16 {
            break;
        }
    }
    seen.len()
}

/// The folder of the windowed test `name`: its files, and `run` (`session_run`), the session's
/// runtime folder (a lock folder may not be, or lie in, that one).
pub(crate) fn runtime_dir(name: &str) -> PathBuf {
    let runtime = std::env::temp_dir().join(format!("pdk-{name}-{}", std::process::id()));
    std::fs::create_dir_all(session_run(&runtime)).expect("runtime dir");
    runtime
}

/// The session's runtime folder (`XDG_RUNTIME_DIR`) of the test folder `runtime`.
pub(crate) fn session_run(runtime: &Path) -> PathBuf {
    runtime.join("run")
}

/// The runtime folder of the windowed test `name`, and the configuration file `Windowed` reads
/// there (its folder made, the file not written).
fn config_file(name: &str) -> (PathBuf, PathBuf) {
    let runtime = runtime_dir(name);
    let dir = runtime.join("config/paddock");
    std::fs::create_dir_all(&dir).expect("config dir");
    let path = dir.join("config.ron");
    (runtime, path)
}

/// A window on a paddock server (started by the window) with its control socket. Dropped
/// without `stop`, for a test that failed, the server is stopped too: it outlives its window.
pub(crate) struct Windowed {
    pub(crate) child: Child,
    pub(crate) socket: String,
    pub(crate) window: String,
    pub(crate) runtime: PathBuf,
}

impl Drop for Windowed {
    fn drop(&mut self) {
        let _ = Command::new(PADDOCK)
            .args(["ctl", "--socket", &self.socket, "stop"])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Windowed {
    pub(crate) fn start(x: &Xvfb, name: &str) -> Windowed {
        Windowed::start_with(x, name, &["-e", "bash", "--norc", "--noprofile"])
    }

    /// Start with these arguments; the configuration is `$runtime/config/paddock/config.ron`
    /// (none unless the test wrote it, see `runtime_dir`) or `--config`.
    fn start_with(x: &Xvfb, name: &str, args: &[&str]) -> Windowed {
        Windowed::start_with_env(x, name, args, &[])
    }

    pub(crate) fn start_with_env(
        x: &Xvfb,
        name: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Windowed {
        let runtime = runtime_dir(name);
        let mut command = x.command(PADDOCK);
        command
            .args(args)
            .envs(env.iter().copied())
            .env("XDG_RUNTIME_DIR", session_run(&runtime))
            .env("XDG_CONFIG_HOME", runtime.join("config"))
            .stdout(Stdio::piped());
        // The server's log goes to the state folder: the test's own, unless it has one.
        if std::env::var_os("XDG_STATE_HOME").is_none() {
            command.env("XDG_STATE_HOME", runtime.join("state"));
        }
        let mut child = command.spawn().expect("start paddock");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("socket path");
        let socket = line.trim_end().to_owned();
        let window = run(x.command("xdotool").args([
            "search",
            "--sync",
            "--onlyvisible",
            "--name",
            "^paddock$",
        ]));
        let window = window.lines().next().expect("paddock's window").to_owned();
        run(x.command("xdotool").args(["windowfocus", "--sync", &window]));
        Windowed { child, socket, window, runtime }
    }

    pub(crate) fn ctl(&self, args: &[&str]) -> String {
        run(Command::new(PADDOCK).arg("ctl").arg("--socket").arg(&self.socket).args(args))
    }

    fn screen(&self) -> String {
        self.ctl(&["capture", "--pane", "1"])
    }

    /// The pixel at the middle of the focused single pane's cell (`col`, `row`). The cell size
    /// is estimated from the window's size and the pane's grid (the tab bar and the title strip
    /// take a row each above it): exact enough near the top-left, where the tests click.
    fn cell_center(&self, x: &Xvfb, col: usize, row: usize) -> (u32, u32) {
        let geometry = run(x.command("xdotool").args(["getwindowgeometry", &self.window]));
        let size = geometry
            .lines()
            .find_map(|l| l.trim().strip_prefix("Geometry: "))
            .expect("window geometry");
        let (w, h) = size.split_once('x').expect("WxH");
        let (w, h): (f32, f32) = (w.parse().expect("width"), h.parse().expect("height"));
        let ls = run(Command::new(PADDOCK).args(["ls", "--json", "--socket", &self.socket]));
        let ls: serde_json::Value = serde_json::from_str(&ls).expect("ls --json");
        let pane = &ls["instances"][0]["panes"][0];
        let cols = pane["cols"].as_f64().expect("cols") as f32;
        let rows = pane["rows"].as_f64().expect("rows") as f32;
        let (cw, ch) = (w / cols, h / (rows + 2.0));
        (((col as f32 + 0.5) * cw) as u32, ((row as f32 + 2.5) * ch) as u32)
    }

    pub(crate) fn stop(mut self) {
        self.ctl(&["stop"]);
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "paddock exited with {status}");
        let _ = std::fs::remove_dir_all(&self.runtime);
    }
}

fn xdotool(x: &Xvfb, args: &[&str]) {
    run(x.command("xdotool").args(args));
}

#[test]
fn a_window_selects_copies_pastes_scrolls_back_and_searches() {
    let x = Xvfb::start();
    let app = Windowed::start(&x, "select");
    wait_for("the first prompt", || app.screen().contains("bash-"));

    // Scroll back with the wheel, triple-click the top row: a line that was no longer on the
    // screen is selected, copied, and pasted back.
    app.ctl(&["send", "--pane", "1", "--text", "seq 1 300\n"]);
    wait_for("the numbers", || app.screen().contains("\n300\n"));
    let on_screen = app.screen();
    let (x0, y0) = app.cell_center(&x, 1, 0);
    xdotool(&x, &["mousemove", &x0.to_string(), &y0.to_string()]);
    xdotool(&x, &["click", "--repeat", "10", "--delay", "20", "4"]);
    xdotool(&x, &["click", "--repeat", "3", "--delay", "60", "1"]);
    xdotool(&x, &["type", "--delay", "20", "echo got:"]);
    xdotool(&x, &["key", "ctrl+shift+v", "Return"]);
    let mut got = String::new();
    wait_for("the pasted line", || {
        let screen = app.screen();
        let line = screen.lines().find(|l| l.starts_with("got:"));
        got = line.unwrap_or_default().trim_start_matches("got:").to_owned();
        line.is_some()
    });
    let number: u32 = got.parse().unwrap_or_else(|_| panic!("pasted {got:?}, not a line number"));
    assert!(
        !on_screen.lines().any(|l| l == got),
        "line {number} was on the screen already: the wheel did not scroll back"
    );

    // A double click selects a whole word (a path), which pastes back whole.
    app.ctl(&["send", "--pane", "1", "--text", "clear; echo copy-me/please.now here\n"]);
    wait_for("the word", || app.screen().starts_with("copy-me/please.now here\n"));
    let (x1, y1) = app.cell_center(&x, 3, 0);
    xdotool(&x, &["mousemove", &x1.to_string(), &y1.to_string()]);
    xdotool(&x, &["click", "--repeat", "2", "--delay", "60", "1"]);
    xdotool(&x, &["type", "--delay", "20", "echo pasted:"]);
    xdotool(&x, &["key", "ctrl+shift+v", "Return"]);
    wait_for("the pasted word", || app.screen().contains("\npasted:copy-me/please.now\n"));

    // Search: the matches are highlighted and the current one stands out.
    xdotool(&x, &["key", "ctrl+shift+f"]);
    xdotool(&x, &["type", "--delay", "20", "please"]);
    xdotool(&x, &["key", "Return"]);
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let shot = shots.join("search.png");
    let theme = Theme::default();
    let colors = [theme.current_match, theme.search_match].map(|c| [c.r, c.g, c.b]);
    let (found, _) = screenshot_until(&x, &shot, |image| {
        let count = |color| image.rgba.chunks(4).filter(|p| p[..3] == color).count();
        colors.iter().all(|&c| count(c) >= 20)
    });
    eprintln!("screenshot: {}", shot.display());
    assert!(found, "no highlighted search matches in {}", shot.display());
    // Escape closes the search; typing goes to the program again.
    xdotool(&x, &["key", "Escape"]);
    xdotool(&x, &["type", "--delay", "20", "echo after-search"]);
    xdotool(&x, &["key", "Return"]);
    wait_for("typing after the search", || app.screen().contains("\nafter-search\n"));
    app.stop();
}

/// The configuration in a real window: threads open in their split, the theme's background
/// and padding are drawn, an edit of the theme shows at once, and a broken edit opens a
/// `config` tab while the threads keep running.
#[test]
fn a_window_takes_its_look_and_threads_from_the_config_and_follows_edits() {
    let x = Xvfb::start();
    let (runtime, path) = config_file("config");
    let work = runtime.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let work = work.display().to_string();
    // The side thread is locked to `work`. No glow: it tints the title strips while it eases,
    // and the badge is looked for by its exact color.
    let config = |background: &str| {
        format!(
            r#"(
                theme: (background: "{background}"),
                padding: 12,
                pulse_glow: false,
                threads: [
                    (name: "agent", command: ["bash", "--norc", "--noprofile"]),
                    (name: "side", command: ["sh", "-c", "echo side; exec sleep 600"], place: RightOf("agent"), lock: (write: ["{work}"])),
                ],
            )"#
        )
    };
    std::fs::write(&path, config("#203040")).expect("write config");
    let app = Windowed::start_with(&x, "config", &[]);
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(ls.contains(" agent ") && ls.contains(" side "), "{ls}");
    wait_for("the side thread's output", || app.ctl(&["capture", "--pane", "2"]).contains("side"));
    let json = run(Command::new(PADDOCK).args(["ls", "--json", "--socket", &app.socket]));
    let json: serde_json::Value = serde_json::from_str(&json).expect("ls --json");
    assert_eq!(json["instances"][0]["panes"][1]["lock"]["level"], "locked", "{json}");

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let shot = shots.join("config.png");
    let shows = |color: [u8; 3]| {
        run(x.command("import").args(["-window", "root"]).arg(format!("PNG32:{}", shot.display())));
        let image = crate::images::read_png(&shot).expect("read the screenshot");
        let count = (0..image.height)
            .flat_map(|y| (0..image.width).map(move |x| (x, y)))
            .filter(|&(x, y)| pixel(&image, x, y) == color)
            .count();
        // Most of a window of at least 640x480 is background.
        count > 100_000
    };
    wait_for("the configured background", || shows([0x20, 0x30, 0x40]));
    // The locked pane's title strip carries its badge: a patch of the palette's green.
    let image = crate::images::read_png(&shot).expect("read the screenshot");
    let green = [0x00, 0xcd, 0x00];
    let badge = (0..image.height)
        .flat_map(|y| (0..image.width).map(move |x| (x, y)))
        .filter(|&(x, y)| pixel(&image, x, y) == green)
        .count();
    assert!(badge > 500, "no lock badge in {}", shot.display());
    std::fs::write(&path, config("#402010")).expect("edit config");
    wait_for("the edited background, without a restart", || shows([0x40, 0x20, 0x10]));
    eprintln!("screenshot: {}", shot.display());

    let agent_screen = app.ctl(&["capture", "--pane", "1"]);
    std::fs::write(&path, "(theme: (background: 12))").expect("break config");
    wait_for("a config tab", || {
        run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket])).contains(" config ")
    });
    let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &app.socket]));
    assert!(ls.contains("the configuration has 1 problem"), "{ls}");
    assert!(
        ls.lines().filter(|l| l.contains(" running")).count() >= 2,
        "threads keep running: {ls}"
    );
    assert!(shows([0x40, 0x20, 0x10]), "the last good look stays");
    assert_eq!(app.ctl(&["capture", "--pane", "1"]), agent_screen, "the agent's pane is untouched");
    app.stop();
}

/// A pane that turns needs-you in a tab out of sight is announced once on the desktop, through
/// the session bus's notification service (watched here with dbus-monitor on a private bus).
#[test]
fn a_pane_that_needs_you_out_of_sight_is_announced_on_the_desktop() {
    let x = Xvfb::start();
    let mut bus = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start dbus-daemon ({e}); `cargo xtask ci` installs it"));
    let mut address = String::new();
    BufReader::new(bus.stdout.take().expect("bus stdout"))
        .read_line(&mut address)
        .expect("address");
    let address = address.trim().to_owned();
    let (runtime, config) = config_file("notify");
    let heard = runtime.join("monitor.log");
    let mut monitor = Command::new("dbus-monitor")
        .args(["--address", &address, "interface='org.freedesktop.Notifications'"])
        .stdout(std::fs::File::create(&heard).expect("monitor log"))
        .spawn()
        .expect("dbus-monitor");
    std::fs::write(
        &config,
        "(threads: [\n  (name: \"front\", command: [\"sleep\", \"60\"]),\n  \
         (name: \"back\", command: [\"/bin/sh\", \"-c\", \"sleep 2; printf 'done\\\\a'; sleep 60\"]),\n])",
    )
    .expect("config");
    let app =
        Windowed::start_with_env(&x, "notify", &[], &[("DBUS_SESSION_BUS_ADDRESS", &address)]);
    wait_for("the announcement on the bus", || {
        std::fs::read_to_string(&heard).is_ok_and(|t| t.contains("string \"back needs you\""))
    });
    let log = std::fs::read_to_string(&heard).expect("monitor log");
    assert!(log.contains("string \"rang the bell\""), "{log}");
    assert_eq!(log.matches("member=Notify").count(), 1, "announced once: {log}");
    assert!(!log.contains("front needs you"), "{log}");
    app.stop();
    let _ = monitor.kill();
    let _ = monitor.wait();
    let _ = bus.kill();
    let _ = bus.wait();
}

/// The pulse overlay as a person sees it: a pane whose agent asks a question glows red at its
/// border; answering it (typing) turns the glow to another state's color; `pulse_glow: false`
/// in the configuration takes the glow away without a restart.
#[test]
fn a_pane_that_needs_you_glows_red_until_answered_and_the_glow_can_be_turned_off() {
    let x = Xvfb::start();
    let (_, path) = config_file("glow");
    let config = |glow: bool| {
        format!(
            "(pulse_glow: {glow}, threads: [(name: \"asks\", command: [\"/bin/sh\", \"-c\", \
             \"printf 'Do you want to proceed? [y/N] '; read answer; echo got-$answer; sleep 600\"])])"
        )
    };
    std::fs::write(&path, config(true)).expect("write config");
    let app = Windowed::start_with(&x, "glow", &[]);
    let state = || {
        let ls = run(Command::new(PADDOCK).args(["ls", "--json", "--socket", &app.socket]));
        let ls: serde_json::Value = serde_json::from_str(&ls).expect("ls --json");
        ls["instances"][0]["panes"][0]["pulse"]["state"].as_str().unwrap_or("").to_owned()
    };
    wait_for("the question to raise needs-you", || state() == "needs_you");

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let shot = shots.join("glow.png");
    // The pane's left edge, halfway down the window (the pane starts at the window's edge).
    let edge = || {
        run(x
            .command("import")
            .args(["-window", &app.window])
            .arg(format!("PNG32:{}", shot.display())));
        let image = crate::images::read_png(&shot).expect("read the screenshot");
        pixel(&image, 0, image.height / 2)
    };
    let red = |[r, g, b]: [u8; 3]| r > g.max(b) + 60;
    // The glow pulses: look until it is near its brightest.
    wait_for("a red glow on the waiting pane's border", || red(edge()));
    eprintln!("screenshot: {}", shot.display());

    run(x.command("xdotool").args(["type", "--delay", "30", "y"]));
    run(x.command("xdotool").args(["key", "Return"]));
    wait_for("the answer to reach the program", || app.screen().contains("got-y"));
    wait_for("needs-you to clear", || state() != "needs_you");
    wait_for("the border to turn from red", || {
        let [r, g, b] = edge();
        g.max(b) > r
    });

    std::fs::write(&path, config(false)).expect("edit config");
    let background = Theme::default().background;
    let background = [background.r, background.g, background.b];
    wait_for("no glow once pulse_glow is false", || edge() == background);
    app.stop();
}

/// Clipboard writes (OSC 52) follow the thread's rule: an unlocked pane's land (the positive
/// control), a locked pane's are refused by default, and a pane with `clipboard: Ask` is held
/// until the user lets it through with Ctrl+Shift+Y. What a paste into the unlocked shell shows
/// is what the user would paste. A tab opened from a locked pane (Ctrl+Shift+T) is locked.
#[test]
fn a_locked_panes_clipboard_writes_are_refused_or_held_for_the_user() {
    let x = Xvfb::start();
    let (runtime, path) = config_file("clipboard");
    let work = runtime.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let work = work.display().to_string();
    let bash = r#"command: ["bash", "--norc", "--noprofile"]"#;
    let config = format!(
        r#"(threads: [
            (name: "shell", {bash}),
            (name: "locked", {bash}, lock: (write: ["{work}"])),
            (name: "asks", {bash}, lock: (write: ["{work}"]), clipboard: Ask),
        ])"#
    );
    std::fs::write(&path, config).expect("write config");
    let app = Windowed::start_with(&x, "clipboard", &[]);
    let capture = |pane: &str| app.ctl(&["capture", "--pane", pane]);
    for pane in ["1", "2", "3"] {
        wait_for("a prompt", || capture(pane).contains("bash-"));
    }
    // `printf` the OSC 52 write of `text` in `pane`, then a marker once it is out.
    let write = |pane: &str, text: &str, marker: &str| {
        let encoded =
            run(Command::new("sh").arg("-c").arg(format!("printf '%s' '{text}' | base64")));
        let line = format!("printf '\\033]52;c;{}\\a'; echo {marker}\n", encoded.trim());
        app.ctl(&["send", "--pane", pane, "--text", &line]);
        wait_for("the marker", || capture(pane).contains(&format!("\n{marker}\n")));
    };
    let mut pastes = 0;
    let mut paste = || {
        pastes += 1;
        app.ctl(&["focus", "--pane", "1"]);
        xdotool(&x, &["type", "--delay", "20", &format!("echo paste{pastes}:")]);
        xdotool(&x, &["key", "ctrl+shift+v", "Return"]);
        let prefix = format!("\npaste{pastes}:");
        let mut got = String::new();
        wait_for("the pasted text", || {
            let screen = capture("1");
            let line = screen.split(&prefix).nth(1).and_then(|rest| rest.lines().next());
            got = line.unwrap_or_default().to_owned();
            line.is_some()
        });
        got
    };
    write("1", "original", "one");
    assert_eq!(paste(), "original", "an unlocked pane may write the clipboard");
    write("2", "rm -rf ~", "two");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(paste(), "original", "a locked pane's write is refused");
    write("3", "asked", "three");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(paste(), "original", "an asking pane's write waits for the user");
    app.ctl(&["focus", "--pane", "3"]);
    xdotool(&x, &["key", "ctrl+shift+y"]);
    assert_eq!(paste(), "asked", "let through with Ctrl+Shift+Y");

    // A new tab opened while a locked pane has the focus is locked the same way.
    app.ctl(&["focus", "--pane", "2"]);
    xdotool(&x, &["key", "ctrl+shift+t"]);
    let lock_of_new_tab = || {
        let ls = run(Command::new(PADDOCK).args(["ls", "--json", "--socket", &app.socket]));
        let ls: serde_json::Value = serde_json::from_str(&ls).expect("ls --json");
        let panes = ls["instances"][0]["panes"].as_array().cloned().unwrap_or_default();
        panes.iter().find(|p| p["id"] == 4).map(|p| p["lock"]["level"].clone())
    };
    wait_for("the new tab", || lock_of_new_tab().is_some());
    assert_eq!(lock_of_new_tab(), Some(serde_json::json!("locked")));
    app.stop();
}

/// An agent updated itself: its pinned secret is withheld and the pane's title strip offers
/// approving the new file; Ctrl+Shift+P in the window approves it (only as shown) and restarts
/// the pane, which then gets the secret.
#[test]
fn a_changed_pinned_program_is_approved_again_from_the_window() {
    if crate::vault::rerun_inside(
        crate::vault::KEYUTILS,
        "window::a_changed_pinned_program_is_approved_again_from_the_window",
    ) {
        return;
    }
    let (runtime, config) = config_file("reapprove");
    let tool = runtime.join("tool");
    let write_tool = |extra: &str| {
        let body = format!("#!/bin/sh\n{extra}\nprintf 'tool k=%s\\n' \"$K\"\nexec sleep 60\n");
        std::fs::write(&tool, body).expect("tool");
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    };
    write_tool("# one");
    let tool_path = tool.display().to_string();
    let value = "v4lue-ReApprove-91";
    let mut set = Command::new(PADDOCK)
        .args(["vault", "set", "k"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("vault set");
    std::io::Write::write_all(&mut set.stdin.take().expect("stdin"), value.as_bytes())
        .expect("value");
    assert!(set.wait().expect("vault set").success());
    // Approved at a terminal, then the file changes (as an agent's update changes it).
    let approve = format!("'{PADDOCK}' vault approve k '{tool_path}'");
    let mut script = Command::new("script")
        .args(["-qec", &approve, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("script");
    std::io::Write::write_all(&mut script.stdin.take().expect("stdin"), b"k\n").expect("typed");
    let approved = script.wait_with_output().expect("approve");
    assert!(approved.status.success(), "{}", String::from_utf8_lossy(&approved.stdout));
    write_tool("# two");
    std::fs::write(
        &config,
        format!(
            "(threads: [(name: \"tool\", command: [\"{tool_path}\"], \
             secrets: [(name: \"k\", env: \"K\", pin: \"{tool_path}\")])])"
        ),
    )
    .expect("config");

    let x = Xvfb::start();
    let app = Windowed::start_with(&x, "reapprove", &[]);
    wait_for("the secret withheld from the changed program", || {
        let screen = app.screen().replace('\n', " ");
        screen.contains("has changed since it was approved") && screen.contains("tool k=")
    });
    assert!(!app.screen().contains(value));
    xdotool(&x, &["windowfocus", "--sync", &app.window]);
    xdotool(&x, &["key", "ctrl+shift+p"]);
    let stars = "*".repeat(value.len());
    wait_for("the pane restarted with the secret", || {
        app.screen().contains(&format!("tool k={stars}"))
    });
    let state = std::env::var_os("XDG_STATE_HOME").map(PathBuf::from).expect("state home");
    let approvals =
        std::fs::read_to_string(state.join("paddock/approvals.json")).expect("approvals");
    let now = paddock::vault::pin::fingerprint(&tool).expect("fingerprint");
    assert!(approvals.contains(&now.sha256), "{approvals}");
    app.stop();
}
