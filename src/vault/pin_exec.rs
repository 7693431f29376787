//! The exec step of a pane that holds a pinned secret: paddock itself, started in the pane (in
//! a locked pane, inside the lock) as `paddock __pin-exec SHA256 -- PROGRAM ARGS…`. It finds the
//! program the way exec would (the pane's own cwd and PATH, in the lock's view), opens it, hashes
//! it through that descriptor, and on a match runs that very descriptor (`execveat` with
//! `AT_EMPTY_PATH`). The file that was hashed is the file that runs: swapping it, or a link on
//! the way to it, after the check changes nothing, and rewriting it in place cannot either
//! (`Held`: a file this user cannot write as it is, one it can under a read lease, a script or
//! a file that cannot be leased as a sealed copy in memory). The parent's check (`release`) decides
//! whether the secret is released at all; this one makes sure it goes to that program.
//!
//! macOS has no exec by descriptor: there the program is checked and then run by its path, and
//! a swap in between is not caught (the README says so).

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::pin::{is_executable, is_loader_variable, sha256_of};

/// The first argument that makes paddock this exec step.
pub const PIN_EXEC_VERB: &str = "__pin-exec";

/// Why a program cannot be found for a pinned release.
#[derive(Debug, PartialEq, Eq)]
pub enum FindError {
    /// `PATH` holds an entry that is not absolute: what it finds depends on the cwd.
    RelativePath(String),
    NotFound,
}

impl std::fmt::Display for FindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FindError::RelativePath(entry) => write!(
                f,
                "PATH holds the relative entry \"{entry}\", so which file runs depends on the \
                 folder it starts in; a pinned secret needs every PATH entry absolute"
            ),
            FindError::NotFound => f.write_str("not found"),
        }
    }
}

/// Where exec finds `program`: a path (relative to `cwd`) when it has a `/`, else the first
/// executable file of that name on `path_var`, whose entries must all be absolute.
pub fn find(program: &str, cwd: &Path, path_var: Option<&OsStr>) -> Result<PathBuf, FindError> {
    if program.contains('/') {
        let path = cwd.join(program);
        return if path.is_file() { Ok(path) } else { Err(FindError::NotFound) };
    }
    let path_var = path_var.unwrap_or_default();
    // An empty entry is the cwd, as execvp reads it.
    for dir in path_var.as_bytes().split(|&b| b == b':') {
        if !dir.starts_with(b"/") {
            return Err(FindError::RelativePath(String::from_utf8_lossy(dir).into_owned()));
        }
    }
    std::env::split_paths(path_var)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
        .ok_or(FindError::NotFound)
}

/// `paddock __pin-exec SHA256 -- PROGRAM ARGS…`: check and run, or say why not and exit 126.
pub fn main(args: Vec<OsString>) -> ! {
    let refuse = |why: String| -> ! {
        eprintln!("paddock: the pinned program was not started: {why}");
        std::process::exit(126)
    };
    let (expected, argv) = match args.split_first() {
        Some((sha, rest)) if rest.first().is_some_and(|a| a == "--") && rest.len() > 1 => {
            (sha.to_string_lossy().into_owned(), &rest[1..])
        }
        _ => refuse("usage: paddock __pin-exec SHA256 -- PROGRAM [ARGS…]".into()),
    };
    let program = argv[0].to_string_lossy().into_owned();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let path = match find(&program, &cwd, std::env::var_os("PATH").as_deref()) {
        Ok(path) => path,
        Err(e) => refuse(format!("{program}: {e}")),
    };
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) => refuse(format!("cannot open {}: {e}", path.display())),
    };
    let (file, sha, held) = match hold_still(file) {
        Ok(held) => held,
        Err(e) => refuse(format!("cannot read {}: {e}", path.display())),
    };
    if sha != expected {
        refuse(format!(
            "{} is not the program that was approved (its sha256 is {sha}, the approved one \
             {expected})",
            path.display()
        ));
    }
    if let Err(why) = held.still(&file) {
        refuse(format!("{}: {why}", path.display()));
    }
    // The environment as the parent left it, less anything that loads foreign code.
    let env: Vec<CString> = std::env::vars_os()
        .filter(|(k, _)| !is_loader_variable(&k.to_string_lossy()))
        .filter_map(|(k, v)| {
            let mut pair = k.into_vec_bytes();
            pair.push(b'=');
            pair.extend_from_slice(v.as_bytes());
            CString::new(pair).ok()
        })
        .collect();
    let argv: Vec<CString> =
        argv.iter().filter_map(|a| CString::new(a.as_bytes().to_vec()).ok()).collect();
    let e = exec_file(file, &path, held.keeps_open(), &argv, &env);
    refuse(format!("cannot run {}: {e}", path.display()))
}

