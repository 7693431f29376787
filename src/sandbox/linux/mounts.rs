//! The filesystem a locked command sees, built from nothing: a fresh root (tmpfs) holding only
//! the system's folders, the lock's folders at their own paths, the devices a program needs, a
//! /tmp of its own, the thread's own home folder (or an empty one) where the home folder is, and
//! an empty working folder where none is shown; everything else of the host (other home
//! folders, other threads' homes, /run and its sockets, paddock's control socket, other users'
//! files, other processes in /proc) is not there at all. Then every mount is read-only, nosuid
//! and nodev, except the lock's writable folders, the thread's home and the pane's temporary
//! folders; protected paths are read-only mounts of their own inside them. Landlock enforces
//! the same rules again, by path.
//!
//! Mount points are made and mounted on without following symbolic links: the thread's home
//! and the writable folders are the lock's to change between runs, and a link planted there
//! must not move a mount (a protection) elsewhere.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::sandbox::resolve::Resolved;

/// Folders every program needs to read and run from, shown where they are.
pub const SYSTEM: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"];
/// Devices a program may open besides its terminal.
pub const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// Where the lock's own pseudo-terminals are (a devpts instance of its own, at most 256
/// terminals, which `/dev/ptmx` points into): programs that run others in a terminal (an
/// agent's shell tool, tmux, script) make theirs here, and reach no terminal of the host's
/// (`/dev/pts` holds the pane's own terminal alone).
pub const OWN_PTYS: &str = "/dev/.paddock-pts";

/// Why a fresh /proc may be refused: the kernel lets a namespace mount one only where the
/// host's /proc is not partly hidden.
pub const PROC_HINT: &str = "a container that masks parts of /proc refuses it";

/// Where the new root is assembled before it becomes `/` (any mount point will do: what was
/// there is reached through descriptors opened beforehand).
const STAGE: &str = "/tmp";
const OLD_ROOT: &str = ".paddock-old-root";

/// How a host path appears in the view.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    System,
    Info,
    Device,
    Read,
    Write,
    Protect,
    /// The thread's own home, shown where the home folder is.
    Home,
}

/// A host path a view shows, copied (a detached copy of its mount tree, opened without
/// following links) before anything is mounted, and where it is shown: where it is, but for
/// the thread's home. Copied first, because the stage is mounted on a host path (/tmp) a lock
/// folder may hold: a copy made later would carry the stage, the view's own system folders
/// before they are read-only, within the lock folder.
struct Source {
    at: PathBuf,
    tree: std::os::fd::OwnedFd,
    is_dir: bool,
    role: Role,
}

/// What a view shows, and the system's links (merged /usr: /bin -> usr/bin) to make again.
struct Sources {
    opened: Vec<Source>,
    links: Vec<(PathBuf, PathBuf)>,
}

/// The pane's own temporary folders, writable, nosuid and nodev.
const FRESH: [&str; 2] = ["/tmp", "/dev/shm"];

