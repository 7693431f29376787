//! What a locked thread gets of the home folder: a home of its own, writable and kept between
//! runs in paddock's data folder, and a default read list of the user's real home that holds
//! no credentials: git's settings, the toolchains on PATH and rustup's toolchains. Everything
//! else of the real home stays out unless the thread lists it under `read`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Files and folders of the real home every lock may read, where they exist: git's settings
/// (for `git commit`; the files git reads from ~/.config/git one by one, since its
/// `credentials` file lives there too) and rustup's toolchains (which ~/.cargo/bin's proxies
/// run). None holds a credential; ~/.npmrc, ~/.netrc, ~/.pypirc, ~/.git-credentials and
/// ~/.cargo/credentials.toml never appear here: secrets belong in the vault.
pub const DEFAULT_READ: &[&str] =
    &[".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes"];

/// Toolchain folders every lock may read the programs of, where they exist: rustup's (which
/// ~/.cargo/bin's proxies run), shown as version managers' are (`tool_parts`).
pub const DEFAULT_TOOLCHAINS: &[&str] = &[".rustup"];

/// What a toolchain's programs need of it, shown where found (`tool_parts`): its programs and
/// libraries. Never the rest: a toolchain's own settings (`etc/npmrc`, `pip.conf`, a
/// `.yarnrc.yml`, a plugin's git config) may hold a token.
pub const TOOL_PARTS: &[&str] = &["bin", "sbin", "lib", "lib64", "libexec", "include", "shims"];

/// Files a toolchain's programs read to find the rest, shown where found beside its parts:
/// a version manager's chosen version, rustup's settings, a Python environment's anchor.
pub const TOOL_FILES: &[&str] = &["version", "settings.toml", "pyvenv.cfg"];

/// How deep below a toolchain folder its parts are looked for (~/.nvm/versions/node/v22/bin).
const TOOL_DEPTH: usize = 4;

/// Names of files that hold credentials: a folder the default list would show is left out
/// when one lies in it (nvm's ~/.nvm/.npmrc, npm's `<prefix>/etc/npmrc` from `npm config set
/// -g`, pip's `<prefix>/pip.conf` from `pip config --site`, a `credentials` beside a tool),
/// looked for `CREDENTIALS_DEPTH` folders deep.
pub const CREDENTIAL_FILES: &[&str] = &[
    ".npmrc",
    "npmrc",
    ".netrc",
    ".pypirc",
    "pip.conf",
    "pip.ini",
    ".git-credentials",
    ".env",
    "credentials",
    "credentials.toml",
    "credentials.json",
    "auth.json",
    "token",
];

/// How deep below a folder the default list would show credential files are looked for.
const CREDENTIALS_DEPTH: usize = 5;
/// How many entries that look visits at most; a folder too large to look through is left out.
const CREDENTIALS_ENTRIES: usize = 20_000;
/// Folders that hold code and data, never a tool's settings: not looked into.
const NOT_SETTINGS: &[&str] = &[
    "node_modules",
    "site-packages",
    "dist-packages",
    "__pycache__",
    "lib",
    "lib64",
    "include",
    "share",
    "src",
    ".git",
];

/// Places in the real home that hold credentials or keys: a PATH folder (or a toolchain it
/// leads to) that is one of them, lies in one or holds one is never shown by default.
pub const NEVER_BY_DEFAULT: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/gh",
    ".config/gcloud",
    ".config/paddock",
    ".local/share/keyrings",
    ".local/share/paddock",
    ".local/state/paddock",
];

/// Version managers' folders, each one toolchain home that holds no credential: a PATH folder
/// inside one shows it whole (pyenv's shims run ~/.pyenv/libexec/pyenv, which runs
/// ~/.pyenv/versions/…; nvm's bin links into its lib).
pub const TOOLCHAIN_HOMES: &[&str] = &[
    ".pyenv",
    ".rbenv",
    ".goenv",
    ".nodenv",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".asdf",
    ".rustup",
    ".ghcup",
    ".elan",
    ".juliaup",
    ".local/share/mise",
    ".local/share/fnm",
];