/// How the bytes that were hashed are kept from changing until the exec.
enum Held {
    /// Nobody of this user can write the file (or there is no better way: macOS).
    AsItIs,
    /// A read lease on the file (Linux): a writer's open blocks until the lease goes, and with
    /// its write access taken the exec then fails (ETXTBSY) rather than run changed bytes.
    #[cfg(target_os = "linux")]
    Leased,
    /// A sealed copy in memory is what runs (Linux: a script, whose interpreter reads it again
    /// after the exec, or a file that could not be leased).
    #[cfg(target_os = "linux")]
    Copied { script: bool },
}

impl Held {
    /// Whether the descriptor must stay open across the exec: a script run from its sealed
    /// copy is read by its interpreter as /dev/fd/N. Any other closes with the exec, after the
    /// kernel took the file's write access away (and with it any lease).
    fn keeps_open(&self) -> bool {
        #[cfg(target_os = "linux")]
        if let Held::Copied { script } = self {
            return *script;
        }
        false
    }

    /// Whether the hashed bytes are still what the exec will run.
    fn still(&self, file: &std::fs::File) -> Result<(), String> {
        #[cfg(target_os = "linux")]
        if let Held::Leased = self {
            use std::os::fd::AsRawFd;
            // SAFETY: fcntl(2) and signal(2) on a descriptor and a signal this process owns.
            let lease = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLEASE) };
            if lease != libc::F_RDLCK {
                return Err("the file was opened for writing while it was checked".into());
            }
            // A lease broken from here on ends this process (SIGIO's default): fail closed.
            unsafe { libc::signal(libc::SIGIO, libc::SIG_DFL) };
        }
        let _ = file;
        Ok(())
    }
}

/// Hash `file` and keep what was hashed from changing before it runs: the file to exec, its
/// SHA-256, and how it is held.
#[cfg(target_os = "linux")]
fn hold_still(mut file: std::fs::File) -> std::io::Result<(std::fs::File, String, Held)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileExt, MetadataExt};
    let meta = file.metadata()?;
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    let writable = meta.uid() == me || meta.mode() & 0o022 != 0;
    let mut start = [0u8; 2];
    let is_script = file.read_at(&mut start, 0)? == 2 && start == *b"#!";
    if !writable && !is_script {
        let sha = sha256_of(&mut file)?;
        return Ok((file, sha, Held::AsItIs));
    }
    if !is_script {
        // SAFETY: a lease on our own descriptor; SIGIO (a lease break) ignored until the exec.
        let leased = unsafe {
            libc::signal(libc::SIGIO, libc::SIG_IGN);
            libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) == 0
        };
        if leased {
            let sha = sha256_of(&mut file)?;
            return Ok((file, sha, Held::Leased));
        }
    }
    let (copy, sha) = sealed_copy(&mut file)?;
    Ok((copy, sha, Held::Copied { script: is_script }))
}

#[cfg(not(target_os = "linux"))]
fn hold_still(mut file: std::fs::File) -> std::io::Result<(std::fs::File, String, Held)> {
    let sha = sha256_of(&mut file)?;
    Ok((file, sha, Held::AsItIs))
}

