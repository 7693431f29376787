//! A policy's paths as the kernel will see them: canonical, existing, and checked against the
//! rules every lock keeps (no writable `/` or home folder unless asked for). Both sides use it:
//! paddock, to tell before starting what a lock will enforce, and the launcher, to enforce it.

use std::path::{Path, PathBuf};

use super::policy::{Policy, PROTECTED_IN_EACH_FOLDER};

/// A policy with every path resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub write: Vec<PathBuf>,
    pub read: Vec<PathBuf>,
    /// Protected paths: made read-only where they are.
    pub protect: Vec<PathBuf>,
    pub unix_sockets: Vec<PathBuf>,
    pub network: bool,
    /// The folders of paddock's control sockets (`Policy::control_folders`), kept out of the
    /// view whatever shows it.
    pub control_folders: Vec<PathBuf>,
    /// The pane's proxy (canonical) and the loopback port that leads to it, with the network
    /// off (`Policy::egress`).
    pub egress: Option<super::policy::EgressRoute>,
    /// The thread's own home (`Policy::home`), canonical, a folder.
    pub home: Option<PathBuf>,
}

/// Why a protected path cannot be kept as it is (the lock is then refused: a protection that
/// does not hold is not a protection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unprotected {
    /// It does not exist, and could be created.
    Missing,
    /// It is a symbolic link, which could be replaced.
    Link,
    /// It is a file with more than one name: another name could change it.
    HardLinks(u64),
}

impl std::fmt::Display for Unprotected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unprotected::Missing => {
                "does not exist, so nothing could stop its creation (create it, or leave it out)"
            }
            Unprotected::Link => {
                "is a symbolic link, so nothing could stop its replacement (protect its target)"
            }
            Unprotected::HardLinks(n) => {
                return write!(
                    f,
                    "has {n} hard links, so a second name could change it (copy it to a \
                     file of its own)"
                );
            }
        })
    }
}

/// Why a policy cannot be enforced as written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("the lock folder {0} does not exist")]
    Missing(PathBuf),
    #[error("the lock folder {0} is not a folder")]
    NotAFolder(PathBuf),
    #[error(
        "{0} as a writable lock folder would leave nothing locked (say so explicitly to allow it)"
    )]
    Broad(PathBuf),
    /// A writable folder that holds the home folder: the agent could rewrite the user's shell
    /// startup files, ~/.ssh and ~/.gitconfig, which run outside the lock.
    #[error(
        "the writable lock folder {folder} holds your home folder (HOME is {home}), so a locked \
         program could change your shell startup files, ~/.ssh and ~/.gitconfig; give folders \
         inside it instead (your project folders), or set allow_broad_write: true to allow it"
    )]
    HoldsHome { folder: PathBuf, home: PathBuf },
    #[error("a lock path must be absolute: {0}")]
    Relative(PathBuf),
    #[error(
        "{path} leads to {now} now: a symbolic link was put in its way since the configuration \
         was read, and a lock does not follow it (if the change is yours, save the \
         configuration again)"
    )]
    Redirected { path: PathBuf, now: PathBuf },
    #[error(
        "{0} is a paddock control socket, through which any process could open an unlocked \
         pane: a lock never lets one through (a locked pane talks to its own endpoint)"
    )]
    ControlSocketListed(PathBuf),
    #[error(
        "{0} is paddock's control folder, or lies in it: a locked program could put a socket \
         there and pose as paddock to your windows; a lock never shows it"
    )]
    ControlFolderListed(PathBuf),
    #[error(
        "{path} is the session's folder of sockets {folder}, or lies in it: a locked program \
         could put a socket of its own in place of the session bus's or the keyring's, which \
         your desktop's programs would then talk to; a lock never shows it (a lock folder \
         holding it is shown with it covered)"
    )]
    SessionFolderListed { path: PathBuf, folder: PathBuf },
    #[error("the socket {0} the lock lets through does not exist")]
    MissingSocket(PathBuf),
    #[error(
        "{0} is not a unix socket: `sockets` names sockets one by one (a folder would let \
         every socket in it through)"
    )]
    NotASocket(PathBuf),
    #[error("the protected path {0} {1}")]
    Unprotectable(PathBuf, Unprotected),
    #[error(
        "paddock's control socket {socket} lies inside the lock folder {folder}, where a locked \
         program could open unlocked panes through it; let paddock listen elsewhere (--listen)"
    )]
    ControlSocketInside { socket: PathBuf, folder: PathBuf },
}