/// How many entries of one PATH folder are looked at for links into a toolchain.
const ENTRIES_LOOKED_AT: usize = 2000;

/// Where the threads' own homes are kept: paddock's data folder ($XDG_DATA_HOME/paddock/homes),
/// not the state folder (its approvals and audit log), which no lock may write.
pub fn homes_folder() -> Option<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("paddock").join("homes"))
}

/// The folder name of `thread`'s home: its name, with every byte a plain file name should not
/// hold (and a leading dot) written as `%XX`, so no name leads out of the homes folder.
pub fn folder_name(thread: &str) -> String {
    let mut name = String::new();
    for (i, byte) in thread.bytes().enumerate() {
        let plain = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b' ');
        if plain && !(i == 0 && byte == b'.') {
            name.push(byte as char);
        } else {
            name.push_str(&format!("%{byte:02X}"));
        }
    }
    name
}

/// `thread`'s home, made (0700, with the homes folder) where it is not there yet; canonical.
#[cfg(unix)]
pub fn own_home(thread: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let homes = homes_folder().ok_or("no data folder (HOME is not set)")?;
    let home = homes.join(folder_name(thread));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&home)
        .map_err(|e| format!("cannot make the thread's home {}: {e}", home.display()))?;
    home.canonicalize().map_err(|e| format!("cannot find {}: {e}", home.display()))
}

/// What the default read list shows of `home` (the real home, canonical), and what it left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HomeReads {
    /// Paths to read, canonical.
    pub read: Vec<PathBuf>,
    /// Links of the real home to make again in the thread's own (`~/.gitconfig` kept in a
    /// dotfiles folder): the link's place relative to the home, and where it leads.
    pub links: Vec<(PathBuf, PathBuf)>,
    /// What was not shown, and why.
    pub left_out: Vec<(PathBuf, String)>,
}

/// The default read list for a lock: `DEFAULT_READ` where it exists, the programs of
/// `DEFAULT_TOOLCHAINS`, and the folders of `path_var` (the pane's PATH) that lie inside
/// `home`: a version manager's programs (`TOOLCHAIN_HOMES`, `tool_parts`), or the PATH folder
/// with the programs its links lead into (`bin/tool` -> `../lib/tool/…`); never a folder in
/// `NEVER_BY_DEFAULT` or holding one or a credential-named file, never the home itself.
pub fn home_reads(home: &Path, path_var: Option<&OsStr>) -> HomeReads {
    let mut reads = HomeReads::default();
    for name in DEFAULT_READ {
        let place = home.join(name);
        let Ok(real) = place.canonicalize() else { continue };
        // Kept elsewhere (a system folder, another disk): nothing of the home's with it.
        if let Err(why) =
            allowed(home, &real).or_else(
                |why| {
                    if real.starts_with(home) {
                        Err(why)
                    } else {
                        Ok(())
                    }
                },
            )
        {
            reads.left_out.push((place, why));
            continue;
        }
        if real != place {
            reads.links.push((PathBuf::from(name), place.read_link().unwrap_or(real.clone())));
        }
        reads.read.push(real);
    }
    for name in DEFAULT_TOOLCHAINS {
        if let Ok(real) = home.join(name).canonicalize() {
            show_parts(home, &real, &mut reads);
        }
    }
    for folder in path_var.map(std::env::split_paths).into_iter().flatten() {
        if !folder.is_absolute() {
            continue;
        }
        let Ok(real) = folder.canonicalize() else { continue };
        if !real.starts_with(home) || !real.is_dir() {
            continue;
        }
        // A version manager's programs, wherever its versions keep them.
        let manager = TOOLCHAIN_HOMES.iter().map(|n| home.join(n)).find(|t| real.starts_with(t));
        match allowed(home, &real) {
            Ok(()) if manager.is_some() => {
                show_parts(home, manager.as_deref().unwrap_or(&real), &mut reads);
            }
            Ok(()) => {
                toolchain_roots(home, &real, &mut reads);
                reads.read.push(real);
            }
            Err(why) => reads.left_out.push((folder, why)),
        }
    }
    reads.read.sort();
    reads.read.dedup();
    // A folder inside another one shown adds nothing.
    let shown = reads.read.clone();
    reads.read.retain(|p| !shown.iter().any(|outer| outer != p && p.starts_with(outer)));
    reads.left_out.sort();
    reads.left_out.dedup();
    reads
}

