//! The pulse on the real agents: Claude Code, Codex and Gemini CLI, interactive, each locked in
//! a pane with its fake API (tests/data/fake_*.py) as its only network, read through `paddock
//! ls --json` as a script would. Per agent: needs-you at the trust dialog (and Claude Code's
//! API key question), cleared by the answer; quiet when idle at its prompt; working while an
//! answer streams, quiet again after; needs-you at the approval prompt with the dialog's
//! question as the reason, cleared by the answer, which lets the file be written.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::agent::{agent, packages, Stage};
use super::config::write_config;
use super::{wait_for, Instance};

/// One agent's part: its dialogs (the text that shows, the reason the pulse gives, the keys
/// that answer) and what its screen says when it is ready and when an answer is whole.
struct Part {
    /// The agent's thread (its private home).
    thread: &'static str,
    trust: Dialog,
    /// A question after the trust dialog, before the agent is ready.
    login: Option<Dialog>,
    /// What its screen shows when it waits for a prompt.
    ready: &'static str,
    /// The slow answer (tests/data/fake_*.py), whole.
    streamed: &'static str,
    approval: Dialog,
}

struct Dialog {
    shows: &'static str,
    reason: &'static str,
    answer: &'static [&'static str],
}

/// The pane's pulse once `wanted` says yes.
fn pulse_when(instance: &Instance, wanted: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    wait_for("the agent's pulse", || {
        last = instance.pane(1)["pulse"].clone();
        wanted(&last)
    });
    last
}

/// Type `prompt` and press Enter apart from it, as a person does: a TUI that sees the two in
/// one read takes them for a paste, and the Enter for a new line in it.
fn ask(instance: &Instance, prompt: &str) {
    instance.ctl(&["send", "--pane", "1", "--text", prompt]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    instance.send_keys("1", "Enter");
}

/// Starts the thread (its config written by the caller) and plays `part` through.
fn play(stage: &Stage, part: &Part) {
    let instance = stage.runtime.start(&[]);
    let waits = |dialog: &Dialog| {
        instance.wait_for_text("1", dialog.shows);
        let reason = format!("screen shows \"{}\"", dialog.reason);
        let pulse = pulse_when(&instance, |p| p["state"] == "needs_you");
        assert_eq!(pulse["reason"], reason, "{pulse}\n{}", instance.capture("1"));
        // A person reads the question first (and Claude Code ignores keys in a permission
        // dialog's first moments, against an answer typed ahead by accident).
        std::thread::sleep(std::time::Duration::from_secs(1));
        for keys in dialog.answer {
            instance.send_keys("1", keys);
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        // Answered: the dialog goes, and with it the need.
        pulse_when(&instance, |p| p["reason"] != reason.as_str());
    };
    waits(&part.trust);
    if let Some(login) = &part.login {
        waits(login);
    }
    instance.wait_for_text("1", part.ready);
    let idle = pulse_when(&instance, |p| p["state"] == "quiet");
    assert_eq!(idle["reason"], Value::Null, "{idle}");

    // An answer streaming, a word at a time: working while it comes, before it is whole.
    ask(&instance, "Say hello slowly");
    pulse_when(&instance, |p| p["state"] == "working");
    let screen = instance.capture("1");
    assert!(!screen.contains(part.streamed), "the answer was whole already:\n{screen}");
    instance.wait_for_text("1", part.streamed);
    pulse_when(&instance, |p| p["state"] == "quiet");

    // The approval prompt: needs you, with the question; the answer clears it.
    ask(&instance, "Create hello.txt here");
    waits(&part.approval);
    let done = instance.wait_for_text("1", "Done: hello.txt is written.");
    let written = std::fs::read_to_string(stage.work.join("hello.txt")).unwrap_or_else(|e| {
        let log = std::fs::read_to_string(&stage.log).unwrap_or_default();
        panic!("the agent's file: {e}\n{done}\n{log}")
    });
    assert!(written.starts_with("written by the agent"), "{written}");
    let after = instance.pane(1)["pulse"].clone();
    assert_ne!(after["state"], "needs_you", "{after}");
    assert!(stage.runtime.dir.join("data/paddock/homes").join(part.thread).is_dir());
}

/// The locked thread `thread`: `command` in the lock folder with `env`, reading `program`'s
/// packages and the test CA, its network the fake only, quiet after 5 s.
fn configure(stage: &Stage, thread: &str, program: &Path, command: &str, env: &[(&str, String)]) {
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k:?}: {v:?}")).collect();
    let read: Vec<String> = [packages(program), stage.tls.clone()]
        .iter()
        .map(|p| format!("{:?}", p.display().to_string()))
        .collect();
    write_config(
        &stage.runtime,
        &format!(
            r#"(proxy_hosts: {{"api.fake.test": "127.0.0.1"}},
                threads: [(name: "{thread}", command: ["sh", "-c", {command:?}], env: {{{env}}},
                    cwd: {work:?}, pulse: (quiet_after: 5),
                    lock: (write: [{work:?}], read: [{read}],
                           network: Allow(["api.fake.test:{port}"])))])"#,
            env = env.join(", "),
            read = read.join(", "),
            work = stage.work.display().to_string(),
            port = stage.fake.port,
        ),
    );
}

