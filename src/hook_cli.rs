//! `paddock hook install AGENT [--thread NAME] [--yes]` and `paddock hook event AGENT`: the
//! files and the control socket around the pure `paddock::hook`.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use paddock::config;
use paddock::hook::{self, diff::diff, Agent};
use paddock::sandbox::visible;

use crate::cli::HookVerb;

pub fn run(verb: HookVerb, config: Option<&Path>) -> Result<()> {
    match verb {
        HookVerb::Install { agent, thread, yes } => {
            install(agent.into(), thread.as_deref(), yes, config)
        }
        HookVerb::Event { agent, payload } => {
            event(agent.into(), payload);
            Ok(())
        }
    }
}

/// Write `agent`'s hook into the home its program reads settings from.
fn install(agent: Agent, thread: Option<&str>, yes: bool, config: Option<&Path>) -> Result<()> {
    let home = match thread {
        Some(name) => thread_home(name, config)?,
        None => dirs::home_dir().context("no home folder (HOME is not set)")?,
    };
    let relative = Path::new(agent.settings_file());
    let file = home.join(relative);
    let exe = std::env::current_exe().context("cannot find paddock's own path")?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let program: Vec<String> = [exe.display().to_string()]
        .into_iter()
        .chain(["hook", "event", agent.name()].map(str::to_owned))
        .collect();
    let existing =
        read(&home, relative).with_context(|| format!("cannot read {}", file.display()))?;
    // A locked agent writes its own settings: what they hold is quoted with its control
    // characters escaped, in the refusal as in the diff.
    let new = hook::install(agent, existing.as_deref(), &program).map_err(|e| {
        anyhow::anyhow!(
            "{} cannot take paddock's hook: {}",
            file.display(),
            visible(&e.to_string())
        )
    })?;
    if existing.as_deref() == Some(new.as_str()) {
        println!("{}: paddock's {} hook is there already", file.display(), agent.name());
        return Ok(());
    }
    println!("{}{}:", file.display(), if existing.is_none() { " (new)" } else { "" });
    // A locked agent writes its own settings: what they hold is shown, never sent to the
    // terminal as it is (no escape sequence of theirs reaches yours).
    for line in diff(existing.as_deref().unwrap_or(""), &new).lines() {
        println!("{}", visible(line));
    }
    if !yes && !confirmed()? {
        bail!("not written (answer y at a terminal, or run again with --yes)");
    }
    write(&home, relative, &new).with_context(|| format!("cannot write {}", file.display()))?;
    println!("written; {} reads it when it starts (restart a running one)", agent.name());
    Ok(())
}

/// The home a configured thread's programs see: its own when it is locked, else yours.
fn thread_home(name: &str, config: Option<&Path>) -> Result<PathBuf> {
    let spec = config::configured_thread(config, name).map_err(anyhow::Error::msg)?;
    if spec.lock.is_none() {
        return dirs::home_dir().context("no home folder (HOME is not set)");
    }
    own_home(name)
}

#[cfg(unix)]
fn own_home(name: &str) -> Result<PathBuf> {
    paddock::app::lock::home::own_home(name).map_err(anyhow::Error::msg)
}

#[cfg(not(unix))]
fn own_home(_: &str) -> Result<PathBuf> {
    bail!("locked threads have no home of their own on this platform")
}

/// Whether the person at the terminal says yes.
fn confirmed() -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        return Ok(false);
    }
    print!("Write it? [y/N] ");
    std::io::stdout().flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// The most of a settings file read: settings are a few KiB, and a locked agent could leave a
/// sparse file of gigabytes there.
#[cfg(unix)]
const MOST_SETTINGS: u64 = 1 << 20;

