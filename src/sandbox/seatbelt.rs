//! The macOS lock: `/usr/bin/sandbox-exec` with a Seatbelt profile. The profile is the files in
//! sandbox-profiles/ (included here at build time) plus rules generated for the lock that name
//! only parameters: every path enters as `-DKEY=VALUE`, never as profile text, so no folder
//! name can change what the profile says. Pure text: built and checked on every platform.

use std::path::{Path, PathBuf};

use super::resolve::Resolved;

/// Never looked up in PATH.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";
const BASE: &str = include_str!("../../sandbox-profiles/base.sb");
const NETWORK: &str = include_str!("../../sandbox-profiles/network.sb");

/// A profile and the parameters it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    pub params: Vec<(String, PathBuf)>,
}

/// Every folder strictly between a writable folder and a protected path inside it.
fn held_in_place(resolved: &Resolved) -> Vec<PathBuf> {
    let mut held: Vec<PathBuf> = resolved
        .protect
        .iter()
        .flat_map(|path| path.ancestors().skip(1))
        .filter(|folder| resolved.write.iter().any(|w| folder.starts_with(w) && *folder != w))
        .map(Path::to_path_buf)
        .collect();
    held.sort();
    held.dedup();
    held
}

/// The profile for a resolved lock; `tty` is the pane's terminal, `tmpdir` its own temporary
/// folder.
pub fn profile(resolved: &Resolved, tty: Option<&Path>, tmpdir: &Path) -> Profile {
    let mut text = String::from(BASE);
    let mut params: Vec<(String, PathBuf)> = Vec::new();
    let mut param = |prefix: &str, index: usize, path: &Path| {
        let key = format!("{prefix}_{index}");
        params.push((key.clone(), path.to_owned()));
        format!("(param \"{key}\")")
    };
    text.push_str("\n;; The lock (generated; paths are parameters).\n");
    let protect: Vec<String> =
        resolved.protect.iter().enumerate().map(|(i, p)| param("PROTECT", i, p)).collect();
    // The folders between a writable folder and a protected path stay where they are (no
    // `mv app/.git elsewhere` and a fresh one in its place): writing a folder's own path is
    // renaming or removing it, while what is inside it stays writable. (Linux makes them mount
    // points.)
    let held: Vec<String> =
        held_in_place(resolved).iter().enumerate().map(|(i, p)| param("HOLD", i, p)).collect();
    let not_protected: String = protect
        .iter()
        .map(|p| format!(" (require-not (subpath {p}))"))
        .chain(held.iter().map(|p| format!(" (require-not (literal {p}))")))
        .collect();
    for (i, path) in resolved.read.iter().enumerate() {
        let p = param("READ", i, path);
        text.push_str(&format!("(allow file-read* process-exec (subpath {p}))\n"));
    }
    let writable = resolved.write.iter().map(PathBuf::as_path).chain([tmpdir]);
    for (i, path) in writable.enumerate() {
        let p = param("WRITE", i, path);
        text.push_str(&format!("(allow file-read* process-exec (subpath {p}))\n"));
        text.push_str(&format!("(allow file-write* (require-all (subpath {p}){not_protected}))\n"));
    }
    for (i, path) in resolved.unix_sockets.iter().enumerate() {
        let p = param("SOCKET", i, path);
        text.push_str(&format!(
            "(allow network-outbound (remote unix-socket (path-literal {p})))\n"
        ));
    }
    if let Some(tty) = tty {
        let p = param("TTY", 0, tty);
        text.push_str(&format!("(allow file-read* file-write* file-ioctl (literal {p}))\n"));
    }
    if resolved.network {
        text.push('\n');
        text.push_str(NETWORK);
    }
    Profile { text, params }
}

/// `sandbox-exec -p PROFILE -DKEY=VALUE… -- /usr/bin/env TMPDIR=… CMD…`.
pub fn argv(profile: &Profile, tmpdir: &Path, command: &[String]) -> Vec<String> {
    let mut argv = vec![SANDBOX_EXEC.to_owned(), "-p".into(), profile.text.clone()];
    for (key, path) in &profile.params {
        argv.push(format!("-D{key}={}", path.display()));
    }
    argv.push("--".into());
    // The pane's own temporary folder, the only one it may write besides the lock's.
    argv.push("/usr/bin/env".into());
    argv.push(format!("TMPDIR={}", tmpdir.display()));
    argv.extend(command.iter().cloned());
    argv
}

/// The lock on macOS.
pub struct Seatbelt;

impl super::Isolation for Seatbelt {
    fn probe(&self) -> super::Probe {
        if Path::new(SANDBOX_EXEC).is_file() {
            let lines = vec![format!("Seatbelt: {SANDBOX_EXEC} is there")];
            super::Probe { lines, blocker: None, gaps: Vec::new() }
        } else {
            let why = format!("{SANDBOX_EXEC} is missing");
            super::Probe { lines: vec![why.clone()], blocker: Some(why), gaps: Vec::new() }
        }
    }

    fn wrap(&self, policy: &super::Policy, command: &[String]) -> super::Launch {
        if policy.reach() == super::Reach::AllowList {
            return super::Launch::refused(
                "a network allow-list is not enforced on macOS yet (use network: Off or On)".into(),
            );
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let resolved = match super::resolve::resolve(policy, home.as_deref()) {
            Ok(resolved) => resolved,
            Err(why) => return super::Launch::refused(why.to_string()),
        };
        if let Some(why) = self.probe().blocker {
            return super::Launch::refused(format!("this system cannot enforce a lock: {why}"));
        }
        let tmpdir = match fresh_tmpdir() {
            Ok(dir) => dir,
            Err(e) => {
                return super::Launch::refused(format!("cannot make its temporary folder: {e}"))
            }
        };
        let tty = std::fs::read_link("/dev/fd/0").ok().filter(|p| p.starts_with("/dev/"));
        let profile = profile(&resolved, tty.as_deref(), &tmpdir);
        let enforcement = super::Enforcement::Locked { network: policy.reach() };
        super::Launch { argv: Some(argv(&profile, &tmpdir, command)), enforcement }
    }
}

/// A private folder of the lock's own under the system's temporary folder.
fn fresh_tmpdir() -> std::io::Result<PathBuf> {
    let base = std::env::temp_dir().canonicalize()?;
    for attempt in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = base.join(format!("paddock-lock-{}-{nanos}-{attempt}", std::process::id()));
        #[cfg(unix)]
        let created = {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(&dir)
        };
        #[cfg(not(unix))]
        let created = std::fs::DirBuilder::new().create(&dir);
        if created.is_ok() {
            return Ok(dir);
        }
    }
    Err(std::io::Error::other("no free name"))
}
