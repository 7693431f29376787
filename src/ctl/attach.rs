//! The attach socket: where windows connect to the server that owns the panes.
//!
//! It sits beside the instance's control socket (`<pid>.attach` beside `<pid>.sock`, in the
//! same private folder) and takes the same checks: a peer of another user, or in another user
//! or PID namespace (a lock), is refused. A connection speaks `wire`'s binary frames; this side
//! only accepts it and exchanges hellos (within [`HELLO_WAIT`], versions compared), then hands
//! the greeted stream to the app, which serves it on threads of its own.

use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::server::{bind_private, check_peer, stop_listening};
use super::wire::{read_frame, ToServer, ToWindow, WireError, VERSION};
use super::{CtlError, Scope};

/// How long a new connection has to say hello.
pub const HELLO_WAIT: Duration = Duration::from_secs(5);
/// Greeted windows the app has not taken yet; more are told the server is busy.
const WAITING: usize = 16;
/// Connections saying hello at once; more are told the server is busy.
const GREETING: usize = 64;

/// The attach socket beside the control socket at `control`.
pub fn attach_socket(control: &Path) -> PathBuf {
    control.with_extension("attach")
}

/// A listening attach socket. Dropping it stops listening and removes the socket file.
pub struct AttachServer {
    path: PathBuf,
    windows: Receiver<UnixStream>,
    shutdown: Arc<AtomicBool>,
}

impl AttachServer {
    /// Listen on `path` (see [`attach_socket`]); the folder is private already.
    pub fn bind(path: &Path) -> Result<AttachServer, CtlError> {
        let listener = bind_private(path)?;
        let (to_app, windows) = crossbeam_channel::bounded(WAITING);
        let shutdown = Arc::new(AtomicBool::new(false));
        let flag = shutdown.clone();
        std::thread::Builder::new()
            .name("attach-listener".into())
            .spawn(move || accept_loop(&listener, &to_app, &flag))
            .map_err(|source| CtlError::Bind { path: path.to_owned(), source })?;
        Ok(AttachServer { path: path.to_owned(), windows, shutdown })
    }

    /// Windows that said hello, ready to be served.
    pub fn windows(&self) -> &Receiver<UnixStream> {
        &self.windows
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Take no more windows (the instance is ending).
    pub fn stop_listening(&self) {
        stop_listening(&self.path, &self.shutdown);
    }
}

impl Drop for AttachServer {
    fn drop(&mut self) {
        self.stop_listening();
    }
}

fn refuse(mut stream: &UnixStream, reason: String) {
    // A short frame into an empty socket buffer: it cannot block for long.
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&ToWindow::Refused { reason }.encode());
}

fn accept_loop(listener: &UnixListener, to_app: &Sender<UnixStream>, shutdown: &AtomicBool) {
    let greeting = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if shutdown.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if let Err(why) = check_peer(&stream, Scope::Instance) {
            refuse(&stream, why);
            continue;
        }
        if greeting.load(Ordering::SeqCst) >= GREETING {
            refuse(&stream, "the server is busy attaching windows; try again".into());
            continue;
        }
        let to_app = to_app.clone();
        greeting.fetch_add(1, Ordering::SeqCst);
        let counted = greeting.clone();
        // Its own thread: a client that never says hello holds only that, for HELLO_WAIT.
        let spawned = std::thread::Builder::new().name("attach-hello".into()).spawn(move || {
            let greeted = greet(&stream);
            counted.fetch_sub(1, Ordering::SeqCst);
            match greeted {
                Ok(()) => {
                    if let Err(e) = to_app.try_send(stream) {
                        refuse(&e.into_inner(), "the server is busy attaching windows".into());
                    }
                }
                Err(e) => refuse(&stream, e.to_string()),
            }
        });
        if spawned.is_err() {
            greeting.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The server's side of the hellos.
fn greet(stream: &UnixStream) -> Result<(), WireError> {
    stream.set_read_timeout(Some(HELLO_WAIT))?;
    stream.set_write_timeout(Some(HELLO_WAIT))?;
    let mut buf = Vec::new();
    let frame = read_frame(&mut &*stream, 64, &mut buf)?;
    match ToServer::decode(frame)? {
        ToServer::Hello { version: VERSION } => {}
        ToServer::Hello { version } => return Err(WireError::Version(version)),
        _ => return Err(WireError::Malformed("the first frame is not a hello")),
    }
    let hello = ToWindow::Hello { version: VERSION, server_pid: std::process::id() };
    (&*stream).write_all(&hello.encode())?;
    stream.set_read_timeout(None)?;
    Ok(())
}

/// A window's side: connect to the attach socket at `path` and exchange hellos. Returns the
/// stream and the server's process id.
pub fn connect(path: &Path) -> Result<(UnixStream, u32), AttachError> {
    let stream = connect_checked(path)?;
    stream.set_read_timeout(Some(HELLO_WAIT)).map_err(WireError::from)?;
    (&stream).write_all(&ToServer::Hello { version: VERSION }.encode()).map_err(WireError::from)?;
    let mut buf = Vec::new();
    let frame = read_frame(&mut &stream, 1 << 16, &mut buf)?;
    match ToWindow::decode(frame)? {
        ToWindow::Hello { version: VERSION, server_pid } => {
            stream.set_read_timeout(None).map_err(WireError::from)?;
            Ok((stream, server_pid))
        }
        ToWindow::Hello { version, .. } => Err(WireError::Version(version).into()),
        ToWindow::Refused { reason } => Err(AttachError::Refused(reason)),
        _ => Err(WireError::Malformed("the server's first frame is not a hello").into()),
    }
}

/// Connect to the attach socket at `path`, checking who listens there, without a hello: for
/// `paddock server --stdio`, which relays the hello of the paddock at the other end of ssh.
pub fn connect_checked(path: &Path) -> Result<UnixStream, AttachError> {
    let stream = UnixStream::connect(path)
        .map_err(|source| AttachError::Connect { path: path.to_owned(), source })?;
    // What a window sends (keys typed into panes) must reach a server of this user's, never
    // one another user, or a lock, made at that path.
    let impostor = |why: String| AttachError::Impostor { path: path.to_owned(), why };
    let (uid, own) = (
        super::peer::peer_uid(&stream).map_err(|e| impostor(e.to_string()))?,
        super::paths::own_uid(),
    );
    if !super::peer::may_connect(uid, own) {
        return Err(impostor(format!("it belongs to uid {uid}, not to you (uid {own})")));
    }
    super::peer::listener_not_inside_a_lock(&stream).map_err(impostor)?;
    Ok(stream)
}

#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot reach the paddock server at {path}: {source}")]
    Connect { path: PathBuf, source: std::io::Error },
    #[error("the paddock server refused this window: {0}")]
    Refused(String),
    #[error("not attaching to {path}: {why}")]
    Impostor { path: PathBuf, why: String },
    #[error(transparent)]
    Wire(#[from] WireError),
}
