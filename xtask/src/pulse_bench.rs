//! `cargo xtask bench-pulse`: what the pulse costs, with 16 panes of 200x60 in one headless
//! instance (12 idle, 3 printing a line every 100 ms through a shell loop, so that their
//! screens change at every sample and are read whole against every screen rule).
//!
//! - The sampler's own CPU time per second (its thread's utime + stime from /proc over 10 s),
//!   at the default 4 Hz. Goal: under 0.5% of one core.
//! - `paddock ls --json` latency (a whole process: connect, ask, print), median and worst of
//!   20, beside `tmux list-panes -a` on a tmux server with 16 windows (its nearest peer: a
//!   listing of every pane, without any pulse).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::panes_bench::{headless, kill_tmux, median, release_paddock, tmux, tmux_run};

const PANES: usize = 16;
const BUSY: usize = 4;
const MEASURE: Duration = Duration::from_secs(10);
const LS_RUNS: usize = 20;

pub fn run(root: &Path) -> Result<()> {
    let paddock = release_paddock(root)?;
    let runtime = root.join("target/bench-pulse/runtime");
    let args = ["--size", "200x60", "-e", "sleep", "600"];
    let (mut child, socket) = headless(&paddock, &runtime, &args)?;
    let busy = "while :; do echo tick; sleep 0.1; done";
    for i in 1..PANES {
        let mut new = Command::new(&paddock);
        new.args(["ctl", "new", "--socket"]).arg(&socket).arg("--");
        if i < BUSY {
            new.args(["sh", "-c", busy])
        } else {
            new.args(["sleep", "600"])
        };
        if !new.stdout(Stdio::null()).status()?.success() {
            bail!("paddock ctl new failed");
        }
    }
    std::thread::sleep(Duration::from_secs(2));
    let sampler = sampler_thread(child.id()).context("no pulse-sampler thread")?;
    let before = thread_cpu(child.id(), sampler)?;
    std::thread::sleep(MEASURE);
    let after = thread_cpu(child.id(), sampler)?;
    let share = (after - before).as_secs_f64() / MEASURE.as_secs_f64() * 100.0;

    let ls = |socket: &Path| -> Result<f64> {
        let start = Instant::now();
        let out = Command::new(&paddock).args(["ls", "--json", "--socket"]).arg(socket).output()?;
        if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains("\"pulse\"") {
            bail!("paddock ls failed");
        }
        Ok(start.elapsed().as_secs_f64() * 1000.0)
    };
    let mut ours: Vec<f64> = (0..LS_RUNS).map(|_| ls(&socket)).collect::<Result<_>>()?;
    let _ = child.kill();
    let _ = child.wait();

    kill_tmux();
    tmux_run(&["new-session", "-d", "-x", "80", "-y", "24", "sleep 600"])?;
    for _ in 1..PANES {
        tmux_run(&["new-window", "-d", "sleep 600"])?;
    }
    let tmux_ls = || -> Result<f64> {
        let start = Instant::now();
        let out = tmux(&["list-panes", "-a"]).output()?;
        if !out.status.success() {
            bail!("tmux list-panes failed");
        }
        Ok(start.elapsed().as_secs_f64() * 1000.0)
    };
    let mut theirs: Vec<f64> = (0..LS_RUNS).map(|_| tmux_ls()).collect::<Result<_>>()?;
    kill_tmux();

    let worst = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let (our_worst, their_worst) = (worst(&ours), worst(&theirs));
    let (ours, theirs) = (median(&mut ours), median(&mut theirs));
    println!("\n### Pulse with {PANES} panes ({BUSY} printing every 100 ms), 4 Hz\n");
    println!("| sampler CPU, % of one core | goal |");
    println!("| ---: | ---: |");
    println!("| {share:.3} | < 0.5 |");
    println!("\n| `paddock ls --json` ms (median / worst of {LS_RUNS}) | `tmux list-panes -a` ms | ratio |");
    println!("| ---: | ---: | ---: |");
    println!(
        "| {ours:.1} / {our_worst:.1} | {theirs:.1} / {their_worst:.1} | {:.2}x |",
        ours / theirs
    );
    Ok(())
}

/// The id of the instance's sampler thread.
fn sampler_thread(pid: u32) -> Option<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten().find_map(|task| {
        let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
        (comm.trim() == "pulse-sampler").then(|| task.file_name().to_str()?.parse().ok())?
    })
}

/// CPU time (user + system) of one thread so far.
fn thread_cpu(pid: u32, tid: u32) -> Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat"))?;
    let rest = &stat[stat.rfind(')').context("stat")? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let ticks: u64 = fields[11].parse::<u64>()? + fields[12].parse::<u64>()?;
    // /proc counts in USER_HZ, which Linux fixes at 100 on every architecture it runs on.
    Ok(Duration::from_secs_f64(ticks as f64 / 100.0))
}
