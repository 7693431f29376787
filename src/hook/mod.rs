//! Agent hooks: the agents' own ways to say that they wait for their user, pointed at paddock.
//! `paddock hook install AGENT` writes the hook into the agent's settings; the agent then runs
//! `paddock hook event AGENT` at each event, which turns it into `ctl notify` for its pane
//! (needs-you, with the agent's own words as the reason). Pure: the settings' text in, the
//! new text out; an event's payload in, the reason out.
//!
//! - Claude Code: `~/.claude/settings.json`, its `Notification` (a permission prompt, waiting
//!   for input) and `Stop` (its turn ended) hooks; the event comes as JSON on stdin.
//! - Gemini CLI: `~/.gemini/settings.json`, its `Notification` (a tool's permission) and
//!   `AfterAgent` (its turn ended) hooks, the same shape; JSON on stdin.
//! - Codex: `~/.codex/config.toml`, its `notify` program, run at the end of each turn with the
//!   event as JSON in its last argument. Codex runs one such program: one that is set already
//!   is left alone, and said.

pub mod diff;

use serde_json::{json, Map, Value};

/// The agents paddock writes hooks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Gemini,
}

impl Agent {
    /// As the command line names it.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// Its settings file, relative to the home folder.
    pub fn settings_file(self) -> &'static str {
        match self {
            Agent::Claude => ".claude/settings.json",
            Agent::Codex => ".codex/config.toml",
            Agent::Gemini => ".gemini/settings.json",
        }
    }

    /// The events a hook is written for (JSON settings), and the reason each gives when its
    /// payload carries no message of its own.
    fn events(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Agent::Claude => &[("Notification", "waits for you"), ("Stop", "finished its turn")],
            Agent::Gemini => {
                &[("Notification", "waits for you"), ("AfterAgent", "finished its turn")]
            }
            Agent::Codex => &[],
        }
    }
}

/// Why the hook cannot be written.
#[derive(Debug, PartialEq, Eq)]
pub enum HookError {
    /// The settings file is not what the agent reads (not JSON, not an object…): left as it is.
    Unreadable(String),
    /// Codex runs one `notify` program, and another is set.
    OtherNotify(String),
}

impl std::fmt::Display for HookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HookError::Unreadable(why) => write!(f, "{why}; it is left as it is"),
            HookError::OtherNotify(line) => write!(
                f,
                "it sets another notify program already ({line}); Codex runs only one, so it is \
                 left as it is: have that program run `paddock hook event codex` with the same \
                 argument"
            ),
        }
    }
}

impl std::error::Error for HookError {}

/// The settings text with paddock's hook in it, given the text now (`None`: no file yet) and
/// the command that runs `paddock hook event AGENT` (`program` then its arguments). A hook of
/// paddock's already there (from an older install, perhaps another path) is replaced, so
/// installing twice changes nothing.
pub fn install(
    agent: Agent,
    existing: Option<&str>,
    program: &[String],
) -> Result<String, HookError> {
    match agent {
        Agent::Codex => install_codex(existing.unwrap_or(""), program),
        Agent::Claude | Agent::Gemini => install_json(agent, existing, program),
    }
}

/// At most this many characters of an agent's message make the reason.
pub const REASON_CHARS: usize = 200;

/// The reason an event gives (its own message where it has one, cut at [`REASON_CHARS`]), from
/// its payload; `None` for an event that is no reason to call the user.
pub fn reason(agent: Agent, payload: &str) -> Option<String> {
    said(agent, payload).map(|text| text.chars().take(REASON_CHARS).collect())
}

fn said(agent: Agent, payload: &str) -> Option<String> {
    let event: Value = serde_json::from_str(payload).ok()?;
    let text = |key: &str| event.get(key).and_then(Value::as_str).map(str::trim);
    match agent {
        Agent::Codex => {
            if text("type")? != "agent-turn-complete" {
                return None;
            }
            let said = text("last-assistant-message").and_then(|m| m.lines().next());
            Some(match said.filter(|s| !s.is_empty()) {
                Some(said) => format!("finished its turn: {said}"),
                None => "finished its turn".to_owned(),
            })
        }
        Agent::Claude | Agent::Gemini => {
            let name = text("hook_event_name")?;
            let (_, fallback) = agent.events().iter().find(|(event, _)| *event == name)?;
            let message = text("message").filter(|m| !m.is_empty());
            Some(message.map_or_else(|| (*fallback).to_owned(), str::to_owned))
        }
    }
}

