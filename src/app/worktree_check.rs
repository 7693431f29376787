//! What paddock checks around the git that makes a thread's worktree (`worktree::ensure`): that
//! the files of git's it reads are plain files before it runs (a named pipe planted by a lock
//! would hold git until it is stopped), and that what ran during the checkout (a filter) left
//! nothing git would follow later, outside any lock: a link in the new worktree's git folder,
//! a git folder nested in the checkout.

use std::path::{Path, PathBuf};

/// Most entries looked at in a walk: a checkout larger than this is refused rather than
/// half checked.
const MOST_ENTRIES: usize = 2_000_000;
/// Most worktrees of one repository looked at.
const MOST_WORKTREES: usize = 10_000;

/// git's files in the repository's git folder `common` that git reads to make a worktree,
/// each a plain file where it is there.
pub fn plain_git_files(common: &Path) -> Result<(), String> {
    let mut files: Vec<PathBuf> =
        ["HEAD", "packed-refs", "config", "config.worktree", "objects/info/alternates"]
            .iter()
            .chain(&["info/attributes", "info/exclude", "info/sparse-checkout"])
            .map(|name| common.join(name))
            .collect();
    if let Ok(entries) = std::fs::read_dir(common.join("worktrees")) {
        for entry in entries.flatten().take(MOST_WORKTREES) {
            let names = ["HEAD", "gitdir", "commondir", "config.worktree", "index", "locked"];
            files.extend(names.iter().map(|name| entry.path().join(name)));
        }
    }
    for file in files {
        match file.symlink_metadata() {
            Ok(meta) if !meta.is_file() => {
                return Err(format!(
                    "{} is not a plain file (a link, a named pipe or a folder): a program may \
                     have put it there (one paddock locked, among others); look at it",
                    crate::sandbox::visible(&file.display().to_string())
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The names in `folder` (none when it is not there).
pub fn names_in(folder: &Path) -> Vec<std::ffi::OsString> {
    let entries = std::fs::read_dir(folder).into_iter().flatten().flatten();
    entries.take(MOST_WORKTREES).map(|entry| entry.file_name()).collect()
}

/// After the checkout: the new worktree's own git folder holds no link (git would write
/// through one, a reflog to `~/.bashrc` say), and the checkout no git folder but its own
/// `.git` file (git run there would take its settings).
pub fn left_clean(worktree: &Path, gitdir: &Path) -> Result<(), String> {
    let mut seen = 0;
    if let Some(link) = first(gitdir, &mut seen, &|_, meta| meta.file_type().is_symlink())? {
        return Err(format!("{} is a link", link.display()));
    }
    let top = worktree.join(".git");
    let nested = |path: &Path, _: &std::fs::Metadata| path.ends_with(".git") && path != top;
    if let Some(git) = first(worktree, &mut seen, &nested)? {
        return Err(format!("{} is a git folder of its own in the checkout", git.display()));
    }
    Ok(())
}

/// The first path under `folder` (not following links) that `is` holds for.
fn first(
    folder: &Path,
    seen: &mut usize,
    is: &dyn Fn(&Path, &std::fs::Metadata) -> bool,
) -> Result<Option<PathBuf>, String> {
    let mut stack = vec![folder.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            *seen += 1;
            if *seen > MOST_ENTRIES {
                return Err(format!("more than {MOST_ENTRIES} files to look through"));
            }
            let path = entry.path();
            let meta = path.symlink_metadata().map_err(|e| format!("{}: {e}", path.display()))?;
            if is(&path, &meta) {
                return Ok(Some(path));
            }
            if meta.is_dir() {
                stack.push(path);
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_in_the_git_folder_or_a_git_folder_in_the_checkout_is_named() {
        let dir = std::env::temp_dir().join(format!("paddock-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (worktree, gitdir) = (dir.join("wt"), dir.join("gitdir"));
        std::fs::create_dir_all(worktree.join("src/deep")).expect("worktree");
        std::fs::create_dir_all(gitdir.join("logs")).expect("gitdir");
        std::fs::write(worktree.join(".git"), "gitdir: x\n").expect(".git");
        std::fs::write(worktree.join("src/deep/file"), "x").expect("file");
        std::os::unix::fs::symlink("/tmp", worktree.join("src/link")).expect("a link to keep");
        assert_eq!(left_clean(&worktree, &gitdir), Ok(()), "a checkout may hold links");
        std::os::unix::fs::symlink("/etc/x", gitdir.join("logs/HEAD")).expect("link");
        let said = left_clean(&worktree, &gitdir).expect_err("a link in the git folder");
        assert!(said.ends_with("logs/HEAD is a link"), "{said}");
        std::fs::remove_file(gitdir.join("logs/HEAD")).expect("unlink");
        std::fs::create_dir_all(worktree.join("src/deep/.git")).expect("nested");
        let said = left_clean(&worktree, &gitdir).expect_err("a nested git folder");
        assert!(said.contains("src/deep/.git is a git folder of its own"), "{said}");
        std::fs::remove_dir(worktree.join("src/deep/.git")).expect("unnest");
        for name in ["HEAD", "packed-refs"] {
            std::fs::write(gitdir.join(name), "x").expect("plain");
        }
        assert_eq!(plain_git_files(&gitdir), Ok(()));
        std::fs::remove_file(gitdir.join("packed-refs")).expect("packed-refs");
        std::os::unix::fs::symlink("/dev/zero", gitdir.join("packed-refs")).expect("link");
        let said = plain_git_files(&gitdir).expect_err("a link");
        assert!(said.contains("packed-refs is not a plain file"), "{said}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
