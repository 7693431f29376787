//! `cargo xtask bench-window`: paddock's window beside Alacritty's, end to end under Xvfb on
//! the same software renderer (Mesa's llvmpipe: Vulkan for paddock, OpenGL for Alacritty),
//! and paddock's idle cost.
//!
//! - `paddock -e cat FILE --exit-with-child` against `alacritty -e cat FILE`, wall time from
//!   start to exit (start-up, window, GPU setup, the whole file through PTY, parser and frames),
//!   for 16 MiB of plain text and 16 MiB of dense truecolor cells, alternating, median of 3.
//! - Idle: a window with 4 panes running idle shells, paddock's CPU (the window's and its
//!   server's) over 10 s.
//! - The pulse glow: a window whose pane asks a question (needs you: its border pulses),
//!   paddock's CPU over 10 s of pulsing, beside the same window with `pulse_glow: false`.
//!
//! Alacritty comes from $ALACRITTY, else PATH (Debian: `apt-get install alacritty`, or
//! `cargo install alacritty --root DIR` outside the repository).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::panes_bench::{build_log, median, release_paddock, write_file};

const SIZE: usize = 16 << 20;
const RUNS: usize = 3;
const DISPLAY: &str = ":171";

/// An X server on `DISPLAY`, stopped on drop.
pub(crate) struct Xvfb(Child);

impl Xvfb {
    pub(crate) fn start(display: &str) -> Result<Xvfb> {
        let child = Command::new("Xvfb")
            .args([display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start Xvfb (apt-get install xvfb)")?;
        std::thread::sleep(Duration::from_secs(1));
        Ok(Xvfb(child))
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn run(root: &Path) -> Result<()> {
    let paddock = release_paddock(root)?;
    let alacritty =
        std::env::var_os("ALACRITTY").map_or_else(|| PathBuf::from("alacritty"), PathBuf::from);
    let version = Command::new(&alacritty)
        .arg("--version")
        .output()
        .context("Alacritty is needed: apt-get install alacritty, or set $ALACRITTY")?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let data = root.join("target/bench-window");
    std::fs::create_dir_all(&data)?;
    let plain = data.join("plain-16m.txt");
    write_file(&plain, &build_log(SIZE))?;
    let truecolor = data.join("truecolor-16m.txt");
    write_file(&truecolor, &truecolor_cells(SIZE))?;
    let _xvfb = Xvfb::start(DISPLAY)?;
    let runtime = data.join("runtime");
    std::fs::create_dir_all(&runtime)?;

    println!(
        "\n### 16 MiB through a window under Xvfb, llvmpipe (median of {RUNS}, wall seconds)\n"
    );
    println!("| file | paddock s | {version} s | paddock faster by |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, file) in [("plain text", &plain), ("dense truecolor cells", &truecolor)] {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            ours.push(timed(x(&paddock).env("XDG_RUNTIME_DIR", &runtime).args([
                "--exit-with-child",
                "-e",
                "cat",
                path(file)?,
            ]))?);
            // The same grid as paddock's default window (88x29 cells below its bars).
            theirs.push(timed(x(&alacritty).args([
                "-o",
                "window.dimensions.columns=88",
                "-o",
                "window.dimensions.lines=31",
                "-e",
                "cat",
                path(file)?,
            ]))?);
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!("| {name} | {ours:.2} | {theirs:.2} | {:.2}x |", theirs / ours);
    }

    let idle = idle_cpu(&paddock, &runtime)?;
    println!("\n### Idle: 4 panes with idle shells, 10 s\n");
    println!("paddock used {:.2}% of one core ({} ticks of CPU time in 10 s)", idle.0, idle.1);

    println!("\n### A pane that needs you, 10 s of its pulsing border\n");
    println!("| pulse_glow | paddock, % of one core |");
    println!("| --- | ---: |");
    for glow in [true, false] {
        let (share, _) = glow_cpu(&paddock, &data.join(format!("glow-{glow}")), glow)?;
        println!("| {glow} | {share:.2} |");
    }
    Ok(())
}