/// Build the view and move into it. Returns the pane's temporary folder.
pub fn build(
    resolved: &Resolved,
    home: Option<&Path>,
    cwd: Option<&Path>,
    tty: Option<&Path>,
    exe: Option<&Path>,
) -> Result<PathBuf, String> {
    // Asked before the stage hides the host's /tmp.
    let hidden = hidden_folders(resolved);
    mount(None, Path::new("/"), None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    let sources = open_sources(resolved, home, tty, exe, &hidden)?;
    let stage = Path::new(STAGE);
    assemble(stage, &sources, resolved.home.as_deref())?;
    hide(stage, &hidden, resolved)?;
    for (link, target) in [
        ("/dev/fd", "/proc/self/fd"),
        ("/dev/stdin", "/proc/self/fd/0"),
        ("/dev/stdout", "/proc/self/fd/1"),
        ("/dev/stderr", "/proc/self/fd/2"),
        ("/dev/ptmx", ".paddock-pts/ptmx"),
    ] {
        let _ = std::os::unix::fs::symlink(target, inside(stage, Path::new(link)));
    }
    // Empty home and working folders stand in for the real ones (where the thread has no home
    // of its own, and no lock folder shows the working folder).
    for path in home.into_iter().chain(cwd) {
        let _ = mount_point(stage, path, true);
    }
    // Everything shown read-only (read folders, listed sockets, paddock itself), to make
    // read-only again where a writable mount above it (the pane's /tmp, the home) made it
    // writable.
    let read_only: Vec<PathBuf> = sources
        .opened
        .iter()
        .filter(|source| source.role == Role::Read)
        .map(|source| source.at.clone())
        .collect();
    drop(sources);
    enter(stage)?;
    let home = home.filter(|_| resolved.home.is_some());
    set_access(resolved, home, tty, &read_only)?;
    let root = Path::new("/");
    let start = cwd.filter(|c| c.is_dir()).or(home).unwrap_or(root);
    std::env::set_current_dir(start)
        .map_err(|e| format!("cannot enter {}: {e}", start.display()))?;
    Ok(PathBuf::from("/tmp"))
}

/// Where a host path lies on the stage.
fn inside(stage: &Path, path: &Path) -> PathBuf {
    stage.join(path.strip_prefix("/").unwrap_or(path))
}

/// What no view shows even where a lock folder holds it: paddock's control sockets, the
/// threads' homes (another thread's logins), the X server's sockets (a window's keystrokes and
/// screen), and the session's runtime folder (Wayland, D-Bus, the keyring, the ssh agent)
/// wherever $XDG_RUNTIME_DIR puts it.
pub fn hidden_folders(resolved: &Resolved) -> Vec<PathBuf> {
    crate::sandbox::policy::session_folders()
        .into_iter()
        .chain(resolved.control_folders.iter().cloned())
        .chain(resolved.home.as_deref().and_then(Path::parent).map(Path::to_owned))
        .collect()
}

/// Open every host path the view shows, outer folders before the ones inside them and
/// protections last (the order they are mounted in).
fn open_sources(
    resolved: &Resolved,
    home: Option<&Path>,
    tty: Option<&Path>,
    exe: Option<&Path>,
    hidden: &[PathBuf],
) -> Result<Sources, String> {
    let mut sources: Vec<Source> = Vec::new();
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    for path in SYSTEM.iter().map(Path::new) {
        match std::fs::read_link(path) {
            // Merged /usr: /bin -> usr/bin stays a link.
            Ok(target) => links.push((path.to_owned(), target)),
            Err(_) => open_source(&mut sources, path, Role::System)?,
        }
    }
    if let Some(dns) = dns_folder(resolved.network) {
        open_source(&mut sources, &dns, Role::System)?;
    }
    open_source(&mut sources, Path::new("/sys"), Role::Info)?;
    // The pane's terminal alone, at its own path: not the host's /dev/pts, whose other
    // terminals a lock could not open (Landlock) but could watch (inotify: the timing of every
    // key typed into them) and list.
    for path in DEVICES.iter().map(Path::new).chain(tty) {
        open_source(&mut sources, path, Role::Device)?;
    }
    if let Some((own, home)) = resolved.home.as_ref().zip(home) {
        open_source(&mut sources, own, Role::Home)?;
        if let Some(source) = sources.last_mut() {
            source.at = home.to_owned();
        }
    }
    for path in &resolved.read {
        open_source(&mut sources, path, Role::Read)?;
    }
    for path in &resolved.write {
        open_source(&mut sources, path, Role::Write)?;
    }
    // Every folder between a writable folder and a protected path, or a hidden folder that
    // is there to cover, is a mount point of its own, so it cannot be renamed away with the
    // protection or the cover inside (`mv .git .git2; mkdir .git`; `mv share share2`, and the
    // threads' homes under it are no longer covered, nor the session bus's folder).
    let shown_between = |path: &Path, sources: &mut Vec<Source>| -> Result<(), String> {
        for folder in resolved.write.iter().filter(|w| path.starts_with(w)) {
            let between = path.ancestors().skip(1).take_while(|a| *a != folder.as_path());
            for ancestor in between {
                open_source(sources, ancestor, Role::Write)?;
            }
        }
        Ok(())
    };
    for path in hidden.iter().filter(|h| h.is_dir()) {
        shown_between(path, &mut sources)?;
    }
    for path in &resolved.protect {
        shown_between(path, &mut sources)?;
        open_source(&mut sources, path, Role::Protect)?;
    }
    // paddock itself, read-only, so that `paddock ctl notify` runs inside (a writable folder
    // holding it protects it: it is never writable).
    let in_view = |p: &Path| {
        let system = SYSTEM.iter().map(Path::new);
        system
            .chain(resolved.write.iter().chain(&resolved.read).map(PathBuf::as_path))
            .any(|f| p.starts_with(f))
    };
    if let Some(exe) = exe.filter(|exe| !in_view(exe)) {
        open_source(&mut sources, exe, Role::Read)?;
    }
    // Sockets the lock lets through are shown where they are (inside a shown folder they are
    // there already); the socket gate connects them (`sockets.rs`).
    let shown = |p: &Path| resolved.write.iter().chain(&resolved.read).any(|f| p.starts_with(f));
    for path in resolved.unix_sockets.iter().filter(|p| !shown(p)) {
        open_source(&mut sources, path, Role::Read)?;
    }
    // Outer folders before the ones inside them; protections last, on top.
    sources.sort_by_key(|source| (source.role == Role::Protect, source.at.components().count()));
    Ok(Sources { opened: sources, links })
}

/// Assemble the new root on `stage`: a tmpfs with the system's links, a /dev of its own, the
/// pane's temporary folders, every source mounted at its own path, and a /proc of the lock's
/// PID namespace.
fn assemble(stage: &Path, sources: &Sources, own_home: Option<&Path>) -> Result<(), String> {
    mount(Some(Path::new("tmpfs")), stage, Some("tmpfs"), 0, Some("mode=0755"))?;
    for (path, target) in &sources.links {
        std::os::unix::fs::symlink(target, inside(stage, path))
            .map_err(|e| format!("cannot link {}: {e}", path.display()))?;
    }
    let dev = inside(stage, Path::new("/dev"));
    std::fs::create_dir_all(&dev).map_err(|e| format!("cannot make /dev: {e}"))?;
    mount(Some(Path::new("tmpfs")), &dev, Some("tmpfs"), 0, Some("mode=0755"))?;
    // The pane's own temporary folders, first: lock folders in the host's /tmp are shown
    // inside the pane's.
    for path in FRESH {
        let target = inside(stage, Path::new(path));
        std::fs::create_dir_all(&target).map_err(|e| format!("cannot make {path}: {e}"))?;
        let flags = libc::MS_NOSUID | libc::MS_NODEV;
        mount(Some(Path::new("tmpfs")), &target, Some("tmpfs"), flags, Some("mode=1777"))?;
    }
    // The thread's own home is its programs' to change: a mount point there that cannot be made
    // (a link or file put in its way) says how to start afresh.
    let home = sources.opened.iter().find(|s| s.role == Role::Home).map(|s| s.at.as_path());
    let in_home = |at: &Path| home.is_some_and(|home| at.starts_with(home) && at != home);
    for Source { at, tree, is_dir, .. } in &sources.opened {
        let is_dir = *is_dir;
        let target = mount_point(stage, at, is_dir).map_err(|why| match own_home {
            Some(own) if in_home(at) => format!(
                "{why} (in the thread's own home, which its programs may change: delete {} to \
                 start the thread afresh)",
                own.display()
            ),
            _ => why,
        })?;
        mount_tree(tree, &target).map_err(|e| format!("{e} (showing {})", at.display()))?;
    }
    // Pseudo-terminals of the lock's own. Best effort: a kernel that refuses a devpts in a user
    // namespace leaves the lock without new terminals, as without this, and nothing less locked.
    let ptys = inside(stage, Path::new(OWN_PTYS));
    std::fs::create_dir_all(&ptys).map_err(|e| format!("cannot make {OWN_PTYS}: {e}"))?;
    // At most 256: the kernel's pool beyond the host's own is shared by every devpts
    // instance (other locks, containers), and one lock must not take it all.
    let options = "newinstance,ptmxmode=0666,mode=0620,max=256";
    let no_programs = libc::MS_NOSUID | libc::MS_NOEXEC;
    let _ = mount(Some(Path::new("devpts")), &ptys, Some("devpts"), no_programs, Some(options));
    // A /proc of the lock's own PID namespace: its processes only, so no other process's
    // command line, environment or mounts.
    let proc = inside(stage, Path::new("/proc"));
    std::fs::create_dir_all(&proc).map_err(|e| format!("cannot make /proc: {e}"))?;
    let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount(Some(Path::new("proc")), &proc, Some("proc"), flags, None)
        .map_err(|e| format!("{e} (a /proc of the lock's own; {PROC_HINT})"))?;
    // The kernel's key lists name every key the user can view (the vault's among them, by
    // name and size): empty here.
    let null = inside(stage, Path::new("/dev/null"));
    for listed in ["keys", "key-users"] {
        let file = proc.join(listed);
        if file.exists() {
            mount(Some(&null), &file, None, libc::MS_BIND, None)
                .map_err(|e| format!("{e} (hiding /proc/{listed})"))?;
        }
    }
    Ok(())
}

/// The `hidden` folders, where a lock folder shows them (a lock on /tmp, on
/// $XDG_RUNTIME_DIR): covered by empty folders. A unix socket is reached by `connect`, which a
/// read-only mount does not stop.
fn hide(stage: &Path, hidden: &[PathBuf], resolved: &Resolved) -> Result<(), String> {
    let bound = || resolved.write.iter().chain(&resolved.read);
    for hidden in hidden {
        let shown = bound().any(|f| hidden.starts_with(f));
        let holds_lock = bound().any(|f| f.starts_with(hidden));
        if shown && !holds_lock && inside(stage, hidden).is_dir() {
            // On the folder itself, opened without following a link on the way.
            let point = mount_point(stage, hidden, true)?;
            let target = PathBuf::from(format!("/proc/self/fd/{}", point.fd.as_raw_fd()));
            mount(Some(Path::new("tmpfs")), &target, Some("tmpfs"), 0, Some("mode=0700"))
                .map_err(|e| format!("{e} (hiding {})", hidden.display()))?;
        }
    }
    Ok(())
}

/// Once entered: everything read-only, nosuid and nodev, except the lock's writable folders
/// and the pane's temporary folders (writable) and the devices (nodev off); a read-only folder
/// inside a writable one stays read-only, a writable one inside that is writable again;
/// protected paths are read-only whatever holds them.
fn set_access(
    resolved: &Resolved,
    home: Option<&Path>,
    tty: Option<&Path>,
    read_only: &[PathBuf],
) -> Result<(), String> {
    let root = Path::new("/");
    set_mount_attrs(root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)?;
    for path in DEVICES.iter().map(Path::new).chain(tty) {
        if path.exists() {
            set_mount_attrs(path, 0, MOUNT_ATTR_NODEV)?;
        }
    }
    // Only where the lock's own devpts is mounted: otherwise the path is in /dev's tmpfs,
    // which stays read-only and without devices.
    let ptys = Path::new(OWN_PTYS);
    if is_devpts(ptys) {
        set_mount_attrs(ptys, 0, MOUNT_ATTR_NODEV | MOUNT_ATTR_RDONLY)?;
    }
    let writable = || {
        let fresh = FRESH.map(Path::new);
        home.into_iter().chain(resolved.write.iter().map(PathBuf::as_path)).chain(fresh)
    };
    for path in writable() {
        set_mount_attrs(path, 0, MOUNT_ATTR_RDONLY)?;
    }
    // A read folder that is a writable one's place too (`read: ["/tmp"]` over the pane's own
    // /tmp) is read-only as well; one listed as writable stays so.
    let in_writable =
        |p: &Path| writable().any(|w| p.starts_with(w)) && !resolved.write.iter().any(|w| w == p);
    for path in read_only.iter().filter(|p| in_writable(p)) {
        set_mount_attrs(path, MOUNT_ATTR_RDONLY, 0)?;
    }
    let in_read = |p: &Path| resolved.read.iter().any(|r| p.starts_with(r) && p != r);
    for path in resolved.write.iter().filter(|p| in_read(p)) {
        set_mount_attrs(path, 0, MOUNT_ATTR_RDONLY)?;
    }
    for path in &resolved.protect {
        set_mount_attrs(path, MOUNT_ATTR_RDONLY, 0)?;
    }
    Ok(())
}

/// With the network on, the folder `/etc/resolv.conf` points into when it points out of /etc
/// (systemd-resolved, NetworkManager, resolvconf), so that names resolve.
pub fn dns_folder(network: bool) -> Option<PathBuf> {
    if !network {
        return None;
    }
    let target = Path::new("/etc/resolv.conf").canonicalize().ok()?;
    (!target.starts_with("/etc")).then(|| target.parent().map(Path::to_owned)).flatten()
}

/// Open what `path` shows. The lock's own paths (read, write, protected) are canonical since
/// the configuration was read: they are opened without following any symbolic link, so one
/// put in their way since (another pane replacing a lock folder with a link to ~/.ssh) fails
/// the lock instead of widening it; the descriptor opened is what gets mounted.
fn open_source(sources: &mut Vec<Source>, path: &Path, role: Role) -> Result<(), String> {
    let opened = match role {
        Role::System | Role::Info | Role::Device => std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_CLOEXEC)
            .open(path),
        Role::Read | Role::Write | Role::Protect | Role::Home => open_without_links(path),
    };
    match opened {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(format!(
            "{} has a symbolic link in its way now, which a lock does not follow",
            path.display()
        )),
        Ok(file) => {
            let is_dir = file.metadata().map(|m| m.is_dir()).unwrap_or(false);
            let tree = copy_tree(&file).map_err(|e| format!("{e} (showing {})", path.display()))?;
            sources.push(Source { at: path.to_owned(), tree, is_dir, role });
            Ok(())
        }
        // A system folder or device this host does not have.
        Err(_) if matches!(role, Role::System | Role::Info | Role::Device) => Ok(()),
        Err(e) => Err(format!("cannot open {}: {e}", path.display())),
    }
}

