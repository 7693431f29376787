//! The listening side: accept, check the peer, read bounded lines, hand requests to the app.
//!
//! Every connection gets its own thread with read and write timeouts, and there are at most
//! [`MAX_CONNECTIONS`] of them, so no client can hang the listener or the app. A request
//! reaches the app as a [`Call`]; the app answers it when it likes (from any thread).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use super::paths::{check_length, own_uid, probe, Liveness};
use super::peer::{may_connect, peer_outside_our_namespaces, peer_uid};
use super::protocol::{parse_request, ErrorCode, Reply, Request, MAX_REQUEST_BYTES};
use super::CtlError;

/// Connections served at once; one more is told the instance is busy.
const MAX_CONNECTIONS: usize = 64;
/// A connection that sends nothing for this long is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// A client that does not read its reply for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request may wait to be taken by the app, and then for its answer.
const QUEUE_WAIT: Duration = Duration::from_secs(5);
const ANSWER_WAIT: Duration = Duration::from_secs(15);

/// A request for the app, with the way back to its client.
pub struct Call {
    pub request: Request,
    /// Which socket it came through, and so what it may ask.
    pub scope: Scope,
    reply: Sender<Answer>,
}

/// What a socket's clients may ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The instance's control socket: anything, from the user's processes outside any lock.
    Instance,
    /// A locked pane's own endpoint: only about that pane (see `app::pane_endpoint`).
    Pane(u32),
}

struct Answer {
    reply: Reply,
    /// Told once the reply is written, for an app that is about to exit.
    written: Option<Sender<()>>,
}

impl Call {
    pub fn answer(self, reply: Reply) {
        // The client may have gone; that is its business.
        let _ = self.reply.send(Answer { reply, written: None });
    }

    /// Answer, and wait (briefly) until the reply has been written to the client: for `stop`,
    /// whose answer must leave before the process does.
    pub fn answer_and_wait(self, reply: Reply) {
        let (written, done) = crossbeam_channel::bounded(1);
        if self.reply.send(Answer { reply, written: Some(written) }).is_ok() {
            let _ = done.recv_timeout(Duration::from_secs(1));
        }
    }
}

/// A listening control socket. Dropping it stops listening and removes the socket file.
pub struct ControlServer {
    path: PathBuf,
    calls: Receiver<Call>,
    sender: Sender<Call>,
    shutdown: Arc<AtomicBool>,
}

impl ControlServer {
    /// Listen on `path` for the instance. A socket left there by a dead instance is replaced; a
    /// live one is not. The caller makes sure the directory is private (see
    /// `prepare_socket_dir`).
    pub fn bind(path: &Path) -> Result<ControlServer, CtlError> {
        let (sender, calls) = crossbeam_channel::bounded(64);
        ControlServer::listen(path, Scope::Instance, sender, calls)
    }

    /// Listen on `path` with `scope`, its calls going to `calls` (another server's `sender`).
    pub fn bind_scoped(
        path: &Path,
        scope: Scope,
        calls: Sender<Call>,
    ) -> Result<ControlServer, CtlError> {
        ControlServer::listen(path, scope, calls, crossbeam_channel::never())
    }

    fn listen(
        path: &Path,
        scope: Scope,
        sender: Sender<Call>,
        calls: Receiver<Call>,
    ) -> Result<ControlServer, CtlError> {
        let listener = bind_private(path)?;
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        let to_app = sender.clone();
        std::thread::Builder::new()
            .name("ctl-listener".into())
            .spawn(move || accept_loop(&listener, &to_app, &flag, scope))
            .map_err(|source| CtlError::Bind { path: path.to_owned(), source })?;
        Ok(ControlServer { path: path.to_owned(), calls, sender, shutdown })
    }

    /// Where this server's calls go, for scoped servers that feed the same app.
    pub fn sender(&self) -> Sender<Call> {
        self.sender.clone()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Requests from clients, in arrival order per connection.
    pub fn calls(&self) -> &Receiver<Call> {
        &self.calls
    }

    /// Take no more connections: an instance that is ending is not found by the next one.
    pub fn stop_listening(&self) {
        stop_listening(&self.path, &self.shutdown);
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop_listening();
    }
}

/// Tell a listener on `path` to end (it sees `shutdown` once woken) and remove its socket;
/// once only: by then another instance may listen on a path given with `--listen`.
pub(super) fn stop_listening(path: &Path, shutdown: &AtomicBool) {
    if shutdown.swap(true, Ordering::SeqCst) {
        return;
    }
    // Wake the listener so it sees the flag and ends.
    let _ = UnixStream::connect(path);
    let _ = std::fs::remove_file(path);
}

/// Listen on `path` (mode 0600). A socket left there by a dead instance is replaced; a live
/// one is not, nor anything that is not a socket.
pub(super) fn bind_private(path: &Path) -> Result<UnixListener, CtlError> {
    check_length(path)?;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        // Only a socket nobody answers on may be replaced; never a file that happens to
        // be in the way (`--listen notes.txt`).
        if !meta.file_type().is_socket() {
            return Err(CtlError::NotASocket(path.to_owned()));
        }
        if probe(path) != Liveness::Stale {
            return Err(CtlError::InUse(path.to_owned()));
        }
    }
    // Listen under a private name first and rename into place, so the socket appears
    // already listening with its final mode: a client probing it in between would
    // otherwise find it refusing and remove it as stale.
    let bind_error = |source| CtlError::Bind { path: path.to_owned(), source };
    let staging = staging_path(path);
    let _ = std::fs::remove_file(&staging);
    let listener = UnixListener::bind(&staging).map_err(bind_error)?;
    let placed = std::fs::set_permissions(&staging, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&staging, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&staging);
        return Err(bind_error(e));
    }
    Ok(listener)
}

