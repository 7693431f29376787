//! The vault against real keychains: the Secret Service (gnome-keyring on a private D-Bus
//! session bus, unlocked with a throwaway password, its files in a temporary folder) and the
//! kernel's keyutils (a fresh session keyring from `keyctl session -`). A test started
//! outside such a session runs itself again inside one, so no test ever reaches a user's own
//! keychain; without dbus-run-session, gnome-keyring or keyctl it fails and says what to install.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::headless::{text, Runtime};

const SECRET_SERVICE: &str = "secret-service";
pub(crate) const KEYUTILS: &str = "keyutils";

/// `sh -c` inside the private bus: start gnome-keyring unlocked, then run the test binary.
const UNLOCKED_KEYRING: &str =
    "printf throwaway | gnome-keyring-daemon --unlock --components=secrets >/dev/null \
     || { echo 'gnome-keyring-daemon did not start' >&2; exit 97; }; exec \"$@\"";

/// When not already inside a private `keychain` session: run test `name` again inside one, check
/// that it ran and passed, and return true (the caller is then done).
pub(crate) fn rerun_inside(keychain: &str, name: &str) -> bool {
    if std::env::var_os("PADDOCK_TEST_KEYCHAIN").is_some() {
        return false;
    }
    let scratch = std::env::temp_dir().join(format!("pdk-keychain-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).expect("scratch folder");
    let exe = std::env::current_exe().expect("test binary");
    let mut command = match keychain {
        SECRET_SERVICE => {
            let mut c = Command::new("dbus-run-session");
            c.args(["--", "sh", "-c", UNLOCKED_KEYRING, "sh"]);
            c
        }
        _ => {
            let mut c = Command::new("keyctl");
            c.args(["session", "-"]);
            c
        }
    };
    command
        .arg(&exe)
        .args(["--exact", name, "--test-threads=1", "--nocapture"])
        .env("PADDOCK_TEST_KEYCHAIN", keychain)
        .env("PADDOCK_VAULT_STORE", keychain)
        .env("PADDOCK_VAULT_SERVICE", format!("paddock-test-{}", std::process::id()))
        // gnome-keyring keeps its keyring files here, and paddock its state.
        .env("XDG_DATA_HOME", scratch.join("data"))
        .env("XDG_STATE_HOME", scratch.join("state"))
        .stdin(Stdio::null());
    let out = command.output().unwrap_or_else(|e| {
        panic!(
            "cannot start a private {keychain} session ({e}): install dbus-daemon, gnome-keyring, \
             libsecret-tools and keyutils (cargo xtask ci does)"
        )
    });
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} inside a private {keychain} session: {:?}\n{stdout}\n{stderr}",
        out.status.code()
    );
    let _ = std::fs::remove_dir_all(&scratch);
    true
}

/// `paddock vault ARGS` with `stdin` as its input.
fn vault(runtime: &Runtime, args: &[&str], stdin: &str) -> Output {
    let mut all = vec!["vault"];
    all.extend_from_slice(args);
    let mut child = runtime
        .paddock(&all)
        // Inside the private session: its keychain and its state folder.
        .env("XDG_STATE_HOME", state_home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("paddock vault");
    type_into(&mut child, stdin);
    child.wait_with_output().expect("paddock vault output")
}

/// `paddock vault approve NAME PROGRAM` on a terminal (util-linux `script` gives it one),
/// answering the question with `typed`.
fn approve_at_a_terminal(runtime: &Runtime, name: &str, program: &str, typed: &str) -> Output {
    let mut command = runtime.paddock(&[]);
    command.env("XDG_STATE_HOME", state_home());
    at_a_terminal(&command, &["vault", "approve", name, program], typed)
}

/// `command ARGS` (its program and environment) on a terminal of its own (util-linux
/// `script` gives it one), `typed` on it.
pub(crate) fn at_a_terminal(command: &Command, args: &[&str], typed: &str) -> Output {
    let quoted = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut line = quoted(&command.get_program().to_string_lossy());
    for arg in args {
        line = format!("{line} {}", quoted(arg));
    }
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => script.env(key, value),
            None => script.env_remove(key),
        };
    }
    let mut child = script
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    type_into(&mut child, typed);
    child.wait_with_output().expect("script output")
}