/// `path` opened as a location only (O_PATH), refusing a symbolic link anywhere in it
/// (openat2 with RESOLVE_NO_SYMLINKS, Linux 5.6).
pub fn open_without_links(path: &Path) -> std::io::Result<File> {
    let name = cstring(path).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: open_how is plain data; zeroed, then the fields set.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: openat2(2) with a NUL-terminated path and an open_how of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            name.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(unsafe { File::from(std::os::fd::OwnedFd::from_raw_fd(fd as i32)) })
}

/// A detached copy of what `source` is open on, with everything mounted below it now
/// (open_tree), so no path is looked up again and nothing mounted later comes with it.
fn copy_tree(source: &File) -> Result<std::os::fd::OwnedFd, String> {
    const OPEN_TREE_CLONE: libc::c_uint = 1;
    // SAFETY: open_tree(2) on our descriptor with an empty path.
    let tree = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            source.as_raw_fd(),
            c"".as_ptr(),
            OPEN_TREE_CLONE
                | libc::AT_RECURSIVE as libc::c_uint
                | libc::AT_EMPTY_PATH as libc::c_uint,
        )
    };
    if tree < 0 {
        return Err(format!("cannot copy the mount: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the tree descriptor was just made and is ours alone.
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(tree as i32) })
}

/// Mount a copied tree at the mount point `target` is open on (move_mount).
fn mount_tree(tree: &std::os::fd::OwnedFd, target: &MountPoint) -> Result<(), String> {
    const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 4;
    const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
    // SAFETY: move_mount(2) from our tree descriptor to our mount point's descriptor.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            target.fd.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if moved != 0 {
        return Err(format!(
            "cannot mount on {}: {}",
            target.path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// A place to mount on, open, and where it is on the stage (for messages).
struct MountPoint {
    fd: std::os::fd::OwnedFd,
    path: PathBuf,
}

/// The mount point for `path` on `stage`, an empty folder (or file) made where there is none,
/// every step opened without following a symbolic link: one in the way (planted in the
/// thread's home or a writable folder) fails the lock instead of moving the mount.
fn mount_point(stage: &Path, path: &Path, is_dir: bool) -> Result<MountPoint, String> {
    let target = inside(stage, path);
    let failed = |e: std::io::Error| {
        let why = if e.raw_os_error() == Some(libc::ELOOP) {
            "a symbolic link is in its way, which a lock does not follow".to_owned()
        } else {
            e.to_string()
        };
        format!("cannot make a mount point at {}: {why}", path.display())
    };
    let mut folder = open_step(None, stage, true).map_err(failed)?;
    let names: Vec<_> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        let want_dir = !last || is_dir;
        let step = Path::new(name);
        folder = match open_step(Some(&folder), step, want_dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                make_step(&folder, step, want_dir).map_err(failed)?;
                open_step(Some(&folder), step, want_dir).map_err(failed)?
            }
            other => other.map_err(failed)?,
        };
    }
    Ok(MountPoint { fd: folder, path: target })
}

/// An empty folder (or file) `name` in `folder`; one already there (even a link) is left as
/// it is, for `open_step` to judge.
fn make_step(folder: &std::os::fd::OwnedFd, name: &Path, is_dir: bool) -> std::io::Result<()> {
    let name = cstring(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: mkdirat(2) / openat(2) in our folder descriptor with a NUL-terminated name; a
    // file made is closed at once.
    let made = unsafe {
        if is_dir {
            libc::mkdirat(folder.as_raw_fd(), name.as_ptr(), 0o755)
        } else {
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            let fd =
                libc::openat(folder.as_raw_fd(), name.as_ptr(), flags | libc::O_CLOEXEC, 0o644);
            if fd >= 0 {
                libc::close(fd);
            }
            fd.min(0)
        }
    };
    match std::io::Error::last_os_error() {
        _ if made == 0 => Ok(()),
        e if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        e => Err(e),
    }
}

/// `name` opened as a location (O_PATH) in `folder` (or from the current root when none), not
/// following a symbolic link: one there is ELOOP.
fn open_step(
    folder: Option<&std::os::fd::OwnedFd>,
    name: &Path,
    is_dir: bool,
) -> std::io::Result<std::os::fd::OwnedFd> {
    let name = cstring(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let dirfd = folder.map_or(libc::AT_FDCWD, |f| f.as_raw_fd());
    let mut flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    if is_dir {
        flags |= libc::O_DIRECTORY;
    }
    // SAFETY: openat(2) with a NUL-terminated name.
    let fd = unsafe { libc::openat(dirfd, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    // O_PATH with O_NOFOLLOW opens a link itself rather than failing.
    let meta = File::from(fd.try_clone()?).metadata()?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(fd)
}

/// Make `stage` the root; the old root is detached whole.
fn enter(stage: &Path) -> Result<(), String> {
    let old = stage.join(OLD_ROOT);
    std::fs::create_dir_all(&old).map_err(|e| format!("cannot make {}: {e}", old.display()))?;
    let (new_c, old_c) = (cstring(stage)?, cstring(&old)?);
    // SAFETY: pivot_root(2), chdir(2), umount2(2) with valid NUL-terminated paths.
    unsafe {
        if libc::syscall(libc::SYS_pivot_root, new_c.as_ptr(), old_c.as_ptr()) != 0 {
            return Err(format!("cannot change the root: {}", std::io::Error::last_os_error()));
        }
        libc::chdir(c"/".as_ptr());
        let old_in_new = cstring(&Path::new("/").join(OLD_ROOT))?;
        if libc::umount2(old_in_new.as_ptr(), libc::MNT_DETACH) != 0 {
            return Err(format!(
                "cannot let go of the old root: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    let _ = std::fs::remove_dir(Path::new("/").join(OLD_ROOT));
    Ok(())
}

fn cstring(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| format!("{} has a NUL byte", path.display()))
}

fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> Result<(), String> {
    let source = source.map(cstring).transpose()?;
    let target_c = cstring(target)?;
    let fstype = fstype.map(|t| CString::new(t).unwrap_or_default());
    let data = data.map(|d| CString::new(d).unwrap_or_default());
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: NUL-terminated strings that outlive the call (or null where mount(2) allows it).
    let result = unsafe {
        libc::mount(
            ptr(&source),
            target_c.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data) as *const libc::c_void,
        )
    };
    if result != 0 {
        return Err(format!(
            "cannot mount on {}: {}",
            target.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const AT_RECURSIVE: libc::c_uint = 0x8000;

#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Set and clear mount flags on the mount at `path` and every mount below it (mount_setattr,
/// Linux 5.12).
/// Whether a devpts file system is mounted at `path`.
pub fn is_devpts(path: &Path) -> bool {
    const DEVPTS_SUPER_MAGIC: libc::c_long = 0x1cd1;
    let Ok(path) = cstring(path) else { return false };
    // SAFETY: statfs(2) with a valid path and a zeroed struct it fills.
    let mut info: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let result = unsafe { libc::statfs(path.as_ptr(), &mut info) };
    result == 0 && info.f_type as libc::c_long == DEVPTS_SUPER_MAGIC
}

fn set_mount_attrs(path: &Path, set: u64, clear: u64) -> Result<(), String> {
    let target = cstring(path)?;
    let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
    // SAFETY: mount_setattr(2) with a valid path and an attribute struct of the size passed.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            target.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result != 0 {
        return Err(format!(
            "cannot change the mount flags of {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What closes the race between resolving a lock's folders and mounting them: a link put
    /// anywhere in the way is refused, the real path opens.
    #[test]
    fn a_link_in_the_way_is_refused_when_a_folder_is_opened() {
        let dir = std::env::temp_dir().join(format!("paddock-view-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("real/inner")).expect("folders");
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).expect("link");
        let real = dir.canonicalize().expect("canonical");
        assert!(open_without_links(&real.join("real/inner")).is_ok());
        let error = open_without_links(&real.join("link/inner")).expect_err("a link in the way");
        assert_eq!(error.raw_os_error(), Some(libc::ELOOP));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
