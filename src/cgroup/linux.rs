//! The Linux side: the cgroup v2 files, and systemd's user manager over D-Bus.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::{keyed, unified_mount, unified_path, usage_usec, LimitEvents, Limits, Usage};

/// The controllers paddock enables for its panes, where it may.
const WANTED: [&str; 3] = ["cpu", "memory", "pids"];
/// How long a new systemd scope may take to hold paddock.
const SCOPE_WAIT: Duration = Duration::from_secs(3);
/// How long a closed pane's cgroup may take to empty after its kill.
const EMPTY_WAIT: Duration = Duration::from_millis(500);

/// The instance's cgroups: `D/paddock-PID`, paddock itself in its `instance` leaf, the panes
/// beside it.
#[derive(Debug)]
pub struct Tree {
    root: PathBuf,
    controllers: Vec<String>,
    /// How the tree came to be paddock's, for `describe`.
    how: &'static str,
    next: AtomicU32,
}

impl Tree {
    /// Make the instance's tree and move paddock into it; why not, where it cannot.
    pub fn set_up() -> Result<Tree, String> {
        let mount = unified_mount(&read("/proc/self/mountinfo")?)
            .map(PathBuf::from)
            .ok_or("no cgroup v2 hierarchy is mounted")?;
        let own = own_cgroup(&mount)?;
        let (parent, how) = if may_write(&own) {
            let how = if own == mount { "the cgroup root, as root" } else { "delegated to you" };
            (own, how)
        } else {
            let scope = systemd_scope(&mount).map_err(|why| {
                format!(
                    "paddock may not make cgroups in {} and systemd's user manager gave it no \
                     scope of its own ({why})",
                    own.display()
                )
            })?;
            (scope, "a systemd scope of its own, delegated")
        };
        remove_stale(&parent);
        let root = parent.join(format!("paddock-{}", std::process::id()));
        make_folder(&root)?;
        let leaf = root.join("instance");
        make_folder(&leaf)?;
        // The whole process, every thread; a cgroup with processes cannot pass controllers on.
        write(&leaf.join("cgroup.procs"), &std::process::id().to_string())?;
        for level in [&parent, &root] {
            for controller in WANTED {
                let _ = write(&level.join("cgroup.subtree_control"), &format!("+{controller}"));
            }
        }
        let enabled =
            std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
        let controllers = enabled.split_whitespace().map(str::to_owned).collect();
        Ok(Tree { root, controllers, how, next: AtomicU32::new(0) })
    }

    /// What is in effect, in words (for `paddock sandbox probe` and the log).
    pub fn describe(&self) -> String {
        let has = |c: &str| self.controllers.iter().any(|e| e == c);
        let memory = if has("memory") {
            "memory counted by the kernel, memory limits in effect"
        } else {
            "no memory controller: memory is the resident memory of the cgroup's processes, and \
             memory limits are not in effect"
        };
        let cpu = if has("cpu") {
            "CPU limits in effect"
        } else {
            "no cpu controller: CPU limits are not in effect"
        };
        format!(
            "each pane in a cgroup of its own under {} ({}): CPU counted over it, closed panes \
             killed whole; {memory}; {cpu}",
            self.root.display(),
            self.how
        )
    }

    /// A new cgroup for pane `pane`, with `limits` where the controllers allow them.
    pub fn pane(&self, pane: u32, limits: Limits) -> Result<PaneCgroup, String> {
        let serial = self.next.fetch_add(1, Ordering::Relaxed);
        let dir = self.root.join(format!("pane-{pane}-{serial}"));
        make_folder(&dir)?;
        let has = |c: &str| self.controllers.iter().any(|e| e == c);
        let mut in_effect = Limits::default();
        if has("memory") && limits.memory_bytes.is_some() {
            write(&dir.join("memory.max"), &super::memory_max(limits.memory_bytes))?;
            in_effect.memory_bytes = limits.memory_bytes;
        }
        if has("cpu") && limits.cpus.is_some() {
            write(&dir.join("cpu.max"), &super::cpu_max(limits.cpus))?;
            in_effect.cpus = limits.cpus;
        }
        Ok(PaneCgroup { dir, memory: has("memory"), limits: in_effect })
    }
}

