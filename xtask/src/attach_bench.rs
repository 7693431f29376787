//! `cargo xtask bench-attach`: a window attached to the paddock server against the window that
//! owns its panes (`--single-process`) and Alacritty, under Xvfb on the same software renderer,
//! and what attaching costs.
//!
//! - Throughput: `cat` of 64 MiB of text to the end, wall time from start to exit (start-up,
//!   window, GPU setup, the file through PTY, parser, the wire and frames), median of 3, for
//!   paddock attached (`paddock --exit-with-child -e cat FILE`, which starts its server),
//!   paddock `--single-process`, and Alacritty. The attached window ends once it has taken
//!   every frame: the server sees its windows through (a slow one gets a snapshot, not a cut
//!   stream) before it stops, so the time includes drawing the end of the file.
//! - Attach latency: a server with 8 panes, each with 10,000 lines of scrollback; `paddock
//!   attach` from spawn to its first full frame (`PADDOCK_TIMINGS=1` makes the window say when
//!   it drew every pane of its tab), median of 5. A window attached once sized the panes; these
//!   attach again, as a person coming back does.
//! - Memory: the attached window's resident memory with those 8 panes beside 8 empty ones.
//!
//! Alacritty comes from $ALACRITTY, else PATH.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::panes_bench::{build_log, median, release_paddock, write_file};
use crate::window_bench::{on_display, timed, Xvfb};

const SIZE: usize = 64 << 20;
const RUNS: usize = 3;
const ATTACHES: usize = 5;
const PANES: usize = 8;
const DISPLAY: &str = ":172";

