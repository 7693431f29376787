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
    /// A link among a git folder's own files, reflogs or refs: git writes through it (a
    /// reflog line appended to the file it names, with commit subjects of the agent's).
    DataLink,
}

/// How many entries of a git folder's `logs/` and `refs/` are looked at for links.
const MAX_DATA_ENTRIES: usize = 20_000;

/// Git's watched files under some folders at one time, and the folders too large to see whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSnapshot {
    files: BTreeMap<PathBuf, (Kind, Seen)>,
    /// The git folders recorded (each once).
    git_folders: std::collections::BTreeSet<PathBuf>,
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
        let own = folder.join(".git");
        if own.is_dir() {
            snapshot.record_git_folder(&own);
        } else {
            snapshot.record_pointed(&own);
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
                    // A worktree's or submodule's pointer to its git folder, which the lock
                    // may write (a worktree's) and git runs from.
                    snapshot.record(&entry.path(), Kind::Pointer);
                    snapshot.record_pointed(&entry.path());
                } else if kind.is_dir() && !(is_git && GIT_DATA.iter().any(|s| name == *s)) {
                    queue.push_back(entry.path());
                }
            }
        }
    }
    snapshot
}

impl GitSnapshot {
    /// The git folder a `.git` file names, recorded (with the common folder it names in turn):
    /// a worktree's, which a lock on the worktree may write.
    fn record_pointed(&mut self, pointer: &Path) {
        if let Some(gitdir) = pointed(pointer, "gitdir:") {
            self.record_git_folder(&gitdir);
        }
    }

    /// A git folder's watched files: its settings, pointers, hooks, to-do lists, and links
    /// among its own files, reflogs and refs; then the common folder it names, if any.
    fn record_git_folder(&mut self, dir: &Path) {
        if !dir.is_dir() || !self.git_folders.insert(dir.to_owned()) {
            return;
        }
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
        // After the files watched for what they are (a hook that is a link is named as a hook).
        self.record_elsewhere(dir);
        self.record_links(dir);
        if let Some(common) = pointed(&dir.join("commondir"), "") {
            self.record_git_folder(&common);
        }
    }

