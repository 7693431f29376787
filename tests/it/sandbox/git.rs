//! Git cannot be turned against the user through a lock: hooks and config of a repository
//! nested in a lock folder, and of a git folder given as a lock folder, are as read-only as the
//! top-level ones; a protected file with a second name refuses the lock. Positive control: the
//! rest of a nested repository stays writable.

use super::{check, Fixture};

#[test]
fn nested_repositories_and_git_folders_keep_their_hooks_and_config() {
    let fx = Fixture::new("git-nested");
    let nested = fx.lock.join("vendor/lib/.git");
    std::fs::create_dir_all(nested.join("hooks")).expect("nested hooks");
    std::fs::write(nested.join("config"), "[core]\n").expect("nested config");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["write".into(), fx.path("lock/vendor/lib/.git/hooks/pre-commit")], "err EROFS"),
        (vec!["append".into(), fx.path("lock/vendor/lib/.git/config")], "err EROFS"),
        (
            vec!["rename".into(), fx.path("lock/vendor/lib/.git/hooks"), fx.path("lock/h")],
            "err EXDEV",
        ),
        // The folders on the way cannot be renamed away with the protection inside.
        (vec!["rename".into(), fx.path("lock/vendor"), fx.path("lock/v2")], "err EBUSY"),
        // Positive control: the repository's other files are the agent's to change.
        (vec!["write".into(), fx.path("lock/vendor/lib/.git/HEAD")], "ok"),
    ];
    check(&fx, &[], &cases);

    // A git folder given as the lock's writable folder (a worktree's common directory).
    let common = fx.root.join("common.git");
    std::fs::create_dir_all(common.join("hooks")).expect("hooks");
    std::fs::create_dir_all(common.join("objects")).expect("objects");
    std::fs::write(common.join("HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(common.join("config"), "[core]\n").expect("config");
    let folder = common.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["write".into(), format!("{folder}/hooks/post-checkout")], "err EROFS"),
        (vec!["append".into(), format!("{folder}/config")], "err EROFS"),
        (vec!["write".into(), format!("{folder}/HEAD")], "ok"),
    ];
    check(&fx, &["--write", &folder], &cases);
}

#[test]
fn a_protected_file_with_a_second_name_refuses_the_lock() {
    let fx = Fixture::new("git-hardlink");
    std::fs::hard_link(fx.lock.join(".git/config"), fx.lock.join("config-alias")).expect("link");
    let out = fx.run(&[], &["append", &fx.path("lock/config-alias")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains(".git/config") && stderr.contains("2 hard links"), "{stderr}");
    assert_eq!(std::fs::read_to_string(fx.lock.join(".git/config")).expect("config"), "[core]\n");
}

/// What the kernel cannot stop (a `.git/commondir` that sends the protected repository's git to
/// a folder of the agent's making, a repository made deep in `node_modules`) is named when the
/// command returns. Positive control: a command that plants nothing is not reported.
#[test]
fn what_a_lock_left_git_to_run_is_named_when_it_returns() {
    let fx = Fixture::new("git-planted");
    // A reflog linked out of the repository: the user's next commit appends through it.
    let bashrc = fx.home.join(".bashrc").display().to_string();
    let script = format!(
        "echo ../evil > .git/commondir && \
         mkdir -p node_modules/x/.git/hooks && \
         printf '[core]\\n\\tfsmonitor = ./x.sh\\n' > node_modules/x/.git/config && \
         mkdir -p .git/logs && ln -s {bashrc} .git/logs/HEAD"
    );
    let lock = fx.lock.display().to_string();
    let run = |script: &str| {
        std::process::Command::new(super::PADDOCK)
            .args(["sandbox", "run", "--write", &lock, "--", "/bin/sh", "-c", script])
            .env("HOME", &fx.home)
            .current_dir(&fx.lock)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run")
    };
    let out = run(&script);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let commondir = format!("{lock}/.git/commondir sends git to ../evil");
    let fsmonitor = format!("{lock}/node_modules/x/.git/config sets core.fsmonitor = ./x.sh");
    assert!(stderr.contains(&commondir) && stderr.contains(&fsmonitor), "{stderr}");
    let reflog = format!("{lock}/.git/logs/HEAD is a link to {bashrc}: git writes through it");
    assert!(stderr.contains(&reflog), "{stderr}");
    let quiet = run("echo hello > notes.txt");
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("left for git"));
}

/// A folder name the lock made is shown, never sent raw to the terminal: a repository named
/// with escape sequences, which makes the next start refuse, is named with escapes.
#[test]
fn a_folder_name_with_escape_sequences_is_shown_not_sent() {
    let fx = Fixture::new("git-escapes");
    let name = "x\u{1b}]0;PWNED\u{7}\u{1b}[2J";
    std::fs::create_dir_all(fx.lock.join(name).join(".git/objects")).expect("repository");
    std::fs::write(fx.lock.join(name).join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
    std::fs::write(fx.lock.join(name).join(".git/config"), "[core]\n").expect("config");
    let out = fx.run(&[], &["ids"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\u{7}'), "{stderr:?}");
    assert!(stderr.contains("x\\u{1b}]0;PWNED\\u{7}"), "{stderr}");
}