/// Writes `typed` to `child`'s input and closes it. A command that refuses before reading
/// (`approve` without a terminal) may close its input first: what it printed says what
/// happened, so a broken pipe here is not a failure.
fn type_into(child: &mut std::process::Child, typed: &str) {
    match child.stdin.take().expect("stdin").write_all(typed.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
}

fn state_home() -> PathBuf {
    std::env::var_os("XDG_STATE_HOME").map(PathBuf::from).expect("XDG_STATE_HOME in the session")
}

fn service() -> String {
    std::env::var("PADDOCK_VAULT_SERVICE").expect("PADDOCK_VAULT_SERVICE in the session")
}

/// What the keychain itself holds for `name`, asked with its own tool (not paddock).
fn native_lookup(keychain: &str, name: &str) -> Option<String> {
    let out = if keychain == SECRET_SERVICE {
        Command::new("secret-tool")
            .args(["lookup", "service", &service(), "username", name])
            .output()
            .expect("secret-tool")
    } else {
        let description = format!("keyring:{name}@{}", service());
        let found = Command::new("keyctl")
            .args(["search", "@s", "user", &description])
            .output()
            .expect("keyctl");
        if !found.status.success() {
            return None;
        }
        let id = text(&found.stdout).trim().to_owned();
        Command::new("keyctl").args(["pipe", &id]).output().expect("keyctl pipe")
    };
    out.status.success().then(|| text(&out.stdout).trim_end().to_owned())
}

fn cli_round_trip(keychain: &str) {
    let runtime = Runtime::new();
    let ok = |out: &Output| {
        assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
        text(&out.stdout)
    };
    let check = ok(&vault(&runtime, &["check"], ""));
    let store = if keychain == SECRET_SERVICE { "Secret Service" } else { "keyutils" };
    assert!(check.contains(store) && check.contains("reachable: yes"), "{check}");

    ok(&vault(&runtime, &["set", "api-key"], "first-value\n"));
    assert_eq!(native_lookup(keychain, "api-key").as_deref(), Some("first-value"));
    // Setting again replaces the value; the trailing newline of piped input is not part of it.
    ok(&vault(&runtime, &["set", "api-key"], "second-value\r\n"));
    assert_eq!(native_lookup(keychain, "api-key").as_deref(), Some("second-value"));

    let ls: serde_json::Value =
        serde_json::from_str(&ok(&vault(&runtime, &["ls", "--json"], ""))).expect("ls --json");
    assert_eq!(ls["secrets"][0]["name"], "api-key");
    assert_eq!(ls["secrets"][0]["stored"], true);
    let table = ok(&vault(&runtime, &["ls"], ""));
    assert!(table.contains("api-key") && table.contains("yes"), "{table}");
    assert!(!table.contains("second-value"), "{table}");

    let empty = vault(&runtime, &["set", "blank"], "\n");
    assert!(!empty.status.success());
    assert!(text(&empty.stderr).contains("the value is empty"), "{}", text(&empty.stderr));
    // Values no environment could carry, or too large to be a key, are refused; a short one
    // is stored with a warning (masking it reveals it).
    let nul = vault(&runtime, &["set", "nul"], "ab\0cd\n");
    assert!(
        !nul.status.success() && text(&nul.stderr).contains("NUL byte"),
        "{}",
        text(&nul.stderr)
    );
    let huge = "x".repeat(64 * 1024 + 1);
    let large = vault(&runtime, &["set", "large"], &huge);
    assert!(!large.status.success(), "{}", text(&large.stderr));
    assert!(text(&large.stderr).contains("65537 bytes"), "{}", text(&large.stderr));
    let padded = vault(&runtime, &["set", "padded"], "sk-padded-value-1234 \n");
    assert!(
        !padded.status.success() && text(&padded.stderr).contains("begins or ends with a space"),
        "{}",
        text(&padded.stderr)
    );
    assert_eq!(native_lookup(keychain, "padded"), None);
    assert_eq!(native_lookup(keychain, "nul"), None);
    assert_eq!(native_lookup(keychain, "large"), None);
    let short = vault(&runtime, &["set", "short"], "abc\n");
    assert!(short.status.success(), "{}", text(&short.stderr));
    assert!(
        text(&short.stderr).contains("warning: the value is 3 bytes"),
        "{}",
        text(&short.stderr)
    );
    ok(&vault(&runtime, &["rm", "short"], ""));

    ok(&vault(&runtime, &["rm", "api-key"], ""));
    assert_eq!(native_lookup(keychain, "api-key"), None);
    let again = vault(&runtime, &["rm", "api-key"], "");
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("\"api-key\" is not in the vault"),
        "{}",
        text(&again.stderr)
    );
}

