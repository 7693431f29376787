//! The configuration file end to end: threads opened at launch in their tabs and splits, a
//! thread that may not start saying so in its pane, `paddock config check`, and a broken file
//! that never stops paddock.

use super::{text, Runtime};

/// Write `body` as the runtime's default configuration file and return its path.
pub(crate) fn write_config(runtime: &Runtime, body: &str) -> std::path::PathBuf {
    let dir = runtime.dir.join("config/paddock");
    std::fs::create_dir_all(&dir).expect("config dir");
    let path = dir.join("config.ron");
    std::fs::write(&path, body).expect("write config");
    path
}

#[test]
fn configured_threads_open_at_launch_in_their_tabs_and_splits() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    write_config(
        &runtime,
        &format!(
            r#"(
            threads: [
                (name: "agent", command: ["sh", "-c", "echo I am $PADDOCK_THREAD; pwd; exec sleep 60"], cwd: "{work}"),
                (name: "tests", command: ["sh", "-c", "echo tests with $MODE; exec sleep 60"], env: {{"MODE": "watch"}}, place: RightOf("agent")),
                (name: "notes", command: ["sh", "-c", "echo notes; exec sleep 60"]),
            ],
        )"#,
            work = work.display()
        ),
    );
    let instance = runtime.start(&[]);
    let ls = instance.ls();
    let panes = ls["instances"][0]["panes"].as_array().expect("panes").clone();
    let seen: Vec<(String, String, String)> = panes
        .iter()
        .map(|p| {
            let s = |key: &str| p[key].as_str().unwrap_or("").to_owned();
            (s("thread"), s("tab"), s("status"))
        })
        .collect();
    let row = |thread: &str, tab: &str| (thread.to_owned(), tab.to_owned(), "running".to_owned());
    assert_eq!(seen, vec![row("agent", "agent"), row("tests", "agent"), row("notes", "notes")]);
    let screen = instance.wait_for_text("1", "I am agent");
    assert!(screen.contains(&format!("\n{}\n", work.display())), "{screen}");
    instance.wait_for_text("2", "tests with watch");
    instance.wait_for_text("3", "notes");
    // The first thread has the focus; the split shares its tab's width.
    assert_eq!(panes[0]["focused"], true);
    assert!(panes[0]["cols"].as_u64() < Some(80) && panes[1]["cols"].as_u64() < Some(80));
    let plain = text(&instance.run(&["ls"]).stdout);
    assert!(
        plain.contains("agent") && plain.contains("tests") && plain.contains("notes"),
        "{plain}"
    );
    // `ctl new --thread NAME` opens the configured thread again, as at launch: its command
    // and env, in its place (beside the first agent pane).
    let opened = instance.ctl(&["new", "--thread", "tests"]);
    assert_eq!(opened.trim(), "4");
    instance.wait_for_text("4", "tests with watch");
    let pane = instance.pane(4);
    assert_eq!((pane["thread"].as_str(), pane["tab"].as_str()), (Some("tests"), Some("agent")));
    // An unknown name is an error that lists the configured ones; a configured thread cannot
    // be given another command or folder.
    let unknown = instance.run(&["ctl", "new", "--thread", "nope"]);
    assert!(!unknown.status.success());
    let why = text(&unknown.stderr);
    assert!(why.contains(r#"no thread named "nope""#), "{why}");
    assert!(why.contains(r#""agent", "tests", "notes""#), "{why}");
    let changed = instance.run(&["ctl", "new", "--thread", "notes", "--", "vim"]);
    assert!(!changed.status.success());
    assert!(text(&changed.stderr).contains("cannot be used with"), "{}", text(&changed.stderr));
    assert_eq!(instance.ls()["instances"][0]["panes"].as_array().map(Vec::len), Some(4));
}

/// The configuration file in use is out of a lock's reach, also a `--config` that lies inside
/// the thread's own writable folder: rewriting it to `unlocked: true` would loosen the lock at
/// the next start. The rest of the folder stays writable.
#[test]
fn a_locked_thread_cannot_rewrite_the_configuration_that_locks_it() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let config = work.join("paddock.ron");
    let attack = format!(
        "echo '(threads: [(name: \"agent\", unlocked: true)])' > {config} && echo rewritten; \
         mv {config} {work}/moved.ron && echo moved; rm -f {config} && echo removed; \
         echo mine > {work}/notes.txt && echo notes-written; exec sleep 60",
        config = config.display(),
        work = work.display()
    );
    let body = format!(
        "(threads: [(name: \"agent\", command: [\"sh\", \"-c\", {attack:?}], lock: (write: [\"{work}\"]))])",
        work = work.display()
    );
    std::fs::write(&config, &body).expect("config");
    let config_arg = config.display().to_string();
    let instance = runtime.start(&["--config", &config_arg]);
    let screen = instance.wait_for_text("1", "notes-written");
    assert_eq!(instance.pane(1)["lock"]["level"], "locked", "{screen}");
    for done in ["rewritten", "moved", "removed"] {
        assert!(!screen.contains(&format!("\n{done}\n")), "{done}: {screen}");
    }
    assert_eq!(std::fs::read_to_string(&config).expect("still there"), body, "unchanged");
    assert_eq!(std::fs::read_to_string(work.join("notes.txt")).expect("notes"), "mine\n");
}

/// A lock that would show paddock's control socket (here a `--listen` path inside the thread's
/// own folder) is refused, and its program never runs: through the socket any process could
/// open an unlocked pane.
#[test]
fn a_lock_that_would_show_the_control_socket_does_not_run() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let marker = runtime.dir.join("ran");
    write_config(
        &runtime,
        &format!(
            r#"(threads: [(name: "agent", command: ["touch", "{marker}"], lock: (write: ["{work}"]))])"#,
            marker = marker.display(),
            work = work.display()
        ),
    );
    let socket = work.join("paddock.sock").display().to_string();
    let instance = runtime.start(&["--listen", &socket]);
    let screen = instance.wait_for_text("1", "was not started").replace('\n', " ");
    assert!(screen.contains("control socket"), "{screen}");
    assert_eq!(instance.pane(1)["lock"]["level"], "refused");
    assert!(!marker.exists(), "the program never ran");
}

/// A split of a locked pane is locked the same way, without the thread's secrets, and starts
/// where the locked program really is: not where its OSC 7 claims (here /etc). A split of an
/// unlocked pane is not locked.
#[test]
fn a_split_of_a_locked_pane_is_locked_the_same_way() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(work.join("sub")).expect("work/sub");
    let outside = runtime.dir.join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    let agent = format!(
        "cd {sub} && printf '\\033]7;file://localhost/etc\\007' && echo ready; exec sleep 600",
        sub = work.join("sub").display()
    );
    write_config(
        &runtime,
        &format!(
            r#"(threads: [
                (name: "agent", command: ["sh", "-c", {agent:?}], lock: (write: ["{work}"])),
                (name: "free", command: ["sleep", "600"]),
            ])"#,
            work = work.display()
        ),
    );
    let instance = runtime.start(&[]);
    instance.wait_for_text("1", "ready");
    let probe = format!(
        "pwd; touch {out}/escaped && echo escaped; touch made-here && echo inside; exec sleep 600",
        out = outside.display()
    );
    let split = instance.ctl(&["split", "--pane", "1", "--right", "--", "sh", "-c", &probe]);
    let id = split.trim().to_owned();
    let screen = instance.wait_for_text(&id, "inside");
    let pane: u64 = id.parse().expect("the new pane's id");
    assert_eq!(instance.pane(pane)["lock"]["level"], "locked", "{screen}");
    assert!(screen.starts_with(&format!("{}\n", work.join("sub").display())), "{screen}");
    assert!(!screen.contains("\nescaped\n") && !outside.join("escaped").exists(), "{screen}");
    assert!(work.join("sub/made-here").exists(), "the lock's folder stays writable");
    // A split of that split is locked too.
    let again = instance.ctl(&["split", "--pane", &id, "--down", "--", "sleep", "600"]);
    let again: u64 = again.trim().parse().expect("id");
    assert_eq!(instance.pane(again)["lock"]["level"], "locked");
    // The positive control: a split of an unlocked pane is not locked.
    let free = instance.ctl(&["split", "--pane", "2", "--down", "--", "sleep", "600"]);
    let free: u64 = free.trim().parse().expect("id");
    assert_eq!(instance.pane(free)["lock"]["level"], "unlocked");
}

