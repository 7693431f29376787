//! What paddock checks around the git that makes a thread's worktree (`worktree::ensure`): that
//! the files of git's it reads are plain files before it runs (a named pipe planted by a lock
//! would hold git until it is stopped); that the worktree's own settings (copied by git from the
//! repository's `config.worktree`, which a lock may write) make git run nothing; and that what
//! ran during the checkout (a filter) left nothing git would follow later, outside any lock:
//! anything but git's own files in the new worktree's git folder, a git folder nested in the
//! checkout.

use std::path::{Path, PathBuf};

/// Most entries looked at in a walk: a checkout larger than this is refused rather than
/// half checked.
const MOST_ENTRIES: usize = 1_000_000;
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

/// What git leaves in a new worktree's own git folder after its checkout; anything else there
/// (a paused rebase, a merge in progress) was put there.
const GIT_FOLDER_HOLDS: &[&str] = &[
    "HEAD",
    "ORIG_HEAD",
    "commondir",
    "gitdir",
    "index",
    "logs",
    "refs",
    "reftable",
    "config.worktree",
    "locked",
];

/// The worktree's own git folder `gitdir` as git leaves it: only git's own files
/// (`GIT_FOLDER_HOLDS`), each a plain file or (`logs/`, `refs/`) a folder; no link (git would write
/// through one, a reflog to `~/.bashrc` say), no named pipe.
pub fn own_git_folder_clean(gitdir: &Path) -> Result<(), String> {
    for name in names_in(gitdir) {
        if !GIT_FOLDER_HOLDS.iter().any(|held| name == *held) {
            let path = gitdir.join(&name);
            return Err(format!("{} is not one of git's files", visible(&path)));
        }
    }
    let mut seen = 0;
    let odd = |_: &Path, kind: std::fs::FileType| !kind.is_file() && !kind.is_dir();
    match first(gitdir, &mut seen, &odd)? {
        Some(path) => Err(format!("{} is a link or a named pipe", visible(&path))),
        None => Ok(()),
    }
}

/// The worktree's own settings (`config.worktree` in its git folder, git's copy of the
/// repository's): none that makes git run a program or go elsewhere.
pub fn own_settings_inert(gitdir: &Path) -> Result<(), String> {
    let settings = gitdir.join("config.worktree");
    let Some(text) = read_plain(&settings)? else { return Ok(()) };
    match crate::sandbox::git_planted::uninert_settings(&String::from_utf8_lossy(&text)).first() {
        Some(setting) => Err(format!(
            "{} sets {setting}, which git copied from the repository's own `config.worktree`, \
             where a program may have put it (one paddock locked, among others); look at it",
            visible(&settings)
        )),
        None => Ok(()),
    }
}

/// After the checkout: the checkout holds no git folder but its own `.git` file (git run
/// there would take its settings).
pub fn no_nested_git(worktree: &Path) -> Result<(), String> {
    let top = worktree.join(".git");
    let mut seen = 0;
    let nested = |path: &Path, _: std::fs::FileType| path.ends_with(".git") && path != top;
    match first(worktree, &mut seen, &nested)? {
        Some(git) => Err(format!("{} is a git folder of its own in the checkout", visible(&git))),
        None => Ok(()),
    }
}

/// A file of at most 1 MiB, read only if it is a plain file (`sandbox::worktree::read_plain`);
/// `None` when it is not there.
pub fn read_plain(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match crate::sandbox::worktree::read_plain(path, 1 << 20) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(format!("{} is not a plain file", visible(path)))
        }
        // A link there (O_NOFOLLOW) is no plain file either.
        Err(e) if e.raw_os_error() == Some(libc_eloop()) => {
            Err(format!("{} is not a plain file", visible(path)))
        }
        Err(e) => Err(format!("{}: {e}", visible(path))),
    }
}

#[cfg(unix)]
fn libc_eloop() -> i32 {
    libc::ELOOP
}

#[cfg(not(unix))]
fn libc_eloop() -> i32 {
    -1
}

fn visible(path: &Path) -> String {
    crate::sandbox::visible(&path.display().to_string())
}

/// The first path under `folder` (not following links) that `is` holds for, by the kind of
/// file its folder entry gives (no stat per file: a checkout may be large).
fn first(
    folder: &Path,
    seen: &mut usize,
    is: &dyn Fn(&Path, std::fs::FileType) -> bool,
) -> Result<Option<PathBuf>, String> {
    let mut stack = vec![folder.to_owned()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", visible(&dir)))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", visible(&dir)))?;
            *seen += 1;
            if *seen > MOST_ENTRIES {
                return Err(format!("more than {MOST_ENTRIES} files to look through"));
            }
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| format!("{}: {e}", visible(&path)))?;
            if is(&path, kind) {
                return Ok(Some(path));
            }
            if kind.is_dir() {
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
    fn what_git_would_follow_later_is_named() {
        let dir = std::env::temp_dir().join(format!("paddock-check-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (worktree, gitdir) = (dir.join("wt"), dir.join("gitdir"));
        std::fs::create_dir_all(worktree.join("src/deep")).expect("worktree");
        std::fs::create_dir_all(gitdir.join("logs")).expect("gitdir");
        std::fs::write(worktree.join(".git"), "gitdir: x\n").expect(".git");
        std::fs::write(worktree.join("src/deep/file"), "x").expect("file");
        std::os::unix::fs::symlink("/tmp", worktree.join("src/link")).expect("a link to keep");
        assert_eq!(no_nested_git(&worktree), Ok(()), "a checkout may hold links");
        std::fs::write(gitdir.join("HEAD"), "ref: refs/heads/x\n").expect("HEAD");
        assert_eq!(own_git_folder_clean(&gitdir), Ok(()));
        std::os::unix::fs::symlink("/etc/x", gitdir.join("logs/HEAD")).expect("link");
        let said = own_git_folder_clean(&gitdir).expect_err("a link in the git folder");
        assert!(said.ends_with("logs/HEAD is a link or a named pipe"), "{said}");
        std::fs::remove_file(gitdir.join("logs/HEAD")).expect("unlink");
        std::fs::create_dir(gitdir.join("rebase-merge")).expect("rebase");
        let said = own_git_folder_clean(&gitdir).expect_err("a paused rebase");
        assert!(said.ends_with("rebase-merge is not one of git's files"), "{said}");
        std::fs::remove_dir(gitdir.join("rebase-merge")).expect("no rebase");
        std::fs::create_dir_all(worktree.join("src/deep/.git")).expect("nested");
        let said = no_nested_git(&worktree).expect_err("a nested git folder");
        assert!(said.contains("src/deep/.git is a git folder of its own"), "{said}");
        std::fs::remove_dir(worktree.join("src/deep/.git")).expect("unnest");
        let settings = gitdir.join("config.worktree");
        std::fs::write(&settings, "[core]\n\tsparseCheckout = true\n").expect("settings");
        assert_eq!(own_settings_inert(&gitdir), Ok(()));
        std::fs::write(&settings, "[core]\n\tfsmonitor = \"./evil\"\n").expect("settings");
        let said = own_settings_inert(&gitdir).expect_err("a program");
        assert!(said.contains("sets core.fsmonitor = ./evil"), "{said}");
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