#[test]
fn the_cli_sets_lists_and_removes_secrets_in_the_secret_service() {
    if rerun_inside(
        SECRET_SERVICE,
        "vault::the_cli_sets_lists_and_removes_secrets_in_the_secret_service",
    ) {
        return;
    }
    cli_round_trip(SECRET_SERVICE);
}

#[test]
fn the_cli_sets_lists_and_removes_secrets_in_keyutils() {
    if rerun_inside(KEYUTILS, "vault::the_cli_sets_lists_and_removes_secrets_in_keyutils") {
        return;
    }
    cli_round_trip(KEYUTILS);
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if std::fs::read(&path).is_ok_and(|b| text(&b).contains(needle)) {
            found.push(path);
        }
    }
    found
}

/// The environment of process `pid`, as `NAME=value` entries.
fn environment(pid: i64) -> Vec<String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("environ");
    raw.split(|b| *b == 0).map(text).collect()
}

/// Two threads with the same two secrets, one pinned to a test program: the program gets both,
/// a shell gets only the unpinned one and its pane says why; both are masked on screen, and
/// nothing of either value is found on screen, in the scrollback, in capture output, in
/// paddock's log, in the audit log or anywhere in the state folder.
#[test]
fn threads_get_their_secrets_from_the_keychain_and_nothing_leaks() {
    if rerun_inside(
        SECRET_SERVICE,
        "vault::threads_get_their_secrets_from_the_keychain_and_nothing_leaks",
    ) {
        return;
    }
    let runtime = Runtime::new();
    let (open, pinned) = ("op3n-VALUE-7781", "p1nned-VALUE-5521");
    let ok = |out: Output| assert!(out.status.success(), "{}", text(&out.stderr));
    ok(vault(&runtime, &["set", "open"], open));
    ok(vault(&runtime, &["set", "pinned"], pinned));
    let tool = runtime.dir.join("tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\nprintf 'tool open=%s pinned=%s\\n' \"$OPEN\" \"$PINNED\"\nexec sleep 60\n",
    )
    .expect("tool");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let tool = tool.display().to_string();
    // Not without a person at a terminal, who types the secret's name.
    let refused = vault(&runtime, &["approve", "pinned", &tool], "pinned\n");
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("needs a person at a terminal"), "{refused:?}");
    let wrong = approve_at_a_terminal(&runtime, "pinned", &tool, "open\n");
    assert!(!wrong.status.success() && text(&wrong.stdout).contains("not approved"), "{wrong:?}");
    ok(approve_at_a_terminal(&runtime, "pinned", &tool, "pinned\n"));

    let leak = runtime.dir.join("leak.txt").display().to_string();
    let script = format!(
        "printf 'shell open=%s pinned=%s\\n' \"$OPEN\" \"$PINNED\"; echo \"$OPEN\" > {leak}; \
         cat {leak}; i=0; while [ $i -lt 300 ]; do echo \"loop $OPEN\"; i=$((i+1)); done; \
         echo finished; exec sleep 60"
    );
    let secrets = format!(
        "[(name: \"open\", env: \"OPEN\"), (name: \"pinned\", env: \"PINNED\", pin: \"{tool}\")]"
    );
    let config = format!(
        "(threads: [\n  (name: \"tool\", command: [\"{tool}\"], secrets: {secrets}),\n  \
         (name: \"shell\", command: [\"/bin/sh\", \"-c\", {script:?}], secrets: {secrets}),\n])"
    );
    let folder = runtime.dir.join("config/paddock");
    std::fs::create_dir_all(&folder).expect("config folder");
    std::fs::write(folder.join("config.ron"), config).expect("config");

    let log = runtime.dir.join("paddock.log");
    let stderr = std::fs::File::create(&log).expect("log file");
    let state = state_home();
    let instance =
        runtime.start_with(&[], &[("XDG_STATE_HOME", state.as_os_str())], Stdio::from(stderr));
    let stars = |value: &str| "*".repeat(value.len());
    let screen = instance.wait_for_text("1", "tool open=");
    assert!(
        screen.contains(&format!("tool open={} pinned={}", stars(open), stars(pinned))),
        "{screen}"
    );
    let tool_env = environment(instance.pane(1)["pid"].as_i64().expect("pid"));
    assert!(
        tool_env.contains(&format!("OPEN={open}"))
            && tool_env.contains(&format!("PINNED={pinned}"))
    );

    instance.wait_for_text("2", "finished");
    let screen = instance.ctl(&["capture", "--pane", "2", "--scrollback"]).replace('\n', " ");
    assert!(
        screen.contains(&format!(
            "secret \"pinned\" withheld: pinned to {tool}; this pane runs /bin/sh"
        )),
        "{screen}"
    );
    assert!(screen.contains(&format!("loop {}", stars(open))), "{screen}");
    let shell_env = environment(instance.pane(2)["pid"].as_i64().expect("pid"));
    assert!(shell_env.contains(&format!("OPEN={open}")));
    assert!(
        !shell_env.iter().any(|e| e.starts_with("PINNED=")),
        "the pinned secret reached the shell"
    );
    assert_eq!(instance.pane(1)["secrets"], serde_json::json!(["open", "pinned"]));
    assert_eq!(instance.pane(2)["secrets"], serde_json::json!(["open"]));

    // A notification sent through the control socket, as an agent's hook sends one, holding the
    // value: what `ls` shows of it is starred.
    instance.ctl(&["notify", "--pane", "2", &format!("waiting, key {open}")]);
    // The pulse shows it at its next sample (4 a second).
    let shown = format!("waiting, key {}", stars(open));
    let mut reason = String::new();
    for _ in 0..50 {
        reason = text(&instance.run(&["ls", "--json"]).stdout);
        if reason.contains(&shown) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(reason.contains(&shown), "{reason}");
    let mut seen = reason;
    for pane in ["1", "2"] {
        seen.push_str(&instance.ctl(&["capture", "--pane", pane, "--scrollback"]));
        seen.push_str(&instance.capture(pane));
    }
    seen.push_str(&text(&instance.run(&["ls"]).stdout));
    seen.push_str(&text(&instance.run(&["ls", "--json"]).stdout));
    assert!(seen.contains(&format!("shell open={}", stars(open))), "{seen}");
    instance.ctl(&["stop"]);
    drop(instance);

    let audit = vault(&runtime, &["log", "--json"], "");
    let audit = text(&audit.stdout);
    let events: Vec<serde_json::Value> =
        audit.lines().map(|l| serde_json::from_str(l).expect("audit line")).collect();
    let count = |event: &str, secret: &str| {
        events.iter().filter(|e| e["event"] == event && e["secret"] == secret).count()
    };
    assert_eq!((count("released", "open"), count("released", "pinned")), (2, 1), "{audit}");
    assert_eq!(count("withheld", "pinned"), 1, "{audit}");
    let shell_closed = events
        .iter()
        .find(|e| e["event"] == "closed" && e["secret"] == "open" && e["thread"] == "shell")
        .unwrap_or_else(|| panic!("no closing record: {audit}"));
    assert!(shell_closed["masked"].as_u64().is_some_and(|n| n >= 302), "{audit}");

    for value in [open, pinned] {
        assert!(!seen.contains(value), "{value} reached the screen, scrollback or ls");
        assert!(!audit.contains(value), "{value} in the audit log");
        let log_text = std::fs::read_to_string(&log).expect("log");
        assert!(!log_text.contains(value), "{value} in paddock's log: {log_text}");
        assert_eq!(
            files_holding(&state, value),
            Vec::<PathBuf>::new(),
            "{value} in the state folder"
        );
    }
    // The program's own file has it: the pane's program was given it, and wrote it.
    assert_eq!(std::fs::read_to_string(&leak).expect("leak file").trim(), open);
}
