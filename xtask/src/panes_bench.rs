//! `cargo xtask bench-panes`: paddock's headless panes beside tmux, end to end through real PTYs.
//!
//! - Throughput: `cat` of a 64 MiB file in one 200x50 pane (PTY → parse → model), against a detached
//!   tmux session cat-ing the same file, several runs each, alternating; the median is reported.
//! - Memory: an instance with 8 panes, each filled with 10,000 lines of scrollback at 200
//!   columns, against a tmux server with 8 windows of the same size and history limit.
//!
//! A script rather than criterion: each sample is a whole process tree and takes seconds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

const THROUGHPUT_BYTES: usize = 64 << 20;
const RUNS: usize = 7;
const PANES: usize = 8;
const COLS: usize = 200;
const ROWS: usize = 50;
const SCROLLBACK: usize = 10_000;
const TMUX_SOCKET: &str = "paddock-bench";

/// Build the release binary; its path.
pub(crate) fn release_paddock(root: &Path) -> Result<PathBuf> {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--bin", "paddock"])
        .status()?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    Ok(root.join("target/release/paddock"))
}

pub fn run(root: &Path) -> Result<()> {
    let paddock = release_paddock(root)?;
    let data = root.join("target/bench-panes");
    std::fs::create_dir_all(&data)?;
    let tmux_version = tmux(&["-V"]).output().context("tmux is needed (apt-get install tmux)")?;
    let tmux_version = String::from_utf8_lossy(&tmux_version.stdout).trim().to_owned();

    let log = data.join("build-log-64m.txt");
    write_file(&log, &build_log(THROUGHPUT_BYTES))?;
    let runtime = data.join("runtime");
    let (mut ours, mut theirs, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        ours.push(paddock_cat(&paddock, &runtime, &log)?);
        theirs.push(tmux_cat(&log)?);
        floor.push(script_cat(&log)?);
    }
    let mib = THROUGHPUT_BYTES as f64 / (1024.0 * 1024.0);
    let (ours, theirs) = (mib / median(&mut ours), mib / median(&mut theirs));
    let floor = mib / median(&mut floor);
    println!("\n### cat of 64 MiB in one pane (median of {RUNS} runs)\n");
    println!(
        "| paddock MiB/s | {tmux_version} MiB/s | ratio | PTY alone (script > /dev/null) MiB/s \
         | paddock / PTY alone |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {ours:.1} | {theirs:.1} | {:.2}x | {floor:.1} | {:.2} |",
        ours / theirs,
        ours / floor
    );

    let fill = data.join("fill-200-cols.txt");
    write_file(&fill, &wide_lines(SCROLLBACK + ROWS, COLS))?;
    let our_rss = paddock_memory(&paddock, &runtime, &fill)?;
    let (their_rss, their_lines) = tmux_memory(&fill)?;
    println!("\n### {PANES} panes × {SCROLLBACK} lines of scrollback at {COLS} columns\n");
    println!("| | resident memory | lines held (all panes) | bytes per cell held |");
    println!("| --- | ---: | ---: | ---: |");
    let our_lines = PANES * (SCROLLBACK + ROWS);
    for (who, rss, lines) in
        [("paddock", our_rss, our_lines), (tmux_version.as_str(), their_rss, their_lines)]
    {
        let per_cell = rss as f64 / (lines * COLS) as f64;
        println!("| {who} | {:.1} MiB | {lines} | {per_cell:.2} |", rss as f64 / 1048576.0);
    }
    println!("| ratio (tmux / paddock) | {:.2}x | |", their_rss as f64 / our_rss as f64);
    Ok(())
}

pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() == bytes.len() as u64) {
        return Ok(());
    }
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// A compiler's build log: mostly plain lines of varied length, some colored warnings.
pub(crate) fn build_log(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 256);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut n = 0u64;
    while out.len() < size {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        n += 1;
        let line = match seed % 10 {
            0 => {
                format!("\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x{n}`\x1b[0m\n")
            }
            1 => format!(
                "   \x1b[1m\x1b[32mCompiling\x1b[0m crate-{} v0.{}.{}\n",
                seed % 997,
                n % 9,
                n % 13
            ),
            _ => {
                let width = 20 + (seed % 100) as usize;
                let word: String =
                    (0..width).map(|i| (b'a' + ((seed >> (i % 60)) % 26) as u8) as char).collect();
                format!("src/module_{}.rs:{}: {word}\n", seed % 50, n)
            }
        };
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(size);
    out
}

fn wide_lines(lines: usize, cols: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines * (cols + 1));
    for line in 0..lines {
        out.extend((0..cols).map(|c| b'!' + ((line * 7 + c) % 94) as u8));
        out.push(b'\n');
    }
    out
}

pub(crate) fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

pub(crate) fn headless(paddock: &Path, runtime: &Path, args: &[&str]) -> Result<(Child, PathBuf)> {
    std::fs::create_dir_all(runtime)?;
    let mut child = Command::new(paddock)
        .arg("--headless")
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime)
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot start paddock --headless")?;
    let mut line = String::new();
    BufReader::new(child.stdout.take().context("stdout")?).read_line(&mut line)?;
    Ok((child, PathBuf::from(line.trim_end())))
}

/// The panes' size, as `--size` takes it.
fn size() -> String {
    format!("{COLS}x{ROWS}")
}

