//! The control socket: how `paddock ls` and `paddock ctl` talk to a running instance.
//!
//! One Unix socket per instance, in a directory only its user can enter
//! ($XDG_RUNTIME_DIR/paddock, else a 0700 directory in the temp dir named for the user), with
//! mode 0600; the peer's uid is checked on every connection as well. Requests and replies are
//! newline-delimited JSON ([`protocol`]). The server never runs a request itself: it hands each
//! one to the app as a [`Call`] and writes back the reply, so a slow or hostile client can only
//! ever hold its own connection thread, never the multiplexer.

mod listing;
pub mod protocol;

#[cfg(unix)]
pub mod attach;
#[cfg(unix)]
mod client;
#[cfg(unix)]
mod paths;
#[cfg(unix)]
mod peer;
pub mod replicas;
#[cfg(unix)]
mod server;
#[cfg(unix)]
pub mod stdio_relay;
pub mod wire;

#[cfg(unix)]
pub use client::{resolve_all, resolve_one, Client};
#[cfg(unix)]
pub use paths::{instance_socket, live_instances, prepare_socket_dir, socket_dir, socket_dirs};
#[cfg(unix)]
pub use peer::connected_pid;
#[cfg(unix)]
pub use server::{Call, ControlServer, Scope};

pub use listing::format_listing;

use std::path::PathBuf;

use thiserror::Error;

use protocol::ErrorCode;

#[derive(Debug, Error)]
pub enum CtlError {
    #[error("cannot use {path} for control sockets: {reason}")]
    Dir { path: PathBuf, reason: String },
    #[error("the socket path {0} is too long for a Unix socket (at most 100 bytes); choose a shorter one with --socket")]
    PathTooLong(PathBuf),
    #[error("another paddock instance is listening on {0}")]
    InUse(PathBuf),
    #[error("{0} exists and is not a socket; paddock will not replace it")]
    NotASocket(PathBuf),
    #[error(
        "the socket at {path} belongs to uid {uid}, not to you (uid {own}); not talking to it"
    )]
    NotOurs { path: PathBuf, uid: u32, own: u32 },
    #[error("not talking to the socket at {path}: {why}")]
    Impostor { path: PathBuf, why: String },
    #[error("cannot send this request: {0}")]
    Encode(String),
    #[error("cannot listen on {path}: {source}")]
    Bind { path: PathBuf, source: std::io::Error },
    #[error("cannot reach the paddock instance at {path}: {source}")]
    Connect { path: PathBuf, source: std::io::Error },
    #[error("no paddock instance is running (looked in {0})")]
    NoInstance(PathBuf),
    #[error("several paddock instances are running; choose one with --socket:\n{}", list(.0))]
    SeveralInstances(Vec<PathBuf>),
    #[error("lost the connection to {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("the instance at {0} closed the connection without replying")]
    NoReply(PathBuf),
    #[error("the instance at {path} sent a reply this paddock does not understand: {reason}")]
    BadReply { path: PathBuf, reason: String },
    #[error("{message}")]
    Remote { code: ErrorCode, message: String },
    #[error("the control socket is not available on this platform yet")]
    Unsupported,
}

fn list(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n")
}
