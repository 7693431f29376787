//! One pane's PTY child, its reader and writer threads, and its end.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

use super::process::{peek_exit, session_has_others, signal_session, Signal};
use super::reader::{self, Output, Replies};
use super::PtyError;
use crate::cgroup::PaneCgroup;
use crate::pulse::Activity;
use crate::sandbox::{Enforcement, Isolation, Policy, Unlocked};
use crate::term::{TermConfig, TermSize, Terminal, MAX_DIMENSION};
use crate::vault::mask::{Masker, ScreenRedactor};
use crate::vault::pin::is_loader_variable;
use crate::vault::SecretBytes;

/// Writes, and bytes, queued for a pane whose program is not reading; past either, `send`
/// says so.
const INPUT_QUEUE: usize = 1024;
const INPUT_QUEUE_BYTES: usize = 8 << 20;
/// How long a closed pane's processes get between the hangup and the kill.
const HANGUP_GRACE: Duration = Duration::from_millis(500);
/// How long closing waits for the reader to drain the last output. A process that left the
/// group (a daemon) may keep the PTY open forever; the reader is then left to end on its own.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// Per released secret, how often its value was masked.
pub type MaskCounts = Arc<[AtomicU64]>;

/// A lock to run a pane's program under, and the paddock binary whose launcher applies it.
#[derive(Clone, Debug)]
pub struct Locked {
    pub policy: Policy,
    pub launcher: PathBuf,
    /// What it inherits of paddock's environment (`sandbox::env`): nothing else passes.
    pub inherited_env: Vec<(OsString, OsString)>,
}

/// Whether a pane's program runs locked.
#[derive(Clone, Debug, Default)]
pub enum PaneLock {
    /// Nobody asked for a lock (a plain pane, a thread without one).
    #[default]
    None,
    /// The thread's config chose to run unlocked (`unlocked: true`).
    Unlocked,
    /// Under this lock, or not at all.
    Locked(Box<Locked>),
}

/// What to run in a pane.
#[derive(Clone, Debug)]
pub struct SpawnSpec {
    /// The program and its arguments (no shell unless the program is one).
    pub argv: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// Extra environment, on top of paddock's own.
    pub env: Vec<(String, String)>,
    /// Given to the child as PADDOCK_PANE.
    pub pane: u32,
    pub size: TermSize,
    pub scrollback_lines: usize,
    /// The folder lock the program must run under, if any.
    pub lock: PaneLock,
    /// A pinned secret is among them: variables that load foreign code into a program
    /// (`LD_PRELOAD`, `NODE_OPTIONS`, …: `vault::pin::is_loader_variable`) are left out of its
    /// environment.
    pub strip_loader_env: bool,
    /// Secrets released to the program: environment variable and value. The values are
    /// masked in the pane's output and wiped from paddock's memory when the pane closes.
    pub secrets: Vec<(String, SecretBytes)>,
    /// The values masked in the pane's output, in the order its secrets were released (a
    /// brokered secret's value, which `secrets` holds only a placeholder of, among them).
    pub masked: Vec<SecretBytes>,
    /// Shown in the pane before the program's output (what paddock withheld from it, and why).
    pub notice: Option<String>,
    /// The pane's activity counters, for the pulse (fresh ones when `None`).
    pub activity: Option<Arc<Activity>>,
    /// The pane's own cgroup, which its program joins before it runs anything (through
    /// paddock itself, `paddock`); everything in it is killed when the pane closes.
    pub cgroup: Option<CgroupJoin>,
}

