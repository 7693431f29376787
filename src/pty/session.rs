//! One pane's PTY child, its reader and writer threads, and its end.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

use super::PtyError;
use crate::term::{TermConfig, TermSize, Terminal};

/// Most bytes parsed under one lock of the model: a renderer never waits longer than one chunk.
const CHUNK: usize = 64 * 1024;
/// Writes queued for a pane whose program is not reading; past this, `send` says so.
const INPUT_QUEUE: usize = 1024;
/// How long a closed pane's processes get between the hangup and the kill.
const HANGUP_GRACE: Duration = Duration::from_millis(500);
/// How long closing waits for the reader to drain the last output. A process that left the
/// group (a daemon) may keep the PTY open forever; the reader is then left to end on its own.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaneStatus {
    Running,
    /// The exit code, or `None` when a signal ended the program.
    Exited(Option<i32>),
}

pub struct PaneSession {
    term: Arc<Mutex<Terminal>>,
    master: Box<dyn MasterPty + Send>,
    input: Sender<Vec<u8>>,
    child: Box<dyn Child + Send + Sync>,
    /// Closed by the reader thread when the output ends; `None` once the pane has ended.
    reader_done: Option<Receiver<()>>,
}

fn lock(term: &Mutex<Terminal>) -> MutexGuard<'_, Terminal> {
    // A panic elsewhere while holding the lock leaves a model that is still consistent
    // between chunks; keep using it.
    term.lock().unwrap_or_else(PoisonError::into_inner)
}

impl PaneSession {
    /// Start `spec.argv` in a new PTY. `wake` is called (from the reader thread) after each
    /// chunk of output is parsed and when the output ends.
    pub fn spawn(spec: SpawnSpec, wake: Arc<dyn Fn() + Send + Sync>) -> Result<Self, PtyError> {
        let program = spec.argv.first().cloned().unwrap_or_default();
        let spawn_error = |reason: String| PtyError::Spawn { program: program.clone(), reason };
        if program.is_empty() {
            return Err(spawn_error("no program given".into()));
        }
        let size = pty_size(spec.size);
        let pair = native_pty_system().openpty(size).map_err(|e| PtyError::Open(e.to_string()))?;
        let mut command = CommandBuilder::new(&program);
        command.args(&spec.argv[1..]);
        if let Some(cwd) = &spec.cwd {
            command.cwd(cwd);
        }
        command.env("TERM", "xterm-256color");
        command.env("COLORTERM", "truecolor");
        command.env("PADDOCK_PANE", spec.pane.to_string());
        for (key, value) in &spec.env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).map_err(|e| spawn_error(e.to_string()))?;
        // The child has its copy of the slave side; ours must go, or the reader never sees EOF.
        drop(pair.slave);
        let reader = pair.master.try_clone_reader().map_err(|e| PtyError::Open(e.to_string()))?;
        let writer = pair.master.take_writer().map_err(|e| PtyError::Open(e.to_string()))?;

        let config = TermConfig { scrollback_lines: spec.scrollback_lines };
        let term = Arc::new(Mutex::new(Terminal::new(spec.size, config)));
        let (input, queued) = crossbeam_channel::bounded::<Vec<u8>>(INPUT_QUEUE);
        std::thread::Builder::new()
            .name(format!("pane-{}-writer", spec.pane))
            .spawn(move || write_input(writer, queued))
            .map_err(|e| spawn_error(e.to_string()))?;
        let (done, reader_done) = crossbeam_channel::bounded::<()>(0);
        {
            let (term, replies) = (term.clone(), input.clone());
            std::thread::Builder::new()
                .name(format!("pane-{}-reader", spec.pane))
                .spawn(move || {
                    read_output(reader, &term, &replies, &*wake);
                    drop(done);
                })
                .map_err(|e| spawn_error(e.to_string()))?;
        }
        let reader_done = Some(reader_done);
        Ok(PaneSession { term, master: pair.master, input, child, reader_done })
    }

    /// The pane's terminal model. Lock it briefly: the reader thread parses under the same lock.
    pub fn terminal(&self) -> &Arc<Mutex<Terminal>> {
        &self.term
    }

    /// The screen as `paddock replay` prints it.
    pub fn screen_text(&self) -> String {
        lock(&self.term).screen_text()
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// Queue bytes for the program's input. Never blocks: a program that stops reading fills
    /// the queue, and then this says so.
    pub fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        match self.input.try_send(bytes) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(PtyError::InputFull),
            Err(TrySendError::Disconnected(_)) => Err(PtyError::Exited),
        }
    }

    /// Resize the PTY (the program gets SIGWINCH) and the model.
    pub fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        self.master.resize(pty_size(size)).map_err(|e| PtyError::Resize(e.to_string()))?;
        lock(&self.term).resize(size);
        Ok(())
    }

    pub fn status(&mut self) -> PaneStatus {
        match self.child.try_wait() {
            Ok(Some(status)) if status.signal().is_some() => PaneStatus::Exited(None),
            Ok(Some(status)) => PaneStatus::Exited(Some(status.exit_code() as i32)),
            Ok(None) => PaneStatus::Running,
            Err(_) => PaneStatus::Exited(None),
        }
    }

    /// End the pane: hang up its whole process group, then kill what is left after a grace
    /// period. Returns how the program ended.
    pub fn close(mut self) -> PaneStatus {
        self.end();
        self.status()
    }

    fn end(&mut self) {
        if self.status() == PaneStatus::Running {
            signal_group(self.child.as_mut(), Signal::Hangup);
            let deadline = Instant::now() + HANGUP_GRACE;
            while self.status() == PaneStatus::Running && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        // Background jobs of the program outlive it unless the group is killed too.
        signal_group(self.child.as_mut(), Signal::Kill);
        let _ = self.child.wait();
        if let Some(done) = self.reader_done.take() {
            let _ = done.recv_timeout(DRAIN_WAIT);
        }
    }
}

impl Drop for PaneSession {
    fn drop(&mut self) {
        if self.reader_done.is_some() {
            self.end();
        }
    }
}

fn pty_size(size: TermSize) -> PtySize {
    let clamp = |n: usize| n.clamp(1, u16::MAX as usize) as u16;
    PtySize { rows: clamp(size.lines), cols: clamp(size.cols), pixel_width: 0, pixel_height: 0 }
}

fn read_output(
    mut reader: Box<dyn Read + Send>,
    term: &Mutex<Terminal>,
    replies: &Sender<Vec<u8>>,
    wake: &(dyn Fn() + Send + Sync),
) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let answer = {
            let mut term = lock(term);
            term.advance(&buf[..n]);
            term.take_replies()
        };
        if !answer.is_empty() {
            // A program that asks and does not read its answers loses them, not the pane.
            let _ = replies.try_send(answer);
        }
        wake();
    }
    wake();
}

fn write_input(mut writer: Box<dyn Write + Send>, queued: crossbeam_channel::Receiver<Vec<u8>>) {
    for bytes in queued {
        if writer.write_all(&bytes).and_then(|()| writer.flush()).is_err() {
            break;
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Hangup,
    Kill,
}

/// Signal the child's process group (it leads its own session, so its pid is the group id).
#[cfg(unix)]
fn signal_group(child: &mut (dyn Child + Send + Sync), signal: Signal) {
    let Some(pid) = child.process_id().and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let signal = match signal {
        Signal::Hangup => libc::SIGHUP,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory.
    unsafe {
        libc::kill(-pid, signal);
    }
}

#[cfg(not(unix))]
fn signal_group(child: &mut (dyn Child + Send + Sync), _signal: Signal) {
    let _ = child.kill();
}
