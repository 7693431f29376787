//! The calling side: find the instance, send a request, read its reply.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::paths::{check_length, live_instances, own_uid, socket_dir};
use super::peer::{may_connect, peer_uid};
use super::protocol::{encode_request, Reply, Request};
use super::CtlError;

/// Longer than the server's own waits for the app (5 s to take a request, 15 s to answer), so
/// its timeout reply arrives first.
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// A capture of a full scrollback at 4096 columns stays well under this.
const MAX_REPLY_BYTES: u64 = 512 << 20;

pub struct Client {
    path: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Client {
    pub fn connect(path: &Path) -> Result<Client, CtlError> {
        check_length(path)?;
        let connect_error = |source| CtlError::Connect { path: path.to_owned(), source };
        let writer = UnixStream::connect(path).map_err(connect_error)?;
        // What we send (keys typed into panes) must reach our own instance and nobody else's:
        // a socket path can be taken over by another user once its instance is gone.
        let (uid, own) = (peer_uid(&writer).map_err(connect_error)?, own_uid());
        if !may_connect(uid, own) {
            return Err(CtlError::NotOurs { path: path.to_owned(), uid, own });
        }
        super::peer::listener_not_inside_a_lock(&writer)
            .map_err(|why| CtlError::Impostor { path: path.to_owned(), why })?;
        writer.set_read_timeout(Some(REPLY_TIMEOUT)).map_err(connect_error)?;
        writer.set_write_timeout(Some(REPLY_TIMEOUT)).map_err(connect_error)?;
        let reader = BufReader::new(writer.try_clone().map_err(connect_error)?);
        Ok(Client { path: path.to_owned(), reader, writer })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Send `request` and return the reply; an error reply becomes `CtlError::Remote`.
    pub fn call(&mut self, request: &Request) -> Result<Reply, CtlError> {
        // An instance that refuses us says why and hangs up, perhaps before our request is
        // written: then its answer is still there to read, and it says more than EPIPE.
        let line = encode_request(request).map_err(|e| CtlError::Encode(e.to_string()))?;
        let written = self.writer.write_all(line.as_bytes());
        let mut line = Vec::new();
        let read = (&mut self.reader).take(MAX_REPLY_BYTES).read_until(b'\n', &mut line);
        match (read, written) {
            (Ok(n), _) if n > 0 => {}
            (_, Err(source)) => return Err(CtlError::Io { path: self.path.clone(), source }),
            (Ok(_), Ok(())) => return Err(CtlError::NoReply(self.path.clone())),
            (Err(source), Ok(())) => return Err(CtlError::Io { path: self.path.clone(), source }),
        }
        let reply: Reply = serde_json::from_slice(&line)
            .map_err(|e| CtlError::BadReply { path: self.path.clone(), reason: e.to_string() })?;
        match (reply.ok, reply.error.clone()) {
            (true, _) => Ok(reply),
            (false, Some(error)) => {
                Err(CtlError::Remote { code: error.code, message: error.message })
            }
            (false, None) => Err(CtlError::BadReply {
                path: self.path.clone(),
                reason: "an error reply without an error".into(),
            }),
        }
    }
}

/// The sockets to talk to: `explicit` (from --socket), else $PADDOCK_SOCKET, else every live
/// instance of this user.
pub fn resolve_all(explicit: Option<&Path>) -> Result<Vec<PathBuf>, CtlError> {
    if let Some(path) = explicit {
        return Ok(vec![path.to_owned()]);
    }
    if let Some(path) = std::env::var_os("PADDOCK_SOCKET").filter(|p| !p.is_empty()) {
        return Ok(vec![PathBuf::from(path)]);
    }
    live_instances(&socket_dir())
}

/// The one socket to talk to: as [`resolve_all`], but exactly one instance.
pub fn resolve_one(explicit: Option<&Path>) -> Result<PathBuf, CtlError> {
    let mut all = resolve_all(explicit)?;
    match all.len() {
        0 => Err(CtlError::NoInstance(socket_dir())),
        1 => Ok(all.remove(0)),
        _ => Err(CtlError::SeveralInstances(all)),
    }
}