/// A cgroup for a pane's program to join, and the paddock executable that joins it.
#[derive(Clone, Debug)]
pub struct CgroupJoin {
    pub cgroup: Arc<PaneCgroup>,
    pub paddock: PathBuf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneStatus {
    Running,
    /// The exit code, or `None` when a signal ended the program.
    Exited(Option<i32>),
    /// The pane shows a notice and never ran a program.
    NoProgram,
}

/// A running (or ended) program in a PTY.
struct Process {
    term: Arc<Mutex<Terminal>>,
    activity: Arc<Activity>,
    /// How often each released secret's value was masked in the output.
    mask_counts: Option<MaskCounts>,
    master: Box<dyn MasterPty + Send>,
    input: Sender<Vec<u8>>,
    /// Bytes in `input` not yet written to the PTY.
    queued_bytes: Arc<AtomicUsize>,
    child: Box<dyn Child + Send + Sync>,
    /// How the program ended, once seen. On Linux and macOS the child is not reaped until the
    /// pane closes, so its pid (and process group id) cannot be reused while we may signal it.
    exited: Option<PaneStatus>,
    /// The child was reaped (on platforms without a non-reaping check): never signal its group.
    reaped: bool,
    /// Closed by the reader thread when the output ends; `None` once the pane has ended.
    reader_done: Option<Receiver<()>>,
    /// What the pane's lock enforces.
    enforcement: Enforcement,
    /// Its cgroup, if it has one.
    cgroup: Option<Arc<PaneCgroup>>,
}

/// The command to start in the pane's PTY, and what its lock enforces. Fails closed: a
/// program meant to run locked runs only under the lock, through the launcher, or not at all.
fn locked_argv(spec: &SpawnSpec) -> Result<(Vec<String>, Enforcement), PtyError> {
    let none = Policy::default();
    let (isolation, policy): (Box<dyn Isolation + Send + Sync>, &Policy) = match &spec.lock {
        PaneLock::None => (Box::new(Unlocked { chosen: false }), &none),
        PaneLock::Unlocked => (Box::new(Unlocked { chosen: true }), &none),
        PaneLock::Locked(locked) => (crate::sandbox::host(locked.launcher.clone()), &locked.policy),
    };
    let launch = isolation.wrap(policy, &spec.argv);
    match launch.argv {
        Some(argv) => Ok((argv, launch.enforcement)),
        None => Err(PtyError::LockRefused(launch.enforcement.detail())),
    }
}

/// Whether `program` names a file the pane could run: a path (from the pane's folder), or a
/// name found in the pane's `PATH`, as the exec that follows will look for it.
fn findable(program: &str, spec: &SpawnSpec) -> bool {
    let runnable = |path: &std::path::Path| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        }
        #[cfg(not(unix))]
        {
            path.is_file()
        }
    };
    if program.contains('/') {
        let path = std::path::Path::new(program);
        return match (path.is_relative(), &spec.cwd) {
            (true, Some(cwd)) => runnable(&cwd.join(path)),
            _ => runnable(path),
        };
    }
    let path_var = spec.env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| OsString::from(v));
    let path_var = path_var.or_else(|| std::env::var_os("PATH")).unwrap_or_default();
    std::env::split_paths(&path_var).any(|folder| runnable(&folder.join(program)))
}

/// `argv` started through paddock's `__cgroup-exec`, which joins the pane's cgroup first.
fn joining(join: &CgroupJoin, argv: Vec<String>) -> Vec<String> {
    let mut joined = vec![
        join.paddock.display().to_string(),
        crate::cgroup::JOIN_VERB.to_owned(),
        join.cgroup.dir().display().to_string(),
        "--".to_owned(),
    ];
    joined.extend(argv);
    joined
}

/// `argv` with the pane's environment: a locked program's built from nothing (its allow-list),
/// else paddock's; then the terminal's variables, the spec's and the released secrets.
fn command_for(spec: &SpawnSpec, argv: &[String]) -> CommandBuilder {
    let mut command = CommandBuilder::new(&argv[0]);
    command.args(&argv[1..]);
    let keep = |key: &str| !(spec.strip_loader_env && is_loader_variable(key));
    if let PaneLock::Locked(locked) = &spec.lock {
        command.env_clear();
        for (key, value) in locked.inherited_env.iter().filter(|(k, _)| keep(&k.to_string_lossy()))
        {
            command.env(key, value);
        }
    } else if spec.strip_loader_env {
        for (key, _) in std::env::vars_os().filter(|(k, _)| !keep(&k.to_string_lossy())) {
            command.env_remove(key);
        }
    }
    if let Some(cwd) = &spec.cwd {
        command.cwd(cwd);
    }
    command.env("TERM", "xterm-256color");
    command.env("COLORTERM", "truecolor");
    command.env("PADDOCK_PANE", spec.pane.to_string());
    for (key, value) in spec.env.iter().filter(|(k, _)| keep(k)) {
        command.env(key, value);
    }
    // The values go to the program's environment only (portable-pty keeps a copy until the
    // spawn is done; that one is freed, not wiped).
    for (key, value) in &spec.secrets {
        command.env(key, secret_text(value));
    }
    command
}

