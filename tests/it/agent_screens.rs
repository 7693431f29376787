//! The pulse's screen rules on screens recorded from the real agent CLIs (Claude Code, Codex,
//! Gemini CLI, each against its local fake API): tests/data/recordings/agents, re-recorded by
//! tests/data/record_agents.py. Each recording is replayed up to each of its marks (the trust
//! dialog, a login question, idle at the prompt, streaming an answer, the approval prompt,
//! after the answer), and the rules must read there what a person would: which dialog waits
//! for them, or that nothing does.

use std::path::{Path, PathBuf};

use paddock::pulse::Rules;
use paddock::term::{row_text, TermConfig, TermSize, Terminal};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recordings/agents")
}

/// One recording: its name, size and marks (name, byte offset).
struct Recording {
    name: String,
    size: TermSize,
    marks: Vec<(String, usize)>,
    bytes: Vec<u8>,
}

fn recordings() -> Vec<Recording> {
    let manifest = std::fs::read_to_string(dir().join("manifest.txt")).expect("manifest.txt");
    manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next().expect("name").to_owned();
            let size = paddock::replay::parse_size(parts.next().expect("size")).expect("size");
            let marks = parts
                .map(|mark| {
                    let (at, offset) = mark.split_once('=').expect("mark=offset");
                    (at.to_owned(), offset.parse().expect("an offset"))
                })
                .collect();
            let bytes = std::fs::read(dir().join(format!("{name}.bin"))).expect("recording");
            Recording { name, size, marks, bytes }
        })
        .collect()
}

/// The screen of `recording` at `mark`: its rows, the cursor's row, and its digest.
fn screen_at(recording: &Recording, mark: &str) -> (Vec<String>, usize, u64) {
    let (_, offset) = recording
        .marks
        .iter()
        .find(|(name, _)| name == mark)
        .unwrap_or_else(|| panic!("{}: no mark {mark}", recording.name));
    let mut term = Terminal::new(recording.size, TermConfig::default());
    term.advance(&recording.bytes[..*offset]);
    let rows = term.rows().iter().map(row_text).collect();
    (rows, term.cursor().row, term.screen_fingerprint())
}

/// A recording's marks, each with what the rules must find there (None: nothing waits for
/// the user).
type Expected = &'static [(&'static str, Option<&'static str>)];

const EXPECTED: &[(&str, Expected)] = &[
    (
        "claude",
        &[
            ("trust", Some("Is this a project you created or one you trust?")),
            ("login", Some("Do you want to use this API key?")),
            ("idle", None),
            ("streaming", None),
            ("answered_idle", None),
            ("approval", Some("Do you want to create hello.txt?")),
            ("approval_still", Some("Do you want to create hello.txt?")),
            ("approved", None),
            ("idle_end", None),
        ],
    ),
    (
        "codex",
        &[
            ("trust", Some("Trust this folder?")),
            ("idle", None),
            ("streaming", None),
            ("answered_idle", None),
            ("approval", Some("Would you like to run the following command?")),
            ("approval_still", Some("Would you like to run the following command?")),
            ("approved", None),
            ("idle_end", None),
        ],
    ),
    ("codex_login", &[("login", Some("Sign in with ChatGPT"))]),
    (
        "gemini",
        &[
            ("trust", Some("Do you trust the files in this folder?")),
            ("idle", None),
            ("streaming", None),
            ("answered_idle", None),
            ("approval", Some("Allow execution of [Shell]?")),
            ("approval_still", Some("Allow execution of [Shell]?")),
            ("approved", None),
            ("idle_end", None),
        ],
    ),
    ("gemini_login", &[("login", Some("How would you like to authenticate"))]),
];

#[test]
fn the_rules_read_each_agents_dialogs_and_nothing_else() {
    let recordings = recordings();
    let rules = Rules::new(Vec::new());
    let mut wrong = Vec::new();
    for (name, marks) in EXPECTED {
        let recording = recordings
            .iter()
            .find(|r| r.name == *name)
            .unwrap_or_else(|| panic!("no recording {name} in the manifest"));
        assert_eq!(recording.marks.len(), marks.len(), "{name}: every mark has an expectation");
        for (mark, wanted) in *marks {
            let (rows, cursor, _) = screen_at(recording, mark);
            let found = rules.find(&rows, cursor).map(|f| f.text);
            if found.as_deref() != *wanted {
                wrong.push(format!(
                    "{name} at {mark}: {found:?}, not {wanted:?}\n{}",
                    rows.join("\n")
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

/// The approval dialogs of all three have a dialog's shape (a question and numbered choices),
/// which is what finds the dialogs of a program the table does not know, and hold still while
/// they wait, as that reading needs.
#[test]
fn each_agents_approval_prompt_has_a_dialogs_shape_and_holds_still() {
    let recordings = recordings();
    let rules = Rules::new(Vec::new());
    for name in ["claude", "codex", "gemini"] {
        let recording = recordings.iter().find(|r| r.name == name).expect("recorded");
        let (rows, _, shown) = screen_at(recording, "approval");
        let shape = rules.dialog_shape(&rows);
        assert!(shape.is_some_and(|found| found.when_still), "{name}:\n{}", rows.join("\n"));
        let (_, _, later) = screen_at(recording, "approval_still");
        assert_eq!(shown, later, "{name}: the dialog changed while it waited");
        // Nothing shaped like a dialog while idle or streaming.
        for mark in ["idle", "streaming", "answered_idle"] {
            let (rows, _, _) = screen_at(recording, mark);
            assert_eq!(rules.dialog_shape(&rows), None, "{name} at {mark}:\n{}", rows.join("\n"));
        }
    }
}

/// Streaming an answer changes the screen; an agent idle at its prompt leaves it as it was.
#[test]
fn streaming_changes_the_screen_and_idling_does_not() {
    for recording in
        recordings().iter().filter(|r| ["claude", "codex", "gemini"].contains(&&*r.name))
    {
        let name = &recording.name;
        let (_, _, streaming) = screen_at(recording, "streaming");
        let (_, _, answered) = screen_at(recording, "answered_idle");
        assert_ne!(streaming, answered, "{name}: the answer changed nothing");
        let (_, _, approved) = screen_at(recording, "approved");
        let (_, _, idle_end) = screen_at(recording, "idle_end");
        assert_eq!(approved, idle_end, "{name}: idle for five seconds, yet the screen changed");
    }
}
