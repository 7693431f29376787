//! `cargo xtask bench-window`: paddock's window beside Alacritty's, end to end under Xvfb on
//! the same software renderer (Mesa's llvmpipe: Vulkan for paddock, OpenGL for Alacritty),
//! and paddock's idle cost.
//!
//! - `paddock -e cat FILE --exit-with-child` against `alacritty -e cat FILE`, wall time from
//!   start to exit (start-up, window, GPU setup, the whole file through PTY, parser and frames),
//!   for 16 MiB each of plain text, an agent's TUI, dense truecolor cells and CJK/emoji/
//!   combining text, alternating, median of 5; and `-e true` alone: start to exit.
//! - Memory: each with one idle shell, resident memory (paddock: its window and its server).
//! - Keystroke to screen: a key sent to each running `cat` until the echo's pixels are on the
//!   root window (`keystroke.rs`).
//! - Idle: a window with 4 panes running idle shells, paddock's CPU (the window's and its
//!   server's) over 10 s.
//! - The pulse glow: a window whose pane asks a question (needs you: its border pulses),
//!   paddock's CPU over 10 s of pulsing, beside the same window with `pulse_glow: false`.
//!
//! Alacritty comes from $ALACRITTY, else PATH (`cargo install alacritty@0.17.0 --root DIR`
//! outside the repository; Debian's 0.11 is older and slower).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::keystroke;
use crate::panes_bench::{build_log, median, release_paddock, write_file};

// The parse benchmarks' generated streams (an agent's TUI, CJK/emoji/combining text).
#[allow(dead_code)]
#[path = "../../benches/common/streams.rs"]
mod streams;

/// The same grid as paddock's default window (88x29 cells below its bars).
const ALACRITTY_GRID: [&str; 4] =
    ["-o", "window.dimensions.columns=88", "-o", "window.dimensions.lines=31"];

const SIZE: usize = 16 << 20;
const RUNS: usize = 5;
/// Keystrokes timed into each terminal.
const KEYS: usize = 40;
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

/// Run every part of the benchmark, or only the one `part` names.
pub fn run(root: &Path, part: Option<&str>) -> Result<()> {
    let parts = ["streams", "memory", "idle", "glow"];
    if let Some(part) = part.filter(|p| !parts.contains(p)) {
        bail!("no part {part:?} of bench-window: {}", parts.join(", "));
    }
    let wanted = |name: &str| part.is_none_or(|p| p == name);
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
    let mut files = Vec::new();
    for (name, file, bytes) in [
        ("plain text (build log)", "plain", build_log(SIZE)),
        ("agent-style TUI", "agent", repeated(&streams::agent_tui(), SIZE)),
        ("dense truecolor cells", "truecolor", truecolor_cells(SIZE)),
        ("CJK/emoji/combining", "unicode", repeated(&streams::unicode(), SIZE)),
    ] {
        let path = data.join(format!("{file}-16m.txt"));
        write_file(&path, &bytes)?;
        files.push((name, path));
    }
    let _xvfb = Xvfb::start(DISPLAY)?;
    let runtime = data.join("runtime");
    std::fs::create_dir_all(&runtime)?;

    if wanted("streams") {
        streams_beside(&paddock, &alacritty, &version, &files, &runtime)?;
    }
    if wanted("memory") {
        memory_beside(&paddock, &alacritty, &version, &runtime)?;
    }
    if wanted("idle") {
        let idle = idle_cpu(&paddock, &runtime)?;
        println!("\n### Idle: 4 panes with idle shells, 10 s\n");
        println!("paddock used {:.2}% of one core ({} ticks of CPU time in 10 s)", idle.0, idle.1);
    }
    if wanted("glow") {
        println!("\n### A pane that needs you, 10 s of its pulsing border\n");
        println!("| pulse_glow | paddock, % of one core |");
        println!("| --- | ---: |");
        for glow in [true, false] {
            let (share, _) = glow_cpu(&paddock, &data.join(format!("glow-{glow}")), glow)?;
            println!("| {glow} | {share:.2} |");
        }
    }
    Ok(())
}

/// The four streams and start to exit, alternating, medians of [`RUNS`].
fn streams_beside(
    paddock: &Path,
    alacritty: &Path,
    version: &str,
    files: &[(&str, PathBuf)],
    runtime: &Path,
) -> Result<()> {
    println!(
        "\n### 16 MiB through a window under Xvfb, llvmpipe (median of {RUNS}, wall seconds)\n"
    );
    println!("| file | paddock s | {version} s | paddock faster by |");
    println!("| --- | ---: | ---: | ---: |");
    let start_to_exit = ("start to exit (`-e true`)", None);
    for (name, file) in files.iter().map(|(n, f)| (*n, Some(f))).chain([start_to_exit]) {
        let args: Vec<&str> = match file {
            Some(file) => vec!["cat", path(file)?],
            None => vec!["true"],
        };
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let mut command = x(paddock);
            command.env("XDG_RUNTIME_DIR", runtime).args(["--exit-with-child", "-e"]);
            ours.push(timed(command.args(&args))?);
            theirs.push(timed(x(alacritty).args(ALACRITTY_GRID).arg("-e").args(&args))?);
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!("| {name} | {ours:.3} | {theirs:.3} | {:.2}x |", theirs / ours);
    }
    Ok(())
}