/// A fresh model for the pane, showing the spec's notice (yellow) before anything the program
/// prints.
fn model_for(spec: &SpawnSpec) -> Terminal {
    let config = TermConfig { scrollback_lines: spec.scrollback_lines };
    let mut model = Terminal::new(spec.size, config);
    if let Some(notice) = &spec.notice {
        let text = wrap_words(notice, spec.size.cols).replace('\n', "\r\n");
        model.advance(format!("\x1b[33m{text}\x1b[0m\r\n").as_bytes());
    }
    model
}

/// What the reader thread feeds: the model, the activity counters, and for a pane with
/// secrets the masker and its counts.
struct Reads<'a> {
    term: &'a Arc<Mutex<Terminal>>,
    activity: &'a Arc<Activity>,
    masker: Option<Masker>,
    counts: &'a Option<MaskCounts>,
}

/// The pane's running threads, as the process holds them.
struct Threads {
    input: Sender<Vec<u8>>,
    queued_bytes: Arc<AtomicUsize>,
    /// Closed by the reader thread when the output ends.
    reader_done: Receiver<()>,
}

/// Start the pane's writer thread (owning the program's input) and reader thread (output into
/// the model, replies back through the writer's queue).
fn start_threads(
    pane: u32,
    from_program: Box<dyn std::io::Read + Send>,
    to_program: Box<dyn Write + Send>,
    reads: Reads<'_>,
    wake: Arc<dyn Fn() + Send + Sync>,
) -> std::io::Result<Threads> {
    let (input, queued) = crossbeam_channel::bounded::<Vec<u8>>(INPUT_QUEUE);
    let queued_bytes = Arc::new(AtomicUsize::new(0));
    let (done, reader_done) = crossbeam_channel::bounded::<()>(0);
    {
        let queued_bytes = queued_bytes.clone();
        std::thread::Builder::new()
            .name(format!("pane-{pane}-writer"))
            .spawn(move || write_input(to_program, queued, &queued_bytes))?;
    }
    let replies = Replies { queue: input.clone(), queued_bytes: queued_bytes.clone() };
    let (term, activity) = (reads.term.clone(), reads.activity.clone());
    let (masker, counts) = (reads.masker, reads.counts.clone());
    std::thread::Builder::new().name(format!("pane-{pane}-reader")).spawn(move || {
        let output = Output { term: &term, replies: &replies, wake: &*wake, activity: &activity };
        match (masker, counts) {
            (Some(masker), Some(counts)) => {
                reader::read_masked(from_program, pane, masker, &counts, &output);
            }
            _ => reader::read_output(from_program, &output),
        }
        drop(done);
    })?;
    Ok(Threads { input, queued_bytes, reader_done })
}

