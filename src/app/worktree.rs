//! A thread's own git worktree (`worktree: (repo: "~/src/app", branch: "agent-a")`): made with
//! git when the thread starts, or found again, in paddock's data folder
//! (`$XDG_DATA_HOME/paddock/worktrees/<repo>-<id>/<branch>`), so several agents can work on one
//! repository, each on its branch, each locked to its own folder.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::Worktree;
use crate::sandbox::worktree::worktree_of;

/// Where the threads' worktrees are made.
pub fn worktrees_folder() -> Option<PathBuf> {
    dirs::data_dir().map(|dir| dir.join("paddock").join("worktrees"))
}

/// Where `worktree`'s folder is, for the repository at `repo` (canonical): a folder per
/// repository, named by its folder and a hash of its path (two clones named `app` stay apart),
/// and one per branch, a `/` in its name written `%2F`.
pub fn place(worktrees: &Path, repo: &Path, branch: &str) -> PathBuf {
    let name = repo.file_name().map_or("repo".into(), |n| n.to_string_lossy().into_owned());
    let name: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() || "-_.".contains(c) { c } else { '_' })
        .collect();
    let id = fnv1a(repo.as_os_str().as_encoded_bytes());
    worktrees.join(format!("{name}-{id:08x}")).join(branch.replace('%', "%25").replace('/', "%2F"))
}

/// FNV-1a, 32 bits: a short, stable name for a path (not a secret, not a check).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, byte| (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193))
}

/// `worktree`'s folder, canonical: the one made before when it is a worktree of the same
/// repository, else a new one (`git worktree add`, on the branch, made from the repository's
/// HEAD when it does not exist). Why not, in words, when git refuses.
pub fn ensure(worktree: &Worktree) -> Result<PathBuf, String> {
    ensure_in(&worktrees_folder().ok_or("no data folder (HOME is not set)")?, worktree)
}