/// Resolve `policy`'s paths; `home` is the user's home folder.
pub fn resolve(policy: &Policy, home: Option<&Path>) -> Result<Resolved, ResolveError> {
    let write = writable_folders(policy, home)?;
    // Read-only entries may be files (~/.gitconfig) as well as folders.
    let read = policy
        .read
        .iter()
        .map(|path| {
            if !path.is_absolute() {
                return Err(ResolveError::Relative(path.clone()));
            }
            unmoved(path)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The folder of paddock's sockets, or a folder in it: a lock could put a socket of its own
    // there and pose as the server to the user's windows and `paddock ctl`.
    for control in &policy.control_folders {
        let control = control.canonicalize().unwrap_or_else(|_| control.to_owned());
        if let Some(path) = write.iter().chain(&read).find(|path| path.starts_with(&control)) {
            return Err(ResolveError::ControlFolderListed(path.clone()));
        }
    }
    for folder in &policy.session_folders {
        let folder = folder.canonicalize().unwrap_or_else(|_| folder.to_owned());
        if let Some(path) = write.iter().chain(&read).find(|path| path.starts_with(&folder)) {
            return Err(ResolveError::SessionFolderListed { path: path.clone(), folder });
        }
    }
    for socket in &policy.control_sockets {
        let place = socket.canonicalize().unwrap_or_else(|_| where_it_lies(socket));
        if let Some(folder) = write.iter().chain(&read).find(|f| place.starts_with(f)) {
            let (socket, folder) = (socket.clone(), folder.clone());
            return Err(ResolveError::ControlSocketInside { socket, folder });
        }
    }
    let mut protect = listed_protections(policy, &write)?;
    protect.extend(added_protections(policy, &write)?);
    // A protected file with a second name could be changed through that name.
    for path in &protect {
        if let Ok(meta) = path.symlink_metadata() {
            if meta.is_file() && links(&meta) > 1 {
                return Err(ResolveError::Unprotectable(
                    path.clone(),
                    Unprotected::HardLinks(links(&meta)),
                ));
            }
        }
    }
    let unix_sockets = policy
        .unix_sockets
        .iter()
        .map(|path| listed_socket(policy, path))
        .collect::<Result<Vec<_>, _>>()?;
    let control_folders = policy.control_folders.clone();
    let egress = match policy.egress.as_ref().filter(|_| !policy.network) {
        Some(route) => {
            Some(super::policy::EgressRoute { socket: own_socket(&route.socket)?, ..route.clone() })
        }
        None => None,
    };
    let network = policy.network;
    let home = policy.home.as_deref().map(|own| own_home(own, home)).transpose()?;
    Ok(Resolved { write, read, protect, unix_sockets, network, control_folders, egress, home })
}

/// The writable folders, canonical; `/`, the home folder or a folder holding it refused
/// unless the policy allows a broad lock.
fn writable_folders(policy: &Policy, home: Option<&Path>) -> Result<Vec<PathBuf>, ResolveError> {
    let folder = |path: &PathBuf| -> Result<PathBuf, ResolveError> {
        if !path.is_absolute() {
            return Err(ResolveError::Relative(path.clone()));
        }
        let canonical = unmoved(path)?;
        if !canonical.is_dir() {
            return Err(ResolveError::NotAFolder(path.clone()));
        }
        Ok(canonical)
    };
    let write = policy.write.iter().map(folder).collect::<Result<Vec<_>, _>>()?;
    let home = home.and_then(|h| h.canonicalize().ok());
    if !policy.allow_broad_write {
        if let Some(root) = write.iter().find(|w| w.parent().is_none()) {
            return Err(ResolveError::Broad(root.clone()));
        }
        // The home folder, or a folder holding it (`/home`, or a data folder HOME lies in).
        if let Some(home) = &home {
            if let Some(folder) = write.iter().find(|w| home.starts_with(w)) {
                let (folder, home) = (folder.clone(), home.clone());
                return Err(ResolveError::HoldsHome { folder, home });
            }
        }
    }
    Ok(write)
}

/// The policy's protected paths, canonical. One that is a link or missing is refused where it
/// lies in a writable folder (git's files only in a repository: a folder without one has no
/// hooks to plant); elsewhere nothing could change it, and it is left out.
fn listed_protections(policy: &Policy, write: &[PathBuf]) -> Result<Vec<PathBuf>, ResolveError> {
    let mut protect = Vec::new();
    for path in &policy.protect {
        if !path.is_absolute() {
            return Err(ResolveError::Relative(path.clone()));
        }
        let is_link = path.symlink_metadata().map(|m| m.file_type().is_symlink()).unwrap_or(false);
        match path.canonicalize() {
            Ok(canonical) if !is_link => protect.push(canonical),
            _ => {
                let inside = write.iter().chain(&policy.write).any(|w| path.starts_with(w));
                let git_file = PROTECTED_IN_EACH_FOLDER.iter().any(|p| path.ends_with(p));
                let no_repository = path.parent().is_some_and(|git| !git.is_dir());
                if inside && !(git_file && no_repository) {
                    let why = if is_link { Unprotected::Link } else { Unprotected::Missing };
                    return Err(ResolveError::Unprotectable(path.clone(), why));
                }
            }
        }
    }
    Ok(protect)
}

/// What every lock protects besides the listed paths: paddock's own files inside a writable
/// folder, a `.git` file naming a repository elsewhere, and the git files of repositories
/// nested in a writable folder.
fn added_protections(policy: &Policy, write: &[PathBuf]) -> Result<Vec<PathBuf>, ResolveError> {
    let mut protect = Vec::new();
    // paddock's own files, wherever a writable folder holds them however it was named.
    let writable = |path: &Path| write.iter().any(|w| path.starts_with(w));
    for path in &policy.guarded {
        if let Some(canonical) = guard(path, &writable)? {
            protect.push(canonical);
        }
    }
    // A worktree's or submodule's `.git` is a file naming the repository elsewhere: repointing
    // it would hand git a repository of the agent's making, hooks and all. It stays as it is.
    for folder in write {
        let git = folder.join(".git");
        if git.symlink_metadata().is_ok_and(|m| m.file_type().is_file()) {
            protect.push(git);
        }
    }
    // Repositories nested in a writable folder, and a writable folder that is a git folder.
    for folder in write {
        for path in super::git::nested_protections(folder) {
            match path.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(ResolveError::Unprotectable(path, Unprotected::Link))
                }
                Ok(_) => protect.push(path),
                Err(_) => return Err(ResolveError::Unprotectable(path, Unprotected::Missing)),
            }
        }
    }
    Ok(protect)
}