/// The command as one line for a shell (Claude Code and Gemini CLI run hooks through one).
fn shell_line(program: &[String]) -> String {
    let quote = |word: &String| {
        let plain = word.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@".contains(&b));
        if plain && !word.is_empty() {
            word.clone()
        } else {
            format!("'{}'", word.replace('\'', r"'\''"))
        }
    };
    program.iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// Whether a hook command is one of paddock's for `agent` (whatever path paddock had).
fn is_ours(command: &str, agent: Agent) -> bool {
    command.trim_end().ends_with(&format!("hook event {}", agent.name()))
}

fn install_json(
    agent: Agent,
    existing: Option<&str>,
    program: &[String],
) -> Result<String, HookError> {
    let mut settings: Value = match existing.map(str::trim).filter(|t| !t.is_empty()) {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| HookError::Unreadable(format!("it is not JSON ({e})")))?,
        None => json!({}),
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| HookError::Unreadable("it is not a JSON object".into()))?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| HookError::Unreadable("its `hooks` is not an object".into()))?;
    let command = shell_line(program);
    for (event, _) in agent.events() {
        let definitions = hooks.entry(*event).or_insert_with(|| json!([]));
        let definitions = definitions
            .as_array_mut()
            .ok_or_else(|| HookError::Unreadable(format!("its `hooks.{event}` is not a list")))?;
        let ours = definitions.iter_mut().flat_map(|definition| {
            definition.get_mut("hooks").and_then(Value::as_array_mut).into_iter().flatten()
        });
        let mut found = false;
        for hook in ours {
            let theirs =
                hook.get("command").and_then(Value::as_str).is_none_or(|c| !is_ours(c, agent));
            if !theirs {
                hook["command"] = Value::String(command.clone());
                found = true;
            }
        }
        if !found {
            let mut hook = Map::new();
            hook.insert("type".into(), "command".into());
            hook.insert("command".into(), command.clone().into());
            definitions.push(json!({ "hooks": [Value::Object(hook)] }));
        }
    }
    let mut text = String::new();
    // serde_json writes C1 controls and reordering characters as they are: escaped again, so
    // that an escape a locked agent wrote as inert `\u009b` stays inert in the file.
    for c in serde_json::to_string_pretty(&settings).unwrap_or_default().chars() {
        match c {
            '\u{80}'..='\u{9f}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' => {
                text.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => text.push(c),
        }
    }
    text.push('\n');
    Ok(text)
}

