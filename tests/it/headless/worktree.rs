//! A thread on a worktree of its own (`worktree: (repo, branch)`): paddock makes it, starts the
//! thread in it and locks the thread to it; the agent commits on its branch, and cannot touch
//! what would run outside the lock (the repository's hooks and config, the worktree's pointers)
//! nor the main checkout.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use super::config::write_config;
use super::Runtime;

const SCRIPT: &str = r#"
try() { name=$1; shift; if out=$("$@" 2>&1); then echo "$name = ok $out"; else echo "$name = failed"; fi; }
echo "where = $(pwd)"
common=$(git rev-parse --git-common-dir); own=$(git rev-parse --git-dir)
# git also tries to lock packed-refs in the common folder, which stays read-only: it says so
# on stderr and goes on (see the README).
try commit sh -c 'echo hi > agent.txt && git add agent.txt && git commit -q -m "from the agent" 2>/dev/null && git log -1 --format=%s'
try hook sh -c "echo 'touch /tmp/pwned' > $common/hooks/post-commit"
try config sh -c "echo '[core] hooksPath = /tmp' >> $common/config"
try commondir sh -c "echo /tmp > $own/commondir"
try worktree_config sh -c "echo '[core]' > $own/config.worktree"
try main_checkout cat "$common/../README"
echo "worktree done"
"#;

/// A home whose git settings name the user (the agent's commits need a name).
fn home_with_a_name(runtime: &Runtime) -> std::path::PathBuf {
    let home = runtime.dir.join("home");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::write(home.join(".gitconfig"), "[user]\n\tname = Agent\n\temail = a@t.test\n")
        .expect("gitconfig");
    home
}

/// `git ARGS` in `dir` with `home` as HOME, which must succeed.
fn git_as(home: &Path, dir: &Path, args: &[&str]) {
    let out = Command::new("git").args(args).current_dir(dir).env("HOME", home).output();
    let out = out.expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(dir).output().expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_thread_on_its_own_worktree_commits_on_its_branch_and_nothing_else() {
    let runtime = Runtime::new();
    let (home, repo) = (home_with_a_name(&runtime), runtime.dir.join("repo"));
    std::fs::create_dir_all(&repo).expect("repo");
    std::fs::write(repo.join("README"), "the main checkout\n").expect("readme");
    std::fs::write(runtime.dir.join("script.sh"), SCRIPT).expect("script");
    let env: [(&str, &OsStr); 1] = [("HOME", home.as_os_str())];
    let git_here = |args: &[&str]| git_as(&home, &repo, args);
    git_here(&["init", "-q", "-b", "main"]);
    git_here(&["add", "README"]);
    git_here(&["commit", "-q", "-m", "first"]);
    // The script lies outside the lock: it is handed over on the command line.
    let script = std::fs::read_to_string(runtime.dir.join("script.sh")).expect("script");
    let command = format!("{script}\nexec sleep 600");
    write_config(
        &runtime,
        &format!(
            r#"(threads: [(name: "agent", command: ["sh", "-c", {command:?}],
                worktree: (repo: "{repo}", branch: "agent-a")),
                (name: "clash", command: ["true"], worktree: (repo: "{repo}", branch: "main"))])"#,
            repo = repo.display()
        ),
    );
    let instance = runtime.start_with_env(&[], &env);
    let screen = instance.wait_for_text("1", "worktree done");
    let line = |name: &str| {
        screen.lines().find(|l| l.starts_with(&format!("{name} ="))).unwrap_or_default().to_owned()
    };
    let made = runtime.dir.join("data/paddock/worktrees");
    let folder = std::fs::read_dir(&made).expect("worktrees").next().expect("one").expect("e");
    let folder = folder.path().join("agent-a").canonicalize().expect("the worktree");
    assert_eq!(line("where"), format!("where = {}", folder.display()), "{screen}");
    assert_eq!(line("commit"), "commit = ok from the agent", "{screen}");
    for refused in ["hook", "config", "commondir", "worktree_config", "main_checkout"] {
        assert_eq!(line(refused), format!("{refused} = failed"), "{screen}");
    }
    assert_eq!(git(&repo, &["log", "-1", "--format=%s %an", "agent-a"]), "from the agent Agent");
    assert_eq!(git(&repo, &["log", "-1", "--format=%s", "main"]), "first", "main untouched");
    assert!(!repo.join(".git/hooks/post-commit").exists());
    let readme = std::fs::read_to_string(repo.join("README")).expect("readme");
    assert_eq!(readme, "the main checkout\n");
    assert_eq!(instance.pane(1)["lock"]["level"], "locked", "locked to its worktree");
    // The main checkout has `main`: git refuses a second worktree on it, and the pane says so.
    let clash = instance.wait_for_text("2", "was not started");
    assert!(clash.contains("git could not make the worktree") && clash.contains("main"), "{clash}");
}