/// The parts of toolchain folder `root` its programs need (`TOOL_PARTS` folders and
/// `TOOL_FILES`, `TOOL_DEPTH` deep, not inside a part, not into hidden folders), each `allowed`
/// or left out with why.
fn show_parts(home: &Path, root: &Path, reads: &mut HomeReads) {
    for part in tool_parts(root, TOOL_DEPTH) {
        match allowed(home, &part) {
            Ok(()) => reads.read.push(part),
            Err(why) => reads.left_out.push((part, why)),
        }
    }
}

/// `TOOL_PARTS` folders and `TOOL_FILES` in `root`, `depth` folders deep (breadth first,
/// bounded, never following a link into a folder).
fn tool_parts(root: &Path, depth: usize) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([(root.to_owned(), 0)]);
    let mut looked = 0;
    while let Some((dir, level)) = queue.pop_front() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            looked += 1;
            if looked > CREDENTIALS_ENTRIES {
                return found;
            }
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else { continue };
            let plain = !name.to_string_lossy().starts_with('.');
            let part = kind.is_dir() && TOOL_PARTS.iter().any(|p| name == *p);
            let file = kind.is_file() && TOOL_FILES.iter().any(|f| name == *f);
            if part || file {
                found.push(entry.path());
            } else if kind.is_dir() && plain && level + 1 < depth {
                queue.push_back((entry.path(), level + 1));
            }
        }
    }
    found
}

/// Whether `path` (canonical) may be shown by default: strictly inside `home`, not in a place
/// that holds credentials, holding none (`NEVER_BY_DEFAULT`, and a `CREDENTIAL_FILES` name at
/// its top when it is a folder).
fn allowed(home: &Path, path: &Path) -> Result<(), String> {
    if path == home || !path.starts_with(home) {
        return Err("it is the home folder, or outside it".into());
    }
    for secret in NEVER_BY_DEFAULT.iter().map(|name| home.join(name)) {
        if path.starts_with(&secret) || secret.starts_with(path) {
            let name = secret.strip_prefix(home).unwrap_or(&secret).display().to_string();
            return Err(format!("it is, holds or lies in ~/{name}, which holds credentials"));
        }
    }
    if !path.is_dir() {
        return Ok(());
    }
    match credential_inside(path) {
        Ok(None) => Ok(()),
        Ok(Some(file)) => Err(format!(
            "it holds {}, which may hold credentials (list what you need under `read`)",
            file.display()
        )),
        Err(()) => Err(format!(
            "it holds more than {CREDENTIALS_ENTRIES} entries to look through for credentials \
             (list what you need under `read`)"
        )),
    }
}