fn lock(term: &Mutex<Terminal>) -> MutexGuard<'_, Terminal> {
    // A panic elsewhere while holding the lock leaves a model that is still consistent
    // between chunks; keep using it.
    term.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Process {
    /// Start `spec.argv` in a new PTY. `wake` is called (from the reader thread) after each
    /// chunk of output is parsed and when the output ends.
    pub fn spawn(spec: SpawnSpec, wake: Arc<dyn Fn() + Send + Sync>) -> Result<Self, PtyError> {
        let program = spec.argv.first().cloned().unwrap_or_default();
        let spawn_error = |reason: String| PtyError::Spawn { program: program.clone(), reason };
        if program.is_empty() {
            return Err(spawn_error("no program given".into()));
        }
        let (argv, enforcement) = locked_argv(&spec)?;
        let argv = match &spec.cgroup {
            Some(join) => {
                // Started through paddock, a missing program would show only as an exit code:
                // found first, it is the clear error it is without a cgroup.
                if !findable(&argv[0], &spec) {
                    return Err(spawn_error("No such file or directory (os error 2)".into()));
                }
                joining(join, argv)
            }
            None => argv,
        };
        let pair = native_pty_system()
            .openpty(pty_size(spec.size))
            .map_err(|e| PtyError::Open(e.to_string()))?;
        let masker = Masker::new(spec.masked.clone());
        let mask_counts: Option<MaskCounts> = masker
            .as_ref()
            .map(|m| m.counts().iter().map(|_| AtomicU64::new(0)).collect::<Vec<_>>().into());
        let mut child = pair
            .slave
            .spawn_command(command_for(&spec, &argv))
            .map_err(|e| spawn_error(e.to_string()))?;
        // The child has its copy of the slave side; ours must go, or the reader never sees EOF.
        drop(pair.slave);
        let mut model = model_for(&spec);
        if let Some(counts) = &mask_counts {
            if let Some(redactor) = ScreenRedactor::new(&spec.masked, counts.clone()) {
                model.set_redactor(Box::new(redactor));
            }
        }
        let term = Arc::new(Mutex::new(model));
        let activity =
            spec.activity.clone().unwrap_or_else(|| Arc::new(Activity::new(Instant::now())));
        let ends = pair.master.try_clone_reader().and_then(|r| Ok((r, pair.master.take_writer()?)));
        let threads = ends.map_err(|e| PtyError::Open(e.to_string())).and_then(|(from, to)| {
            let reads = Reads { term: &term, activity: &activity, masker, counts: &mask_counts };
            start_threads(spec.pane, from, to, reads, wake).map_err(|e| spawn_error(e.to_string()))
        });
        let Threads { input, queued_bytes, reader_done } = match threads {
            Ok(threads) => threads,
            Err(e) => {
                // Do not leave the program running without a pane.
                signal_session(child.as_mut(), Signal::Kill);
                let _ = child.wait();
                return Err(e);
            }
        };
        Ok(Process {
            term,
            activity,
            mask_counts,
            master: pair.master,
            input,
            queued_bytes,
            child,
            exited: None,
            enforcement,
            reaped: false,
            reader_done: Some(reader_done),
            cgroup: spec.cgroup.map(|join| join.cgroup),
        })
    }

    fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Queue bytes for the program's input. Never blocks: a program that stops reading fills
    /// the queue, and then this says so.
    fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        self.activity.typed();
        let len = bytes.len();
        if self.queued_bytes.load(Ordering::SeqCst) + len > INPUT_QUEUE_BYTES {
            return Err(PtyError::InputFull);
        }
        self.queued_bytes.fetch_add(len, Ordering::SeqCst);
        match self.input.try_send(bytes) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.queued_bytes.fetch_sub(len, Ordering::SeqCst);
                match e {
                    TrySendError::Full(_) => Err(PtyError::InputFull),
                    TrySendError::Disconnected(_) => Err(PtyError::Exited),
                }
            }
        }
    }

    /// Resize the PTY (the program gets SIGWINCH) and the model.
    fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        self.master.resize(pty_size(size)).map_err(|e| PtyError::Resize(e.to_string()))?;
        lock(&self.term).resize(size);
        Ok(())
    }

    fn status(&mut self) -> PaneStatus {
        if let Some(exited) = self.exited {
            return exited;
        }
        let seen = match self.child.process_id().and_then(peek_exit) {
            Some(peeked) => peeked,
            None => self.reap(),
        };
        if seen != PaneStatus::Running {
            self.exited = Some(seen);
        }
        seen
    }

    /// Reap the child if it has exited (the fallback where no non-reaping check exists).
    fn reap(&mut self) -> PaneStatus {
        let status = match self.child.try_wait() {
            Ok(Some(status)) if status.signal().is_some() => PaneStatus::Exited(None),
            Ok(Some(status)) => PaneStatus::Exited(Some(status.exit_code() as i32)),
            Ok(None) => return PaneStatus::Running,
            Err(_) => PaneStatus::Exited(None),
        };
        self.reaped = true;
        status
    }

    /// Kill every process of the pane now (see `process`), without a grace period. The pane
    /// keeps its screen; its status turns to exited once the program is gone.
    fn kill(&mut self) {
        if !self.reaped {
            signal_session(self.child.as_mut(), Signal::Kill);
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
    }

    /// Wait up to `timeout` for the program's output to end (every byte parsed). False when it
    /// has not: a process that left the group may hold the PTY open.
    fn wait_output_end(&self, timeout: Duration) -> bool {
        match &self.reader_done {
            Some(done) => {
                matches!(
                    done.recv_timeout(timeout),
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected)
                )
            }
            None => true,
        }
    }

    fn session_alive(&mut self) -> bool {
        let others = self.child.process_id().is_some_and(session_has_others);
        others || self.status() == PaneStatus::Running
    }

    /// End the pane: hang up its processes (see `process`), then kill what is left after a
    /// grace period. Returns how the program ended.
    fn close(mut self) -> PaneStatus {
        self.end();
        self.status()
    }

    fn end(&mut self) {
        // The child is not reaped yet (see `exited`), so its pid still names its session and
        // group. Everything in the session gets the hangup and the whole grace period to act
        // on it (a job saving its work after the shell has already gone), then the kill.
        if !self.reaped {
            signal_session(self.child.as_mut(), Signal::Hangup);
            let deadline = Instant::now() + HANGUP_GRACE;
            while self.session_alive() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            signal_session(self.child.as_mut(), Signal::Kill);
        }
        // What left the session (a daemon) is still in the pane's cgroup.
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        let _ = self.child.wait();
        if let Some(done) = self.reader_done.take() {
            let _ = done.recv_timeout(DRAIN_WAIT);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.reader_done.is_some() {
            self.end();
        }
    }
}