#[test]
fn claude_code_reads_right_in_every_state() {
    let test = "headless::agent_pulse::claude_code_reads_right_in_every_state";
    let program = "@anthropic-ai/claude-code/bin/claude.exe";
    let Some(claude) = agent(test, "PADDOCK_TEST_CLAUDE", program) else { return };
    let stage = Stage::new("fake_anthropic.py", |work| vec![work.join("hello.txt")]);
    // Onboarding done (as after a person's first run), but this folder not trusted yet and the
    // key not approved: both questions come.
    let state = r#"{"hasCompletedOnboarding": true, "theme": "dark"}"#;
    std::fs::write(stage.in_home("claude", ".claude.json"), state).expect(".claude.json");
    let env = stage.claude_env("fake-key-for-the-local-fake-api");
    // Asking before it edits: Claude Code 2.1.3xx starts in "auto mode", which does not.
    let command = format!("exec {} --permission-mode default", claude.display());
    configure(&stage, "claude", &claude, &command, &env);
    play(
        &stage,
        &Part {
            thread: "claude",
            trust: Dialog {
                shows: "Yes, I trust this folder",
                reason: "Is this a project you created or one you trust?",
                // Its choices are not numbered, and "No, exit" is chosen first.
                answer: &["Down", "Enter"],
            },
            login: Some(Dialog {
                shows: "Do you want to use this API key?",
                reason: "Do you want to use this API key?",
                answer: &["Up", "Enter"],
            }),
            ready: "for shortcuts",
            streamed: "Hello from the fake Anthropic",
            approval: Dialog {
                shows: "Do you want to create hello.txt?",
                reason: "Do you want to create hello.txt?",
                answer: &["1"],
            },
        },
    );
}

#[test]
fn codex_reads_right_in_every_state() {
    let test = "headless::agent_pulse::codex_reads_right_in_every_state";
    let Some(codex) = agent(test, "PADDOCK_TEST_CODEX", "@openai/codex/bin/codex.js") else {
        return;
    };
    let stage = Stage::new("fake_openai.py", |_| Vec::new());
    // A git repository, which Codex asks to trust.
    let init = std::process::Command::new("git").args(["init", "-q"]).arg(&stage.work).status();
    assert!(init.is_ok_and(|s| s.success()), "git init");
    let env = stage.codex_set_up("codex");
    configure(&stage, "codex", &codex, &format!("exec {}", codex.display()), &env);
    play(
        &stage,
        &Part {
            thread: "codex",
            trust: Dialog {
                shows: "Trust and continue",
                reason: "Trust this folder?",
                answer: &["Enter"],
            },
            login: None,
            ready: "Ask Codex to do anything",
            streamed: "Hello from the fake OpenAI",
            approval: Dialog {
                shows: "Would you like to run the following command?",
                reason: "Would you like to run the following command?",
                answer: &["y"],
            },
        },
    );
}

#[test]
fn gemini_cli_reads_right_in_every_state() {
    let test = "headless::agent_pulse::gemini_cli_reads_right_in_every_state";
    let Some(gemini) = agent(test, "PADDOCK_TEST_GEMINI", "@google/gemini-cli/bundle/gemini.js")
    else {
        return;
    };
    let stage = Stage::new("fake_gemini.py", |work| vec![PathBuf::from(work)]);
    let env = stage.gemini_set_up("gemini");
    configure(&stage, "gemini", &gemini, &format!("exec {}", gemini.display()), &env);
    play(
        &stage,
        &Part {
            thread: "gemini",
            trust: Dialog {
                shows: "Trust folder",
                reason: "Do you trust the files in this folder?",
                answer: &["Enter"],
            },
            login: None,
            ready: "Type your message",
            streamed: "Hello from the fake Gemini",
            approval: Dialog {
                shows: "Allow execution of",
                reason: "Allow execution of [Shell]?",
                answer: &["Enter"],
            },
        },
    );
}

