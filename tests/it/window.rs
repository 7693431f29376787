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
struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    fn start() -> Xvfb {
        // A display number no other test run is likely to hold.
        let number = 140 + std::process::id() % 100;
        let display = format!(":{number}");
        let child = Command::new("Xvfb")
            .args([&display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start Xvfb ({e}); `cargo xtask ci` installs xvfb"));
        let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
        wait_for("the X server", || socket.exists());
        Xvfb { child, display }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("DISPLAY", &self.display).env_remove("WAYLAND_DISPLAY");
        command
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run(command: &mut Command) -> String {
    let out = command.output().unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_window_shows_two_panes_and_takes_typing() {
    let x = Xvfb::start();
    let runtime = std::env::temp_dir().join(format!("pdk-window-{}", std::process::id()));
    std::fs::create_dir_all(&runtime).expect("runtime dir");
    let mut paddock = x
        .command(PADDOCK)
        .args(["-e", "bash", "--norc", "--noprofile"])
        .env("XDG_RUNTIME_DIR", &runtime)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start paddock");
    let mut line = String::new();
    let stdout = paddock.stdout.take().expect("stdout");
    BufReader::new(stdout).read_line(&mut line).expect("socket path");
    let socket = line.trim_end().to_owned();
    let ctl = |args: &[&str]| {
        run(Command::new(PADDOCK).arg("ctl").arg("--socket").arg(&socket).args(args))
    };
    wait_for("the first prompt", || ctl(&["capture", "--pane", "1"]).contains("bash-"));
    assert_eq!(ctl(&["split", "--pane", "1", "--right", "--", "bash", "--norc"]).trim(), "2");
    wait_for("the second prompt", || ctl(&["capture", "--pane", "2"]).contains("bash-"));

    let window = run(x.command("xdotool").args(["search", "--sync", "--name", "^paddock$"]));
    let window = window.lines().next().expect("paddock's window").to_owned();
    run(x.command("xdotool").args(["windowfocus", "--sync", &window]));
    run(x.command("xdotool").args(["type", "--delay", "30", "echo typed-in-the-window"]));
    run(x.command("xdotool").args(["key", "Return"]));
    wait_for("typing to reach the focused pane", || {
        ctl(&["capture", "--pane", "2"]).contains("\ntyped-in-the-window\n")
    });

    // Key bindings act on the layout: focus moves left, then that pane splits downwards.
    run(x.command("xdotool").args(["key", "ctrl+shift+Left"]));
    let focused = |id: &str| {
        let ls = run(Command::new(PADDOCK).args(["ls", "--socket", &socket]));
        ls.lines().any(|l| l.trim_start().starts_with(&format!("{id}* ")))
    };
    wait_for("focus to move to pane 1", || focused("1"));
    run(x.command("xdotool").args(["key", "ctrl+shift+o"]));
    wait_for("a third pane, focused", || focused("3"));

    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/window-test");
    std::fs::create_dir_all(&shots).expect("screenshot dir");
    let shot = shots.join("two-panes.png");
    // Frames follow output asynchronously: look until the divider is on screen.
    let mut last = None;
    let found = (0..50).any(|_| {
        run(x.command("import").args(["-window", "root"]).arg(format!("PNG32:{}", shot.display())));
        let image = crate::images::read_png(&shot).expect("read the screenshot");
        let ok = shows_split(&image);
        last = Some(image);
        if !ok {
            std::thread::sleep(Duration::from_millis(200));
        }
        ok
    });
    eprintln!("screenshot: {}", shot.display());
    let image = last.expect("a screenshot");
    assert!(distinct_colors(&image) >= 3, "the window is blank: {}", shot.display());
    assert!(found, "no divider between two panes in {}", shot.display());
    assert!(shows_active_tab(&image), "no active tab in the tab bar of {}", shot.display());

    ctl(&["stop"]);
    let status = paddock.wait().expect("wait");
    assert!(status.success(), "paddock exited with {status}");
    let _ = std::fs::remove_dir_all(&runtime);
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

fn distinct_colors(image: &crate::images::Image) -> usize {
    let mut seen = std::collections::HashSet::new();
    for p in image.rgba.chunks(4) {
        seen.insert([p[0], p[1], p[2]]);
        if seen.len() > 16 {
            break;
        }
    }
    seen.len()
}