/// The thread's own home, canonical: it must be there, a folder, and not the home folder or a
/// folder holding it (what it stands in for).
fn own_home(own: &Path, home: Option<&Path>) -> Result<PathBuf, ResolveError> {
    let real = unmoved(own)?;
    if !real.is_dir() {
        return Err(ResolveError::NotAFolder(real));
    }
    let home = home.and_then(|h| h.canonicalize().ok());
    if let Some(home) = home.filter(|home| home.starts_with(&real)) {
        return Err(ResolveError::HoldsHome { folder: real, home });
    }
    Ok(real)
}

/// One of the pane's own sockets (its proxy), canonical: it must be there, and a socket.
fn own_socket(path: &Path) -> Result<PathBuf, ResolveError> {
    let real = match unmoved(path) {
        Err(ResolveError::Missing(path)) => return Err(ResolveError::MissingSocket(path)),
        other => other?,
    };
    match std::fs::metadata(&real) {
        Ok(meta) if is_socket(&meta) => Ok(real),
        _ => Err(ResolveError::NotASocket(path.to_owned())),
    }
}

/// A socket the lock lets through, canonical: refused when it is missing, not a socket, or
/// one of paddock's control sockets (by path, by its folder, or by a second hard link), the
/// pane's own endpoint excepted.
fn listed_socket(policy: &Policy, path: &Path) -> Result<PathBuf, ResolveError> {
    let real = match unmoved(path) {
        Err(ResolveError::Missing(path)) => return Err(ResolveError::MissingSocket(path)),
        other => other?,
    };
    let canonical = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    // Anything in the control folder (instances' sockets, other panes' endpoints) but the
    // pane's own endpoint.
    let own = policy.own_endpoint.as_ref().is_some_and(|own| canonical(own) == real);
    let in_control_folder =
        !own && policy.control_folders.iter().any(|folder| real.starts_with(canonical(folder)));
    // By name, and by the file itself (a second hard link names it too).
    let control = in_control_folder
        || policy.control_sockets.iter().any(|c| canonical(c) == real)
        || (!own && same_file_as_any(&real, &control_sockets_of(policy)));
    if control {
        return Err(ResolveError::ControlSocketListed(path.to_owned()));
    }
    match std::fs::metadata(&real) {
        Ok(meta) if is_socket(&meta) => Ok(real),
        _ => Err(ResolveError::NotASocket(path.to_owned())),
    }
}