/// `paddock hook install claude --thread claude` writes Claude Code's Notification and Stop
/// hooks into the locked thread's own home, showing the change; the real Claude Code, locked,
/// then tells its pane through the pane's endpoint: when its turn ends, the pane needs you with
/// the hook's reason.
#[test]
fn claude_codes_own_hooks_tell_its_pane_from_inside_the_lock() {
    let test = "headless::agent_pulse::claude_codes_own_hooks_tell_its_pane_from_inside_the_lock";
    let program = "@anthropic-ai/claude-code/bin/claude.exe";
    let Some(claude) = agent(test, "PADDOCK_TEST_CLAUDE", program) else { return };
    let stage = Stage::new("fake_anthropic.py", |work| vec![work.join("hello.txt")]);
    let key = "fake-key-for-the-local-fake-api";
    super::agent::first_run_done(&stage.in_home("claude", ".claude.json"), key, &stage.work);
    let env = stage.claude_env(key);
    let command =
        format!("exec {} --permission-mode default 'Create hello.txt here'", claude.display());
    configure(&stage, "claude", &claude, &command, &env);

    let install = stage
        .runtime
        .paddock(&["hook", "install", "claude", "--thread", "claude", "--yes"])
        .output()
        .expect("paddock hook install");
    let said = String::from_utf8_lossy(&install.stdout);
    assert!(install.status.success(), "{said}{}", String::from_utf8_lossy(&install.stderr));
    let settings = stage.runtime.dir.join("data/paddock/homes/claude/.claude/settings.json");
    assert!(said.contains(&settings.display().to_string()) && said.contains("+ "), "{said}");
    let written = std::fs::read_to_string(&settings).expect("the thread's settings.json");
    assert!(written.contains("\"Stop\"") && written.contains("hook event claude"), "{written}");
    // Again: nothing to change.
    let again = stage
        .runtime
        .paddock(&["hook", "install", "claude", "--thread", "claude"])
        .output()
        .expect("again");
    assert!(String::from_utf8_lossy(&again.stdout).contains("is there already"));

    let instance = stage.runtime.start(&[]);
    instance.wait_for_text("1", "Do you want to create hello.txt?");
    pulse_when(&instance, |p| p["state"] == "needs_you");
    // A person reads the question first (Claude Code ignores keys in its first moments).
    std::thread::sleep(std::time::Duration::from_secs(1));
    instance.send_keys("1", "1");
    instance.wait_for_text("1", "Done: hello.txt is written.");
    let told = pulse_when(&instance, |p| p["reason"] == "notification: finished its turn");
    assert_eq!(told["state"], "needs_you", "{told}");
}

/// Gemini CLI's own hooks, installed into its locked thread's home beside its settings: the
/// pane takes the CLI's words at its tool's permission question, then its turn's end.
#[test]
fn gemini_clis_own_hooks_tell_its_pane_from_inside_the_lock() {
    let test = "headless::agent_pulse::gemini_clis_own_hooks_tell_its_pane_from_inside_the_lock";
    let Some(gemini) = agent(test, "PADDOCK_TEST_GEMINI", "@google/gemini-cli/bundle/gemini.js")
    else {
        return;
    };
    let stage = Stage::new("fake_gemini.py", |work| vec![PathBuf::from(work)]);
    let env = stage.gemini_set_up("gemini");
    let command = format!("exec {} --skip-trust -i 'Create hello.txt here'", gemini.display());
    configure(&stage, "gemini", &gemini, &command, &env);
    let install = stage
        .runtime
        .paddock(&["hook", "install", "gemini", "--thread", "gemini", "--yes"])
        .output()
        .expect("paddock hook install");
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    let written = std::fs::read_to_string(stage.in_home("gemini", ".gemini/settings.json"))
        .expect("settings.json");
    assert!(written.contains("\"AfterAgent\"") && written.contains("gemini-api-key"), "{written}");

    let instance = stage.runtime.start(&[]);
    instance.wait_for_text("1", "Allow execution of");
    let asked = "notification: Tool Confirm Shell Command requires execution";
    pulse_when(&instance, |p| p["reason"] == asked);
    instance.send_keys("1", "Enter");
    instance.wait_for_text("1", "Done: hello.txt is written.");
    pulse_when(&instance, |p| p["reason"] == "notification: finished its turn");
}

/// Codex's notify program, installed at the top of its locked thread's config.toml: at its
/// turn's end the pane needs you, with Codex's last words.
#[test]
fn codexs_notify_program_tells_its_pane_from_inside_the_lock() {
    let test = "headless::agent_pulse::codexs_notify_program_tells_its_pane_from_inside_the_lock";
    let Some(codex) = agent(test, "PADDOCK_TEST_CODEX", "@openai/codex/bin/codex.js") else {
        return;
    };
    let stage = Stage::new("fake_openai.py", |_| Vec::new());
    let env = stage.codex_set_up("codex");
    configure(&stage, "codex", &codex, &format!("exec {} 'Say hello'", codex.display()), &env);
    let install = stage
        .runtime
        .paddock(&["hook", "install", "codex", "--thread", "codex", "--yes"])
        .output()
        .expect("paddock hook install");
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    let instance = stage.runtime.start(&[]);
    instance.wait_for_text("1", "Hello from the fake OpenAI");
    let told = pulse_when(&instance, |p| p["state"] == "needs_you");
    assert_eq!(told["reason"], "notification: finished its turn: Hello from the fake OpenAI");
}