/// Memory with one idle shell, and keystroke latency, beside Alacritty.
fn memory_beside(paddock: &Path, alacritty: &Path, version: &str, runtime: &Path) -> Result<()> {
    println!("\n### One idle shell: resident memory, and a key until its echo is on screen\n");
    println!("| | RSS MiB | PSS MiB | keystroke ms, median | 90th percentile |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let (ours, mut keys) = idle_paddock(paddock, runtime)?;
    let (p50, p90) = percentiles(&mut keys);
    let (rss, pss) = (ours.rss, ours.pss);
    println!("| paddock (window + server) | {rss:.1} | {pss:.1} | {p50:.2} | {p90:.2} |");
    let (theirs, mut keys) = idle_alacritty(alacritty)?;
    let (p50, p90) = percentiles(&mut keys);
    let (rss, pss) = (theirs.rss, theirs.pss);
    println!("| {version} | {rss:.1} | {pss:.1} | {p50:.2} | {p90:.2} |");
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
    let (mut child, socket) = start_window(
        x(paddock).env("XDG_RUNTIME_DIR", runtime).env("XDG_CONFIG_HOME", runtime.join("config")),
    )?;
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

/// `stream` again and again, cut at `size` bytes.
fn repeated(stream: &[u8], size: usize) -> Vec<u8> {
    stream.iter().copied().cycle().take(size).collect()
}

fn percentiles(values: &mut [f64]) -> (f64, f64) {
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

/// Resident memory of paddock's window and server with one pane running `sh` (after it
/// settles), then keystroke latencies into the same window running `cat`.
fn idle_paddock(paddock: &Path, runtime: &Path) -> Result<(Memory, Vec<f64>)> {
    let (mut child, socket) = start_window(x(paddock).env("XDG_RUNTIME_DIR", runtime).args([
        "-e",
        "sh",
        "-c",
        "sleep 4; exec cat",
    ]))?;
    std::thread::sleep(Duration::from_secs(3));
    let resident = resident_mib(child.id())? + resident_mib(server_pid(&socket)?)?;
    std::thread::sleep(Duration::from_secs(2));
    let keys = keystroke::latencies(DISPLAY, KEYS);
    let _ = Command::new(paddock).args(["ctl", "--socket", &socket, "stop"]).status();
    let _ = child.wait();
    Ok((resident, keys?))
}

/// The same for Alacritty.
fn idle_alacritty(alacritty: &Path) -> Result<(Memory, Vec<f64>)> {
    let mut child = x(alacritty)
        .args(ALACRITTY_GRID)
        .args(["-e", "sh", "-c", "sleep 4; exec cat"])
        .spawn()
        .context("cannot start Alacritty")?;
    std::thread::sleep(Duration::from_secs(3));
    let resident = resident_mib(child.id());
    std::thread::sleep(Duration::from_secs(2));
    let keys = keystroke::latencies(DISPLAY, KEYS);
    let _ = child.kill();
    let _ = child.wait();
    Ok((resident?, keys?))
}

/// Resident memory of a process in MiB: all of it (RSS), and with each page shared with other
/// processes counted as its share (PSS). paddock's window and server map the same binary, so
/// their RSS counts its pages twice; their PSS adds up.
fn resident_mib(pid: u32) -> Result<Memory> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))?;
    let field = |name: &str| -> Result<f64> {
        let line = rollup.lines().find(|l| l.starts_with(name)).context("smaps_rollup")?;
        let kib: f64 = line.split_whitespace().nth(1).context("a value")?.parse()?;
        Ok(kib / 1024.0)
    };
    Ok(Memory { rss: field("Rss:")?, pss: field("Pss:")? })
}

#[derive(Clone, Copy)]
struct Memory {
    rss: f64,
    pss: f64,
}

impl std::ops::Add for Memory {
    type Output = Memory;

    fn add(self, other: Memory) -> Memory {
        Memory { rss: self.rss + other.rss, pss: self.pss + other.pss }
    }
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
    let (mut child, socket) =
        start_window(x(paddock).env("XDG_RUNTIME_DIR", runtime).args(["-e", "sh"]))?;
    let socket = socket.as_str();
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

/// Start a paddock window; it and its control socket's path (the first line it prints).
fn start_window(command: &mut Command) -> Result<(Child, String)> {
    let mut child = command.stdout(Stdio::piped()).spawn().context("cannot start paddock")?;
    let mut socket = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut socket)?;
    Ok((child, socket.trim_end().to_owned()))
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
