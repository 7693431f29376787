//! Threads on another host, over a real sshd on a loopback port, beside plain ssh in the same
//! run (`cargo xtask bench-remote`, or `cargo bench --bench remote`).
//!
//! - Throughput: `cat` of 64 MiB of a build log in a remote thread's pane, from starting the
//!   local instance until the last line is on its pane here (ssh connection, the host's PTY and
//!   parser, the wire, this side's replica), against `ssh HOST cat FILE` (no terminal: the
//!   bytes alone) and `ssh -tt HOST cat FILE` (a terminal on the host, as a person's ssh
//!   session has), each to the end of its output; median of 5.
//! - Echo latency: one key typed into a remote pane running `cat`, from the attach socket
//!   (as a window sends it) until the echo comes back in a chunk, against a key written to
//!   `ssh -tt HOST cat` until its echo is read; and a local pane's, for paddock's own part;
//!   median of 200.
//!
//! The "host" is this machine through sshd as this user, with a paddock of folders its own.

#[path = "../tests/it/headless/remote/sshd.rs"]
#[allow(dead_code)]
mod sshd;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use paddock::ctl::wire::{read_frame, ToServer, ToWindow, MAX_FRAME};

const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");
const SIZE: usize = 64 << 20;
const RUNS: usize = 5;
const KEYS: usize = 200;
const END: &str = "__remote_bench_end__";

/// What `sshd.rs` calls when OpenSSH is missing.
pub fn skip(test: &str, why: &str) {
    eprintln!("SKIPPED {test}: {why}");
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let dir = std::env::temp_dir().join(format!("paddock-bench-remote-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench folder");
    let Some(sshd) = sshd::Sshd::start("bench-remote", &dir.join("sshd")) else {
        panic!("the remote benchmark needs openssh-server and openssh-client");
    };
    let file = dir.join("build-log-64m.txt");
    std::fs::write(&file, build_log(SIZE)).expect("the file");
    let there = Folders::new(&dir.join("there"));
    let wrapper = there.wrapper(&dir.join("remote-paddock"));
    let options: Vec<String> = sshd.client_options();
    let quoted: Vec<String> = options.iter().map(|o| format!("{o:?}")).collect();
    let host = format!(
        "hosts: {{\"box\": (destination: {:?}, paddock_path: {:?}, ssh_options: [{}])}},",
        sshd.destination(),
        wrapper.display().to_string(),
        quoted.join(", ")
    );

    // Throughput.
    let cat = format!("cat '{}'; echo {END}", file.display());
    let (mut ours, mut bare, mut tty) = (Vec::new(), Vec::new(), Vec::new());
    let (mut setup, mut pty) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        // What opening a remote pane costs before any output: paddock, ssh, the host's paddock.
        let here = Folders::new(&dir.join(format!("ready-{run}")));
        here.config(&format!(
            "({host} threads: [(name: \"far\", host: \"box\", command: [\"sh\", \"-c\", \"echo {END}; exec sleep 60\"])])"
        ));
        let start = Instant::now();
        let instance = here.start();
        instance.wait_for_text(END, Duration::from_secs(60));
        setup.push(start.elapsed().as_secs_f64());
        drop(instance);
        let here = Folders::new(&dir.join(format!("here-{run}")));
        here.config(&format!(
            "({host} threads: [(name: \"far\", host: \"box\", command: [\"sh\", \"-c\", {cat:?}])])"
        ));
        let start = Instant::now();
        let instance = here.start();
        instance.wait_for_text(END, Duration::from_secs(300));
        ours.push(start.elapsed().as_secs_f64());
        drop(instance);
        let start = Instant::now();
        let out = ssh(&sshd, &[], &["cat", &file.display().to_string()]);
        bare.push(start.elapsed().as_secs_f64());
        assert_eq!(out, SIZE, "ssh cat read the whole file");
        let start = Instant::now();
        ssh(&sshd, &["-tt", "-q"], &["cat", &file.display().to_string()]);
        tty.push(start.elapsed().as_secs_f64());
        // The host's PTY alone, read by a program that parses nothing (util-linux `script`).
        let start = Instant::now();
        let status = Command::new("script")
            .args(["-q", "-c", &format!("cat '{}'", file.display()), "/dev/null"])
            .stdout(Stdio::null())
            .status()
            .expect("script (util-linux)");
        assert!(status.success());
        pty.push(start.elapsed().as_secs_f64());
    }
    let mib = SIZE as f64 / (1024.0 * 1024.0);
    let (ours, bare, tty) = (median(&mut ours), median(&mut bare), median(&mut tty));
    let (setup, pty) = (median(&mut setup), median(&mut pty));
    println!("\n### cat of 64 MiB over a loopback sshd (median of {RUNS}, wall s from start)\n");
    println!(
        "| paddock remote pane | ssh HOST cat | ssh -tt HOST cat | the host's PTY alone | \
         paddock / ssh | paddock / ssh -tt | opening the pane |"
    );
    println!("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let rate = |s: f64| format!("{s:.2} s ({:.0} MiB/s)", mib / s);
    println!(
        "| {} | {} | {} | {} | {:.2}x | {:.2}x | {setup:.2} s |",
        rate(ours),
        rate(bare),
        rate(tty),
        rate(pty),
        bare / ours,
        tty / ours
    );

    // Echo latency.
    let here = Folders::new(&dir.join("here-latency"));
    here.config(&format!(
        "({host} threads: [(name: \"far\", host: \"box\", command: [\"cat\"]), \
         (name: \"near\", command: [\"cat\"])])"
    ));
    let instance = here.start();
    instance.wait_for_status(1, "running");
    instance.wait_for_status(2, "running");
    let mut window = Window::attach(&instance.socket);
    let mut remote = window.echo_latencies(1);
    let mut local = window.echo_latencies(2);
    drop(instance);
    let mut plain = ssh_echo_latencies(&sshd);
    let (remote, local, plain) = (median(&mut remote), median(&mut local), median(&mut plain));
    println!("\n### Echo of one key (median of {KEYS}, ms)\n");
    println!("| paddock remote pane | ssh -tt HOST cat | added by paddock | paddock local pane |");
    println!("| ---: | ---: | ---: | ---: |");
    println!(
        "| {:.2} | {:.2} | {:+.2} | {:.2} |",
        remote * 1e3,
        plain * 1e3,
        (remote - plain) * 1e3,
        local * 1e3
    );
    let _ = Command::new(PADDOCK).arg("kill-server").envs(there.env()).output();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bytes `ssh [OPTIONS] HOST REMOTE…` wrote to its standard output.
fn ssh(sshd: &sshd::Sshd, extra: &[&str], remote: &[&str]) -> usize {
    let mut child = Command::new("ssh")
        .args(extra)
        .args(sshd.client_options())
        .arg(sshd.destination())
        .args(remote)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ssh");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => total += n,
        }
    }
    let _ = child.wait();
    total
}

