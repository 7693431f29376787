//! Panes running real programs in real PTYs: output reaches the model, replies reach the
//! program, exit codes are seen, resizes are felt, closing ends the whole process group, and a
//! program that never reads its input blocks nobody.

use std::sync::Arc;
use std::time::{Duration, Instant};

use paddock::config::{LockPolicy, Network};
use paddock::pty::{Locked, PaneLock, PaneSession, PaneStatus, PtyError, SpawnSpec};
use paddock::sandbox::{Enforcement, Reach};
use paddock::term::TermSize;

fn spec_for(argv: &[&str]) -> SpawnSpec {
    SpawnSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: None,
        env: vec![],
        pane: 1,
        size: TermSize::new(80, 24),
        scrollback_lines: 100,
        lock: PaneLock::None,
        strip_loader_env: false,
        secrets: vec![],
        masked: vec![],
        notice: None,
        activity: None,
        cgroup: None,
    }
}

/// A lock that lets the program write `folder` only, applied by paddock's launcher.
fn lock_on(folder: std::path::PathBuf) -> Locked {
    let lock = LockPolicy {
        write: vec![folder],
        read: vec![],
        protect: vec![],
        network: Network::Off,
        sockets: vec![],
        allow_broad_write: false,
    };
    Locked {
        policy: paddock::app::lock::policy_for(&lock, &[]),
        launcher: env!("CARGO_BIN_EXE_paddock").into(),
        inherited_env: paddock::sandbox::env::build(std::env::vars_os(), &[]).vars,
    }
}

fn spawn(argv: &[&str]) -> PaneSession {
    let spec = SpawnSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: None,
        env: vec![("PADDOCK_TEST".into(), "1".into())],
        pane: 7,
        size: TermSize::new(80, 24),
        scrollback_lines: 1000,
        lock: PaneLock::None,
        strip_loader_env: false,
        secrets: vec![],
        masked: vec![],
        notice: None,
        activity: None,
        cgroup: None,
    };
    PaneSession::spawn(spec, Arc::new(|| {})).expect("spawn")
}

/// Wait (up to a generous bound, so a slow CI machine does not fail) for `done`.
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_for_text(pane: &PaneSession, text: &str) {
    wait_for(text, || pane.screen_text().contains(text));
}

#[test]
fn output_reaches_the_screen_with_the_pane_environment() {
    let pane = spawn(&[
        "sh",
        "-c",
        "echo \"hi $TERM $COLORTERM pane=$PADDOCK_PANE $PADDOCK_TEST\"; sleep 5",
    ]);
    wait_for_text(&pane, "hi xterm-256color truecolor pane=7 1");
}

#[test]
fn typed_input_reaches_the_program() {
    let pane = spawn(&["sh", "-c", "read -r line; echo \"got [$line]\"; sleep 5"]);
    pane.send(b"hello\r".to_vec()).expect("send");
    wait_for_text(&pane, "got [hello]");
}

#[test]
fn the_model_answers_queries_through_the_pty() {
    // The program asks for the cursor position and prints the answer it reads back.
    let script = r#"stty -echo raw; printf 'ab\033[6n'; r=$(dd bs=1 count=6 2>/dev/null); stty sane; printf '\r\ngot %s\n' "$(printf %s "$r" | tr -d '\033')"; sleep 5"#;
    let pane = spawn(&["sh", "-c", script]);
    wait_for_text(&pane, "got [1;3R");
}

#[test]
fn exit_codes_are_seen() {
    let mut pane = spawn(&["sh", "-c", "exit 3"]);
    wait_for("exit", || pane.status() != PaneStatus::Running);
    assert_eq!(pane.status(), PaneStatus::Exited(Some(3)));
    // The exited program stays unreaped (its pid reserved, so closing the pane can never signal
    // a stranger's process group) until the pane closes.
    #[cfg(target_os = "linux")]
    {
        let proc_dir = format!("/proc/{}", pane.pid().expect("pid"));
        assert!(std::path::Path::new(&proc_dir).exists(), "zombie kept until close");
        assert_eq!(pane.close(), PaneStatus::Exited(Some(3)));
        assert!(!std::path::Path::new(&proc_dir).exists(), "reaped on close");
    }
}

#[test]
fn a_resize_reaches_the_program() {
    let pane = spawn(&["sh", "-c", "while :; do stty size; sleep 0.1; done"]);
    pane.resize(TermSize::new(100, 30)).expect("resize");
    wait_for_text(&pane, "30 100");
    assert_eq!(pane.terminal().lock().unwrap().size(), TermSize::new(100, 30));
}

