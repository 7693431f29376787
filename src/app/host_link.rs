//! A link to this user's paddock server on another host: `ssh -T HOST PADDOCK server --stdio`
//! with the system's OpenSSH client (so the user's keys, agent, `~/.ssh/config`, ProxyJump
//! and known_hosts all apply), speaking the attach protocol over it as a window does, with a
//! replica of each remote pane kept here.
//!
//! What a remote login prints before the relay starts (start-up files that echo) is skipped
//! up to the relay's preamble line; a link whose other end is not paddock, or another version
//! of it, fails with what it said. ssh never asks anything (`BatchMode`): there is no one to
//! answer. A connection that dies is noticed by ssh's keep-alives within 45 s.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use crate::ctl::protocol::WindowAction;
use crate::ctl::replicas::{Applied, Replicas};
use crate::ctl::stdio_relay::PREAMBLE;
use crate::ctl::wire::{read_frame, ToServer, ToWindow, WireError, MAX_FRAME, VERSION};
use crate::term::TermSize;
use crate::vault::handed::Handed;

/// How long connecting and the hellos may take.
const CONNECT_WAIT: Duration = Duration::from_secs(30);
/// The most a remote login may print before the relay's preamble.
const MOST_BEFORE_PREAMBLE: usize = 64 << 10;
/// The most of ssh's standard error kept to show.
const MOST_SAID: usize = 16 << 10;
/// Frames waiting for ssh to take them; past this the link is stalled, and what is sent is
/// refused rather than waited for (the server's main loop sends, and never blocks on a link).
const MOST_QUEUED: usize = 1024;

/// A host threads run on, as the configuration names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// What ssh is given: `user@build-box`, or a name from `~/.ssh/config`.
    pub destination: String,
    /// The paddock to run there (a non-interactive login's PATH may lack it).
    pub paddock_path: String,
    /// Options put before the destination (`-p`, `-i`, `-o …`).
    pub ssh_options: Vec<String>,
}

/// The path and SHA-256 of `program` on `host`, as its paddock finds it there (for `vault
/// approve --host`): asked over a link of its own, answered within 30 s.
pub fn fingerprint_on(host: &Host, program: &str) -> Result<(String, String), String> {
    let link = HostLink::connect(host).map_err(|e| e.to_string())?;
    link.fingerprint(1, program).map_err(|e| e.to_string())?;
    let deadline = std::time::Instant::now() + CONNECT_WAIT;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match link.events().recv_timeout(left) {
            Ok(LinkEvent::Applied(Applied::Program { request: 1, found })) => {
                return found.map_err(|why| crate::sandbox::visible(&why)).and_then(fingerprint_ok)
            }
            Ok(LinkEvent::Ended(why)) => return Err(format!("the connection ended: {why}")),
            Ok(_) => {}
            Err(_) => return Err(format!("{} did not answer within 30 s", host.destination)),
        }
    }
}

/// A host's answer for an approval, taken only as what it claims to be: an absolute path
/// with nothing in it that could drive a terminal, and a SHA-256 in lowercase hex.
fn fingerprint_ok((path, sha256): (String, String)) -> Result<(String, String), String> {
    let reorders = crate::sandbox::visible(&path) != path;
    if !path.starts_with('/') || reorders || path.len() > 4096 {
        let shown = crate::sandbox::visible(&path);
        return Err(format!("the host answered a path that is not one: {shown}"));
    }
    let hex = sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if sha256.len() != 64 || !hex {
        let shown = crate::sandbox::visible(&sha256);
        return Err(format!("the host answered a SHA-256 that is not one: {shown}"));
    }
    Ok((path, sha256))
}