/// Whether the peer on `stream` may use a socket of `scope`: this user's, and for the
/// instance's sockets, not in another user or PID namespace (a lock).
pub(super) fn check_peer(stream: &UnixStream, scope: Scope) -> Result<(), String> {
    // The instance's socket is out of every lock's reach; a peer in another user or PID
    // namespace (a lock, should it reach it all the same) is refused as a second wall.
    // A pane's endpoint is there for its locked program.
    if scope == Scope::Instance {
        peer_outside_our_namespaces(stream)?;
    }
    let own = own_uid();
    match peer_uid(stream) {
        Ok(uid) if may_connect(uid, own) => Ok(()),
        Ok(uid) => Err(format!("uid {uid} may not control this instance, which runs as uid {own}")),
        Err(e) => Err(format!("cannot tell who is connecting: {e}")),
    }
}

/// `.<name>.<pid>.tmp` beside `path`: not a `*.sock`, so instance discovery never looks at it.
fn staging_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

fn accept_loop(listener: &UnixListener, calls: &Sender<Call>, shutdown: &AtomicBool, scope: Scope) {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut stream) = stream else {
            // Out of file descriptors, most likely: give the others time to finish.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        // The refusal is a short line into an empty socket buffer: it cannot block.
        if let Err(why) = check_peer(&stream, scope) {
            let _ = stream.write_all(Reply::error(ErrorCode::Refused, why).to_line().as_bytes());
            continue;
        }
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            let message =
                format!("the instance is serving {MAX_CONNECTIONS} connections; try again");
            let _ = stream.write_all(Reply::error(ErrorCode::Busy, message).to_line().as_bytes());
            continue;
        }
        let slot = ConnectionSlot::take(&active);
        let calls = calls.clone();
        let spawned = std::thread::Builder::new().name("ctl-connection".into()).spawn(move || {
            let _slot = slot;
            serve(stream, &calls, scope);
        });
        if spawned.is_err() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One counted connection; the count drops with it, however the thread ends.
struct ConnectionSlot(Arc<AtomicUsize>);

impl ConnectionSlot {
    fn take(active: &Arc<AtomicUsize>) -> ConnectionSlot {
        active.fetch_add(1, Ordering::SeqCst);
        ConnectionSlot(active.clone())
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn serve(stream: UnixStream, calls: &Sender<Call>, scope: Scope) {
    if stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_err() {
        return;
    }
    let Ok(read_side) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_side);
    let mut writer = stream;
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_line(&mut reader, &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let complete = line.last() == Some(&b'\n');
        if !complete && line.len() > MAX_REQUEST_BYTES {
            let message = format!("the request is longer than {MAX_REQUEST_BYTES} bytes");
            let _ =
                writer.write_all(Reply::error(ErrorCode::TooLarge, message).to_line().as_bytes());
            return;
        }
        let request = trim_line_end(&line);
        if request.iter().all(u8::is_ascii_whitespace) {
            if complete {
                continue;
            }
            return;
        }
        let answer = match parse_request(request) {
            Ok(request) => dispatch(request, scope, calls),
            Err(e) => Answer { reply: e.into(), written: None },
        };
        let sent =
            writer.write_all(answer.reply.to_line().as_bytes()).and_then(|()| writer.flush());
        if let Some(written) = answer.written {
            let _ = written.send(());
        }
        // A last line without a newline (a client that wrote and shut down) still gets its answer.
        if sent.is_err() || !complete {
            return;
        }
    }
}

/// Read one line of at most `MAX_REQUEST_BYTES + 1` bytes, all of it within `IDLE_TIMEOUT`: a
/// client trickling a byte now and then cannot hold its connection (and a slot) forever.
fn read_line(reader: &mut BufReader<UnixStream>, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let deadline = Instant::now() + IDLE_TIMEOUT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        reader.get_ref().set_read_timeout(Some(left))?;
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(line.len());
        }
        let room = MAX_REQUEST_BYTES + 1 - line.len();
        let (take, done) = match memchr::memchr(b'\n', available) {
            Some(end) if end < room => (end + 1, true),
            _ => (available.len().min(room), false),
        };
        line.extend_from_slice(&available[..take]);
        reader.consume(take);
        if done || line.len() > MAX_REQUEST_BYTES {
            return Ok(line.len());
        }
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn dispatch(request: Request, scope: Scope, calls: &Sender<Call>) -> Answer {
    let (reply, answer) = crossbeam_channel::bounded(1);
    let failed = |code, message: &str| Answer { reply: Reply::error(code, message), written: None };
    if calls.send_timeout(Call { request, scope, reply }, QUEUE_WAIT).is_err() {
        return failed(
            ErrorCode::Timeout,
            "the instance is not taking requests (busy or stopping)",
        );
    }
    match answer.recv_timeout(ANSWER_WAIT) {
        Ok(answer) => answer,
        Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
            failed(ErrorCode::Timeout, "the instance did not answer in time")
        }
        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
            failed(ErrorCode::Failed, "the instance ended before answering")
        }
    }
}
