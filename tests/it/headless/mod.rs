//! `paddock --headless` end to end: a real instance, real PTYs and real programs, driven the
//! way a user or a script would drive it, through `paddock ls` and `paddock ctl`.

mod agent;
mod agent_pulse;
mod attach;
mod broker;
pub(crate) mod config;
mod control;
mod egress;
mod git_planted;
mod home;
mod impostor;
mod lock_paths;
mod locked_control;
mod lost;
mod panes;
mod pulse;
mod remote;
mod worktree;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");

/// A private folder per test, so instances of parallel tests never meet: its `run` folder is
/// the session's runtime folder (`XDG_RUNTIME_DIR`), beside the test's own files (a lock
/// folder may not be, or lie in, the runtime folder).
pub struct Runtime {
    pub dir: PathBuf,
    pub run: PathBuf,
}

impl Runtime {
    pub fn new() -> Runtime {
        Runtime::under(&std::env::temp_dir())
    }

    /// A runtime directory that other users can reach once a test opens it up: under /tmp,
    /// whatever TMPDIR says (a private TMPDIR, like a clone in a 0700 folder, is out of their
    /// reach).
    pub fn reachable_by_other_users() -> Runtime {
        Runtime::under(Path::new("/tmp"))
    }

    fn under(parent: &Path) -> Runtime {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let dir = parent.join(format!("pdk-it-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = dir.join("run");
        std::fs::create_dir_all(&run).expect("create runtime dir");
        Runtime { dir, run }
    }

    /// `paddock ARGS` with this runtime directory and nothing inherited that could pick another
    /// instance.
    pub fn paddock(&self, args: &[&str]) -> Command {
        let mut command = Command::new(PADDOCK);
        command
            .args(args)
            .env("XDG_RUNTIME_DIR", &self.run)
            // No configuration unless a test writes one here (or passes --config).
            .env("XDG_CONFIG_HOME", self.dir.join("config"))
            .env("SHELL", "/bin/sh")
            .env("XDG_STATE_HOME", self.dir.join("state"))
            // Locked threads' homes here, never in the user's data folder.
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env_remove("PADDOCK_SOCKET")
            .env_remove("PADDOCK_PANE");
        // The vault: inside a test's private keychain session, that one; otherwise the kernel's
        // keyutils under a service name of this test's own, which nothing ever writes to (no
        // user's Secret Service is ever asked).
        if std::env::var_os("PADDOCK_TEST_KEYCHAIN").is_none() {
            command
                .env_remove("DBUS_SESSION_BUS_ADDRESS")
                .env("PADDOCK_VAULT_STORE", "keyutils")
                .env("PADDOCK_VAULT_SERVICE", format!("paddock-test-{}", std::process::id()));
        }
        command
    }

    /// Start a headless instance and wait for it to print its socket.
    pub fn start(&self, args: &[&str]) -> Instance {
        self.start_with_env(args, &[])
    }

    /// `start`, with these environment variables set for the instance.
    pub fn start_with_env(&self, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Instance {
        self.start_with(args, env, Stdio::inherit())
    }

    /// `start_with_env`, its stderr (paddock's log) going to `stderr`.
    pub fn start_with(
        &self,
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
        stderr: Stdio,
    ) -> Instance {
        let mut all = vec!["--headless"];
        all.extend_from_slice(args);
        let mut command = self.paddock(&all);
        command.envs(env.iter().copied());
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("start paddock --headless");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout).read_line(&mut line).expect("read the socket path");
        let socket = PathBuf::from(line.trim_end());
        assert!(socket.starts_with(&self.dir), "socket {socket:?} in the test's folder");
        Instance { child, socket, runtime_dir: self.run.clone() }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub struct Instance {
    pub child: Child,
    pub socket: PathBuf,
    pub runtime_dir: PathBuf,
}

impl Instance {
    /// `paddock SUBCOMMAND --socket <this instance> ARGS` (before ARGS, which may end in a
    /// command after `--`).
    pub fn run(&self, args: &[&str]) -> Output {
        let mut command = Command::new(PADDOCK);
        command
            .args(&args[..1])
            .arg("--socket")
            .arg(&self.socket)
            .args(&args[1..])
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env_remove("PADDOCK_SOCKET")
            .env_remove("PADDOCK_PANE");
        command.output().expect("run paddock")
    }

    /// `paddock ctl ARGS`, which must succeed; returns its stdout.
    pub fn ctl(&self, args: &[&str]) -> String {
        let mut all = vec!["ctl"];
        all.extend_from_slice(args);
        let out = self.run(&all);
        assert!(out.status.success(), "paddock {all:?} failed: {}", text(&out.stderr));
        text(&out.stdout)
    }

    pub fn send_keys(&self, pane: &str, keys: &str) {
        self.ctl(&["send", "--pane", pane, "--keys", keys]);
    }

    pub fn capture(&self, pane: &str) -> String {
        self.ctl(&["capture", "--pane", pane])
    }

    pub fn ls(&self) -> Value {
        let out = self.run(&["ls", "--json"]);
        assert!(out.status.success(), "paddock ls failed: {}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).expect("ls --json prints JSON")
    }

    /// The pane with `id` in `ls --json`.
    pub fn pane(&self, id: u64) -> Value {
        let ls = self.ls();
        ls["instances"][0]["panes"]
            .as_array()
            .and_then(|panes| panes.iter().find(|p| p["id"] == id).cloned())
            .unwrap_or(Value::Null)
    }

    /// The pane's screen once it shows `wanted`; on a timeout, the failure shows the screen.
    pub fn wait_for_text(&self, pane: &str, wanted: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let last = self.capture(pane);
            if last.contains(wanted) {
                return last;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {wanted:?} in pane {pane}:\n{last}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Wait for bash's prompt (`bash-5.2$ ` without rc files): typing earlier may be flushed
    /// by the shell as it sets up its line editor, as it would be for a person.
    pub fn wait_for_prompt(&self, pane: &str) {
        self.wait_for_text(pane, "bash-");
    }

    /// Wait for the instance process to end and return its exit code.
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the instance did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SIGTERM: the instance closes its panes and removes its socket.
            // SAFETY: kill(2) on our own child's pid.
            unsafe {
                libc::kill(self.child.id() as i32, libc::SIGTERM);
            }
            let _ = self.wait_exit();
        }
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Wait (up to a generous bound, so a slow CI machine does not fail) for `done`.
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` is alive (a zombie is not).
pub fn alive(pid: i64) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z")
}

pub fn socket_exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
