//! The lock, attacked: every escape runs inside a real lock (`paddock sandbox run`) through a
//! small probe of ours (tests/data/escape_probe.py, run with `python3 -c` so that it need not
//! be readable inside), its result printed as data, and its side effect checked from outside.
//! Positive controls in every group: a lock that denies everything fails the suite.

mod escapes;
mod fallback;
mod git;
mod lifetime;
mod sockets;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const PADDOCK: &str = env!("CARGO_BIN_EXE_paddock");
const PROBE: &str = include_str!("../../data/escape_probe.py");
/// Debian's python3 (a shim elsewhere in PATH would not be inside the lock's view).
const PYTHON: &str = "/usr/bin/python3";

/// Folders for one test: `lock` (writable, with a fake git repository's hooks and config),
/// `ro` (read-only), `outside` (neither: secrets, an ssh key) and `home` (the user's home,
/// with a .bashrc).
pub struct Fixture {
    pub root: PathBuf,
    pub lock: PathBuf,
    pub ro: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    /// `XDG_CONFIG_HOME` for the locked command (paddock's configuration folder is protected
    /// where it falls inside the lock).
    pub config_home: PathBuf,
    /// The paddock that runs the lock (the one cargo built, unless a test needs a copy).
    pub exe: PathBuf,
}

impl Fixture {
    pub fn new(name: &str) -> Fixture {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let fx = Fixture {
            lock: root.join("lock"),
            ro: root.join("ro"),
            outside: root.join("outside"),
            home: root.join("home"),
            config_home: root.join("config"),
            exe: PathBuf::from(PADDOCK),
            root,
        };
        for dir in
            [fx.lock.join(".git/hooks"), fx.ro.clone(), fx.outside.join(".ssh"), fx.home.clone()]
        {
            std::fs::create_dir_all(dir).expect("fixture folder");
        }
        let files = [
            (fx.lock.join("file.txt"), "inside"),
            (fx.lock.join(".git/config"), "[core]\n"),
            (fx.ro.join("data.txt"), "data"),
            (fx.outside.join("secret.txt"), "secret"),
            (fx.outside.join(".ssh/id_rsa"), "PRIVATE KEY"),
            (fx.home.join(".bashrc"), "# rc\n"),
        ];
        for (path, text) in files {
            std::fs::write(path, text).expect("fixture file");
        }
        fx
    }

    pub fn path(&self, rel: &str) -> String {
        self.root.join(rel).display().to_string()
    }

    /// `paddock sandbox run --write lock --read ro [extra] -- python3 -c PROBE ARGS`.
    pub fn run(&self, extra: &[&str], args: &[&str]) -> Output {
        self.command(extra, args).output().expect("run paddock sandbox")
    }

    /// The command `run` runs, to add to.
    pub fn command(&self, extra: &[&str], args: &[&str]) -> Command {
        let lock = self.lock.display().to_string();
        let ro = self.ro.display().to_string();
        let mut command = Command::new(&self.exe);
        command
            .args(["sandbox", "run", "--write", &lock, "--read", &ro])
            .args(extra)
            .args(["--", PYTHON, "-c", PROBE])
            .args(args)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config_home)
            .current_dir(&self.lock)
            .stdin(Stdio::null());
        command
    }

    /// The probe's one line for `args`, run under the lock; the lock itself must not fail.
    pub fn probe(&self, args: &[&str]) -> String {
        self.probe_with(&[], args)
    }

    pub fn probe_with(&self, extra: &[&str], args: &[&str]) -> String {
        let out = self.run(extra, args);
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: exit {:?}: {stdout} {stderr}", out.status.code());
        stdout
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Run every case (the probe's arguments, its expected line) under the lock with `extra`
/// arguments; fail with every case that came out otherwise.
pub fn check(fx: &Fixture, extra: &[&str], cases: &[(Vec<String>, &str)]) {
    let mut wrong = Vec::new();
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let found = fx.probe_with(extra, &args);
        if found != *expected {
            wrong.push(format!("{args:?}: expected {expected:?}, found {found:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What a person would notice changed about a file: its bytes, mode and modification time.
pub type FileState = (Vec<u8>, u32, i64);

pub fn state(path: &Path) -> Option<FileState> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((
        std::fs::read(path).unwrap_or_default(),
        meta.mode(),
        meta.mtime_nsec() + meta.mtime() * 1_000_000_000,
    ))
}

/// Every file under `dir` with its state.
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<FileState>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            out.push((path.clone(), state(&path)));
        }
    }
    out.sort();
    out
}