pub fn run(root: &Path) -> Result<()> {
    let paddock = release_paddock(root)?;
    let alacritty =
        std::env::var_os("ALACRITTY").map_or_else(|| PathBuf::from("alacritty"), PathBuf::from);
    let version = Command::new(&alacritty)
        .arg("--version")
        .output()
        .context("Alacritty is needed: cargo install alacritty, or set $ALACRITTY")?;
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
    let data = root.join("target/bench-attach");
    let _ = std::fs::remove_dir_all(&data);
    std::fs::create_dir_all(&data)?;
    let plain = data.join("plain-64m.txt");
    write_file(&plain, &build_log(SIZE))?;
    let _xvfb = Xvfb::start(DISPLAY)?;

    println!(
        "\n### 64 MiB of text through a window under Xvfb, llvmpipe (median of {RUNS}, wall s)\n"
    );
    println!(
        "| paddock attached | paddock --single-process | {version} | attached / single-process |"
    );
    println!("| ---: | ---: | ---: | ---: |");
    let file = plain.to_str().context("a UTF-8 path")?;
    let (mut attached, mut single, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..RUNS {
        // A runtime folder of its own: no server from an earlier run to attach to.
        let runtime = private_dir(&data.join(format!("run-{run}")))?;
        attached.push(timed(
            x(&paddock)
                .env("XDG_RUNTIME_DIR", &runtime)
                .env("XDG_STATE_HOME", runtime.join("state"))
                .args(["--exit-with-child", "-e", "cat", file]),
        )?);
        single.push(timed(x(&paddock).env("XDG_RUNTIME_DIR", &runtime).args([
            "--single-process",
            "--exit-with-child",
            "-e",
            "cat",
            file,
        ]))?);
        // The same grid as paddock's default window (88x29 cells below its bars).
        theirs.push(timed(x(&alacritty).args([
            "-o",
            "window.dimensions.columns=88",
            "-o",
            "window.dimensions.lines=31",
            "-e",
            "cat",
            file,
        ]))?);
    }
    let (attached, single, theirs) =
        (median(&mut attached), median(&mut single), median(&mut theirs));
    println!("| {attached:.2} | {single:.2} | {theirs:.2} | {:.2}x as fast |", single / attached);

    let runtime = private_dir(&data.join("attach"))?;
    let full = Server::start(&paddock, &runtime.join("full"), true)?;
    let empty = Server::start(&paddock, &runtime.join("empty"), false)?;
    let mut latencies = Vec::new();
    let mut window_rss = Vec::new();
    for server in [&full, &empty] {
        // The first window lays the panes out in its size; the measured ones find them so.
        server.attach(&paddock)?.end();
        for _ in 0..ATTACHES {
            let window = server.attach(&paddock)?;
            if server.scrollback {
                latencies.push(window.first_frame);
            }
            std::thread::sleep(Duration::from_secs(2));
            window_rss.push((server.scrollback, rss_kib(window.child.id())?));
            window.end();
        }
    }
    let mut full_rss: Vec<f64> =
        window_rss.iter().filter(|(s, _)| *s).map(|(_, k)| *k as f64 / 1024.0).collect();
    let mut empty_rss: Vec<f64> =
        window_rss.iter().filter(|(s, _)| !*s).map(|(_, k)| *k as f64 / 1024.0).collect();
    println!(
        "\n### Attaching to a server with {PANES} panes of 10,000 lines (median of {ATTACHES})\n"
    );
    println!("| spawn to first full frame, ms | min | max |");
    println!("| ---: | ---: | ---: |");
    let min = latencies.iter().copied().fold(f64::INFINITY, f64::min);
    let max = latencies.iter().copied().fold(0.0, f64::max);
    println!("| {:.0} | {min:.0} | {max:.0} |", median(&mut latencies));
    println!("\n### The attached window's resident memory (median of {ATTACHES}, MiB)\n");
    println!("| {PANES} panes of 10,000 lines | {PANES} empty panes | difference |");
    println!("| ---: | ---: | ---: |");
    let (full_rss, empty_rss) = (median(&mut full_rss), median(&mut empty_rss));
    println!("| {full_rss:.1} | {empty_rss:.1} | {:.1} |", full_rss - empty_rss);
    Ok(())
}

/// A headless server with `PANES` panes, each with 10,000 lines behind it (or none).
struct Server {
    paddock: PathBuf,
    socket: String,
    runtime: PathBuf,
    scrollback: bool,
}

impl Server {
    fn start(paddock: &Path, runtime: &Path, scrollback: bool) -> Result<Server> {
        let runtime = private_dir(runtime)?;
        let program = match scrollback {
            true => "awk 'BEGIN { for (i = 0; i < 10000; i++) printf \"%06d the quick brown fox \
                     jumps over the lazy dog, line after line after line\\n\", i }'; exec sleep 3600",
            false => "exec sleep 3600",
        };
        let mut child = Command::new(paddock)
            .args(["server", "--size", "88x28", "-e", "sh", "-c", program])
            .env("XDG_RUNTIME_DIR", &runtime)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start paddock server")?;
        let mut socket = String::new();
        BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut socket)?;
        let socket = socket.trim_end().to_owned();
        for _ in 1..PANES {
            let status = Command::new(paddock)
                .args(["ctl", "--socket", &socket, "new", "--", "sh", "-c", program])
                .stdout(Stdio::null())
                .status()?;
            if !status.success() {
                bail!("paddock ctl new failed");
            }
        }
        // Every pane's output parsed.
        std::thread::sleep(Duration::from_secs(3));
        std::mem::forget(child);
        Ok(Server { paddock: paddock.to_owned(), socket, runtime, scrollback })
    }

    fn attach(&self, paddock: &Path) -> Result<Window> {
        let start = Instant::now();
        let mut child = x(paddock)
            .args(["attach", "--socket", &self.socket])
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("PADDOCK_TIMINGS", "1")
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start paddock attach")?;
        let stderr = BufReader::new(child.stderr.take().context("stderr")?);
        for line in stderr.lines() {
            if line?.contains("first full frame") {
                let first_frame = start.elapsed().as_secs_f64() * 1000.0;
                return Ok(Window { child, first_frame });
            }
        }
        bail!("the window ended before its first full frame")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(&self.paddock)
            .args(["ctl", "--socket", &self.socket, "stop"])
            .stdout(Stdio::null())
            .status();
    }
}

struct Window {
    child: Child,
    first_frame: f64,
}

impl Window {
    /// Close the window (the server keeps its panes).
    fn end(mut self) {
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

fn private_dir(path: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(path)?;
    // paddock refuses a socket folder other users could enter.
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    Ok(path.to_owned())
}

fn x(program: &Path) -> Command {
    on_display(program, DISPLAY)
}

/// A process's resident memory, in KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).context("VmRSS")?;
    Ok(line.split_whitespace().nth(1).context("VmRSS value")?.parse()?)
}