/// A pane whose program runs elsewhere (on another host's paddock server): its model is a
/// replica fed from there, and what would go to a PTY goes to it.
pub trait Mirrored: Send {
    fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError>;
    /// Ask for the program's terminal to be this size (the replica follows when it is).
    fn resize(&self, size: TermSize) -> Result<(), PtyError>;
    fn status(&self) -> PaneStatus;
    /// End the program there; how it ended, as far as known.
    fn close(&self) -> PaneStatus;
}

/// One pane's program and the terminal model its output feeds, or, for a pane that runs no
/// program (a thread that may not start, the configuration's problems), only a model holding
/// a notice, or a replica of a pane whose program runs on another host.
pub struct PaneSession {
    term: Arc<Mutex<Terminal>>,
    process: Option<Process>,
    mirrored: Option<Box<dyn Mirrored>>,
}

impl PaneSession {
    /// Start `spec.argv` in a new PTY. `wake` is called (from the reader thread) after each
    /// chunk of output is parsed and when the output ends.
    pub fn spawn(spec: SpawnSpec, wake: Arc<dyn Fn() + Send + Sync>) -> Result<Self, PtyError> {
        let process = Process::spawn(spec, wake)?;
        Ok(PaneSession { term: process.term.clone(), process: Some(process), mirrored: None })
    }

    /// The pane's cgroup, if it has one.
    pub fn cgroup(&self) -> Option<Arc<PaneCgroup>> {
        self.process.as_ref().and_then(|p| p.cgroup.clone())
    }

    /// A pane that runs nothing and shows `text` (lines, as a program would print them).
    pub fn notice(text: &str, size: TermSize, scrollback_lines: usize) -> PaneSession {
        let mut term = Terminal::new(size, TermConfig { scrollback_lines });
        term.advance(wrap_words(text, size.cols).replace('\n', "\r\n").as_bytes());
        // No cursor: nothing here takes input.
        term.advance(b"\x1b[?25l");
        PaneSession { term: Arc::new(Mutex::new(term)), process: None, mirrored: None }
    }

    /// A pane showing `term`, a replica of a pane on another host that `mirrored` reaches.
    pub fn mirror(term: Arc<Mutex<Terminal>>, mirrored: Box<dyn Mirrored>) -> PaneSession {
        PaneSession { term, process: None, mirrored: Some(mirrored) }
    }

    /// Whether its program runs elsewhere.
    pub fn is_mirror(&self) -> bool {
        self.mirrored.is_some()
    }

    /// The pane's activity counters (`None` for a notice).
    pub fn activity(&self) -> Option<&Arc<Activity>> {
        self.process.as_ref().map(|p| &p.activity)
    }

    /// How often each released secret (in `SpawnSpec::secrets` order) was masked so far; shared
    /// with the reader, so it can be read after the pane is gone.
    pub fn mask_counts(&self) -> Option<MaskCounts> {
        self.process.as_ref().and_then(|p| p.mask_counts.clone())
    }

    /// The pane's terminal model. Lock it briefly: the reader thread parses under the same lock.
    pub fn terminal(&self) -> &Arc<Mutex<Terminal>> {
        &self.term
    }