/// `ensure`, with the threads' worktrees in `folders`.
fn ensure_in(folders: &Path, worktree: &Worktree) -> Result<PathBuf, String> {
    let repo = worktree.repo.canonicalize().map_err(|e| {
        format!("the worktree's repository {} cannot be opened: {e}", worktree.repo.display())
    })?;
    trusted_git_folder(&repo)?;
    let common = git(&repo, &["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .map_err(|why| format!("{} is not a git repository: {why}", repo.display()))?;
    let common = PathBuf::from(common.trim());
    let common = common.canonicalize().unwrap_or(common);
    let folder = place(folders, &repo, &worktree.branch);
    if folder.exists() {
        let real = folder.canonicalize().map_err(|e| format!("{}: {e}", folder.display()))?;
        return match worktree_of(&real) {
            Some(found) if found.common == common => Ok(real),
            _ => Err(format!(
                "{} is there but is not a worktree of {}: move it away to let paddock make one",
                folder.display(),
                repo.display()
            )),
        };
    }
    if let Some(parent) = folder.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    let branch = &worktree.branch;
    let exists = git(&repo, &["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")]);
    let target = folder.to_string_lossy().into_owned();
    let args: Vec<&str> = if exists.is_ok() {
        vec!["worktree", "add", "--quiet", &target, branch]
    } else {
        vec!["worktree", "add", "--quiet", "-b", branch, &target]
    };
    git(&repo, &args).map_err(|why| format!("git could not make the worktree: {why}"))?;
    folder.canonicalize().map_err(|e| format!("{}: {e}", folder.display()))
}

/// `worktree`'s folder, canonical, when it has been made.
pub fn existing(worktree: &Worktree) -> Option<PathBuf> {
    let repo = worktree.repo.canonicalize().ok()?;
    place(&worktrees_folder()?, &repo, &worktree.branch).canonicalize().ok()
}

/// paddock runs git unlocked, on a repository its locked threads write: only one whose git
/// folder is `repo/.git` itself (git is never left to look for one above it, where a lock
/// could have made its own), that sends git nowhere else, and whose own config names no
/// checkout filter (a program git would run); `git` turns hooks and the file-system monitor
/// off for it.
fn trusted_git_folder(repo: &Path) -> Result<(), String> {
    let git_folder = repo.join(".git");
    let is_folder = git_folder.symlink_metadata().is_ok_and(|m| m.is_dir());
    if !is_folder {
        return Err(format!(
            "{} is not a folder of its own: paddock makes worktrees of a repository's main \
             checkout (a `.git` folder), never one it finds elsewhere",
            git_folder.display()
        ));
    }
    // A repository's own git folder never sends git elsewhere; one that does was made to (a
    // locked program may write the repository, not its config or hooks, but a `commondir`
    // would have git take those from a folder of its own).
    let commondir = git_folder.join("commondir");
    if commondir.symlink_metadata().is_ok() {
        return Err(format!(
            "{} sends git to another folder, which a repository's own git folder never does: \
             a program may have put it there (one paddock locked, among others); look at it \
             and remove it before this thread starts",
            commondir.display()
        ));
    }
    let filters = Command::new("git")
        .arg(format!("--git-dir={}", git_folder.display()))
        .args(["config", "--local", "--includes", "--get-regexp"])
        .arg(r"^filter\..*\.(smudge|process)$")
        .env_remove("GIT_DIR")
        .env_remove("GIT_CONFIG")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    // Exit 1: no such setting.
    if filters.status.success() {
        let named = String::from_utf8_lossy(&filters.stdout);
        let named = crate::sandbox::visible(named.lines().next().unwrap_or_default());
        return Err(format!(
            "{}'s own config sets a checkout filter ({named}), a program git would run outside \
             any lock when paddock makes the worktree: make the worktree yourself, or remove it",
            repo.display()
        ));
    }
    if filters.status.code() != Some(1) {
        let said = String::from_utf8_lossy(&filters.stderr);
        return Err(format!(
            "{} is not a git repository git can read: {}",
            repo.display(),
            crate::sandbox::visible(said.trim())
        ));
    }
    Ok(())
}

/// `git ARGS` in `repo`, its git folder named (`trusted_git_folder`): its output, or its error
/// output. Without the repository's hooks, file-system monitor and submodules.
fn git(repo: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .args(["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"])
        .args(["-c", "submodule.recurse=false"])
        .arg(format!("--git-dir={}", repo.join(".git").display()))
        .arg(format!("--work-tree={}", repo.display()))
        .arg("-C")
        .arg(repo)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(if said.is_empty() { format!("git ended with {}", output.status) } else { said })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_has_a_folder_per_repository_and_branch() {
        let base = Path::new("/d/worktrees");
        let a = place(base, Path::new("/home/u/src/app"), "agent-a");
        let b = place(base, Path::new("/home/u/other/app"), "feature/x");
        assert!(a.starts_with(base) && a.ends_with("agent-a"), "{a:?}");
        assert!(b.ends_with("feature%2Fx"), "{b:?}");
        assert_ne!(a.parent(), b.parent(), "two repositories named app stay apart");
        let name = a.parent().and_then(Path::file_name).expect("name").to_string_lossy();
        assert!(name.starts_with("app-") && name.len() == "app-".len() + 8, "{name}");
        assert_eq!(a, place(base, Path::new("/home/u/src/app"), "agent-a"), "the same each time");
    }

    /// A repository whose hooks would run at checkout, and a worktree of it made by paddock:
    /// the hook never runs; a repository whose git could run what a lock put there is refused.
    #[test]
    fn paddock_makes_a_worktree_without_running_the_repositorys_hooks() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("paddock-app-worktree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let repo = dir.join("repo");
        std::fs::create_dir_all(&repo).expect("repo");
        let run = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t.test"])
                .arg("-C")
                .arg(&repo)
                .args(args)
                .output()
                .expect("git");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        };
        run(&["init", "-q", "-b", "main"]);
        std::fs::write(repo.join("README"), "hi\n").expect("readme");
        run(&["add", "README"]);
        run(&["commit", "-q", "-m", "first"]);
        let marker = dir.join("hook-ran");
        let hook = repo.join(".git/hooks/post-checkout");
        std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).expect("hook");
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        // Positive control: git itself runs the hook.
        run(&["checkout", "-q", "main"]);
        assert!(marker.exists(), "the hook runs for git");
        std::fs::remove_file(&marker).expect("remove marker");
        let wanted = Worktree { repo: repo.clone(), branch: "agent-a".into() };
        let folders = dir.join("worktrees");
        let made = ensure_in(&folders, &wanted).expect("the worktree");
        assert!(made.join("README").is_file(), "checked out");
        assert!(!marker.exists(), "the repository's hook ran when paddock made the worktree");
        let other = Worktree { repo: repo.clone(), branch: "agent-b".into() };
        let refused = |planted: &str, why: &str| {
            let said = ensure_in(&folders, &other).expect_err(planted);
            assert!(said.contains(why), "{planted}: {said}");
            assert!(!place(&folders, &repo.canonicalize().expect("repo"), "agent-b").exists());
        };
        // A checkout filter in the repository's own config.
        run(&["config", "filter.x.smudge", "touch /nonexistent"]);
        refused("a filter", "sets a checkout filter (filter.x.smudge");
        run(&["config", "--unset", "filter.x.smudge"]);
        // A git folder that sends git elsewhere.
        std::fs::write(repo.join(".git/commondir"), dir.display().to_string()).expect("plant");
        refused("a commondir", "sends git to another folder");
        std::fs::remove_file(repo.join(".git/commondir")).expect("unplant");
        // A git folder broken on purpose, under a repository made above it: git would find
        // that one; paddock names its own.
        std::fs::rename(repo.join(".git/HEAD"), dir.join("HEAD")).expect("break");
        let above = Command::new("git").args(["init", "-q"]).arg(&dir).status().expect("git");
        assert!(above.success());
        refused("a broken git folder", "is not a git repository");
        // A `.git` file in place of the folder.
        let moved = dir.join("moved.git");
        std::fs::rename(repo.join(".git"), &moved).expect("move");
        std::fs::write(repo.join(".git"), format!("gitdir: {}\n", moved.display())).expect("file");
        refused("a .git file", "is not a folder of its own");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
