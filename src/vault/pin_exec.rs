//! The exec step of a pane that holds a pinned secret: paddock itself, started in the pane (in
//! a locked pane, inside the lock) as `paddock __pin-exec SHA256 -- PROGRAM ARGS…`. It finds the
//! program the way exec would (the pane's own cwd and PATH, in the lock's view), opens it, hashes
//! it through that descriptor, and on a match runs that very descriptor (`execveat` with
//! `AT_EMPTY_PATH`). The file that was hashed is the file that runs: swapping it, or a link on
//! the way to it, after the check changes nothing. The parent's check (`release`) decides
//! whether the secret is released at all; this one makes sure it goes to that program.
//!
//! macOS has no exec by descriptor: there the program is checked and then run by its path, and
//! a swap in between is not caught (the README says so).

use std::ffi::{CString, OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::pin::is_loader_variable;

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

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// SHA-256 of everything `reader` gives, in lowercase hex.
pub fn sha256_of(reader: &mut impl Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
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
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) => refuse(format!("cannot open {}: {e}", path.display())),
    };
    let sha = match sha256_of(&mut file) {
        Ok(sha) => sha,
        Err(e) => refuse(format!("cannot read {}: {e}", path.display())),
    };
    if sha != expected {
        refuse(format!(
            "{} is not the program that was approved (its sha256 is {sha}, the approved one \
             {expected})",
            path.display()
        ));
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
    let e = exec_file(file, &path, &argv, &env);
    refuse(format!("cannot run {}: {e}", path.display()))
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

/// Run the open `file` (which is `path`); returns only on failure.
#[cfg(target_os = "linux")]
fn exec_file(
    file: std::fs::File,
    _path: &Path,
    argv: &[CString],
    env: &[CString],
) -> std::io::Error {
    use std::os::fd::IntoRawFd;
    let fd = file.into_raw_fd();
    // A script run through its descriptor is read by its interpreter from /dev/fd/N: that
    // descriptor must stay open across the exec. (A binary keeps it open too, harmlessly.)
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFD);
        libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
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