/// paddock's CPU over 10 s while its one pane waits on a question (the first 10 s of its
/// minute of pulsing), in % of one core.
fn glow_cpu(paddock: &Path, runtime: &Path, glow: bool) -> Result<(f64, u64)> {
    let config = runtime.join("config/paddock");
    std::fs::create_dir_all(&config)?;
    let question = "printf 'Do you want to proceed? [y/N] '; exec sleep 600";
    std::fs::write(
        config.join("config.ron"),
        format!(
            "(pulse_glow: {glow}, desktop_notifications: false, \
             threads: [(name: \"asks\", command: [\"sh\", \"-c\", \"{question}\"])])"
        ),
    )?;
    let mut child = x(paddock)
        .env("XDG_RUNTIME_DIR", runtime)
        .env("XDG_CONFIG_HOME", runtime.join("config"))
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start paddock")?;
    let mut socket = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut socket)?;
    let socket = socket.trim_end().to_owned();
    std::thread::sleep(Duration::from_secs(2));
    let ls = Command::new(paddock).args(["ls", "--json", "--socket", &socket]).output()?;
    if !String::from_utf8_lossy(&ls.stdout).contains("\"needs_you\"") {
        bail!("the pane does not need anyone: {}", String::from_utf8_lossy(&ls.stdout));
    }
    let before = cpu_ticks(child.id())? + cpu_ticks(server_pid(&socket)?)?;
    std::thread::sleep(Duration::from_secs(10));
    let ticks = cpu_ticks(child.id())? + cpu_ticks(server_pid(&socket)?)? - before;
    let _ = Command::new(paddock).args(["ctl", "--socket", &socket, "stop"]).status();
    let _ = child.wait();
    Ok((ticks as f64 / 10.0, ticks))
}

fn x(program: &Path) -> Command {
    on_display(program, DISPLAY)
}

/// `program` on the X display `display`, its output dropped.
pub(crate) fn on_display(program: &Path, display: &str) -> Command {
    let mut command = Command::new(program);
    command.env("DISPLAY", display).env_remove("WAYLAND_DISPLAY");
    command.stdout(Stdio::null()).stderr(Stdio::null());
    command
}

fn path(file: &Path) -> Result<&str> {
    file.to_str().context("a UTF-8 path")
}

pub(crate) fn timed(command: &mut Command) -> Result<f64> {
    let start = Instant::now();
    let status = command.status().with_context(|| format!("cannot run {command:?}"))?;
    if !status.success() {
        bail!("{command:?} failed: {status}");
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Lines of 80 cells, each with its own truecolor foreground and background.
fn truecolor_cells(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 4096);
    let mut n: u32 = 0;
    while out.len() < size {
        for col in 0..80u32 {
            n = n.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let [r, g, b, _] = n.to_le_bytes();
            let c = (b'!' + (col % 94) as u8) as char;
            out.extend_from_slice(
                format!("\x1b[38;2;{r};{g};{b}m\x1b[48;2;{b};{r};{g}m{c}").as_bytes(),
            );
        }
        out.extend_from_slice(b"\x1b[0m\n");
    }
    out.truncate(size);
    out
}

/// paddock's own CPU (all its threads) over 10 s with 4 idle shells, in % of one core.
fn idle_cpu(paddock: &Path, runtime: &Path) -> Result<(f64, u64)> {
    let mut child = x(paddock)
        .env("XDG_RUNTIME_DIR", runtime)
        .args(["-e", "sh"])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start paddock")?;
    let mut socket = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut socket)?;
    let socket = socket.trim_end();
    for (pane, direction) in [("1", "--right"), ("1", "--down"), ("2", "--down")] {
        let status = Command::new(paddock)
            .args(["ctl", "--socket", socket, "split", "--pane", pane, direction, "--", "sh"])
            .stdout(Stdio::null())
            .status()?;
        if !status.success() {
            bail!("paddock ctl split failed");
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    let before = cpu_ticks(child.id())? + cpu_ticks(server_pid(socket)?)?;
    std::thread::sleep(Duration::from_secs(10));
    let ticks = cpu_ticks(child.id())? + cpu_ticks(server_pid(socket)?)? - before;
    let _ = Command::new(paddock).args(["ctl", "--socket", socket, "stop"]).status();
    let _ = child.wait();
    // Clock ticks are 1/100 s on Linux: 10 s is 1,000 ticks of one core.
    Ok((ticks as f64 / 10.0, ticks))
}

/// The server's pid, from its control socket's name (`<pid>.sock`): the window is a process
/// of its own, and both count.
fn server_pid(socket: &str) -> Result<u32> {
    let stem = Path::new(socket).file_stem().and_then(|s| s.to_str()).context("socket name")?;
    Ok(stem.parse()?)
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(pid: u32) -> Result<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    let after = stat.rsplit_once(')').context("stat")?.1;
    let fields: Vec<&str> = after.split_whitespace().collect();
    Ok(fields[11].parse::<u64>()? + fields[12].parse::<u64>()?)
}