/// Seconds from writing one key to `ssh -tt HOST cat` until its echo is read, `KEYS` times.
fn ssh_echo_latencies(sshd: &sshd::Sshd) -> Vec<f64> {
    let mut child = Command::new("ssh")
        .args(["-tt", "-q"])
        .args(sshd.client_options())
        .arg(sshd.destination())
        .args(["stty", "-icanon", "&&", "exec", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("ssh -tt");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = child.stdout.take().expect("stdout");
    let mut byte = [0u8; 4096];
    // The session is up once a first key comes back.
    input.write_all(b"w").expect("key");
    read_until(&mut output, b'w', &mut byte);
    let mut samples = Vec::new();
    for n in 0..KEYS {
        let key = b'a' + (n % 26) as u8;
        let start = Instant::now();
        input.write_all(&[key]).expect("key");
        read_until(&mut output, key, &mut byte);
        samples.push(start.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
    samples
}

fn read_until(from: &mut impl Read, wanted: u8, buf: &mut [u8]) {
    loop {
        let n = from.read(buf).expect("read");
        assert!(n > 0, "the echo never came");
        if buf[..n].contains(&wanted) {
            return;
        }
    }
}

/// One side's folders: runtime, configuration, state and data, as XDG variables.
struct Folders {
    dir: PathBuf,
}

impl Folders {
    fn new(dir: &Path) -> Folders {
        for sub in ["run", "config/paddock", "state", "data"] {
            std::fs::create_dir_all(dir.join(sub)).expect("folders");
        }
        Folders { dir: dir.to_owned() }
    }

    fn env(&self) -> Vec<(String, PathBuf)> {
        vec![
            ("XDG_RUNTIME_DIR".into(), self.dir.join("run")),
            ("XDG_CONFIG_HOME".into(), self.dir.join("config")),
            ("XDG_STATE_HOME".into(), self.dir.join("state")),
            ("XDG_DATA_HOME".into(), self.dir.join("data")),
        ]
    }

    /// A script that runs paddock with these folders: the host's `paddock_path`.
    fn wrapper(&self, path: &Path) -> PathBuf {
        let mut text = String::from("#!/bin/sh\n");
        for (name, value) in self.env() {
            text.push_str(&format!("export {name}='{}'\n", value.display()));
        }
        text.push_str(&format!("exec '{PADDOCK}' \"$@\"\n"));
        std::fs::write(path, text).expect("wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path.to_owned()
    }

    fn config(&self, text: &str) {
        std::fs::write(self.dir.join("config/paddock/config.ron"), text).expect("config");
    }

    fn start(&self) -> Instance {
        let mut child = Command::new(PADDOCK)
            .args(["--headless", "--size", "120x40"])
            .envs(self.env())
            .env("SHELL", "/bin/sh")
            .stdout(Stdio::piped())
            .spawn()
            .expect("paddock --headless");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("socket");
        Instance { child, socket: PathBuf::from(line.trim_end()) }
    }
}

struct Instance {
    child: Child,
    socket: PathBuf,
}

impl Instance {
    fn ctl(&self, args: &[&str]) -> String {
        let out = Command::new(PADDOCK)
            .arg(args[0])
            .arg("--socket")
            .arg(&self.socket)
            .args(&args[1..])
            .output()
            .expect("paddock ctl");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for_text(&self, text: &str, most: Duration) {
        let deadline = Instant::now() + most;
        while !self.ctl(&["ctl", "capture", "--pane", "1"]).contains(text) {
            assert!(Instant::now() < deadline, "{text:?} never reached the pane");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn wait_for_status(&self, pane: u64, status: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let listing: serde_json::Value =
                serde_json::from_str(&self.ctl(&["ls", "--json"])).unwrap_or_default();
            let panes = listing["instances"][0]["panes"].as_array().cloned().unwrap_or_default();
            if panes.iter().any(|p| p["id"] == pane && p["status"] == status) {
                return;
            }
            assert!(Instant::now() < deadline, "pane {pane} never read {status}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.ctl(&["ctl", "stop"]);
        let _ = self.child.wait();
    }
}

/// A window attached to an instance, as far as typing and reading chunks go.
struct Window {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Window {
    fn attach(socket: &Path) -> Window {
        let attach = paddock::ctl::attach::attach_socket(socket);
        let (stream, _) = paddock::ctl::attach::connect(&attach).expect("attach");
        let mut window = Window { stream, buf: Vec::new() };
        window.send(&ToServer::Area { cols: 120, rows: 40 });
        window
    }

    fn send(&mut self, frame: &ToServer) {
        self.stream.write_all(&frame.encode()).expect("send");
    }

    /// Seconds from typing one key into `pane` until a chunk of it holds the echo.
    fn echo_latencies(&mut self, pane: u32) -> Vec<f64> {
        let mut samples = Vec::new();
        for n in 0..=KEYS {
            let key = b'a' + (n % 26) as u8;
            let start = Instant::now();
            self.send(&ToServer::Input { pane, bytes: vec![key] });
            loop {
                let frame = read_frame(&mut self.stream, MAX_FRAME, &mut self.buf).expect("frame");
                match ToWindow::decode(frame).expect("decode") {
                    ToWindow::Chunk { pane: p, bytes, .. } if p == pane && bytes.contains(&key) => {
                        break
                    }
                    _ => {}
                }
            }
            // The first is the pane waking up; the rest are the sample.
            if n > 0 {
                samples.push(start.elapsed().as_secs_f64());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        samples
    }
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// A compiler's build log: plain lines of varied length, some colored warnings.
fn build_log(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 256);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut n = 0u64;
    while out.len() < size {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        n += 1;
        let line = if seed % 10 == 0 {
            format!("\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `x{n}`\x1b[0m\n")
        } else {
            let width = 20 + (seed % 100) as usize;
            let word: String =
                (0..width).map(|i| (b'a' + ((seed >> (i % 60)) % 26) as u8) as char).collect();
            format!("src/module_{}.rs:{}: {word}\n", seed % 50, n)
        };
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(size);
    out
}