fn install_codex(existing: &str, program: &[String]) -> Result<String, HookError> {
    let words: Vec<String> = program.iter().map(|w| Value::String(w.clone()).to_string()).collect();
    let line = format!("notify = [{}]", words.join(", "));
    let mut lines: Vec<&str> = existing.lines().collect();
    // Top-level keys come before the first table.
    let top = lines.iter().position(|l| l.trim_start().starts_with('[')).unwrap_or(lines.len());
    // A `[notify]` table anywhere would clash with the key (and is not the program list).
    if let Some(table) = lines.iter().find(|l| l.trim_start().starts_with("[notify")) {
        return Err(HookError::OtherNotify(table.trim().to_owned()));
    }
    let set = lines[..top].iter().position(|l| {
        let l = l.trim_start();
        l.strip_prefix("notify").is_some_and(|rest| rest.trim_start().starts_with('='))
    });
    match set {
        Some(at) if lines[at].contains("\"hook\", \"event\", \"codex\"") => lines[at] = &line,
        Some(at) => return Err(HookError::OtherNotify(lines[at].trim().to_owned())),
        None => lines.insert(0, &line),
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Vec<String> {
        ["/opt/my tools/paddock", "hook", "event"].map(str::to_owned).to_vec()
    }

    fn with(agent: Agent) -> Vec<String> {
        let mut program = program();
        program.push(agent.name().into());
        program
    }

    #[test]
    fn claude_gets_notification_and_stop_hooks_beside_its_own_settings_once() {
        let existing = r#"{"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#;
        let text = install(Agent::Claude, Some(existing), &with(Agent::Claude)).expect("written");
        let settings: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(settings["theme"], "dark");
        let command = "'/opt/my tools/paddock' hook event claude";
        assert_eq!(settings["hooks"]["Notification"][0]["hooks"][0]["command"], command);
        assert_eq!(settings["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
        assert_eq!(settings["hooks"]["Stop"][1]["hooks"][0]["command"], command);
        // Again, from another path: replaced, not added.
        let moved = ["/usr/bin/paddock", "hook", "event", "claude"].map(str::to_owned);
        let again = install(Agent::Claude, Some(&text), &moved).expect("written");
        let settings: Value = serde_json::from_str(&again).expect("JSON");
        assert_eq!(settings["hooks"]["Stop"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            settings["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/usr/bin/paddock hook event claude"
        );
        assert_eq!(install(Agent::Claude, Some(&again), &moved).as_deref(), Ok(again.as_str()));
    }

    #[test]
    fn gemini_gets_notification_and_after_agent_hooks_and_a_new_file_is_made() {
        let text = install(Agent::Gemini, None, &with(Agent::Gemini)).expect("written");
        let settings: Value = serde_json::from_str(&text).expect("JSON");
        assert!(settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"]
            .as_str()
            .is_some_and(|c| c.ends_with("hook event gemini")));
        assert_eq!(settings["hooks"]["Notification"][0]["hooks"][0]["type"], "command");
    }

    #[test]
    fn escapes_written_as_text_stay_text() {
        let existing = r#"{"a": "\u009b31m \u202e"}"#;
        let text = install(Agent::Claude, Some(existing), &with(Agent::Claude)).expect("written");
        assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}'), "{text:?}");
        assert!(text.contains(r"\u009b31m \u202e"), "{text}");
        let settings: Value = serde_json::from_str(&text).expect("still JSON");
        assert_eq!(settings["a"], "\u{9b}31m \u{202e}");
    }

    #[test]
    fn settings_that_are_not_what_the_agent_reads_are_left_alone() {
        let bad = install(Agent::Claude, Some("{not json"), &with(Agent::Claude));
        assert!(matches!(bad, Err(HookError::Unreadable(_))));
        let bad = install(Agent::Gemini, Some(r#"{"hooks": []}"#), &with(Agent::Gemini));
        assert_eq!(bad, Err(HookError::Unreadable("its `hooks` is not an object".into())));
    }

    #[test]
    fn codex_gets_a_notify_program_at_the_top_unless_it_has_another() {
        let existing = "model = \"gpt-5\"\n[model_providers.x]\nnotify = \"not top level\"\n";
        let text = install(Agent::Codex, Some(existing), &with(Agent::Codex)).expect("written");
        assert_eq!(
            text,
            "notify = [\"/opt/my tools/paddock\", \"hook\", \"event\", \"codex\"]\nmodel = \"gpt-5\"\n[model_providers.x]\nnotify = \"not top level\"\n"
        );
        assert_eq!(
            install(Agent::Codex, Some(&text), &with(Agent::Codex)).as_deref(),
            Ok(text.as_str())
        );
        let table = install(Agent::Codex, Some("[notify]\nx = 1\n"), &with(Agent::Codex));
        assert_eq!(table, Err(HookError::OtherNotify("[notify]".into())));
        let other =
            install(Agent::Codex, Some("notify = [\"notify-send\"]\n"), &with(Agent::Codex));
        assert_eq!(other, Err(HookError::OtherNotify("notify = [\"notify-send\"]".into())));
    }

    #[test]
    fn an_events_reason_is_the_agents_own_message() {
        let claude = r#"{"hook_event_name": "Notification", "message": "Claude needs your permission to use Write"}"#;
        assert_eq!(
            reason(Agent::Claude, claude).as_deref(),
            Some("Claude needs your permission to use Write")
        );
        let stop = r#"{"hook_event_name": "Stop", "stop_hook_active": false}"#;
        assert_eq!(reason(Agent::Claude, stop).as_deref(), Some("finished its turn"));
        let gemini = r#"{"hook_event_name": "AfterAgent", "prompt": "x"}"#;
        assert_eq!(reason(Agent::Gemini, gemini).as_deref(), Some("finished its turn"));
        let codex = r#"{"type": "agent-turn-complete", "last-assistant-message": "Done: hello.txt is written.\nMore."}"#;
        assert_eq!(
            reason(Agent::Codex, codex).as_deref(),
            Some("finished its turn: Done: hello.txt is written.")
        );
        assert_eq!(reason(Agent::Codex, r#"{"type": "other"}"#), None);
        assert_eq!(reason(Agent::Claude, r#"{"hook_event_name": "PreToolUse"}"#), None);
        assert_eq!(reason(Agent::Claude, "not json"), None);
        let long =
            format!(r#"{{"hook_event_name": "Notification", "message": "{}"}}"#, "x".repeat(500));
        assert_eq!(reason(Agent::Claude, &long).map(|r| r.len()), Some(REASON_CHARS));
    }
}