/// What protects one of paddock's own paths: its canonical form when a writable folder holds
/// it (`None` when none does). Refused when it could still be changed: a symbolic link on the
/// way to it that lies in a writable folder (the agent could point it elsewhere, and paddock
/// would follow), a missing path there (the agent could create it), a file with a second name.
fn guard(path: &Path, writable: &dyn Fn(&Path) -> bool) -> Result<Option<PathBuf>, ResolveError> {
    let refused = |why| Err(ResolveError::Unprotectable(path.to_owned(), why));
    for step in path.ancestors() {
        let is_link = step.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink());
        if is_link && writable(&where_it_lies(step)) {
            return refused(Unprotected::Link);
        }
    }
    let canonical = path.canonicalize().unwrap_or_else(|_| where_it_lies(path));
    if !writable(&canonical) {
        return Ok(None);
    }
    match canonical.symlink_metadata() {
        Err(_) => refused(Unprotected::Missing),
        Ok(meta) if meta.is_file() && links(&meta) > 1 => {
            refused(Unprotected::HardLinks(links(&meta)))
        }
        Ok(_) => Ok(Some(canonical)),
    }
}

/// How many names a file has.
#[cfg(unix)]
fn links(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_meta: &std::fs::Metadata) -> u64 {
    1
}

/// Where `path` itself lies, every link before its last part resolved: the longest part that
/// exists in canonical form, then the rest as written (the link itself, or where a missing
/// file would be created).
fn where_it_lies(path: &Path) -> PathBuf {
    let Some(name) = path.file_name() else { return path.to_owned() };
    let mut rest = vec![name];
    let mut folder = path.parent();
    while let Some(dir) = folder {
        if let Ok(canonical) = dir.canonicalize() {
            return rest.iter().rev().fold(canonical, |at, part| at.join(part));
        }
        rest.extend(dir.file_name());
        folder = dir.parent();
    }
    path.to_owned()
}

/// `path` as it is now, which must be as the configuration read it: canonical. A path that
/// resolves elsewhere now had a symbolic link put in it since (another pane replacing a lock
/// folder with a link to ~/.ssh), and would widen the lock.
fn unmoved(path: &Path) -> Result<PathBuf, ResolveError> {
    let canonical = path.canonicalize().map_err(|_| ResolveError::Missing(path.to_owned()))?;
    if canonical != path {
        return Err(ResolveError::Redirected { path: path.to_owned(), now: canonical });
    }
    Ok(canonical)
}

/// Every control socket the policy knows of: the ones in use elsewhere, and the instances'
/// sockets in the control folder.
fn control_sockets_of(policy: &Policy) -> Vec<PathBuf> {
    let mut found = policy.control_sockets.clone();
    // The folder and its `panes` (the panes' endpoints).
    let folders = policy.control_folders.iter().flat_map(|f| [f.clone(), f.join("panes")]);
    for folder in folders {
        found.extend(std::fs::read_dir(folder).into_iter().flatten().flatten().map(|e| e.path()));
    }
    found
}

/// Whether `path` is the same file as one of `others` (a second name, a hard link, included).
#[cfg(unix)]
fn same_file_as_any(path: &Path, others: &[PathBuf]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else { return false };
    others
        .iter()
        .filter_map(|o| std::fs::metadata(o).ok())
        .any(|o| o.dev() == meta.dev() && o.ino() == meta.ino())
}

#[cfg(not(unix))]
fn same_file_as_any(_path: &Path, _others: &[PathBuf]) -> bool {
    false
}

#[cfg(unix)]
fn is_socket(meta: &std::fs::Metadata) -> bool {
    std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type())
}