/// A locked thread's environment is built from an allow-list, never inherited whole: tokens and
/// agent sockets in paddock's environment stay out unless the thread names them in `env_pass`,
/// and `ls` names what passed (never the values). An unlocked thread gets everything.
#[test]
fn a_locked_threads_environment_is_built_not_inherited() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let show = "echo \"tok=[$GITHUB_TOKEN] aws=[$AWS_SECRET_ACCESS_KEY] ssh=[$SSH_AUTH_SOCK] \
                pass=[$PASSME] lang=[$LANG] mine=[$MINE] rt=[$XDG_RUNTIME_DIR] pane=[$PADDOCK_PANE] \
                home=[${HOME:+set}] path=[${PATH:+set}]\"; echo env-shown; exec sleep 60";
    write_config(
        &runtime,
        &format!(
            r#"(threads: [
                (name: "locked", command: ["sh", "-c", {show:?}], env: {{"MINE": "mine"}}, env_pass: ["PASSME"], lock: (write: ["{work}"])),
                (name: "open", command: ["sh", "-c", {show:?}], unlocked: true),
            ])"#,
            work = work.display(),
        ),
    );
    let outer: [(&str, &std::ffi::OsStr); 5] = [
        ("GITHUB_TOKEN", "ghp_leak".as_ref()),
        ("AWS_SECRET_ACCESS_KEY", "aws_leak".as_ref()),
        ("SSH_AUTH_SOCK", "/tmp/agent.sock".as_ref()),
        ("PASSME", "passed".as_ref()),
        ("LANG", "C.UTF-8".as_ref()),
    ];
    let instance = runtime.start_with_env(&[], &outer);
    // Rows wrap where they will: compare without whitespace.
    let squash = |text: &str| text.split_whitespace().collect::<String>();
    let locked = squash(&instance.wait_for_text("1", "\nenv-shown"));
    let expected = "tok=[] aws=[] ssh=[] pass=[passed] lang=[C.UTF-8] mine=[mine] rt=[] pane=[1] \
                    home=[set] path=[set]";
    assert!(locked.contains(&squash(expected)), "{locked}");
    // The positive control: the same program unlocked sees paddock's whole environment.
    let open = squash(&instance.wait_for_text("2", "\nenv-shown"));
    let expected = "tok=[ghp_leak] aws=[aws_leak] ssh=[/tmp/agent.sock]";
    assert!(open.contains(&squash(expected)), "{open}");
    let passed = instance.pane(1)["lock"]["env_passed"].clone();
    let names: Vec<&str> =
        passed.as_array().into_iter().flatten().filter_map(|n| n.as_str()).collect();
    for name in ["HOME", "LANG", "PASSME", "PATH"] {
        assert!(names.contains(&name), "{name} in {passed}");
    }
    assert!(!names
        .iter()
        .any(|n| n.contains("TOKEN") || n.starts_with("AWS") || n.starts_with("SSH")));
    assert!(!passed.to_string().contains("passed"), "names only, never values: {passed}");
    assert!(instance.pane(2)["lock"].get("env_passed").is_none(), "unlocked: everything");
}

