//! Git's files that a lock protects wherever a writable folder holds a repository: hooks and
//! config run commands when the user later runs git outside the lock (`core.hooksPath`,
//! `core.fsmonitor`, `core.sshCommand`, filters, `!` aliases). Besides each writable folder's
//! own `.git` (see `policy`), that is every repository nested inside it, found by a bounded
//! walk, and a writable folder that is itself a repository's git folder (a worktree's common
//! directory). A `.git` file (a worktree's or submodule's pointer) is protected as it is.
//! What the kernel cannot protect is found afterwards (`git_planted`).

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

/// Whether `folder` is a repository's git folder (what `.git` usually is): HEAD, objects and
/// config in it.
fn is_git_folder(folder: &Path) -> bool {
    let there = |name: &str| folder.join(name).symlink_metadata().is_ok();
    there("HEAD") && there("objects") && there("config")
}

#[cfg(test)]
mod tests {
    use super::*;

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