impl Drop for Tree {
    /// Leave the tree for the cgroup paddock came from and remove it; where that cannot be
    /// (a systemd scope passes controllers on, so holds no process), the next instance removes
    /// it as stale.
    fn drop(&mut self) {
        let Some(parent) = self.root.parent() else { return };
        if write(&parent.join("cgroup.procs"), &std::process::id().to_string()).is_ok() {
            let _ = std::fs::remove_dir(self.root.join("instance"));
            let _ = std::fs::remove_dir(&self.root);
        }
    }
}

/// One pane's cgroup; dropping it kills what is left in it and removes it.
#[derive(Debug)]
pub struct PaneCgroup {
    dir: PathBuf,
    /// The `memory` controller counts its memory.
    memory: bool,
    /// The limits set on it.
    limits: Limits,
}

impl PaneCgroup {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The limits in effect on it (those the host's controllers allow).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// CPU and memory used, over every process in it.
    pub fn usage(&self) -> Option<Usage> {
        let cpu_usec = usage_usec(&std::fs::read_to_string(self.dir.join("cpu.stat")).ok()?)?;
        let memory_bytes = match self.memory {
            true => read(self.dir.join("memory.current")).ok()?.trim().parse().ok()?,
            false => self.pids().into_iter().filter_map(resident).sum(),
        };
        Some(Usage { cpu_usec, memory_bytes })
    }

    /// What its limits did so far.
    pub fn limit_events(&self) -> LimitEvents {
        let count = |file: &str, key: &str| {
            std::fs::read_to_string(self.dir.join(file)).ok().and_then(|t| keyed(&t, key))
        };
        LimitEvents {
            oom_kills: count("memory.events", "oom_kill").unwrap_or(0),
            throttled: count("cpu.stat", "nr_throttled").unwrap_or(0),
        }
    }

    /// The processes in it now.
    pub fn pids(&self) -> Vec<u32> {
        let text = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
    }

    /// Kill every process in it (a daemon that left the pane's session too).
    pub fn kill(&self) {
        if write(&self.dir.join("cgroup.kill"), "1").is_ok() {
            return;
        }
        // Before Linux 5.14: each process, a few rounds for those forked meanwhile.
        for _ in 0..4 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                if let Ok(pid) = i32::try_from(pid) {
                    // SAFETY: kill(2) of a process in the pane's cgroup.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
    }

    fn populated(&self) -> bool {
        let events = std::fs::read_to_string(self.dir.join("cgroup.events")).unwrap_or_default();
        keyed(&events, "populated") != Some(0)
    }
}

impl Drop for PaneCgroup {
    fn drop(&mut self) {
        self.kill();
        let deadline = Instant::now() + EMPTY_WAIT;
        while self.populated() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// `paddock __cgroup-exec DIR -- PROGRAM ARGS…`: join the cgroup at DIR, then become the
/// program. A cgroup that cannot be joined is said, not fatal: the program runs, counted by
/// its process tree.
pub fn join_and_exec(args: Vec<std::ffi::OsString>) -> ! {
    use std::os::unix::process::CommandExt;
    let mut args = args.into_iter();
    let dir = args.next().map(PathBuf::from).unwrap_or_default();
    let program: Vec<std::ffi::OsString> = args.skip_while(|a| a != "--").skip(1).collect();
    if let Err(why) = write(&dir.join("cgroup.procs"), "0") {
        eprintln!("paddock: this pane is not in a cgroup of its own ({why})");
    }
    let Some((first, rest)) = program.split_first() else {
        eprintln!("paddock: no program to run");
        std::process::exit(127);
    };
    let error = std::process::Command::new(first).args(rest).exec();
    eprintln!("paddock: cannot run {}: {error}", Path::new(first).display());
    std::process::exit(127)
}

/// What an instance started now would get, found without changing anything.
pub fn probe() -> String {
    let found = || -> Result<String, String> {
        let mount = unified_mount(&read("/proc/self/mountinfo")?)
            .map(PathBuf::from)
            .ok_or("no cgroup v2 hierarchy is mounted")?;
        let own = own_cgroup(&mount)?;
        let (place, controllers) = if may_write(&own) {
            (
                format!("under {} (paddock may make cgroups there)", own.display()),
                read(own.join("cgroup.controllers"))?,
            )
        } else {
            let connection = zbus::blocking::Connection::session().map_err(|e| {
                format!("{} is not paddock's and there is no session bus ({e})", own.display())
            })?;
            let manager = user_manager(&connection).map_err(|e| e.to_string())?;
            let version: String = manager.get_property("Version").map_err(|e| {
                format!(
                    "{} is not paddock's and systemd's user manager does not answer ({e})",
                    own.display()
                )
            })?;
            let user = mount.join(format!(
                "user.slice/user-{uid}.slice/user@{uid}.service",
                // SAFETY: getuid(2) has no preconditions.
                uid = unsafe { libc::getuid() }
            ));
            let delegated = read(user.join("cgroup.subtree_control")).unwrap_or_default();
            (
                format!(
                    "in a scope of paddock's own from systemd {version}'s user manager, delegated"
                ),
                delegated,
            )
        };
        let has = |c: &str| controllers.split_whitespace().any(|e| e == c);
        let missing: Vec<&str> = WANTED.into_iter().filter(|c| !has(c)).collect();
        let missing = match missing.is_empty() {
            true => "every controller it uses (cpu, memory, pids): limits in effect".to_owned(),
            false => format!(
                "without {}: {}",
                missing.join(", "),
                "memory falls back to resident memory without `memory`, and limits need `memory` and `cpu`"
            ),
        };
        Ok(format!("each pane in a cgroup of its own, {place}; {missing}"))
    };
    found().unwrap_or_else(|why| format!("none ({why}); the pulse counts each pane's process tree"))
}

/// The cgroup paddock runs in, as a folder.
fn own_cgroup(mount: &Path) -> Result<PathBuf, String> {
    let text = read("/proc/self/cgroup")?;
    let path = unified_path(&text).ok_or("this process is in no cgroup v2")?;
    Ok(mount.join(path.trim_start_matches('/')))
}

/// Whether paddock may make cgroups in `dir` and move processes there.
fn may_write(dir: &Path) -> bool {
    let access = |path: &Path| {
        let Ok(path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: access(2) with a NUL-terminated path.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    };
    access(dir) && access(&dir.join("cgroup.procs"))
}

/// systemd's manager on `connection` (the session bus: the user's manager).
fn user_manager(
    connection: &zbus::blocking::Connection,
) -> zbus::Result<zbus::blocking::Proxy<'static>> {
    zbus::blocking::Proxy::new(
        connection,
        "org.freedesktop.systemd1",
        "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager",
    )
}

/// Ask systemd's user manager for a transient scope holding paddock, delegated to it; the
/// scope's folder once paddock is in it.
fn systemd_scope(mount: &Path) -> Result<PathBuf, String> {
    use zbus::zvariant::{OwnedObjectPath, Value};
    let connection =
        zbus::blocking::Connection::session().map_err(|e| format!("no session bus: {e}"))?;
    let manager = user_manager(&connection).map_err(|e| e.to_string())?;
    let pid = std::process::id();
    let name = format!("paddock-{pid}.scope");
    let properties: Vec<(&str, Value<'_>)> = vec![
        ("Description", Value::from("paddock and its panes")),
        ("PIDs", Value::from(vec![pid])),
        ("Delegate", Value::from(true)),
    ];
    let auxiliary: Vec<(&str, Vec<(&str, Value<'_>)>)> = Vec::new();
    let _job: OwnedObjectPath = manager
        .call("StartTransientUnit", &(name.as_str(), "fail", properties, auxiliary))
        .map_err(|e| format!("StartTransientUnit: {e}"))?;
    let deadline = Instant::now() + SCOPE_WAIT;
    loop {
        let own = own_cgroup(mount)?;
        if own.file_name().is_some_and(|n| n == name.as_str()) && may_write(&own) {
            return Ok(own);
        }
        if Instant::now() > deadline {
            return Err(format!("the scope {name} did not take paddock in"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The trees of instances that are gone (a crash, a kill): what is left in them killed, their
/// folders removed.
fn remove_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("paddock-")) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let tree = entry.path();
        if let Ok(children) = std::fs::read_dir(&tree) {
            for child in children.flatten().filter(|c| c.path().is_dir()) {
                drop(PaneCgroup { dir: child.path(), memory: false, limits: Limits::default() });
            }
        }
        let _ = std::fs::remove_dir(&tree);
    }
}

/// Resident memory of process `pid`, in bytes.
fn resident(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf(3) has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    Some(pages * page)
}

fn make_folder(dir: &Path) -> Result<(), String> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(format!("cannot make {}: {e}", dir.display())),
    }
}

fn read(path: impl AsRef<Path>) -> Result<String, String> {
    let path = path.as_ref();
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Write to a file that is there (a cgroup's): never made, so a folder that is not a cgroup
/// gets nothing.
fn write(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    // Not blocking: a FIFO planted where a cgroup file should be is refused, not waited on.
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