impl Host {
    /// The ssh command line. The destination comes after `--`, and one that starts with `-`
    /// is refused (ssh would read it as an option such as `-oProxyCommand=…`).
    pub fn ssh_argv(&self) -> Result<Vec<OsString>, LinkError> {
        let bad = |why: &str| LinkError::Destination(self.destination.clone(), why.to_owned());
        if self.destination.is_empty() {
            return Err(bad("it is empty"));
        }
        if self.destination.starts_with('-') {
            return Err(bad("it starts with `-`, which ssh would read as an option"));
        }
        if self.destination.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad("it holds a space or a control character"));
        }
        let ssh = trusted_ssh(std::env::var_os("PATH").as_deref())?;
        let mut argv: Vec<OsString> = vec![ssh.into(), "-T".into()];
        for option in [
            "BatchMode=yes",
            "ServerAliveInterval=15",
            "ServerAliveCountMax=3",
            "ConnectTimeout=20",
        ] {
            argv.push("-o".into());
            argv.push(option.into());
        }
        argv.extend(self.ssh_options.iter().map(OsString::from));
        argv.push("--".into());
        argv.push(self.destination.clone().into());
        // ssh hands the remote shell one string: the path quoted for it.
        argv.push(format!("{} server --stdio", shell_quote(&self.paddock_path)).into());
        Ok(argv)
    }
}

/// `text` as one word for a POSIX shell; a leading `~/` is the remote user's home.
fn shell_quote(text: &str) -> String {
    let quoted = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    match text.strip_prefix("~/") {
        Some(rest) => format!("\"$HOME\"/{}", quoted(rest)),
        None => quoted(text),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the host \"{0}\" cannot be used: {1}")]
    Destination(String, String),
    #[error("cannot run ssh: {0}")]
    Spawn(std::io::Error),
    #[error(
        "no ssh that only root can change is on PATH{}: paddock's server hands secrets to the \
         ssh it runs, so it runs none a program of yours (a locked agent among them) could \
         have put there",
        skipped_text(.0)
    )]
    NoTrustedSsh(Vec<PathBuf>),
    #[error(
        "{host}: no paddock answered (is it installed there, and on the PATH a non-interactive \
         ssh login has? the host's `paddock_path` can name it){}",
        said_text(.said)
    )]
    NoPaddock { host: String, said: String },
    #[error(
        "{host} runs paddock with version {theirs} of the attach protocol; this paddock speaks \
         {VERSION}: install the same paddock version on both"
    )]
    Version { host: String, theirs: u16 },
    #[error("the paddock server on {host} refused this link: {reason}")]
    Refused { host: String, reason: String },
    #[error("{host}: connecting took longer than {CONNECT_WAIT:?}{}", said_text(.said))]
    Timeout { host: String, said: String },
    #[error("{host}: {source}{}", said_text(.said))]
    Wire { host: String, source: WireError, said: String },
}

fn skipped_text(skipped: &[PathBuf]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let names: Vec<String> = skipped.iter().map(|p| p.display().to_string()).collect();
    format!(" (passed over: {})", names.join(", "))
}

/// The `ssh` paddock's server runs for a link: the first on `path_var` whose file, and every
/// folder above it, belong to root and are writable by no one else. A folder on PATH that a
/// locked agent may write (`~/.local/bin` in a lock's `write`, a project's `bin`) could
/// otherwise hold an `ssh` of its making, which would run outside any lock and be handed the
/// thread's secrets. Resolved through links, so what runs is the file checked.
pub fn trusted_ssh(path_var: Option<&std::ffi::OsStr>) -> Result<PathBuf, LinkError> {
    use std::os::unix::fs::MetadataExt;
    let only_root = |path: &std::path::Path| {
        path.ancestors().all(|step| {
            std::fs::metadata(step).is_ok_and(|meta| meta.uid() == 0 && meta.mode() & 0o022 == 0)
        })
    };
    let mut skipped = Vec::new();
    for folder in std::env::split_paths(path_var.unwrap_or_default()) {
        let candidate = folder.join("ssh");
        let Ok(real) = candidate.canonicalize() else { continue };
        if !folder.is_absolute() || !real.is_file() {
            continue;
        }
        if only_root(&real) {
            return Ok(real);
        }
        skipped.push(candidate);
    }
    Err(LinkError::NoTrustedSsh(skipped))
}

