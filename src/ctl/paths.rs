//! Where control sockets live, and which of them belong to live instances.
//!
//! The directory must be the user's own and closed to everyone else: a socket in a directory
//! another user controls could be swapped for theirs, and what a client sends (keys typed into
//! panes) would go to them. Both the server and the client check this.

use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::CtlError;

/// Unix socket paths are limited (108 bytes on Linux, 104 on macOS); leave room for the NUL.
const MAX_SOCKET_PATH: usize = 100;

/// The directory for this user's control sockets: $XDG_RUNTIME_DIR/paddock, or
/// `<temp dir>/paddock-<uid>` when there is no runtime directory.
/// A runtime directory that is not the user's own (`sudo -E` keeps the invoking user's) is
/// not used, so that root never creates a directory there that the user cannot use later.
pub fn socket_dir() -> PathBuf {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from);
    let ours = |dir: &Path| std::fs::metadata(dir).is_ok_and(|m| m.uid() == own_uid());
    match runtime {
        Some(runtime) if runtime.is_absolute() && ours(&runtime) => runtime.join("paddock"),
        _ => std::env::temp_dir().join(format!("paddock-{}", own_uid())),
    }
}

/// Every folder `socket_dir` could give for this user, the one it gives now first: the
/// runtime folder's and the temp folder's as this environment names them, and as a launcher
/// with neither `XDG_RUNTIME_DIR` nor `TMPDIR` would (`/run/user/<uid>`, `/tmp`).
pub fn socket_dirs() -> Vec<PathBuf> {
    let uid = own_uid();
    let runtime =
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|p| p.is_absolute());
    let others = [
        Some(std::env::temp_dir().join(format!("paddock-{uid}"))),
        runtime.map(|runtime| runtime.join("paddock")),
        Some(PathBuf::from(format!("/tmp/paddock-{uid}"))),
        Some(PathBuf::from(format!("/run/user/{uid}/paddock"))),
    ];
    let mut dirs = vec![socket_dir()];
    for other in others.into_iter().flatten() {
        if !dirs.contains(&other) {
            dirs.push(other);
        }
    }
    dirs
}

/// The socket of the instance with process id `pid`.
pub fn instance_socket(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.sock"))
}

pub(super) fn own_uid() -> u32 {
    // SAFETY: getuid cannot fail and touches no memory.
    unsafe { libc::getuid() }
}

/// Create the socket directory if needed (mode 0700) and check that it is private.
pub fn prepare_socket_dir(dir: &Path) -> Result<(), CtlError> {
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(CtlError::Dir { path: dir.to_owned(), reason: e.to_string() }),
    }
    check_private(dir)
}

/// A directory is private when it is a real directory (not a link), owned by this user, and
/// closed to group and others.
pub(super) fn check_private(dir: &Path) -> Result<(), CtlError> {
    let refuse = |reason: String| Err(CtlError::Dir { path: dir.to_owned(), reason });
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) => return refuse(e.to_string()),
    };
    if !meta.is_dir() {
        return refuse("it is not a directory".into());
    }
    if meta.uid() != own_uid() {
        return refuse(format!("it belongs to uid {}, not to you (uid {})", meta.uid(), own_uid()));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        let mode = meta.permissions().mode() & 0o777;
        return refuse(format!("other users can enter it (mode {mode:o}); run chmod 700 on it"));
    }
    Ok(())
}

pub(super) fn check_length(path: &Path) -> Result<(), CtlError> {
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(CtlError::PathTooLong(path.to_owned()));
    }
    Ok(())
}

/// Whether something answers on `path`. A socket nobody listens on is a dead instance's.
pub(super) fn probe(path: &Path) -> Liveness {
    match UnixStream::connect(path) {
        Ok(_) => Liveness::Live,
        Err(e) if matches!(e.kind(), ErrorKind::ConnectionRefused | ErrorKind::NotFound) => {
            Liveness::Stale
        }
        Err(_) => Liveness::Unknown,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Liveness {
    Live,
    Stale,
    /// Could not tell (permissions…): leave it alone.
    Unknown,
}

/// The sockets in `dir` that live instances listen on, sorted. Sockets of dead instances are
/// removed on the way. A missing directory means no instances.
pub fn live_instances(dir: &Path) -> Result<Vec<PathBuf>, CtlError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(CtlError::Dir { path: dir.to_owned(), reason: e.to_string() }),
    };
    check_private(dir)?;
    let mut live = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "sock") {
            continue;
        }
        match probe(&path) {
            Liveness::Live => live.push(path),
            Liveness::Stale => {
                let _ = std::fs::remove_file(&path);
                // Its attach socket died with it.
                let _ = std::fs::remove_file(super::attach::attach_socket(&path));
            }
            Liveness::Unknown => {}
        }
    }
    live.sort();
    Ok(live)
}