/// The file at `relative` in `home`, if there is one, read without following a link on the way
/// (a thread's own home is its programs' to change); only a plain file of at most
/// [`MOST_SETTINGS`] (a FIFO there would hold paddock forever).
#[cfg(unix)]
fn read(home: &Path, relative: &Path) -> std::io::Result<Option<String>> {
    use paddock::app::lock::home::{c_path, open_beneath};
    use std::os::fd::{AsRawFd, FromRawFd};
    let (folder, name) = split(relative);
    let folder = match open_beneath(home, folder, None) {
        Ok(folder) => folder,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let name = c_path(name.as_os_str())?;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    // SAFETY: openat(2) in our folder with a NUL-terminated name.
    let fd = unsafe { libc::openat(folder.as_raw_fd(), name.as_ptr(), flags) };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        return match error.kind() {
            std::io::ErrorKind::NotFound => Ok(None),
            _ => Err(error),
        };
    }
    // SAFETY: a new descriptor, ours alone.
    let file = unsafe { std::fs::File::from_raw_fd(fd) };
    let meta = file.metadata()?;
    let refuse = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_owned());
    if !meta.is_file() {
        return Err(refuse("it is not a plain file"));
    }
    if meta.len() > MOST_SETTINGS {
        return Err(refuse("it is larger than 1 MiB, which no settings file is"));
    }
    let mut text = String::new();
    file.take(MOST_SETTINGS).read_to_string(&mut text)?;
    Ok(Some(text))
}

/// Write `text` to `relative` in `home`: a new file beside it, then renamed over it, so that
/// the agent never reads half of it; no link followed on the way, its folders made (0700).
#[cfg(unix)]
fn write(home: &Path, relative: &Path, text: &str) -> std::io::Result<()> {
    use paddock::app::lock::home::{c_path, open_beneath};
    use std::os::fd::{AsRawFd, FromRawFd};
    let (folder, name) = split(relative);
    let folder = open_beneath(home, folder, Some(0o700))?;
    let fresh = c_path(format!(".{}.paddock-new", name.display()).as_ref())?;
    let name = c_path(name.as_os_str())?;
    // SAFETY: unlinkat(2) of our own leftover, in our folder.
    unsafe { libc::unlinkat(folder.as_raw_fd(), fresh.as_ptr(), 0) };
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: openat(2) in our folder with a NUL-terminated name and a mode.
    let fd = unsafe { libc::openat(folder.as_raw_fd(), fresh.as_ptr(), flags, 0o600) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    let (at, from, to) = (folder.as_raw_fd(), fresh.as_ptr(), name.as_ptr());
    // SAFETY: renameat(2) within our folder; it replaces a link at `name`, never its target.
    if unsafe { libc::renameat(at, from, at, to) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn read(home: &Path, relative: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(home.join(relative)) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn write(home: &Path, relative: &Path, text: &str) -> std::io::Result<()> {
    let file = home.join(relative);
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    std::fs::write(file, text)
}

/// A relative file's folder and name.
#[cfg(unix)]
fn split(relative: &Path) -> (&Path, &Path) {
    let name = relative.file_name().map_or(relative, Path::new);
    (relative.parent().unwrap_or(Path::new("")), name)
}

/// The most of an event read from stdin.
const MOST_EVENT: u64 = 1 << 20;

/// An agent's event, as needs-you for the pane it runs in. Never fails the agent: outside
/// paddock (no `PADDOCK_PANE`, `PADDOCK_SOCKET`), for an event that calls no one, or when the
/// instance cannot be reached, it does nothing (saying why on stderr when it tried).
fn event(agent: Agent, payload: Vec<String>) {
    let payload = match agent {
        Agent::Codex => payload.last().cloned().unwrap_or_default(),
        Agent::Claude | Agent::Gemini => {
            let mut text = String::new();
            let _ = std::io::stdin().take(MOST_EVENT).read_to_string(&mut text);
            text
        }
    };
    let Some(text) = hook::reason(agent, &payload) else { return };
    let pane = std::env::var("PADDOCK_PANE").ok().and_then(|p| p.parse().ok());
    let socket = std::env::var_os("PADDOCK_SOCKET").map(PathBuf::from);
    let (Some(pane), Some(socket)) = (pane, socket) else { return };
    if let Err(e) = notify(&socket, pane, text) {
        eprintln!("paddock hook: {e:#}");
    }
}

#[cfg(unix)]
fn notify(socket: &Path, pane: u32, text: String) -> Result<()> {
    use paddock::ctl::protocol::Request;
    use paddock::ctl::Client;
    let mut client = Client::connect(socket)?;
    client.call(&Request::Notify { pane, text })?;
    Ok(())
}

#[cfg(not(unix))]
fn notify(_: &Path, _: u32, _: String) -> Result<()> {
    Ok(())
}
