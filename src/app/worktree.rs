//! A thread's own git worktree (`worktree: (repo: "~/src/app", branch: "agent-a")`): made with
//! git when the thread starts, or found again, in paddock's data folder
//! (`$XDG_DATA_HOME/paddock/worktrees/<repo>-<id>/<branch>`), so several agents can work on one
//! repository, each on its branch, each locked to its own folder.

use std::path::{Path, PathBuf};

use super::worktree_check::{
    names_in, no_nested_git, own_git_folder_clean, own_settings_inert, plain_git_files, read_plain,
};
use super::worktree_git::{GitCall, RunGit, BOOKKEEPING, CHECKOUT, QUESTION};
use crate::config::Worktree;
use crate::sandbox::worktree::{worktree_of, PROTECTED_IN_WORKTREE_GIT};

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
/// HEAD when it does not exist), git run by `git` (in a lock: `worktree_git`). Why not, in
/// words, when git refuses.
pub fn ensure(worktree: &Worktree, git: &dyn RunGit) -> Result<PathBuf, String> {
    ensure_in(&worktrees_folder().ok_or("no data folder (HOME is not set)")?, worktree, git)
}

/// `ensure`, with the threads' worktrees in `folders`.
fn ensure_in(folders: &Path, worktree: &Worktree, git: &dyn RunGit) -> Result<PathBuf, String> {
    let repo = worktree.repo.canonicalize().map_err(|e| {
        format!("the worktree's repository {} cannot be opened: {e}", worktree.repo.display())
    })?;
    own_git_folder(&repo)?;
    let common =
        repo.join(".git").canonicalize().map_err(|e| format!("{}: {e}", repo.display()))?;
    plain_git_files(&common)?;
    let read = [repo.clone()];
    let ask = |args: &[&str]| {
        let (write, protect) = (&[], &[]);
        let call = GitCall {
            git_dir: &common,
            work_tree: &repo,
            write,
            read: &read,
            protect,
            args,
            limit: QUESTION,
        };
        git.run(&call)
    };
    let said = ask(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .map_err(|why| format!("{} is not a git repository: {why}", repo.display()))?;
    // The repository's own git folder (`own_git_folder`): git must say so too.
    let said = PathBuf::from(said.trim());
    if said.canonicalize().ok().as_ref() != Some(&common) {
        return Err(format!(
            "git takes {}'s git folder to be {}: something sends it elsewhere; look at it",
            repo.display(),
            crate::sandbox::visible(&said.display().to_string())
        ));
    }
    let folder = place(folders, &repo, &worktree.branch);
    if folder.exists() {
        let real = folder.canonicalize().map_err(|e| format!("{}: {e}", folder.display()))?;
        return match worktree_of(&real) {
            // Found again: its own git folder, which a lock given the repository may write,
            // still only git's, and its settings inert.
            Some(found) if found.common == common => own_git_folder_clean(&found.gitdir)
                .and_then(|()| own_settings_inert(&found.gitdir))
                .map(|()| real),
            _ => Err(format!(
                "{} is there but is not a worktree of {}: move it away to let paddock make one",
                folder.display(),
                repo.display()
            )),
        };
    }
    let branch = &worktree.branch;
    let exists = ask(&["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")]);
    // Made empty first (git fills an empty folder), so git's lock can write this folder and
    // not the others beside it (other threads' worktrees).
    let made = std::fs::create_dir_all(folder.parent().unwrap_or(folders))
        .and_then(|()| std::fs::create_dir(&folder))
        .and_then(|()| folder.canonicalize());
    let target = made.map_err(|e| format!("cannot make {}: {e}", folder.display()))?;
    let worktrees = common.join("worktrees");
    let _ = std::fs::create_dir(&worktrees);
    let before = names_in(&worktrees);
    let made = make(&repo, &common, &target, exists.is_ok(), branch, git);
    if made.is_err() {
        // Gone again, and git's folder for it if this call made one: the next start tries
        // afresh, and nothing half made is left for git to follow. Moved aside at once and
        // deleted by a thread of its own (a filter may have filled it).
        let gitdir = new_gitdir(&worktrees, &before);
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let stamp = format!("{}-{}", std::process::id(), now.unwrap_or_default().as_nanos());
        for gone in [Some(target.clone()), gitdir].into_iter().flatten() {
            let aside = gone.with_file_name(format!(".removed-{stamp}"));
            if std::fs::rename(&gone, &aside).is_ok() {
                std::thread::spawn(move || std::fs::remove_dir_all(aside));
            }
        }
    }
    made.map(|()| target)
}