/// A copy of `file` in a sealed memfd (nothing can change it any more), and the SHA-256 of
/// the sealed bytes.
#[cfg(target_os = "linux")]
fn sealed_copy(file: &mut std::fs::File) -> std::io::Result<(std::fs::File, String)> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::{AsRawFd, FromRawFd};
    const MFD_EXEC: libc::c_uint = 0x10;
    let name = c"paddock-pinned";
    // SAFETY: memfd_create(2) with a valid name; MFD_EXEC is refused by kernels before 6.3.
    let mut fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_ALLOW_SEALING | MFD_EXEC) };
    if fd < 0 {
        fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_ALLOW_SEALING) };
    }
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made and owned by nothing else.
    let mut copy = unsafe { std::fs::File::from_raw_fd(fd) };
    std::io::copy(file, &mut copy)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl(2) on our own memfd.
    if unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    copy.seek(SeekFrom::Start(0))?;
    let sha = sha256_of(&mut copy)?;
    Ok((copy, sha))
}

trait IntoVecBytes {
    fn into_vec_bytes(self) -> Vec<u8>;
}

impl IntoVecBytes for OsString {
    fn into_vec_bytes(self) -> Vec<u8> {
        use std::os::unix::ffi::OsStringExt;
        self.into_vec()
    }
}

/// Run the open `file` (which is `path`), its descriptor kept open across the exec when
/// `keep_open`; returns only on failure.
#[cfg(target_os = "linux")]
fn exec_file(
    file: std::fs::File,
    _path: &Path,
    keep_open: bool,
    argv: &[CString],
    env: &[CString],
) -> std::io::Error {
    use std::os::fd::IntoRawFd;
    let fd = file.into_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        let flags = if keep_open { flags & !libc::FD_CLOEXEC } else { flags | libc::FD_CLOEXEC };
        libc::fcntl(fd, libc::F_SETFD, flags);
    }
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // SAFETY: null-terminated arrays of pointers to C strings that outlive the call.
    unsafe {
        libc::syscall(
            libc::SYS_execveat,
            fd,
            c"".as_ptr(),
            argv_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
            libc::AT_EMPTY_PATH,
        );
    }
    std::io::Error::last_os_error()
}

/// Run `path` (checked just before as `file`); returns only on failure.
#[cfg(not(target_os = "linux"))]
fn exec_file(
    file: std::fs::File,
    path: &Path,
    _keep_open: bool,
    argv: &[CString],
    env: &[CString],
) -> std::io::Error {
    drop(file);
    let Ok(program) = CString::new(path.as_os_str().as_bytes().to_vec()) else {
        return std::io::Error::from(std::io::ErrorKind::InvalidInput);
    };
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // SAFETY: null-terminated arrays of pointers to C strings that outlive the call.
    unsafe {
        libc::execve(program.as_ptr(), argv_ptrs.as_ptr(), env_ptrs.as_ptr());
    }
    std::io::Error::last_os_error()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_path_entries_are_refused_and_programs_found_as_exec_finds_them() {
        let cwd = Path::new("/");
        assert_eq!(
            find("sh", cwd, Some(OsStr::new("/bin:bin"))),
            Err(FindError::RelativePath("bin".into()))
        );
        assert_eq!(
            find("sh", cwd, Some(OsStr::new("/usr/bin::/bin"))),
            Err(FindError::RelativePath(String::new()))
        );
        assert!(find("sh", cwd, Some(OsStr::new("/nonexistent:/bin:/usr/bin"))).is_ok());
        assert_eq!(find("./sh", Path::new("/bin"), None), Ok(PathBuf::from("/bin/./sh")));
        assert_eq!(
            find("no-such-program", cwd, Some(OsStr::new("/bin"))),
            Err(FindError::NotFound)
        );
    }
}