/// The first file in `folder` (breadth first, `CREDENTIALS_DEPTH` deep, not into
/// `NOT_SETTINGS` folders, not following links into folders) named as a credential file;
/// `Err` when there is too much to look through.
fn credential_inside(folder: &Path) -> Result<Option<PathBuf>, ()> {
    let mut queue = std::collections::VecDeque::from([(folder.to_owned(), 0)]);
    let mut looked = 0;
    while let Some((dir, depth)) = queue.pop_front() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            looked += 1;
            if looked > CREDENTIALS_ENTRIES {
                return Err(());
            }
            let name = entry.file_name();
            if CREDENTIAL_FILES.iter().any(|c| name == *c) {
                return Ok(Some(entry.path()));
            }
            let into = entry.file_type().is_ok_and(|t| t.is_dir())
                && depth + 1 < CREDENTIALS_DEPTH
                && !NOT_SETTINGS.iter().any(|n| name == *n);
            if into {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    Ok(None)
}

/// The toolchains the links in `folder` lead into, added to `reads`: for a link to a file
/// elsewhere in the home, the folder beside `folder` that holds its target, one step below
/// where the two part (~/.nvm/versions/node/v22/{bin,lib}: lib). One that is the home's own
/// top level, or not `allowed`, is left out with why.
fn toolchain_roots(home: &Path, folder: &Path, reads: &mut HomeReads) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten().take(ENTRIES_LOOKED_AT) {
        let link = entry.path();
        if !entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        let Ok(target) = link.canonicalize() else { continue };
        if target.starts_with(folder) || !target.starts_with(home) {
            continue;
        }
        let common: PathBuf = folder
            .components()
            .zip(target.components())
            .take_while(|(a, b)| a == b)
            .map(|(a, _)| a)
            .collect();
        // The toolchain the target belongs to: from where the two part, down the target's
        // way, the first folder whose next step is one of its parts (`bin`, `lib`…).
        let rest: Vec<_> =
            target.strip_prefix(&common).map(|r| r.components().collect()).unwrap_or_default();
        let mut prefix = common.clone();
        let mut found = None;
        for part in &rest {
            if TOOL_PARTS.iter().any(|p| part.as_os_str() == *p) {
                found = Some(prefix.clone());
                break;
            }
            prefix.push(part);
        }
        let depth = |p: &Path| p.strip_prefix(home).map_or(0, |r| r.components().count());
        match found.filter(|prefix| depth(prefix) >= 2) {
            Some(prefix) => {
                for part in tool_parts(&prefix, 1) {
                    match allowed(home, &part) {
                        Ok(()) => reads.read.push(part),
                        Err(why) => reads.left_out.push((part, why)),
                    }
                }
            }
            None => reads.left_out.push((
                link.clone(),
                format!(
                    "it leads to {}, which is in no toolchain folder paddock knows the shape of \
                     (list the toolchain's folder under `read`)",
                    target.display()
                ),
            )),
        }
    }
}

/// Make `links` again in the thread's home `own`, where it has nothing by that name (what the
/// thread put there is its own). Every folder on the way is made and entered without following
/// a link: the home is the lock's to change, and a link planted there (`.config` -> a folder of
/// yours) must not lead paddock to make anything outside it.
#[cfg(unix)]
pub fn make_links(own: &Path, links: &[(PathBuf, PathBuf)]) {
    for (name, target) in links {
        let _ = link_beneath(own, name, target);
    }
}

/// A path as a C string (one with a NUL byte in it is no path).
#[cfg(unix)]
pub fn c_path(path: &std::ffi::OsStr) -> std::io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// The folder `inside` (relative) of `own`, opened without following a link on the way (a
/// thread's home is its programs' to change: a link planted there must not lead paddock out
/// of it); its missing folders made with `make` when given.
#[cfg(unix)]
pub fn open_beneath(
    own: &Path,
    inside: &Path,
    make: Option<libc::mode_t>,
) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let open_folder = |at: libc::c_int, part: &std::ffi::CStr| -> std::io::Result<OwnedFd> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat(2) with a NUL-terminated name; the descriptor is ours alone.
        let fd = unsafe { libc::openat(at, part.as_ptr(), flags) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a new descriptor.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    };
    let mut folder = open_folder(libc::AT_FDCWD, &c_path(own.as_os_str())?)?;
    for part in inside.iter() {
        let part = c_path(part)?;
        if let Some(mode) = make {
            // SAFETY: mkdirat(2) in our folder with a NUL-terminated name (one already there,
            // even a link, is judged by the open below).
            unsafe { libc::mkdirat(folder.as_raw_fd(), part.as_ptr(), mode) };
        }
        folder = open_folder(folder.as_raw_fd(), &part)?;
    }
    Ok(folder)
}