/// A locked thread runs under its lock and `paddock ls` says so; one whose lock cannot be
/// enforced as written (here: the whole home folder writable) does not run, and its pane says
/// why; one whose secret is not in the vault does not start and says how to set it; one the
/// config runs unlocked by choice
/// runs with the user's rights and says so.
#[test]
fn locked_threads_run_locked_and_the_ones_that_cannot_be_locked_do_not_run() {
    let runtime = Runtime::new();
    let (work, home) = (runtime.dir.join("work"), runtime.dir.join("home"));
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&home).expect("home");
    let marker = runtime.dir.join("ran");
    write_config(
        &runtime,
        &format!(
            r#"(threads: [
                (name: "locked", command: ["sh", "-c", "echo hi > {work}/out; cat {outside}/config/paddock/config.ron || echo hidden; exec sleep 60"], cwd: "{work}", lock: (write: ["{work}"])),
                (name: "broad", command: ["touch", "{marker}"], lock: (write: ["~"])),
                (name: "keyed", command: ["touch", "{marker}"], secrets: [(name: "k", env: "K")]),
                (name: "open", command: ["sh", "-c", "echo free > {outside}/open; exec sleep 60"], unlocked: true),
            ])"#,
            work = work.display(),
            outside = runtime.dir.display(),
            marker = marker.display(),
        ),
    );
    let instance = runtime.start_with_env(&[], &[("HOME", home.as_os_str())]);
    instance.wait_for_text("1", "hidden");
    assert_eq!(std::fs::read_to_string(work.join("out")).expect("written inside"), "hi\n");
    let lock = instance.pane(1)["lock"].clone();
    assert_eq!(
        (lock["level"].as_str(), lock["detail"].as_str()),
        (Some("locked"), Some("files + network"))
    );

    let screen = instance.wait_for_text("2", "was not started").replace('\n', " ");
    assert!(
        screen.contains("thread \"broad\" was not started: its folder lock cannot be enforced"),
        "{screen}"
    );
    assert!(screen.contains("holds your home folder (HOME is"), "{screen}");
    assert_eq!(instance.pane(2)["lock"]["level"], "refused");
    assert_eq!(instance.pane(2)["status"], "no_program");
    let plain = text(&instance.run(&["ls"]).stdout);
    assert!(plain.contains("refused") && plain.contains("locked"), "{plain}");
    // Typing into it is refused with a reason, not lost silently.
    let out = instance.run(&["ctl", "send", "--pane", "2", "--text", "x"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("runs no program"), "{}", text(&out.stderr));

    let screen = instance.wait_for_text("3", "was not started").replace('\n', " ");
    assert!(
        screen.contains("secret \"k\" is not in the vault: set it with `paddock vault set k`"),
        "{screen}"
    );
    assert!(!marker.exists(), "neither refused program ran");

    let open = runtime.dir.join("open");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !open.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(std::fs::read_to_string(&open).expect("written outside any lock"), "free\n");
    let lock = instance.pane(4)["lock"].clone();
    assert_eq!(
        (lock["level"].as_str(), lock["detail"].as_str()),
        (Some("unlocked"), Some("by choice: unlocked: true"))
    );
}