    /// The pane's terminal model, locked for reading or changing it (a panic elsewhere while
    /// holding it leaves a model still consistent between chunks: it is used on).
    pub fn term(&self) -> MutexGuard<'_, Terminal> {
        lock(&self.term)
    }

    /// The screen as `paddock replay` prints it.
    pub fn screen_text(&self) -> String {
        lock(&self.term).screen_text()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Process::pid)
    }

    /// What the pane's lock enforces (`Unlocked` for a pane without one, or without a program).
    pub fn enforcement(&self) -> Enforcement {
        self.process
            .as_ref()
            .map_or(Enforcement::Unlocked { chosen: false }, |p| p.enforcement.clone())
    }

    /// Queue bytes for the program's input. Never blocks: a program that stops reading fills
    /// the queue, and then this says so.
    pub fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        if let Some(mirrored) = &self.mirrored {
            return mirrored.send(bytes);
        }
        self.process.as_ref().ok_or(PtyError::NoProgram)?.send(bytes)
    }

    /// Resize the PTY (the program gets SIGWINCH) and the model.
    pub fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        if let Some(mirrored) = &self.mirrored {
            return mirrored.resize(size);
        }
        match &self.process {
            Some(process) => process.resize(size),
            None => {
                lock(&self.term).resize(size);
                Ok(())
            }
        }
    }

    pub fn status(&mut self) -> PaneStatus {
        if let Some(mirrored) = &self.mirrored {
            return mirrored.status();
        }
        self.process.as_mut().map_or(PaneStatus::NoProgram, Process::status)
    }

    /// Kill every process of the pane now (see `process`), without a grace period. The pane
    /// keeps its screen; its status turns to exited once the program is gone.
    pub fn kill(&mut self) {
        if let Some(process) = &mut self.process {
            process.kill();
        }
    }

    /// Wait up to `timeout` for the program's output to end (every byte parsed). False when it
    /// has not: a process that left the group may hold the PTY open.
    pub fn wait_output_end(&self, timeout: Duration) -> bool {
        self.process.as_ref().is_none_or(|p| p.wait_output_end(timeout))
    }

    /// End the pane: hang up its processes (see `process`), then kill what is left after a
    /// grace period. Returns how the program ended.
    pub fn close(self) -> PaneStatus {
        if let Some(mirrored) = &self.mirrored {
            return mirrored.close();
        }
        match self.process {
            Some(process) => process.close(),
            None => PaneStatus::NoProgram,
        }
    }
}

/// `text` with lines broken between words to fit `cols` (a word longer than that is left to
/// the terminal to wrap).
fn wrap_words(text: &str, cols: usize) -> String {
    let mut out = String::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut width = 0;
        for (j, word) in line.split(' ').enumerate() {
            let len = unicode_width::UnicodeWidthStr::width(word);
            if j > 0 {
                if width > 0 && width + 1 + len > cols {
                    out.push('\n');
                    width = 0;
                } else {
                    out.push(' ');
                    width += 1;
                }
            }
            out.push_str(word);
            width += len;
        }
    }
    out
}

fn pty_size(size: TermSize) -> PtySize {
    // The same bounds as the model's, so the program and the screen agree on the size.
    let clamp = |n: usize| n.clamp(1, MAX_DIMENSION) as u16;
    PtySize { rows: clamp(size.lines), cols: clamp(size.cols), pixel_width: 0, pixel_height: 0 }
}

/// A secret's value as an environment value (bytes as they are on Unix).
fn secret_text(value: &[u8]) -> std::ffi::OsString {
    #[cfg(unix)]
    {
        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(value).to_owned()
    }
    #[cfg(not(unix))]
    {
        String::from_utf8_lossy(value).into_owned().into()
    }
}

fn write_input(
    mut writer: Box<dyn Write + Send>,
    queued: crossbeam_channel::Receiver<Vec<u8>>,
    queued_bytes: &AtomicUsize,
) {
    for bytes in queued {
        let written = writer.write_all(&bytes).and_then(|()| writer.flush());
        queued_bytes.fetch_sub(bytes.len(), Ordering::SeqCst);
        if written.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wrap_words;

    #[test]
    fn notices_break_between_words() {
        assert_eq!(wrap_words("one two three four", 9), "one two\nthree\nfour");
        assert_eq!(wrap_words("a\n\nb c", 3), "a\n\nb c");
        assert_eq!(wrap_words("averyveryverylongword x", 5), "averyveryverylongword\nx");
        assert_eq!(wrap_words("  indented", 20), "  indented");
    }
}