/// Seconds for `cat FILE` in a headless pane, from start to the end of its output.
fn paddock_cat(paddock: &Path, runtime: &Path, file: &Path) -> Result<f64> {
    let start = Instant::now();
    let file = file.to_str().context("path")?;
    let (mut child, _) =
        headless(paddock, runtime, &["--exit-with-child", "--size", &size(), "-e", "cat", file])?;
    let status = child.wait()?;
    if !status.success() {
        bail!("paddock --headless -e cat failed: {status}");
    }
    Ok(start.elapsed().as_secs_f64())
}

/// Seconds for `cat FILE` under util-linux `script` writing to /dev/null: the PTY's own cost
/// with a reader that parses nothing, the ceiling for any terminal on this kernel.
fn script_cat(file: &Path) -> Result<f64> {
    let start = Instant::now();
    let status = Command::new("script")
        .args(["-q", "-c", &format!("cat '{}'", file.display()), "/dev/null"])
        .stdout(Stdio::null())
        .status()
        .context("cannot run script (util-linux)")?;
    if !status.success() {
        bail!("script -c cat failed: {status}");
    }
    Ok(start.elapsed().as_secs_f64())
}

pub(crate) fn tmux(args: &[&str]) -> Command {
    let mut command = Command::new("tmux");
    command.args(["-L", TMUX_SOCKET, "-f", "/dev/null"]).args(args);
    command
}

pub(crate) fn tmux_run(args: &[&str]) -> Result<()> {
    let status = tmux(args).status().context("cannot run tmux")?;
    if !status.success() {
        bail!("tmux {args:?} failed");
    }
    Ok(())
}

/// Seconds for `cat FILE` in a detached tmux session, from start to the end of `cat`.
fn tmux_cat(file: &Path) -> Result<f64> {
    kill_tmux();
    let start = Instant::now();
    // The session stays up after `cat`, so the server is still there to answer `wait-for`.
    let script =
        format!("cat '{}'; tmux -L {TMUX_SOCKET} wait-for -S cat-done; sleep 60", file.display());
    tmux_run(&["new-session", "-d", "-x", &COLS.to_string(), "-y", &ROWS.to_string(), &script])?;
    tmux_run(&["wait-for", "cat-done"])?;
    let seconds = start.elapsed().as_secs_f64();
    kill_tmux();
    Ok(seconds)
}

fn rss_bytes(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .context("no VmRSS")?;
    Ok(kib * 1024)
}

fn paddock_memory(paddock: &Path, runtime: &Path, fill: &Path) -> Result<u64> {
    let script = format!("cat '{}'; printf filled; exec sleep 1000", fill.display());
    let size = format!("{COLS}x{ROWS}");
    let scrollback = SCROLLBACK.to_string();
    let args = ["--size", &size, "--scrollback", &scrollback, "-e", "sh", "-c", &script];
    let (mut child, socket) = headless(paddock, runtime, &args)?;
    let ctl = |args: &[&str]| -> Result<String> {
        let out =
            Command::new(paddock).arg("ctl").arg("--socket").arg(&socket).args(args).output()?;
        if !out.status.success() {
            bail!("paddock ctl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    for _ in 1..PANES {
        ctl(&["new", "--", "sh", "-c", &script])?;
    }
    for pane in 1..=PANES {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !ctl(&["capture", "--pane", &pane.to_string()])?.contains("filled") {
            if Instant::now() > deadline {
                bail!("pane {pane} did not fill");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let rss = rss_bytes(child.id())?;
    ctl(&["stop"])?;
    child.wait()?;
    Ok(rss)
}

/// The tmux server's resident memory, and the lines its panes hold (tmux drops the oldest 10%
/// of the history each time it reaches the limit, so it holds fewer than the limit).
fn tmux_memory(fill: &Path) -> Result<(u64, usize)> {
    kill_tmux();
    let (cols, rows) = (COLS.to_string(), ROWS.to_string());
    let history = format!("history-limit {SCROLLBACK}");
    let mut config = std::fs::File::create("/tmp/paddock-bench-tmux.conf")?;
    writeln!(config, "set -g {history}")?;
    drop(config);
    for window in 0..PANES {
        let script = format!(
            "cat '{}'; tmux -L {TMUX_SOCKET} wait-for -S filled-{window}; exec sleep 1000",
            fill.display()
        );
        let mut command = Command::new("tmux");
        command.args(["-L", TMUX_SOCKET, "-f", "/tmp/paddock-bench-tmux.conf"]);
        if window == 0 {
            command.args(["new-session", "-d", "-x", &cols, "-y", &rows, &script]);
        } else {
            command.args(["new-window", "-d", &script]);
        }
        if !command.status()?.success() {
            bail!("tmux could not open window {window}");
        }
        tmux_run(&["wait-for", &format!("filled-{window}")])?;
    }
    let pid = tmux(&["display-message", "-p", "#{pid}"]).output()?;
    let pid: u32 = String::from_utf8_lossy(&pid.stdout).trim().parse().context("tmux pid")?;
    let rss = rss_bytes(pid)?;
    let sizes = tmux(&["list-windows", "-F", "#{history_size}"]).output()?;
    let history: usize = String::from_utf8_lossy(&sizes.stdout)
        .lines()
        .filter_map(|l| l.trim().parse::<usize>().ok())
        .sum();
    kill_tmux();
    Ok((rss, history + PANES * ROWS))
}

pub(crate) fn kill_tmux() {
    let _ = tmux(&["kill-server"]).stderr(Stdio::null()).status();
}
