//! A lock whose writable folder is a git worktree: git keeps the worktree's state outside it,
//! in its own git folder (`<repo>/.git/worktrees/NAME`) and the repository's common folder, so
//! a commit needs both. What a lock adds for one, and no more: the worktree's git folder is
//! writable but for the three files that could point git elsewhere (`commondir`, `gitdir`,
//! `config.worktree`); of the common folder only `objects/`, `refs/` and `logs/` are writable,
//! the rest (config, hooks, `packed-refs`, other worktrees) read-only.

use std::path::{Path, PathBuf};

use super::Policy;

/// What a worktree's own git folder holds that could point git elsewhere: protected.
pub const PROTECTED_IN_WORKTREE_GIT: &[&str] = &["commondir", "gitdir", "config.worktree"];

/// What a commit writes in the common folder: writable.
pub const WRITABLE_IN_COMMON: &[&str] = &["objects", "refs", "logs"];

/// A worktree's git folders, canonical.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorktreeGit {
    /// Its own: `<common>/worktrees/NAME`.
    pub gitdir: PathBuf,
    /// The repository's: `<repo>/.git`.
    pub common: PathBuf,
}

/// `folder`'s git folders when it is a worktree: its `.git` file names a git folder in a
/// repository's `worktrees/`, whose `commondir` leads back to that repository and whose
/// `gitdir` names this `.git`. Anything else (a submodule, a hand-made pointer) is None.
pub fn worktree_of(folder: &Path) -> Option<WorktreeGit> {
    let pointer = folder.join(".git");
    let text = read_pointer(&pointer)?;
    let named = Path::new(text.strip_prefix("gitdir:")?.trim());
    let gitdir = folder.join(named).canonicalize().ok()?;
    let common = gitdir.parent().filter(|p| p.ends_with("worktrees"))?.parent()?.to_owned();
    let listed = read_pointer(&gitdir.join("commondir"))?;
    let listed = gitdir.join(listed.trim()).canonicalize().ok()?;
    let back = read_pointer(&gitdir.join("gitdir"))?;
    let back = Path::new(back.trim()).canonicalize().ok()?;
    let ours = pointer.canonicalize().ok()?;
    let is_repository = ["HEAD", "objects", "refs"].iter().all(|n| common.join(n).exists());
    (listed == common && back == ours && is_repository).then_some(WorktreeGit { gitdir, common })
}

/// A pointer file git wrote (a `.git` file, `commondir`, `gitdir`): a regular file of at most
/// 4 KiB (`read_plain`).
fn read_pointer(path: &Path) -> Option<String> {
    String::from_utf8(read_plain(path, 4096).ok()?).ok()
}

/// At most `most` bytes of `path`, read only if it is a plain file: opened without following a
/// link or waiting on a named pipe (a lock may have made one of either where git keeps a file,
/// which would send paddock elsewhere or hold it at the open); `InvalidData` for anything but
/// a plain file.
pub fn read_plain(path: &Path, most: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "not a plain file"));
    }
    let mut bytes = Vec::new();
    file.take(most).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `policy` with what a commit in each writable worktree needs (see the module). A worktree
/// whose common folder a writable folder already holds needs nothing more (that folder's
/// git files are protected as a git folder's). An absent `config.worktree` is made empty first
/// (a missing file cannot be protected, and one the lock made could later take effect), and
/// an absent `logs/`.
pub fn with_worktrees(mut policy: Policy) -> Policy {
    let writable = policy.write.clone();
    for folder in &writable {
        let Some(git) = worktree_of(folder) else { continue };
        if writable.iter().any(|w| git.common.starts_with(w)) {
            continue;
        }
        let config = git.gitdir.join("config.worktree");
        let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(&config);
        // A repository without reflogs yet gets the folder its first one is written in.
        let _ = std::fs::create_dir(git.common.join("logs"));
        policy.read.push(git.common.clone());
        let parts = WRITABLE_IN_COMMON.iter().map(|name| git.common.join(name));
        policy.write.extend(parts.filter(|p| p.is_dir()));
        policy.write.push(git.gitdir.clone());
        policy.protect.extend(PROTECTED_IN_WORKTREE_GIT.iter().map(|n| git.gitdir.join(n)));
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git").args(args).current_dir(dir).status().expect("git");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_worktree_gets_its_git_folder_and_the_commons_objects_refs_and_logs() {
        let dir = std::env::temp_dir().join(format!("paddock-worktree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("repo")).expect("repo");
        let dir = dir.canonicalize().expect("canonical");
        let repo = dir.join("repo");
        git(&repo, &["init", "-q"]);
        git(
            &repo,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "first",
            ],
        );
        git(&repo, &["worktree", "add", "-q", "-b", "agent-a", "../wt"]);
        let wt = dir.join("wt");
        let found = worktree_of(&wt).expect("a worktree");
        let common = repo.join(".git");
        assert_eq!(
            found,
            WorktreeGit { gitdir: common.join("worktrees/wt"), common: common.clone() }
        );
        assert_eq!(worktree_of(&repo), None, "a repository is no worktree");
        let policy = with_worktrees(Policy { write: vec![wt.clone()], ..Policy::default() });
        assert_eq!(policy.read, std::slice::from_ref(&common));
        let expected: Vec<PathBuf> = [wt.clone()]
            .into_iter()
            .chain(["objects", "refs", "logs", "worktrees/wt"].iter().map(|p| common.join(p)))
            .collect();
        assert_eq!(policy.write, expected);
        assert!(common.join("worktrees/wt/config.worktree").is_file(), "made, to protect");
        assert_eq!(policy.protect.len(), 3);
        // The repository writable already: nothing added.
        let both = Policy { write: vec![wt.clone(), repo.clone()], ..Policy::default() };
        assert_eq!(with_worktrees(both.clone()), both);
        // A pointer made a named pipe is no worktree, and is not waited on.
        let back = common.join("worktrees/wt/gitdir");
        std::fs::remove_file(&back).expect("gitdir");
        let made = Command::new("mkfifo").arg(&back).status().expect("mkfifo");
        assert!(made.success());
        assert_eq!(worktree_of(&wt), None);
        // A pointer leading somewhere else is no worktree.
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", common.display())).expect("w");
        assert_eq!(worktree_of(&wt), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
