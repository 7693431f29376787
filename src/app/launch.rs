//! `paddock` opens a window on this user's paddock server: the one running, or one it starts.
//!
//! A server started here runs on its own: in a session of its own (no terminal to hang it up),
//! its output in `server.log` in paddock's state folder, and, where the user has a systemd
//! manager, in a scope unit of its own, so that stopping the window's unit (a desktop's app
//! scope) does not stop the agents.

use std::ffi::OsString;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::ctl::attach::attach_socket;
use crate::ctl::{instance_socket, live_instances, socket_dir};

/// How long a server may take to start listening.
const START_WAIT: Duration = Duration::from_secs(20);
/// How often a window starting its server looks for its sockets. A server starts in tens of
/// milliseconds, and every millisecond it waits past that is on the window's way to the
/// screen (a 20 ms step cost `paddock -e true` 10 ms on average); a look is two `stat`s.
const START_POLL: Duration = Duration::from_millis(1);

/// The attach socket for `path`: a control socket (`<pid>.sock`) or an attach socket itself.
pub fn attach_socket_of(path: &Path) -> PathBuf {
    match path.extension() {
        Some(ext) if ext == "attach" => path.to_owned(),
        _ => attach_socket(path),
    }
}

/// The control socket of the running server to attach to: the most recently started of this
/// user's live instances that windows can attach to.
pub fn find_server() -> anyhow::Result<Option<PathBuf>> {
    let live = live_instances(&socket_dir())?;
    let started = |path: &PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
    let attachable = live.into_iter().filter(|sock| attach_socket(sock).exists());
    Ok(attachable.max_by_key(started))
}

/// Start `paddock server` with `args` on its own; returns its control socket once it and its
/// attach socket listen.
pub fn start_server(args: &[OsString], listen: Option<&Path>) -> anyhow::Result<PathBuf> {
    spawn_server(args, listen)?.listening()
}

/// A server started on its own that may not listen yet.
pub struct StartingServer {
    child: Child,
    /// Started in a systemd scope of its own (plainly again if that fails).
    scoped: bool,
    args: Vec<OsString>,
    listen: Option<PathBuf>,
    log: PathBuf,
}

/// Start `paddock server` with `args` on its own, without waiting for it to listen.
pub fn spawn_server(args: &[OsString], listen: Option<&Path>) -> anyhow::Result<StartingServer> {
    let log = server_log()?;
    let scoped = user_manager().then(|| spawn(args, &log, true));
    let (child, scoped) = match scoped {
        Some(Ok(child)) => (child, true),
        _ => (spawn(args, &log, false)?, false),
    };
    let listen = listen.map(Path::to_owned);
    Ok(StartingServer { child, scoped, args: args.to_vec(), listen, log })
}

impl StartingServer {
    /// Wait until it and its attach socket listen; returns its control socket.
    pub fn listening(mut self) -> anyhow::Result<PathBuf> {
        loop {
            let socket = self.socket();
            match wait_until_listening(&mut self.child, &socket)
                .and_then(|()| self.is_ours(&socket))
            {
                Ok(()) => {
                    // Reaped when it ends, so it never lingers as a zombie of this window.
                    let mut child = self.child;
                    std::thread::spawn(move || child.wait());
                    return Ok(socket);
                }
                // systemd-run could not make the scope (no session bus, a refusal): start it
                // plainly.
                Err(_) if self.scoped => {
                    self.scoped = false;
                    self.child = spawn(&self.args, &self.log, false)?;
                }
                Err(why) => {
                    let tail = log_tail(&self.log);
                    bail!("{why}; its log, {}, ends:\n{tail}", self.log.display());
                }
            }
        }
    }

    /// Stop it, as `paddock kill-server` would (the window it was started for cannot open),
    /// unless something reached it first: another window that attached meanwhile has had its
    /// tabs opened there, and they are that window's now.
    pub fn stop(self) {
        use crate::ctl::protocol::Request;
        use crate::ctl::Client;
        let Ok(socket) = self.listening() else { return };
        let Ok(mut client) = Client::connect(&socket) else { return };
        let untouched = client
            .call(&Request::Ls)
            .ok()
            .and_then(|reply| reply.instance)
            .is_some_and(|instance| instance.panes.is_empty() && instance.windows.is_empty());
        if untouched {
            let _ = client.call(&Request::Stop);
        }
    }

    /// Whether the server listening on `socket` is the one started here: with `--listen`,
    /// another instance may hold the path (then this one could not listen, and ends).
    fn is_ours(&self, socket: &Path) -> anyhow::Result<()> {
        let stream = std::os::unix::net::UnixStream::connect(socket)
            .with_context(|| format!("cannot reach the new server at {}", socket.display()))?;
        match crate::ctl::connected_pid(&stream) {
            Some(pid) if pid != self.child.id() => {
                bail!("another paddock server (pid {pid}) listens on {}", socket.display())
            }
            _ => Ok(()),
        }
    }

    fn socket(&self) -> PathBuf {
        match &self.listen {
            Some(path) => path.clone(),
            None => instance_socket(&socket_dir(), self.child.id()),
        }
    }
}

/// Whether this user has a systemd manager to make a scope in.
fn user_manager() -> bool {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let has_manager = runtime.is_some_and(|dir| dir.join("systemd/private").exists());
    has_manager && which("systemd-run")
}

fn which(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}

fn spawn(args: &[OsString], log: &Path, scoped: bool) -> anyhow::Result<Child> {
    let exe = std::env::current_exe().context("cannot find paddock's own executable")?;
    let mut command = if scoped {
        // `--scope` execs the command in the scope: its pid is the server's.
        let mut command = Command::new("systemd-run");
        command.args(["--user", "--scope", "--quiet", "--collect"]);
        command.arg(format!("--unit=paddock-server-{}", std::process::id()));
        command.arg(exe);
        command
    } else {
        Command::new(exe)
    };
    // Never through a link: whoever could plant one would choose the file written to.
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(log)
        .with_context(|| format!("cannot open the server's log {}", log.display()))?;
    command.arg("server").args(args).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out);
    // SAFETY: between fork and exec only setsid, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.spawn().context("cannot start the paddock server")
}

/// Wait until the server listens on `socket` and on its attach socket.
fn wait_until_listening(child: &mut Child, socket: &Path) -> anyhow::Result<()> {
    let deadline = Instant::now() + START_WAIT;
    let attach = attach_socket(socket);
    loop {
        if socket.exists() && attach.exists() {
            return Ok(());
        }
        if let Some(status) = child.try_wait()? {
            bail!("the paddock server ended as it started ({status})");
        }
        if Instant::now() > deadline {
            bail!(
                "the paddock server did not listen on {} within {START_WAIT:?}",
                socket.display()
            );
        }
        std::thread::sleep(START_POLL);
    }
}

/// `server.log` in paddock's state folder, which must be this user's own (made private).
fn server_log() -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let folder = crate::vault::state_folder().context("this system has no state folder")?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&folder)
        .with_context(|| format!("cannot make the state folder {}", folder.display()))?;
    let meta = std::fs::symlink_metadata(&folder)?;
    // SAFETY: getuid(2) cannot fail.
    let own = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != own {
        bail!(
            "the state folder {} is not a folder of yours (uid {own}); not writing the server's \
             log there",
            folder.display()
        );
    }
    let _ = std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700));
    Ok(folder.join("server.log"))
}

/// The log's last lines, for a server that did not start.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(10)..].join("\n")
}
