//! Project automation (`cargo xtask …`), in Rust so it runs wherever cargo does.
//!
//! - `ci`: install what the tests need, then every check CI runs (fmt, clippy, tests, the
//!   macOS and Windows type checks).
//! - `bless`: rewrite the expected files the tests compare against (tests/data/divergences,
//!   the golden images in tests/data/goldens).
//! - `bench`: run the parse benchmark (paddock and alacritty_terminal in one run) and print the
//!   throughput table with ratios, as committed in benches/README.md.
//! - `bench-panes`: headless panes end to end beside tmux (throughput of `cat`, memory of 8
//!   full panes); see `panes_bench`.

mod panes_bench;
mod pulse_bench;
mod window_bench;

use std::process::Command;

use anyhow::{bail, Context, Result};

/// Targets type-checked besides the host, so macOS and Windows code keeps compiling.
const CROSS_TARGETS: &[&str] = &["aarch64-apple-darwin", "x86_64-pc-windows-msvc"];

/// Debian packages the test suite needs: the programs the headless end-to-end tests run in real
/// PTYs (bash, vim, tput from ncurses-bin, coreutils' yes/head/stty/sleep), and tmux and
/// util-linux `script` (bsdutils), the peer and the floor of the pane throughput benchmark;
/// perl-base speaks raw socket requests as another user in the uid test; mesa-vulkan-drivers
/// is the software Vulkan adapter (lavapipe) the render tests draw on; xvfb, xdotool and
/// imagemagick run, type into and photograph the real window; python3 runs the sandbox escape
/// suite's probe and git its positive control. Later parts (keychain) add theirs.
const APT_PACKAGES: &[&str] = &[
    "bash",
    "coreutils",
    "ncurses-bin",
    "vim",
    "tmux",
    "bsdutils",
    "perl-base",
    "mesa-vulkan-drivers",
    "xvfb",
    "xdotool",
    "imagemagick",
    "python3",
    "git",
    // The vault's tests: a private D-Bus session with gnome-keyring (the Secret Service), and
    // the kernel's keyutils; secret-tool and keyctl look at what paddock stored.
    "dbus-daemon",
    // dbus-monitor: the window test that watches paddock's desktop notifications.
    "dbus-bin",
    "gnome-keyring",
    "libsecret-tools",
    "keyutils",
];

fn main() -> Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    match task.as_str() {
        "ci" => ci(),
        "bless" => bless(),
        "bench" => bench(),
        "bench-panes" => panes_bench::run(&workspace_root()),
        "bench-window" => window_bench::run(&workspace_root()),
        "bench-pulse" => pulse_bench::run(&workspace_root()),
        _ => {
            eprintln!("usage: cargo xtask <ci|bless|bench|bench-panes|bench-window|bench-pulse>");
            eprintln!("  ci     install test prerequisites and run every check");
            eprintln!("  bless  rewrite expected test output files");
            eprintln!("  bench  run the parse benchmark and print the table with ratios");
            eprintln!("  bench-panes  headless panes beside tmux: cat throughput, memory");
            eprintln!("  bench-window  the window beside Alacritty under Xvfb; idle cost");
            eprintln!("  bench-pulse  the sampler's CPU with 16 panes; paddock ls beside tmux");
            std::process::exit(2);
        }
    }
}

fn ci() -> Result<()> {
    install_apt_packages(APT_PACKAGES)?;
    step("format", cargo(&["fmt", "--all", "--", "--check"]))?;
    step("clippy", cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))?;
    step("tests", cargo(&["test", "--workspace"]))?;
    cross_checks()?;
    println!("xtask ci: all checks passed");
    Ok(())
}

fn bless() -> Result<()> {
    let mut test = cargo(&["test", "--test", "it"]);
    test.env("PADDOCK_BLESS", "1");
    step("bless", test)
}

const STREAMS: &[&str] = &["dense_sgr", "plain_text", "unicode", "cursor_motion", "agent_tui"];

fn bench() -> Result<()> {
    let extra: Vec<String> = std::env::args().skip(2).collect();
    let mut run = cargo(&["bench", "--bench", "parse", "--"]);
    run.args(&extra);
    step("bench", run)?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    println!(
        "| stream | paddock MiB/s | alacritty_terminal MiB/s | ratio | vte alone MiB/s \
         | handler time, paddock / alacritty | paddock, 5 secrets masked MiB/s | masking cost |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for stream in STREAMS {
        let ours = throughput(&root, stream, "paddock")?;
        let theirs = throughput(&root, stream, "alacritty")?;
        let floor = throughput(&root, stream, "vte_floor")?;
        // Time per byte above the parser's own: what each model's handler costs.
        let handler = |t: f64| 1.0 / t - 1.0 / floor;
        let share = handler(ours) / handler(theirs);
        let ratio = ours / theirs;
        let masked = throughput(&root, stream, "paddock_masked")?;
        let cost = (ours / masked - 1.0) * 100.0;
        println!(
            "| {stream} | {ours:.1} | {theirs:.1} | {ratio:.2}x | {floor:.1} | {share:.2} \
             | {masked:.1} | {cost:+.1}% |"
        );
    }
    Ok(())
}

/// Mean throughput in MiB/s from criterion's saved estimates.
fn throughput(root: &std::path::Path, group: &str, function: &str) -> Result<f64> {
    let dir = root.join(group).join(function).join("new");
    let read = |name: &str| -> Result<serde_json::Value> {
        let text = std::fs::read_to_string(dir.join(name))
            .with_context(|| format!("no {name} for {group}/{function}"))?;
        Ok(serde_json::from_str(&text)?)
    };
    let nanos = read("estimates.json")?["mean"]["point_estimate"].as_f64().context("mean")?;
    let bytes = read("benchmark.json")?["throughput"]["Bytes"].as_f64().context("bytes")?;
    Ok(bytes / (nanos / 1e9) / (1024.0 * 1024.0))
}

fn cargo(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.args(args);
    command
}

fn step(name: &str, mut command: Command) -> Result<()> {
    println!("xtask: == {name}: {command:?}");
    let status = command.status().with_context(|| format!("cannot start {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

/// Type-check for the other platforms. Missing targets are added with rustup; when rustup cannot
/// get them (offline, no rustup), say so loudly and skip only these checks.
fn cross_checks() -> Result<()> {
    for target in CROSS_TARGETS {
        if !target_installed(target) {
            let added = Command::new("rustup").args(["target", "add", target]).status();
            if !matches!(added, Ok(s) if s.success()) {
                println!("xtask: !! WARNING: rustup could not add {target}; SKIPPING its check");
                continue;
            }
        }
        step(&format!("check {target}"), cargo(&["check", "--workspace", "--target", target]))?;
    }
    Ok(())
}

fn target_installed(target: &str) -> bool {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == target))
        .unwrap_or(false)
}

/// Install Debian packages that are missing (CI runs as root on a fresh machine).
fn install_apt_packages(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            !Command::new("dpkg").args(["-s", p]).output().is_ok_and(|o| o.status.success())
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    step("apt-get update", {
        let mut c = Command::new("apt-get");
        c.arg("update");
        c
    })?;
    step("apt-get install", {
        let mut c = Command::new("apt-get");
        c.args(["install", "-y", "--no-install-recommends"]).args(&missing);
        c.env("DEBIAN_FRONTEND", "noninteractive");
        c
    })
}

fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
