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
pub const DEFAULT_READ: &[&str] = &[
    ".gitconfig",
    ".config/git/config",
    ".config/git/ignore",
    ".config/git/attributes",
    ".rustup",
];

/// Names of files that hold credentials: a folder the default list would show whole is left
/// out when it holds one at its top (nvm's ~/.nvm/.npmrc, a `credentials` beside a tool).
pub const CREDENTIAL_FILES: &[&str] = &[
    ".npmrc",
    ".netrc",
    ".pypirc",
    ".git-credentials",
    ".env",
    "credentials",
    "credentials.toml",
    "credentials.json",
    "auth.json",
    "token",
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

/// The default read list for a lock: `DEFAULT_READ` where it exists, and the folders of
/// `path_var` (the pane's PATH) that lie inside `home`: a version manager's whole folder
/// (`TOOLCHAIN_HOMES`), or the PATH folder with the toolchain its links lead into
/// (`bin/tool` -> `../lib/tool/…`); never a folder in `NEVER_BY_DEFAULT` or holding one, never
/// the home itself.
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
    for folder in path_var.map(std::env::split_paths).into_iter().flatten() {
        if !folder.is_absolute() {
            continue;
        }
        let Ok(real) = folder.canonicalize() else { continue };
        if !real.starts_with(home) || !real.is_dir() {
            continue;
        }
        // A version manager's whole folder, unless it holds a credential file (then the PATH
        // folder and its toolchain, as for any other).
        let manager = TOOLCHAIN_HOMES
            .iter()
            .map(|n| home.join(n))
            .find(|t| real.starts_with(t))
            .filter(|t| allowed(home, t).is_ok());
        match allowed(home, &real) {
            Ok(()) if manager.is_some() => reads.read.extend(manager),
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
    let held = CREDENTIAL_FILES.iter().find(|name| path.join(name).symlink_metadata().is_ok());
    match held {
        Some(name) if path.is_dir() => Err(format!(
            "it holds {name}, which may hold credentials (list what you need under `read`)"
        )),
        _ => Ok(()),
    }
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
        let Some(next) = target.strip_prefix(&common).ok().and_then(|r| r.components().next())
        else {
            continue;
        };
        let root = common.join(next);
        let depth = root.strip_prefix(home).map_or(0, |r| r.components().count());
        let verdict = if depth < 2 {
            Err(format!(
                "{} leads to {}, which lies in a folder too broad to show by default (list the \
                 toolchain's folder under `read`)",
                link.display(),
                target.display()
            ))
        } else {
            allowed(home, &root)
        };
        match verdict {
            Ok(()) => reads.read.push(root),
            Err(why) => reads.left_out.push((root, why)),
        }
    }
}

/// Make `links` again in the thread's home `own`, where it has nothing by that name (what the
/// thread put there is its own).
#[cfg(unix)]
pub fn make_links(own: &Path, links: &[(PathBuf, PathBuf)]) {
    for (name, target) in links {
        let place = own.join(name);
        if place.symlink_metadata().is_err() {
            if let Some(parent) = place.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::os::unix::fs::symlink(target, &place);
        }
    }
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
        ] {
            std::fs::create_dir_all(home.join(folder)).expect("folder");
        }
        std::fs::write(home.join(".gitconfig"), "[user]\n").expect("gitconfig");
        std::fs::write(home.join(".config/git/config"), "[user]\n").expect("git config");
        std::fs::write(home.join(".config/git/credentials"), "https://u:p@h").expect("store");
        std::fs::write(home.join(".nvm/.npmrc"), "_authToken=x").expect("nvm npmrc");
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
                ".node/v22/bin",
                ".node/v22/lib",
                ".nvm/versions/node/v20/bin",
                ".nvm/versions/node/v20/lib",
                ".pyenv"
            ]
        );
        let left: Vec<&Path> = reads.left_out.iter().map(|(p, _)| p.as_path()).collect();
        assert!(left.contains(&home.join(".ssh/bin").as_path()), "{left:?}");
        let share = home.join(".local/share");
        assert!(left.contains(&share.as_path()), "it holds the keyrings: {left:?}");
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
        let _ = std::fs::remove_dir_all(&home);
        let _ = std::fs::remove_dir_all(&own);
    }
}