/// A worktree of `repo` in the empty folder `target`, in two steps, each git locked
/// (`worktree_git`): git's bookkeeping without a checkout, which runs nothing of the
/// repository's (it may write the git folder's `worktrees/`, `refs/` and `logs/`); then the
/// checkout, where a filter may run, able to write only `target` and the worktree's own git
/// folder, with the pointers in both read-only. Each step's result is checked before the next.
fn make(
    repo: &Path,
    common: &Path,
    target: &Path,
    branch_exists: bool,
    branch: &str,
    git: &dyn RunGit,
) -> Result<(), String> {
    // `logs/` may not be there yet; `reftable/` is where refs are kept in that format.
    let _ = std::fs::create_dir(common.join("logs"));
    let mut write: Vec<PathBuf> = ["worktrees", "refs", "logs", "reftable"]
        .iter()
        .map(|name| common.join(name))
        .filter(|folder| folder.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .collect();
    write.push(target.to_owned());
    let target_text = target.to_string_lossy().into_owned();
    let args: Vec<&str> = if branch_exists {
        vec!["worktree", "add", "--quiet", "--no-checkout", &target_text, branch]
    } else {
        vec!["worktree", "add", "--quiet", "--no-checkout", "-b", branch, &target_text]
    };
    let read = [repo.to_owned()];
    let call = GitCall {
        git_dir: common,
        work_tree: repo,
        write: &write,
        read: &read,
        protect: &[],
        args: &args,
        limit: BOOKKEEPING,
    };
    git.run(&call).map_err(|why| format!("git could not make the worktree: {why}"))?;
    let refused = |what: String| {
        format!(
            "the worktree git made in {} was removed: {what}. Something in {} changed it \
             while git made it (a checkout filter, say); look at the repository",
            target.display(),
            repo.display()
        )
    };
    let found = worktree_of(target).filter(|found| found.common == common);
    let found = found.ok_or_else(|| refused("it does not point back to the repository".into()))?;
    // What git copied from the repository's `config.worktree` (a lock may write that file).
    own_settings_inert(&found.gitdir).map_err(refused)?;
    let pointers: Vec<PathBuf> = PROTECTED_IN_WORKTREE_GIT
        .iter()
        .map(|name| found.gitdir.join(name))
        .chain([target.join(".git")])
        .collect();
    // Made empty first, so the checkout's lock can keep it read-only (git copies one only
    // where the repository has per-worktree settings).
    let settings = found.gitdir.join("config.worktree");
    let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(&settings);
    let settings_before = read_plain(&settings).map_err(refused)?;
    let write = [target.to_owned(), found.gitdir.clone()];
    let read = [common.to_owned()];
    let args = ["reset", "--hard", "--quiet"];
    let call = GitCall {
        git_dir: &found.gitdir,
        work_tree: target,
        write: &write,
        read: &read,
        protect: &pointers,
        args: &args,
        limit: CHECKOUT,
    };
    git.run(&call).map_err(|why| {
        format!("git could not check out the worktree (it was removed; the next start tries again): {why}")
    })?;
    if worktree_of(target).as_ref() != Some(&found) {
        return Err(refused("it no longer points back to the repository".into()));
    }
    if read_plain(&settings).map_err(refused)? != settings_before {
        return Err(refused("its git folder's settings changed".into()));
    }
    own_git_folder_clean(&found.gitdir).and_then(|()| no_nested_git(target)).map_err(refused)
}

/// The folder git made in `worktrees` since it held `before`, if any.
fn new_gitdir(worktrees: &Path, before: &[std::ffi::OsString]) -> Option<PathBuf> {
    names_in(worktrees).into_iter().find(|name| !before.contains(name)).map(|n| worktrees.join(n))
}

/// `worktree`'s folder, canonical, when it has been made.
pub fn existing(worktree: &Worktree) -> Option<PathBuf> {
    let repo = worktree.repo.canonicalize().ok()?;
    place(&worktrees_folder()?, &repo, &worktree.branch).canonicalize().ok()
}

/// paddock makes worktrees of a repository's main checkout: its git folder is `repo/.git`
/// itself (git is never left to look for one above it, where a lock could have made its own),
/// and sends git nowhere else (a `commondir`, which a repository's own git folder never has).
/// These say early and plainly what a lock planted; what holds is git's own lock
/// (`worktree_git`), since a lock may write them again between this check and git's read.
fn own_git_folder(repo: &Path) -> Result<(), String> {
    let git_folder = repo.join(".git");
    let is_folder = git_folder.symlink_metadata().is_ok_and(|m| m.is_dir());
    if !is_folder {
        return Err(format!(
            "{} is not a folder of its own: paddock makes worktrees of a repository's main \
             checkout (a `.git` folder), never one it finds elsewhere",
            git_folder.display()
        ));
    }
    let commondir = git_folder.join("commondir");
    if commondir.symlink_metadata().is_ok() {
        return Err(format!(
            "{} sends git to another folder, which a repository's own git folder never does: \
             a program may have put it there (one paddock locked, among others); look at it \
             and remove it before this thread starts",
            commondir.display()
        ));
    }
    Ok(())
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
    /// the hook never runs; a repository whose git folder was made to send git elsewhere is
    /// refused. (git's lock is tested with paddock's launcher, in `tests/it`.)
    #[test]
    fn paddock_makes_a_worktree_without_running_the_repositorys_hooks() {
        use super::super::worktree_git::UnlockedGit;
        use std::os::unix::fs::PermissionsExt;
        use std::process::Command;
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
        let made = ensure_in(&folders, &wanted, &UnlockedGit).expect("the worktree");
        assert!(made.join("README").is_file(), "checked out");
        assert!(!marker.exists(), "the repository's hook ran when paddock made the worktree");
        let other = Worktree { repo: repo.clone(), branch: "agent-b".into() };
        let refused = |planted: &str, why: &str| {
            let said = ensure_in(&folders, &other, &UnlockedGit).expect_err(planted);
            assert!(said.contains(why), "{planted}: {said}");
            assert!(!place(&folders, &repo.canonicalize().expect("repo"), "agent-b").exists());
        };
        // A branch git refuses (checked out in the main checkout): the empty folder paddock
        // made for it goes again.
        let main = Worktree { repo: repo.clone(), branch: "main".into() };
        let said = ensure_in(&folders, &main, &UnlockedGit).expect_err("main is checked out");
        assert!(said.contains("git could not make the worktree"), "{said}");
        assert!(!place(&folders, &repo.canonicalize().expect("repo"), "main").exists());
        // A named pipe where git reads a worktree's pointer: refused before git runs (it would
        // wait on it until stopped).
        let gitdir_a = repo.join(".git/worktrees/agent-a/gitdir");
        let kept = std::fs::read(&gitdir_a).expect("gitdir");
        std::fs::remove_file(&gitdir_a).expect("gitdir");
        assert!(Command::new("mkfifo").arg(&gitdir_a).status().expect("mkfifo").success());
        refused("a named pipe", "is not a plain file");
        std::fs::remove_file(&gitdir_a).expect("fifo");
        std::fs::write(&gitdir_a, kept).expect("gitdir back");
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
