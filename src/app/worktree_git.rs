//! The git paddock runs to make a thread's worktree, in a lock of its own.
//!
//! paddock makes the worktree on a repository its locked threads write. What that git would run
//! (a checkout filter named in the repository's config, a worktree's config or the user's, with
//! the `.gitattributes` of a branch a lock committed) and where it would write (a reflog a lock
//! made a link, a `commondir` written between a check and git's own read) are then the
//! repository's to say. So git runs locked, in two steps (`worktree::ensure`): its bookkeeping
//! without a checkout, where nothing of the repository's runs, and the checkout, whose lock
//! may write only the new worktree and its own git folder (its pointers read-only). Each sees
//! no home (an empty one stands in: no settings of yours, no filter they define, nothing of a
//! thread's), has no network, and is stopped after a time. Hooks, the file-system monitor and
//! submodules stay off besides; large files kept by git-lfs are left as pointers (`git lfs
//! pull` fetches them, in a lock that lets it).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::config::{LockPolicy, Network};
use crate::sandbox::{self, Enforcement};

/// How long a question to git may take (`rev-parse`).
pub const QUESTION: Duration = Duration::from_secs(20);
/// How long git's bookkeeping for a new worktree may take (no checkout).
pub const BOOKKEEPING: Duration = Duration::from_secs(30);
/// How long the checkout of a new worktree may take (a large repository).
pub const CHECKOUT: Duration = Duration::from_secs(120);
/// Output kept of a git run: enough for any message.
const KEPT: u64 = 64 * 1024;

/// One git command for `worktree::ensure`: on which git folder and work tree, what its lock
/// lets it write and read and keeps read-only inside those, and for how long.
pub struct GitCall<'a> {
    pub git_dir: &'a Path,
    pub work_tree: &'a Path,
    pub write: &'a [PathBuf],
    pub read: &'a [PathBuf],
    pub protect: &'a [PathBuf],
    pub args: &'a [&'a str],
    pub limit: Duration,
}

/// Runs git for `worktree::ensure`.
pub trait RunGit {
    /// `call`: git's output, or why not (git's error output).
    fn run(&self, call: &GitCall<'_>) -> Result<String, String>;
}

/// git's arguments for `call`: its git folder and work tree named (git never looks for one
/// above it), hooks, the file-system monitor and submodules off.
pub fn argv(call: &GitCall<'_>) -> Vec<String> {
    let mut argv: Vec<String> = ["git", "-c", "core.hooksPath=/dev/null", "-c"]
        .into_iter()
        .chain(["core.fsmonitor=false", "-c", "submodule.recurse=false"])
        .map(str::to_owned)
        .collect();
    argv.push(format!("--git-dir={}", call.git_dir.display()));
    argv.push(format!("--work-tree={}", call.work_tree.display()));
    argv.extend(["-C".to_owned(), call.work_tree.display().to_string()]);
    argv.extend(call.args.iter().map(|a| (*a).to_owned()));
    argv
}

/// What git's environment adds to a lock's: no prompt (nobody answers one), no git-lfs
/// download (the network is off).
const GIT_ENV: [(&str, &str); 2] = [("GIT_TERMINAL_PROMPT", "0"), ("GIT_LFS_SKIP_SMUDGE", "1")];

/// git in a lock of its own: paddock's files guarded and its control sockets kept out, as for
/// a pane, and no home.
pub struct LockedGit<'a> {
    pub launcher: &'a Path,
    pub guarded: &'a [PathBuf],
    pub socket: &'a Path,
}

impl RunGit for LockedGit<'_> {
    fn run(&self, call: &GitCall<'_>) -> Result<String, String> {
        let lock = LockPolicy {
            write: call.write.to_vec(),
            read: call.read.to_vec(),
            protect: call.protect.to_vec(),
            network: Network::Off,
            sockets: Vec::new(),
            allow_broad_write: false,
        };
        let policy = sandbox::Policy {
            control_sockets: crate::app::lock::exposed_control_sockets(self.socket),
            control_folders: crate::app::lock::control_folders(),
            session_folders: sandbox::policy::session_folders(),
            ..crate::app::lock::policy_for(&lock, self.guarded)
        };
        let launch = sandbox::host(self.launcher.to_owned()).wrap(&policy, &argv(call));
        let Some(launched) = launch.argv else {
            let why = match launch.enforcement {
                Enforcement::Refused(why) => why,
                other => other.to_string(),
            };
            return Err(format!("git cannot run in a lock here ({why}), and never runs unlocked"));
        };
        let mut env = sandbox::env::build(std::env::vars_os(), &[]).vars;
        env.extend(GIT_ENV.map(|(k, v)| (OsString::from(k), OsString::from(v))));
        run_for(&launched, env, call.work_tree, call.limit)
    }
}

/// git as it is, for the tests of what `ensure` decides (a unit test has no paddock launcher).
#[cfg(test)]
pub struct UnlockedGit;

#[cfg(test)]
impl RunGit for UnlockedGit {
    fn run(&self, call: &GitCall<'_>) -> Result<String, String> {
        let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        env.retain(|(k, _)| !k.to_string_lossy().starts_with("GIT_"));
        run_for(&argv(call), env, call.work_tree, call.limit)
    }
}

/// Run `argv` with exactly `env` in `cwd` (a folder its lock shows), no input, for at most
/// `limit`: its output, or its error output (or that it took too long, and was stopped).
fn run_for(
    argv: &[String],
    env: Vec<(OsString, OsString)>,
    cwd: &Path,
    limit: Duration,
) -> Result<String, String> {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]).env_clear().envs(env).current_dir(cwd);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // A group of its own, stopped whole when it takes too long.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let out = read_in_background(child.stdout.take());
    let err = read_in_background(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) | Err(_) => {
                #[cfg(unix)]
                // SAFETY: kill(2) on the group the child leads.
                unsafe {
                    libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL)
                };
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    // Whatever still holds the pipes (nothing, once the lock's namespace is gone) is not
    // waited for long.
    let take = |rx: crossbeam_channel::Receiver<Vec<u8>>| {
        String::from_utf8_lossy(&rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default())
            .into_owned()
    };
    let (out, err) = (take(out), take(err));
    match status {
        Some(status) if status.success() => Ok(out),
        Some(_) => Err(sandbox::visible(err.trim())),
        None => Err(format!("git took longer than {} s and was stopped", limit.as_secs())),
    }
}

fn read_in_background(
    pipe: Option<impl Read + Send + 'static>,
) -> crossbeam_channel::Receiver<Vec<u8>> {
    let (tx, rx) = crossbeam_channel::bounded(1);
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = (&mut pipe).take(KEPT).read_to_end(&mut kept);
            let _ = std::io::copy(&mut pipe, &mut std::io::sink());
        }
        let _ = tx.send(kept);
    });
    rx
}