fn said_text(said: &str) -> String {
    let said = said.trim();
    if said.is_empty() {
        String::new()
    } else {
        format!("; it said:\n{said}")
    }
}

/// What arrives over a link, after the frame was applied to the replicas.
#[derive(Debug)]
pub enum LinkEvent {
    Applied(Applied),
    /// The link ended, and why.
    Ended(String),
}

/// A live link to one host's server.
pub struct HostLink {
    host: String,
    child: Child,
    /// Frames for the writer thread, which owns ssh's standard input.
    to: Sender<Vec<u8>>,
    replicas: Arc<Mutex<Replicas>>,
    events: Receiver<LinkEvent>,
    said: Arc<Mutex<String>>,
    /// Closed by the writer thread when it ends (everything queued written, or ssh gone).
    written: Receiver<()>,
}

impl HostLink {
    /// Run ssh to `host` and exchange hellos.
    pub fn connect(host: &Host) -> Result<HostLink, LinkError> {
        HostLink::connect_into(host, Arc::new(Mutex::new(Replicas::default())))
    }

    /// `connect`, the remote panes' replicas kept in `replicas`: a link made again after one
    /// dropped goes on in the same models (the host's snapshots replace them in place, so
    /// whoever follows them starts again from what the panes show now).
    pub fn connect_into(
        host: &Host,
        replicas: Arc<Mutex<Replicas>>,
    ) -> Result<HostLink, LinkError> {
        let argv = host.ssh_argv()?;
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(LinkError::Spawn)?;
        let name = host.destination.clone();
        let said = Arc::new(Mutex::new(String::new()));
        if let Some(stderr) = child.stderr.take() {
            let keep = said.clone();
            let _ = std::thread::Builder::new()
                .name("link-ssh-said".into())
                .spawn(move || keep_said(stderr, &keep));
        }
        let (Some(mut to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(LinkError::Spawn(std::io::Error::other("no pipes to ssh")));
        };
        // The hello goes first: the relay passes it on as soon as it reached the server.
        let hello = to.write_all(&ToServer::Hello { version: VERSION }.encode());
        let (greeted, greeting) = crossbeam_channel::bounded(1);
        let _ = std::thread::Builder::new().name("link-hello".into()).spawn(move || {
            let mut from = from;
            let _ = greeted.send(greet(&mut from).map(|r| (r, from)));
        });
        let outcome = greeting.recv_timeout(CONNECT_WAIT);
        let said_now = || {
            // ssh's last words may still be on their way.
            std::thread::sleep(Duration::from_millis(100));
            said.lock().unwrap_or_else(PoisonError::into_inner).clone()
        };
        let from = match outcome {
            Ok(Ok((Greeting::Hello, from))) if hello.is_ok() => from,
            Ok(Ok((Greeting::Hello, _))) | Ok(Err(Greet::Closed)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(LinkError::NoPaddock { host: name, said: said_now() });
            }
            Ok(Ok((Greeting::Version(theirs), _))) => {
                let _ = child.kill();
                return Err(LinkError::Version { host: name, theirs });
            }
            Ok(Ok((Greeting::Refused(reason), _))) => {
                let _ = child.kill();
                return Err(LinkError::Refused { host: name, reason });
            }
            Ok(Err(Greet::NoPreamble(printed))) => {
                let _ = child.kill();
                let said = format!("{}\n{}", said_now(), printed);
                return Err(LinkError::NoPaddock { host: name, said });
            }
            Ok(Err(Greet::Wire(source))) => {
                let _ = child.kill();
                return Err(LinkError::Wire { host: name, source, said: said_now() });
            }
            Err(_) => {
                let _ = child.kill();
                return Err(LinkError::Timeout { host: name, said: said_now() });
            }
        };
        let (tell, events) = crossbeam_channel::unbounded();
        let into = replicas.clone();
        let _ = std::thread::Builder::new()
            .name("link-reader".into())
            .spawn(move || read_frames(from, &into, &tell));
        let (queue, queued) = crossbeam_channel::bounded(MOST_QUEUED);
        let (done, written) = crossbeam_channel::bounded::<()>(0);
        let _ = std::thread::Builder::new().name("link-writer".into()).spawn(move || {
            write_frames(to, &queued);
            drop(done);
        });
        Ok(HostLink { host: name, child, to: queue, replicas, events, said, written })
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// The remote panes' replicas and the remote server's view.
    pub fn replicas(&self) -> &Arc<Mutex<Replicas>> {
        &self.replicas
    }

    /// What arrived, in order.
    pub fn events(&self) -> &Receiver<LinkEvent> {
        &self.events
    }

    /// What ssh said on its standard error so far (its last 16 KiB).
    pub fn said(&self) -> String {
        self.said.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Queue `frame` for the host; never waits for ssh.
    fn send(&self, frame: &ToServer) -> Result<(), WireError> {
        self.to.try_send(frame.encode()).map_err(|e| {
            let why = match e {
                crossbeam_channel::TrySendError::Full(_) => "the connection is stalled",
                crossbeam_channel::TrySendError::Disconnected(_) => "the connection is gone",
            };
            WireError::Io(std::io::Error::other(why))
        })
    }

    /// Ask the remote server to open `thread` (as the configuration writes it), its pane
    /// `size`; the answer arrives as `Applied::Opened` or `Applied::NotOpened` with `request`.
    pub fn open_thread(&self, request: u32, thread: &str, size: TermSize) -> Result<(), WireError> {
        let (cols, rows) = wire_size(size);
        let thread = thread.to_owned();
        self.send(&ToServer::Act(WindowAction::OpenThread { request, thread, cols, rows }))
    }

    /// Open `thread` with the secrets the vault `handed` for it: sent just before its
    /// `OpenThread`, for that one spawn.
    pub fn open_thread_with(
        &self,
        request: u32,
        thread: &str,
        size: TermSize,
        handed: Option<Handed>,
    ) -> Result<(), WireError> {
        if let Some(handed) = handed {
            let frame = ToServer::Secrets { request, handed };
            if let Err(e) = self.to.try_send(frame.encode()) {
                let mut unsent = e.into_inner();
                unsent.fill(0);
                return Err(WireError::Io(std::io::Error::other("the connection is stalled")));
            }
        }
        self.open_thread(request, thread, size)
    }

    /// Close the pane the host opened for `request`, whichever connection asked (this side
    /// gave up waiting for its answer).
    pub fn close_opened(&self, request: u32) -> Result<(), WireError> {
        self.send(&ToServer::Act(WindowAction::CloseOpened { request }))
    }

    /// Ask the host's paddock for the path and SHA-256 of `program` there (a path, or a
    /// name on its PATH); the answer arrives as `Applied::Program` with `request`.
    pub fn fingerprint(&self, request: u32, program: &str) -> Result<(), WireError> {
        let program = program.to_owned();
        self.send(&ToServer::Act(WindowAction::Fingerprint { request, program }))
    }

    /// Bytes for a remote pane's program.
    pub fn input(&self, pane: u32, bytes: Vec<u8>) -> Result<(), WireError> {
        self.send(&ToServer::Input { pane, bytes })
    }

    /// End a remote pane's program (the pane was closed here).
    pub fn close_pane(&self, pane: u32) -> Result<(), WireError> {
        self.send(&ToServer::Act(WindowAction::Close { pane }))
    }

    /// Size a remote pane this link opened.
    pub fn size_pane(&self, pane: u32, size: TermSize) -> Result<(), WireError> {
        let (cols, rows) = wire_size(size);
        self.send(&ToServer::Act(WindowAction::SizePane { pane, cols, rows }))
    }
}

impl Drop for HostLink {
    fn drop(&mut self) {
        // The remote server and its panes run on: only this connection ends. What was queued
        // (a pane's close above all) goes first: the queue ends, and the writer has up to 2 s
        // to write it.
        let _ = self.send(&ToServer::Detach);
        self.to = crossbeam_channel::bounded(0).0;
        let _ = self.written.recv_timeout(Duration::from_secs(2));
        // The writer closed ssh's input: ssh sends what it holds, the relay there ends, and
        // ssh with it. Killed only if that takes more than 2 s.
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while matches!(self.child.try_wait(), Ok(None)) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wire_size(size: TermSize) -> (u16, u16) {
    let clamp = |n: usize| n.clamp(1, usize::from(u16::MAX)) as u16;
    (clamp(size.cols), clamp(size.lines))
}

enum Greeting {
    Hello,
    Version(u16),
    Refused(String),
}

enum Greet {
    /// The other end ended before saying anything paddock says.
    Closed,
    /// What came instead of the relay's preamble.
    NoPreamble(String),
    Wire(WireError),
}

/// Skip what the login printed up to the relay's preamble, then read the server's hello.
fn greet(from: &mut impl Read) -> Result<Greeting, Greet> {
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    // A byte at a time: nothing past the preamble may be taken from the frames.
    while !seen.ends_with(PREAMBLE) {
        match from.read(&mut byte) {
            Ok(0) if seen.is_empty() => return Err(Greet::Closed),
            Ok(0) => return Err(Greet::NoPreamble(String::from_utf8_lossy(&seen).into_owned())),
            Ok(_) => seen.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Greet::Wire(e.into())),
        }
        if seen.len() > MOST_BEFORE_PREAMBLE {
            let start = String::from_utf8_lossy(&seen[..512]).into_owned();
            return Err(Greet::NoPreamble(format!("{start}…")));
        }
    }
    let mut buf = Vec::new();
    let frame = read_frame(from, 1 << 16, &mut buf).map_err(|e| match e {
        WireError::Closed => Greet::Closed,
        e => Greet::Wire(e),
    })?;
    match ToWindow::decode(frame).map_err(Greet::Wire)? {
        ToWindow::Hello { version: VERSION, .. } => Ok(Greeting::Hello),
        ToWindow::Hello { version, .. } => Ok(Greeting::Version(version)),
        ToWindow::Refused { reason } => Ok(Greeting::Refused(reason)),
        _ => Err(Greet::Wire(WireError::Malformed("the server's first frame is not a hello"))),
    }
}

/// Write queued frames to ssh until the link goes or ssh stops taking them.
fn write_frames(mut to: ChildStdin, queued: &Receiver<Vec<u8>>) {
    for mut frame in queued {
        let written = to.write_all(&frame).and_then(|()| to.flush());
        // A frame may hold a secret's value (`ToServer::Secrets`): none outlives its writing.
        frame.fill(0);
        if written.is_err() {
            return;
        }
    }
}

fn read_frames(mut from: impl Read, replicas: &Mutex<Replicas>, tell: &Sender<LinkEvent>) {
    let mut buf = Vec::new();
    let why = loop {
        let frame = match read_frame(&mut from, MAX_FRAME, &mut buf) {
            Ok(frame) => frame,
            Err(WireError::Closed) => break "the connection closed".to_owned(),
            Err(e) => break e.to_string(),
        };
        let applied = ToWindow::decode(frame).map_err(|e| e.to_string()).and_then(|frame| {
            let mut replicas = replicas.lock().unwrap_or_else(PoisonError::into_inner);
            replicas.apply(frame).map_err(|e| e.to_string())
        });
        match applied {
            Ok(Applied::Refused(why)) => break why,
            Ok(applied) => {
                if tell.send(LinkEvent::Applied(applied)).is_err() {
                    return;
                }
            }
            Err(why) => break why,
        }
    };
    let _ = tell.send(LinkEvent::Ended(why));
}

/// Keep the last `MOST_SAID` bytes of what ssh writes to standard error.
fn keep_said(mut stderr: impl Read, said: &Mutex<String>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut kept = said.lock().unwrap_or_else(PoisonError::into_inner);
        kept.push_str(&String::from_utf8_lossy(&buf[..n]));
        if kept.len() > MOST_SAID {
            let mut cut = kept.len() - MOST_SAID;
            while !kept.is_char_boundary(cut) {
                cut += 1;
            }
            kept.drain(..cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{fingerprint_ok, shell_quote, trusted_ssh, Host};

    /// An `ssh` in a folder this user can write is passed over for root's, however early on
    /// PATH; with none of root's, no link is made.
    #[test]
    fn only_an_ssh_only_root_can_change_is_run() {
        let Some(system) = ["/usr/bin/ssh", "/bin/ssh"]
            .into_iter()
            .map(std::path::Path::new)
            .find(|p| p.is_file())
        else {
            return; // no OpenSSH client here: nothing to choose between
        };
        let planted =
            std::env::temp_dir().join(format!("paddock-planted-ssh-{}", std::process::id()));
        std::fs::create_dir_all(&planted).expect("folder");
        std::fs::write(planted.join("ssh"), "#!/bin/sh\necho planted\n").expect("ssh");
        // Writable by others than its owner, whoever owns it (a test run as root in a private
        // temp folder too).
        let writable = std::os::unix::fs::PermissionsExt::from_mode(0o777);
        std::fs::set_permissions(&planted, writable).expect("chmod");
        let system_folder = system.parent().expect("folder").as_os_str().to_owned();
        let path = std::env::join_paths([planted.as_os_str(), &system_folder]).expect("PATH");
        let chosen = trusted_ssh(Some(&path)).expect("root's ssh");
        assert_eq!(chosen, system.canonicalize().expect("real"));
        let only_planted = trusted_ssh(Some(planted.as_os_str())).expect_err("refused");
        let said = only_planted.to_string();
        assert!(said.contains("passed over") && said.contains("paddock-planted-ssh"), "{said}");
        let _ = std::fs::remove_dir_all(planted);
    }

    #[test]
    fn a_hosts_fingerprint_is_taken_only_as_a_path_and_a_hash() {
        let sha = "ab".repeat(32);
        assert!(fingerprint_ok(("/usr/bin/claude".into(), sha.clone())).is_ok());
        for (path, hash) in [
            ("relative/tool", sha.as_str()),
            ("/tmp/tool\u{1b}[2K\rapprove /usr/bin/SAFE", sha.as_str()),
            ("/tmp/\u{202e}loot", sha.as_str()),
            ("/usr/bin/claude", "\u{1b}[31mRED"),
            ("/usr/bin/claude", &"AB".repeat(32)),
        ] {
            let refused = fingerprint_ok((path.into(), hash.into())).expect_err(path);
            assert!(!refused.contains('\u{1b}') && !refused.contains('\u{202e}'), "{refused}");
        }
    }

    #[test]
    fn the_destination_follows_the_options_and_cannot_be_one() {
        let host = Host {
            destination: "me@build-box".into(),
            paddock_path: "/opt/it's here/paddock".into(),
            ssh_options: vec!["-p".into(), "2222".into()],
        };
        let argv: Vec<String> = host
            .ssh_argv()
            .expect("argv")
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let dashes = argv.iter().position(|a| a == "--").expect("--");
        assert_eq!(
            &argv[dashes + 1..],
            ["me@build-box", r"'/opt/it'\''s here/paddock' server --stdio"]
        );
        assert!(argv[..dashes].contains(&"BatchMode=yes".to_owned()), "{argv:?}");
        assert_eq!(&argv[dashes - 2..dashes], ["-p", "2222"]);
        for bad in ["-oProxyCommand=touch /tmp/x", "", "a b", "box\n"] {
            let host = Host { destination: bad.into(), ..host.clone() };
            assert!(host.ssh_argv().is_err(), "{bad:?}");
        }
        assert_eq!(shell_quote("plain"), "'plain'");
        assert_eq!(shell_quote("~/.cargo/bin/paddock"), r#""$HOME"/'.cargo/bin/paddock'"#);
    }
}