/// `name` (relative) made in `own` as a link to `target`, without following links on the way.
#[cfg(unix)]
fn link_beneath(own: &Path, name: &Path, target: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let Some(last) = name.file_name() else { return Ok(()) };
    let folder = open_beneath(own, name.parent().unwrap_or(Path::new("")), Some(0o755))?;
    let (target, last) = (c_path(target.as_os_str())?, c_path(last)?);
    // SAFETY: symlinkat(2) with NUL-terminated strings in our folder; it never follows `last`.
    if unsafe { libc::symlinkat(target.as_ptr(), folder.as_raw_fd(), last.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("paddock-home-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        dir.canonicalize().expect("canonical")
    }

    #[test]
    fn a_thread_name_never_leads_out_of_the_homes_folder() {
        assert_eq!(folder_name("agent-a"), "agent-a");
        assert_eq!(folder_name("../x"), "%2E.%2Fx");
        assert_eq!(folder_name(".."), "%2E.");
        assert_eq!(folder_name("a/b"), "a%2Fb");
        assert_eq!(folder_name("ümlaut"), "%C3%BCmlaut");
        assert_eq!(folder_name("a%2Fb"), "a%252Fb", "a name that looks encoded stays distinct");
    }

    #[test]
    fn the_homes_folder_is_not_the_state_folder_no_lock_may_write() {
        let (homes, state) = (homes_folder().expect("HOME"), crate::vault::state_folder());
        let state = state.expect("a state folder");
        assert!(!homes.starts_with(&state) && !state.starts_with(&homes), "{homes:?} {state:?}");
    }

    #[test]
    fn path_folders_in_the_home_are_read_with_their_toolchains_but_never_credentials() {
        let home = scratch("path");
        for folder in [
            ".cargo/bin",
            ".local/bin",
            ".node/v22/bin",
            ".node/v22/lib/node_modules/npm/bin",
            ".pyenv/shims",
            ".ssh/bin",
            ".config/git",
            ".nvm/versions/node/v20/bin",
            ".nvm/versions/node/v20/lib",
            ".rustup/toolchains/stable/bin",
            ".rustup/toolchains/stable/lib",
            ".rustup/downloads",
        ] {
            std::fs::create_dir_all(home.join(folder)).expect("folder");
        }
        std::fs::write(home.join(".rustup/settings.toml"), "default_toolchain = \"stable\"\n")
            .expect("rustup settings");
        std::fs::write(home.join(".gitconfig"), "[user]\n").expect("gitconfig");
        std::fs::write(home.join(".config/git/config"), "[user]\n").expect("git config");
        std::fs::write(home.join(".config/git/credentials"), "https://u:p@h").expect("store");
        // `npm config set -g` in nvm's node: the token lies in its prefix's etc/npmrc.
        std::fs::create_dir_all(home.join(".nvm/versions/node/v20/etc")).expect("etc");
        std::fs::write(home.join(".nvm/versions/node/v20/etc/npmrc"), "_authToken=x").expect("rc");
        std::fs::create_dir_all(home.join(".pyenv/versions/3.11")).expect("pyenv version");
        std::fs::write(home.join(".pyenv/versions/3.11/pip.conf"), "index-url=https://u:p@h")
            .expect("pip.conf");
        let node = home.join(".nvm/versions/node/v20");
        std::fs::write(node.join("lib/npm-cli.js"), "").expect("npm");
        std::os::unix::fs::symlink(node.join("lib/npm-cli.js"), node.join("bin/npm")).expect("ln");
        std::fs::write(home.join(".cargo/credentials.toml"), "token").expect("credentials");
        let npm = home.join(".node/v22/lib/node_modules/npm/bin/npm-cli.js");
        std::fs::write(&npm, "").expect("npm");
        std::os::unix::fs::symlink(&npm, home.join(".node/v22/bin/npm")).expect("ln");
        let pipx = home.join(".local/share/pipx/venvs/t/bin");
        std::fs::create_dir_all(&pipx).expect("pipx");
        std::fs::write(pipx.join("t"), "").expect("tool");
        std::os::unix::fs::symlink(pipx.join("t"), home.join(".local/bin/t")).expect("ln");
        let path = std::env::join_paths(
            [
                ".cargo/bin",
                ".local/bin",
                ".node/v22/bin",
                ".nvm/versions/node/v20/bin",
                ".pyenv/shims",
                ".ssh/bin",
                "",
            ]
            .iter()
            .map(|f| home.join(f))
            .chain([PathBuf::from("/usr/bin"), PathBuf::from("relative/bin")]),
        )
        .expect("PATH");
        let reads = home_reads(&home, Some(&path));
        let shown: Vec<String> = reads
            .read
            .iter()
            .map(|p| p.strip_prefix(&home).expect("in home").display().to_string())
            .collect();
        assert_eq!(
            shown,
            [
                ".cargo/bin",
                ".config/git/config",
                ".gitconfig",
                ".local/bin",
                ".local/share/pipx/venvs/t/bin",
                ".node/v22/bin",
                ".node/v22/lib",
                ".nvm/versions/node/v20/bin",
                ".nvm/versions/node/v20/lib",
                ".pyenv/shims",
                ".rustup/settings.toml",
                ".rustup/toolchains/stable/bin",
                ".rustup/toolchains/stable/lib"
            ]
        );
        let left: Vec<&Path> = reads.left_out.iter().map(|(p, _)| p.as_path()).collect();
        assert!(left.contains(&home.join(".ssh/bin").as_path()), "{left:?}");
        // A link into pipx's folder shows that program's venv, not ~/.local/share (the
        // keyrings); a version's own settings (pip.conf, etc/npmrc) are never shown.
        let leaked = [".pyenv/versions/3.11/pip.conf", ".nvm/versions/node/v20/etc/npmrc"];
        for file in leaked.map(|l| home.join(l)) {
            assert!(reads.read.iter().all(|p| !file.starts_with(p)), "{file:?} in {reads:?}");
        }
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_linked_gitconfig_is_read_where_it_lies_and_linked_again_in_the_threads_home() {
        let home = scratch("links");
        std::fs::create_dir_all(home.join("dotfiles")).expect("dotfiles");
        std::fs::write(home.join("dotfiles/gitconfig"), "[user]\n").expect("gitconfig");
        std::os::unix::fs::symlink("dotfiles/gitconfig", home.join(".gitconfig")).expect("ln");
        let reads = home_reads(&home, None);
        assert_eq!(reads.read, [home.join("dotfiles/gitconfig")]);
        assert_eq!(
            reads.links,
            [(PathBuf::from(".gitconfig"), PathBuf::from("dotfiles/gitconfig"))]
        );
        let own = scratch("links-own");
        std::fs::write(own.join(".keep"), "").expect("file");
        make_links(&own, &reads.links);
        assert_eq!(
            std::fs::read_link(own.join(".gitconfig")).expect("made"),
            PathBuf::from("dotfiles/gitconfig")
        );
        // A folder on the way that the thread made a link to one of yours: nothing is made.
        let yours = scratch("links-yours");
        std::os::unix::fs::symlink(&yours, own.join(".config")).expect("planted");
        let nested = [(PathBuf::from(".config/git/config"), PathBuf::from("/x/config"))];
        make_links(&own, &nested);
        assert!(std::fs::read_dir(&yours).expect("yours").next().is_none(), "nothing made there");
        let _ = std::fs::remove_dir_all(&yours);
        let _ = std::fs::remove_dir_all(&home);
        let _ = std::fs::remove_dir_all(&own);
    }
}