/// What a locked agent can leave in a repository for the git that makes another thread's
/// worktree (found by outside attacks): a checkout filter in a worktree config, which git
/// copies to the new worktree and runs at checkout; a reflog made a link to a file outside.
/// That git runs locked: the filter runs, writes the new worktree and nothing outside, cannot
/// point the worktree elsewhere, and a link it leaves in the worktree's git folder has the
/// worktree refused and removed; the reflog link leads nowhere git may write.
#[test]
fn the_git_that_makes_a_worktree_runs_locked() {
    let runtime = Runtime::new();
    let home = home_with_a_name(&runtime);
    let (repo, outside) = (runtime.dir.join("repo"), runtime.dir.join("outside"));
    for dir in [&repo, &outside] {
        std::fs::create_dir_all(dir).expect("folder");
    }
    let env: [(&str, &OsStr); 1] = [("HOME", home.as_os_str())];
    let git_here = |args: &[&str]| git_as(&home, &repo, args);
    git_here(&["init", "-q", "-b", "main"]);
    std::fs::write(repo.join(".gitattributes"), "*.txt filter=ev\n").expect("attributes");
    std::fs::write(repo.join("a.txt"), "text\n").expect("a.txt");
    git_here(&["add", "."]);
    git_here(&["commit", "-q", "-m", "first"]);
    // A filter whose doings the agent decides (the user's own, say, that runs a script of the
    // repository's); and what the agent plants: a reflog that is a link.
    let pwned = outside.join("pwned");
    let bashrc = outside.join("bashrc");
    // It runs in each new worktree; in agent-x's it also tries to point the worktree's git
    // elsewhere, in agent-l's it leaves a link to a file outside in the worktree's git folder
    // (for the user's git to write through later).
    let redirect = format!(
        "case $PWD in *agent-x) echo gitdir: /tmp > .git;; *agent-l) d=$(sed s/^gitdir:.// .git); \
         mkdir -p $d/logs; ln -sf {} $d/logs/planted;; esac",
        bashrc.display()
    );
    let filter =
        format!("sh -c 'echo ran > ran-here; echo x > {}; {redirect}; cat'", pwned.display());
    // Quoted: a `;` would start a comment.
    let filter = format!("[filter \"ev\"]\n\tsmudge = \"{filter}\"\n");
    let mut config = std::fs::OpenOptions::new().append(true).open(repo.join(".git/config"));
    std::io::Write::write_all(config.as_mut().expect("config"), filter.as_bytes()).expect("add");
    // Another repository, with per-worktree settings (git turns them on for a sparse checkout)
    // in which the agent set a program: git copies them to every new worktree.
    let other = runtime.dir.join("other");
    std::fs::create_dir_all(&other).expect("other");
    let git_other = |args: &[&str]| git_as(&home, &other, args);
    git_other(&["init", "-q", "-b", "main"]);
    git_other(&["commit", "-q", "--allow-empty", "-m", "first"]);
    git_other(&["config", "extensions.worktreeConfig", "true"]);
    let fsmonitor = format!("[core]\n\tfsmonitor = \"touch {}\"\n", pwned.display());
    std::fs::write(other.join(".git/config.worktree"), &fsmonitor).expect("config.worktree");
    std::fs::write(&bashrc, "mine\n").expect("bashrc");
    std::os::unix::fs::symlink(&bashrc, repo.join(".git/logs/refs/heads/agent-r")).expect("link");
    let show = "ls; cat a.txt; echo started; exec sleep 600";
    write_config(
        &runtime,
        &format!(
            r#"(threads: [(name: "filtered", command: ["sh", "-c", {show:?}],
                worktree: (repo: "{repo}", branch: "agent-f")),
                (name: "reflogged", command: ["true"],
                worktree: (repo: "{repo}", branch: "agent-r")),
                (name: "redirected", command: ["sh", "-c", "cat .git; exec sleep 600"],
                worktree: (repo: "{repo}", branch: "agent-x")),
                (name: "linked", command: ["true"],
                worktree: (repo: "{repo}", branch: "agent-l")),
                (name: "inherited", command: ["true"],
                worktree: (repo: "{other}", branch: "agent-i"))])"#,
            repo = repo.display(),
            other = other.display()
        ),
    );
    let instance = runtime.start_with_env(&[], &env);
    let screen = instance.wait_for_text("1", "started");
    assert!(screen.contains("ran-here") && screen.contains("text"), "the filter ran: {screen}");
    assert!(!pwned.exists(), "the filter wrote outside the new worktree");
    // The link's target is outside git's lock: git cannot write the branch's reflog.
    let refused = instance.wait_for_text("2", "was not started");
    assert!(refused.contains("git could not make the worktree"), "{refused}");
    assert_eq!(std::fs::read_to_string(&bashrc).expect("bashrc"), "mine\n");
    // The worktree's `.git` is read-only to the checkout: it still points back.
    let redirected = instance.wait_for_text("3", "/worktrees/agent-x");
    assert!(!redirected.contains("/tmp\n"), "{redirected}");
    // A link left in the worktree's git folder: refused, and nothing left of it.
    let linked = instance.wait_for_text("4", "was not started");
    let words = linked.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("was removed") && words.contains("is a link"), "{linked}");
    assert!(!repo.join(".git/worktrees/agent-l").exists(), "its git folder removed");
    let made = runtime.dir.join("data/paddock/worktrees");
    let folder = std::fs::read_dir(&made).expect("worktrees").next().expect("one").expect("e");
    assert!(!folder.path().join("agent-l").exists(), "its folder removed");
    assert_eq!(std::fs::read_to_string(&bashrc).expect("bashrc"), "mine\n");
    // Settings git copied that would run a program: refused before the checkout.
    let inherited = instance.wait_for_text("5", "was not started");
    let words = inherited.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("sets core.fsmonitor = touch"), "{inherited}");
    // The same planted later in a made worktree's git folder (a lock given the repository can
    // write it): the thread is refused when it starts again.
    let own = repo.join(".git/worktrees/agent-f/config.worktree");
    std::fs::write(&own, &fsmonitor).expect("plant");
    let out = instance.run(&["ctl", "restart", "--pane", "1"]);
    let said = super::text(&out.stderr) + &instance.capture("1");
    let words = said.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("sets core.fsmonitor = touch"), "{said}");
    assert!(pwned.symlink_metadata().is_err());
}