    /// Every link in git folder `dir` that leads out of it (bounded), not followed: all of it
    /// but `objects/`, of which its top, `info/` and `pack/` (git writes a rebase's `done`,
    /// `msgnum`, rerere's preimages, loose objects… through such a link); submodules' git
    /// folders (`modules/`) are git folders of their own.
    fn record_links(&mut self, dir: &Path) {
        let objects = dir.join("objects");
        let mut queue: Vec<PathBuf> = vec![dir.to_owned()];
        let mut looked = 0;
        while let Some(folder) = queue.pop() {
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                looked += 1;
                if looked > MAX_DATA_ENTRIES {
                    self.partly_seen.push(dir.to_owned());
                    return;
                }
                let path = entry.path();
                match entry.file_type() {
                    Ok(t) if t.is_symlink() && lands_outside(dir, &path) => {
                        self.record(&path, Kind::DataLink)
                    }
                    Ok(t) if t.is_dir() => {
                        let into = if folder == objects {
                            path.ends_with("info") || path.ends_with("pack")
                        } else {
                            !(folder == *dir && path.ends_with("modules"))
                        };
                        if into {
                            queue.push(path);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    /// Files that send git elsewhere besides `commondir`: objects borrowed from other
    /// folders, and remotes defined the old way (`remotes/NAME`, `branches/NAME`).
    fn record_elsewhere(&mut self, dir: &Path) {
        for name in ["objects/info/alternates", "objects/info/http-alternates"] {
            self.record(&dir.join(name), Kind::Pointer);
        }
        for folder in ["remotes", "branches"] {
            for entry in std::fs::read_dir(dir.join(folder)).into_iter().flatten().flatten() {
                self.record(&entry.path(), Kind::Pointer);
            }
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

/// Whether `link` (in git folder `git`) leads out of it: followed to its end, or for one that
/// leads nowhere yet, to where its target would be made. (A `HEAD` linked to
/// `refs/heads/main` stays inside; a reflog linked to ~/.bashrc does not.)
fn lands_outside(git: &Path, link: &Path) -> bool {
    let Ok(git) = git.canonicalize() else { return true };
    if let Ok(real) = link.canonicalize() {
        return !real.starts_with(&git);
    }
    let Ok(target) = std::fs::read_link(link) else { return true };
    let wanted = link.parent().unwrap_or(Path::new("/")).join(target);
    // The deepest folder on the way that exists, in canonical form, then the rest by name.
    let mut rest = Vec::new();
    let mut at = wanted.as_path();
    loop {
        if let Ok(real) = at.canonicalize() {
            let mut whole = real;
            for part in rest.iter().rev() {
                match part {
                    std::path::Component::ParentDir => {
                        whole.pop();
                    }
                    std::path::Component::Normal(name) => whole.push(name),
                    _ => {}
                }
            }
            return !whole.starts_with(&git);
        }
        let Some(parent) = at.parent() else { return true };
        rest.extend(at.components().next_back());
        at = parent;
    }
}

/// The folder a pointer file names (`gitdir: X` in a `.git` file, `X` in `commondir`), taken
/// from the file's folder when relative, in canonical form; `None` unless it is a folder. Not
/// followed if the pointer itself is a link.
fn pointed(pointer: &Path, prefix: &str) -> Option<PathBuf> {
    let Some(Seen::File { bytes, .. }) = seen(pointer) else { return None };
    let text = String::from_utf8_lossy(&bytes);
    let named = text.trim().strip_prefix(prefix)?.trim();
    let folder = pointer.parent()?.join(named).canonicalize().ok()?;
    folder.is_dir().then_some(folder)
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
            // A link of the user's that is a file now: nothing git would follow.
            (Kind::DataLink, Seen::File { .. }) => {}
            (Kind::DataLink, Seen::Link(target)) => {
                let what = if path.components().any(|c| c.as_os_str() == "logs") {
                    " (a reflog line, with commit subjects the agent chose, appended there)"
                } else {
                    ""
                };
                found.push(format!(
                    "{shown} is a link to {}: git writes through it{what}",
                    target.display()
                ))
            }
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
                // As git reads a to-do line: blanks (spaces, tabs) before the command word and
                // between it and its argument.
                let runs = text.lines().filter_map(|line| {
                    let (word, rest) = line.trim().split_once([' ', '\t'])?;
                    matches!(word, "exec" | "x").then_some(rest)
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
        found.push((key, config_value(value)));
    }
    found
}

/// A setting's value as git reads it: quotes dropped, escapes (`\"`, `\\`, `\n`, `\t`, `\b`)
/// taken.
fn config_value(raw: &str) -> String {
    let mut value = String::with_capacity(raw.len());
    let mut chars = raw.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {}
            '\\' => match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some('b') => {
                    value.pop();
                }
                Some(c @ ('"' | '\\')) => value.push(c),
                // Not an escape git knows (it refuses the file): shown as written.
                Some(other) => {
                    value.push('\\');
                    value.push(other);
                }
                None => {}
            },
            c => value.push(c),
        }
    }
    value
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

/// The settings in a git config file's `text` not known to be inert (`inert`), as
/// `key = value` (shortened, control characters escaped), in order.
pub fn uninert_settings(text: &str) -> Vec<String> {
    let settings = settings(text).into_iter().filter(|(key, value)| !inert(key, value));
    settings.map(|(key, value)| super::visible(&format!("{key} = {}", shorten(&value)))).collect()
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
        "core.sparsecheckout",
        "core.sparsecheckoutcone",
        "index.sparse",
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
#[path = "git_planted_tests.rs"]
mod tests;