#[cfg(unix)]
#[test]
fn closing_ends_the_whole_process_group() {
    // The background job ignores the hangup, so only the kill after the grace period ends it.
    let pane = spawn(&["sh", "-c", "trap '' HUP; sleep 1000 & echo \"bg=$!\"; wait"]);
    wait_for_text(&pane, "bg=");
    let text = pane.screen_text();
    let pid: i32 = text
        .split("bg=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .expect("background pid on screen");
    let alive = |pid: i32| {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z")
    };
    assert!(alive(pid), "the background sleep runs");
    let status = pane.close();
    assert_ne!(status, PaneStatus::Running);
    wait_for("the background sleep to go", || !alive(pid));
}

#[test]
fn a_program_that_never_reads_blocks_nobody() {
    let stuck = spawn(&["sleep", "30"]);
    let chunk = vec![b'x'; 64 * 1024];
    let mut full = false;
    for _ in 0..10_000 {
        if let Err(PtyError::InputFull) = stuck.send(chunk.clone()) {
            full = true;
            break;
        }
    }
    assert!(full, "the queue fills instead of blocking");
    // Another pane still works while the first one's input is full.
    let other = spawn(&["sh", "-c", "read -r l; echo \"other [$l]\"; sleep 5"]);
    other.send(b"fine\r".to_vec()).expect("send to the other pane");
    wait_for_text(&other, "other [fine]");
}

#[test]
fn a_missing_program_is_an_error_not_a_panic() {
    let spec = SpawnSpec {
        argv: vec!["/nonexistent/program".into()],
        cwd: None,
        env: vec![],
        pane: 1,
        size: TermSize::new(80, 24),
        scrollback_lines: 10,
        lock: PaneLock::None,
        strip_loader_env: false,
        secrets: vec![],
        masked: vec![],
        notice: None,
        activity: None,
        cgroup: None,
    };
    match PaneSession::spawn(spec.clone(), Arc::new(|| {})) {
        Err(PtyError::Spawn { program, .. }) => assert_eq!(program, "/nonexistent/program"),
        Ok(mut pane) => {
            // Some platforms report the failure as an exit of the child instead.
            wait_for("exit", || pane.status() != PaneStatus::Running);
            assert_ne!(pane.status(), PaneStatus::Exited(Some(0)));
        }
        Err(other) => panic!("unexpected error {other}"),
    }
    let empty = SpawnSpec { argv: vec![], ..spec };
    assert!(matches!(PaneSession::spawn(empty, Arc::new(|| {})), Err(PtyError::Spawn { .. })));
}

/// A locked program runs in its pane under the lock (through the launcher): it writes inside
/// its folder, cannot see outside it, and the pane says what is enforced.
#[cfg(target_os = "linux")]
#[test]
fn a_locked_program_runs_in_its_pane_under_the_lock() {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pty-lock-{}", std::process::id()));
    let (inside, outside) = (root.join("inside"), root.join("outside"));
    std::fs::create_dir_all(&inside).expect("inside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("secret"), "s").expect("secret");
    let script = format!(
        "echo in > {in}/written; cat {out}/secret || echo no-secret; sleep 5",
        in = inside.display(),
        out = outside.display()
    );
    let spec = SpawnSpec {
        lock: PaneLock::Locked(Box::new(lock_on(inside.clone()))),
        ..spec_for(&["/bin/sh", "-c", &script])
    };
    let pane = PaneSession::spawn(spec, Arc::new(|| {})).expect("spawn locked");
    assert_eq!(pane.enforcement(), Enforcement::Locked { network: Reach::Nothing });
    wait_for_text(&pane, "no-secret");
    assert_eq!(std::fs::read_to_string(inside.join("written")).expect("written"), "in\n");
    let _ = std::fs::remove_dir_all(&root);
}

/// A lock that cannot be enforced as written (here: its folder is missing): the program does
/// not run at all, and the error says why.
#[test]
fn a_lock_that_cannot_hold_refuses_to_run_the_program() {
    let marker = std::env::temp_dir().join(format!("paddock-refused-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let touch = ["touch".to_owned(), marker.display().to_string()];
    let spec = SpawnSpec {
        lock: PaneLock::Locked(Box::new(lock_on(
            std::env::temp_dir().join("paddock-no-such-folder"),
        ))),
        ..spec_for(&[&touch[0], &touch[1]])
    };
    match PaneSession::spawn(spec.clone(), Arc::new(|| {})) {
        Err(PtyError::LockRefused(why)) => assert!(why.contains("does not exist"), "{why}"),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a lock on a missing folder ran its program"),
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the program never ran");
}

/// Secrets reach the program's environment, and what it prints of them never reaches the
/// model: not on screen, not in the scrollback, not when printed split by escape sequences;
/// the pane's notice comes first; the counts say how often each was masked.
#[test]
fn secrets_reach_the_environment_and_never_the_screen() {
    let value = |v: &str| paddock::vault::SecretBytes::new(v.as_bytes());
    let script = "printf 'a=%s\\n' \"$API_KEY\"; printf 'b=%s\\n' \"$DB_PASS\"; \
                  printf 'split=sk-\\033[31mlive\\033[0m-99\\n'; \
                  if [ \"$API_KEY\" = sk-live-99 ]; then echo env-ok; fi; echo done";
    let spec = SpawnSpec {
        strip_loader_env: false,
        secrets: vec![
            ("API_KEY".into(), value("sk-live-99")),
            ("DB_PASS".into(), value("hunter2")),
        ],
        masked: vec![value("sk-live-99"), value("hunter2")],
        notice: Some("paddock: secret \"x\" withheld: pinned to y".into()),
        ..spec_for(&["/bin/sh", "-c", script])
    };
    let pane = PaneSession::spawn(spec, Arc::new(|| {})).expect("spawn");
    wait_for_text(&pane, "done");
    let screen = pane.screen_text();
    assert!(screen.starts_with("paddock: secret \"x\" withheld: pinned to y"), "{screen}");
    assert!(screen.contains("a=**********\n"), "{screen}");
    assert!(screen.contains("b=*******\n"), "{screen}");
    assert!(screen.contains("split=**********\n"), "{screen}");
    assert!(screen.contains("env-ok"), "{screen}");
    assert!(!screen.contains("sk-live") && !screen.contains("hunter2"), "{screen}");
    let counts = pane.mask_counts().expect("counts");
    let counts: Vec<u64> =
        counts.iter().map(|c| c.load(std::sync::atomic::Ordering::Relaxed)).collect();
    assert_eq!(counts, [2, 1]);
}