#[cfg(not(unix))]
fn is_socket(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("paddock-resolve-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("app/.git/hooks")).expect("scratch");
        std::fs::write(dir.join("app/.git/config"), "[core]\n").expect("scratch");
        dir
    }

    #[test]
    fn folders_are_as_read_and_protections_that_cannot_hold_refuse_the_lock() {
        let dir = scratch("paths");
        let app = dir.join("app");
        // Not in its canonical form (as a configuration is read): it may have been redirected.
        let moved = Policy { write: vec![dir.join("app/../app")], ..Policy::default() };
        assert!(matches!(resolve(&moved, None), Err(ResolveError::Redirected { .. })));
        let mut policy = Policy {
            write: vec![app.canonicalize().expect("canonical")],
            // Outside every writable folder, a protection is not needed: ignored.
            protect: vec![app.join(".git/hooks"), dir.join("elsewhere")],
            ..Policy::default()
        };
        let resolved = resolve(&policy, None).expect("resolves");
        let app = app.canonicalize().expect("canonical");
        assert_eq!(resolved.write, vec![app.clone()]);
        assert_eq!(resolved.protect, vec![app.join(".git/hooks")]);
        policy.protect.push(app.join(".env"));
        let refused = Err(ResolveError::Unprotectable(app.join(".env"), Unprotected::Missing));
        assert_eq!(resolve(&policy, None), refused);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_control_folder_and_what_is_in_it_are_never_lock_folders() {
        let dir = scratch("control").canonicalize().expect("canonical");
        let control = dir.join("app");
        let policy = |write: Vec<PathBuf>, read: Vec<PathBuf>| Policy {
            write,
            read,
            control_folders: vec![dir.join("other"), control.clone()],
            ..Policy::default()
        };
        let inside = control.join(".git");
        for refused in [policy(vec![control.clone()], vec![]), policy(vec![], vec![inside.clone()])]
        {
            let listed = refused.write.first().or(refused.read.first()).cloned();
            assert_eq!(
                resolve(&refused, None).err(),
                listed.map(ResolveError::ControlFolderListed)
            );
        }
        // A folder holding it is a lock folder; the view covers the control folder.
        assert!(resolve(&policy(vec![dir.clone()], vec![]), None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_session_folders_and_what_is_in_them_are_never_lock_folders() {
        let dir = scratch("session").canonicalize().expect("canonical");
        let runtime = dir.join("run");
        std::fs::create_dir_all(runtime.join("app")).expect("runtime folder");
        let policy = |write: Vec<PathBuf>| Policy {
            write,
            session_folders: vec![runtime.clone()],
            ..Policy::default()
        };
        for refused in [runtime.clone(), runtime.join("app")] {
            assert_eq!(
                resolve(&policy(vec![refused.clone()]), None).err(),
                Some(ResolveError::SessionFolderListed { path: refused, folder: runtime.clone() })
            );
        }
        // A folder holding it is a lock folder; the view covers the runtime folder.
        assert!(resolve(&policy(vec![dir.clone()]), None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_git_file_is_protected_where_a_git_folder_is_not() {
        let dir = scratch("gitfile");
        let worktree = dir.join("worktree");
        std::fs::create_dir_all(&worktree).expect("worktree");
        std::fs::write(worktree.join(".git"), "gitdir: /elsewhere\n").expect(".git file");
        let policy = Policy { write: vec![worktree.clone(), dir.join("app")], ..Policy::default() };
        let resolved = resolve(&policy, None).expect("resolves");
        let worktree = worktree.canonicalize().expect("canonical");
        assert_eq!(resolved.protect, vec![worktree.join(".git")], "not app/.git, a folder");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paddocks_own_files_are_protected_inside_a_folder_named_through_a_link() {
        let dir = scratch("guarded");
        let app = dir.join("app");
        std::fs::write(app.join("paddock.ron"), "()").expect("config");
        let alias = dir.join("alias");
        std::os::unix::fs::symlink(&app, &alias).expect("link");
        let outside = dir.join("outside.ron");
        std::fs::write(&outside, "()").expect("outside");
        // A lock folder that became a link since the configuration was read is refused.
        let swapped = Policy { write: vec![alias.clone()], ..Policy::default() };
        assert!(matches!(resolve(&swapped, None), Err(ResolveError::Redirected { .. })));
        let policy = Policy {
            write: vec![app.canonicalize().expect("canonical")],
            guarded: vec![alias.join("paddock.ron"), outside.clone()],
            ..Policy::default()
        };
        let resolved = resolve(&policy, None).expect("resolves");
        let inside = app.join("paddock.ron").canonicalize().expect("canonical");
        assert_eq!(resolved.protect, vec![inside], "only the one inside, found through the link");
        // One that does not exist inside could be created by the agent: refused.
        let missing = Policy { guarded: vec![alias.join("new.ron")], ..policy.clone() };
        assert!(matches!(
            resolve(&missing, None),
            Err(ResolveError::Unprotectable(_, Unprotected::Missing))
        ));
        // A link inside could be repointed: refused. One outside pointing in protects its target.
        std::os::unix::fs::symlink(&outside, app.join("linked.ron")).expect("link");
        let linked = Policy { guarded: vec![alias.join("linked.ron")], ..policy.clone() };
        assert!(matches!(
            resolve(&linked, None),
            Err(ResolveError::Unprotectable(_, Unprotected::Link))
        ));
        let pointer = dir.join("pointer.ron");
        std::os::unix::fs::symlink(app.join("paddock.ron"), &pointer).expect("link");
        let pointed = Policy { guarded: vec![pointer], ..policy.clone() };
        assert_eq!(resolve(&pointed, None).expect("resolves").protect.len(), 1);
        // A link on the way, inside the writable folder: `cfg` could be swapped for a folder of
        // the agent's making, whatever its target is now.
        std::fs::create_dir_all(dir.join("elsewhere")).expect("elsewhere");
        std::fs::write(dir.join("elsewhere/config.ron"), "()").expect("config");
        std::os::unix::fs::symlink(dir.join("elsewhere"), app.join("cfg")).expect("link");
        let through = Policy { guarded: vec![alias.join("cfg/config.ron")], ..policy.clone() };
        assert!(matches!(
            resolve(&through, None),
            Err(ResolveError::Unprotectable(_, Unprotected::Link))
        ));
        // Missing deeper than its last part, through the alias: still found inside, refused.
        let deep = Policy { guarded: vec![alias.join("a/b/c.ron")], ..policy.clone() };
        assert!(matches!(
            resolve(&deep, None),
            Err(ResolveError::Unprotectable(_, Unprotected::Missing))
        ));
        // A second name for the file (cargo's target/release/paddock and deps/paddock-…).
        std::fs::hard_link(app.join("paddock.ron"), app.join("second.ron")).expect("hard link");
        assert!(matches!(
            resolve(&policy, None),
            Err(ResolveError::Unprotectable(_, Unprotected::HardLinks(2)))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_lock_that_would_show_a_control_socket_is_refused() {
        let dir = scratch("socket");
        let socket = dir.join("app/paddock.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
        let shown = Policy {
            read: vec![dir.join("app")],
            control_sockets: vec![socket.clone()],
            ..Policy::default()
        };
        let refused = resolve(&shown, None).map(|_| ()).unwrap_err();
        assert!(matches!(refused, ResolveError::ControlSocketInside { .. }), "{refused:?}");
        assert!(refused.to_string().contains("--listen"), "{refused}");
        let elsewhere = Policy { read: vec![dir.join("app/.git")], ..shown };
        assert!(resolve(&elsewhere, None).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_folders_and_broad_writes_are_refused() {
        let dir = scratch("refuse");
        let missing = Policy { write: vec![dir.join("nope")], ..Policy::default() };
        assert_eq!(resolve(&missing, None), Err(ResolveError::Missing(dir.join("nope"))));
        let root = Policy { write: vec!["/".into()], ..Policy::default() };
        assert_eq!(resolve(&root, None), Err(ResolveError::Broad("/".into())));
        let home = Policy { write: vec![dir.clone()], ..Policy::default() };
        assert!(matches!(resolve(&home, Some(&dir)), Err(ResolveError::HoldsHome { .. })));
        std::fs::create_dir_all(dir.join("me")).expect("a home inside the folder");
        let refused = resolve(&home, Some(&dir.join("me")));
        assert!(matches!(refused, Err(ResolveError::HoldsHome { .. })), "{refused:?}");
        let message = refused.map(|_| ()).unwrap_err().to_string();
        assert!(message.contains("HOME is") && message.contains("allow_broad_write"), "{message}");
        let allowed = Policy { allow_broad_write: true, ..home };
        assert!(resolve(&allowed, Some(&dir)).is_ok());
        let relative = Policy { read: vec!["usr".into()], ..Policy::default() };
        assert_eq!(resolve(&relative, None), Err(ResolveError::Relative("usr".into())));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