#[test]
fn config_check_prints_every_problem_with_its_place_and_fails() {
    let runtime = Runtime::new();
    let path = write_config(&runtime, "(\n  font: (size: \"big\"),\n)\n");
    let out = runtime.paddock(&["config", "check"]).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    let expected =
        format!("{}:2:16: font.size: expected float, found `\"big\"`\n1 problem\n", path.display());
    assert_eq!(text(&out.stderr), expected);

    std::fs::write(
        &path,
        "(threads: [(name: \"a\", cwd: \"/no/such/dir\"), (name: \"a\", place: Below(\"x\"))])",
    )
    .expect("write");
    let out =
        runtime.paddock(&["config", "check", path.to_str().expect("utf-8")]).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert!(lines[0].ends_with(":1:29: threads[0].cwd: the folder /no/such/dir does not exist (No such file or directory (os error 2))"), "{stderr}");
    assert!(
        lines[1].ends_with(
            ":1:53: threads[1].name: a thread named \"a\" is already defined (threads[0])"
        ),
        "{stderr}"
    );
    assert!(lines[2].contains(":1:65: threads[1].place: no thread named \"x\""), "{stderr}");
    assert_eq!(lines[3], "3 problems");

    std::fs::write(&path, "(threads: [(name: \"a\"), (name: \"b\", place: Below(\"a\"))])")
        .expect("write");
    let out = runtime.paddock(&["config", "check"]).output().expect("run");
    assert_eq!(text(&out.stdout), format!("{}: ok, 2 threads (a, b)\n", path.display()));
    assert!(out.status.success());

    let missing = runtime.dir.join("missing.ron");
    let out = runtime
        .paddock(&["config", "check", missing.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_file(&path).expect("remove");
    let out = runtime.paddock(&["config", "check"]).output().expect("run");
    assert!(out.status.success(), "no file: the defaults, not an error");
    assert!(text(&out.stdout).contains("no configuration file; paddock uses its defaults"));
}

#[test]
fn a_broken_config_never_stops_paddock_it_says_why_and_uses_the_defaults() {
    let runtime = Runtime::new();
    write_config(
        &runtime,
        "(scrollback: \"lots\", threads: [(name: \"x\", command: [\"false\"])])",
    );
    let out = runtime
        .paddock(&["--headless", "--exit-with-child", "-e", "sh", "-c", "echo started; exit 3"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3), "it ran the command with the defaults");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the configuration has problems; using the defaults"), "{stderr}");
    assert!(stderr.contains("config.ron:1:14: scrollback: expected"), "{stderr}");
}

/// Live reload: an edit never restarts a running thread (it is marked instead), a broken edit
/// keeps the last good configuration and says what is wrong, and `restart` applies the new
/// definition in the same pane.
#[test]
fn an_edit_marks_a_running_thread_a_broken_edit_keeps_the_old_config_and_restart_applies_it() {
    let runtime = Runtime::new();
    let thread = |greeting: &str| {
        format!(
            "(threads: [(name: \"agent\", command: [\"sh\", \"-c\", \"echo {greeting} $$; exec sleep 60\"])])"
        )
    };
    let path = write_config(&runtime, &thread("first"));
    let instance = runtime.start(&[]);
    instance.wait_for_text("1", "first");
    let pid = instance.pane(1)["pid"].clone();
    assert_eq!(instance.pane(1)["config_changed"], false);

    std::fs::write(&path, thread("second")).expect("edit");
    super::wait_for("the pane to be marked", || instance.pane(1)["config_changed"] == true);
    let pane = instance.pane(1);
    assert_eq!((pane["pid"].clone(), pane["status"].clone()), (pid.clone(), "running".into()));
    assert!(text(&instance.run(&["ls"]).stdout).contains("running, config changed"));

    // A broken edit: nothing changes but the problems shown; the pane keeps running.
    std::fs::write(&path, "(threads: [(name: \"agent\", command: [\"sh\"], colour: 1)])")
        .expect("edit");
    super::wait_for("the problems to show", || {
        instance.ls()["instances"][0]["config_problems"].is_string()
    });
    let problems =
        instance.ls()["instances"][0]["config_problems"].as_str().unwrap_or("").to_owned();
    assert!(problems.contains("threads[0].colour: unknown field `colour`"), "{problems}");
    assert!(text(&instance.run(&["ls"]).stdout).contains("the configuration has 1 problem"));
    let out = instance.run(&["ctl", "restart", "--pane", "1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    instance.wait_for_text("1", "second");
    assert_ne!(instance.pane(1)["pid"], pid, "restarted from the last good definition");

    // Fixed: the problems go; the running thread matches the file again.
    std::fs::write(&path, thread("second")).expect("edit");
    super::wait_for("the problems to clear", || {
        instance.ls()["instances"][0]["config_problems"].is_null()
    });
    assert_eq!(instance.pane(1)["config_changed"], false);
    assert_eq!(instance.pane(1)["status"], "running");
}