/// What `paddock hook install` will not do, and says: an unknown thread (naming the ones
/// there are), settings the agent could not read (left as they are), writing unasked, and
/// following a link the locked thread planted in its home.
#[test]
fn hook_install_refuses_clearly_and_loses_nothing() {
    let runtime = super::Runtime::new();
    write_config(
        &runtime,
        &format!(
            "(threads: [(name: \"a\", lock: (write: [{:?}]))])",
            runtime.dir.display().to_string()
        ),
    );
    let run = |args: &[&str]| {
        let out =
            runtime.paddock(args).stdin(std::process::Stdio::null()).output().expect("paddock");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, _, err) = run(&["hook", "install", "claude", "--thread", "nope"]);
    assert!(!ok && err.contains("no thread named \"nope\"") && err.contains("threads: a"), "{err}");
    let home = runtime.dir.join("data/paddock/homes/a");
    // Asked with no one to answer: shown, not written.
    let (ok, out, err) = run(&["hook", "install", "claude", "--thread", "a"]);
    assert!(!ok && out.contains("+ ") && err.contains("not written"), "{out}{err}");
    assert!(!home.join(".claude/settings.json").exists());
    // What a locked agent wrote in its settings is shown, never sent to the terminal as it is.
    std::fs::create_dir_all(home.join(".codex")).expect("folder");
    std::fs::write(home.join(".codex/config.toml"), "# \u{1b}]0;pwned\u{7}\n").expect("config");
    let (_, out, _) = run(&["hook", "install", "codex", "--thread", "a"]);
    assert!(!out.contains('\u{1b}') && out.contains("\\u{1b}"), "{out:?}");
    // Codex's other notify program, quoted in the refusal with its escape sequences escaped.
    std::fs::write(home.join(".codex/config.toml"), "notify = \"\u{1b}[2J\"\n").expect("config");
    let (ok, _, err) = run(&["hook", "install", "codex", "--thread", "a", "--yes"]);
    assert!(!ok && !err.contains('\u{1b}') && err.contains("another notify program"), "{err:?}");
    // A FIFO where the settings go would hold install forever; a sparse file of gigabytes would
    // fill its memory: refused, both.
    let fifo = std::ffi::CString::new(home.join(".codex/config.toml").display().to_string())
        .expect("path");
    std::fs::remove_file(home.join(".codex/config.toml")).expect("rm");
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let (ok, _, err) = run(&["hook", "install", "codex", "--thread", "a", "--yes"]);
    assert!(!ok && err.contains("not a plain file"), "{err}");
    std::fs::remove_file(home.join(".codex/config.toml")).expect("rm");
    let huge = std::fs::File::create(home.join(".codex/config.toml")).expect("file");
    huge.set_len(8 << 30).expect("sparse");
    let (ok, _, err) = run(&["hook", "install", "codex", "--thread", "a", "--yes"]);
    assert!(!ok && err.contains("larger than 1 MiB"), "{err}");
    // Settings that are not JSON: left as they are.
    std::fs::create_dir_all(home.join(".claude")).expect("folder");
    std::fs::write(home.join(".claude/settings.json"), "{oops").expect("settings");
    let (ok, _, err) = run(&["hook", "install", "claude", "--thread", "a", "--yes"]);
    assert!(!ok && err.contains("is not JSON") && err.contains("left as it is"), "{err}");
    assert_eq!(std::fs::read_to_string(home.join(".claude/settings.json")).expect("kept"), "{oops");
    // A link planted where the settings go: not followed.
    let yours = runtime.dir.join("yours.json");
    std::fs::write(&yours, "{}").expect("yours");
    std::fs::remove_file(home.join(".claude/settings.json")).expect("rm");
    std::os::unix::fs::symlink(&yours, home.join(".claude/settings.json")).expect("link");
    let (ok, _, err) = run(&["hook", "install", "claude", "--thread", "a", "--yes"]);
    assert!(!ok && err.contains("cannot read"), "{err}");
    assert_eq!(std::fs::read_to_string(&yours).expect("yours"), "{}");
    // Outside paddock, an event is nothing, and succeeds.
    let mut event = runtime.paddock(&["hook", "event", "claude"]);
    event.stdin(std::process::Stdio::null());
    assert!(event.status().expect("event").success());
}
