//! Differential test (a): the recorded sessions that ship inside the alacritty_terminal package
//! (`tests/ref/*/alacritty.recording`), fed to both models, compared cell by cell.
//!
//! The package directory is found through `cargo metadata` at test time; nothing is copied into
//! this repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::reference::Reference;
use crate::snapshot;

/// Recordings where paddock deliberately differs, and why. Each one is still checked: against
/// the expected screen in tests/data/divergences/NAME.json (`paddock replay --format
/// json` output; `cargo xtask bless` rewrites it). A unit test in `model` pins each behaviour.
const DELIBERATE: &[(&str, &str)] = &[
    ("vttest_origin_mode_1", CURSOR_STOPS_AT_MARGINS),
    ("vttest_origin_mode_2", CURSOR_STOPS_AT_MARGINS),
    ("vttest_scroll", CURSOR_STOPS_AT_MARGINS),
    (
        "selective_erasure",
        "paddock implements DECSCA protection and DECSED/DECSEL (CSI ? J / CSI ? K) erase only \
         unprotected cells; Alacritty ignores all three, so its screen keeps A and C",
    ),
    (
        "underline",
        "SGR 21 is double underline (ECMA-48, xterm, kitty, VTE); Alacritty reads it as \
         'not bold', so `4:3;21` stays curly there and becomes double here",
    ),
];

fn alacritty_ref_dir() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let manifest = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "alacritty_terminal" && p["version"] == "0.26.0")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("alacritty_terminal 0.26.0 is a dev-dependency");
    Path::new(manifest).parent().expect("package dir").join("tests/ref")
}

pub(crate) struct Recording {
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) cols: usize,
    pub(crate) lines: usize,
    pub(crate) history: usize,
}

pub(crate) fn recordings() -> Vec<Recording> {
    let dir = alacritty_ref_dir();
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        let read_json = |name: &str| -> Value {
            let text = std::fs::read_to_string(path.join(name)).expect(name);
            serde_json::from_str(&text).expect(name)
        };
        let size = read_json("size.json");
        let config = read_json("config.json");
        out.push(Recording {
            name: path.file_name().expect("name").to_string_lossy().into_owned(),
            bytes: std::fs::read(path.join("alacritty.recording")).expect("recording"),
            cols: size["columns"].as_u64().expect("columns") as usize,
            lines: size["screen_lines"].as_u64().expect("screen_lines") as usize,
            history: config["history_size"].as_u64().unwrap_or(0) as usize,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Feed `bytes` to both models in `steps` slices (cut at arbitrary bytes, even inside escape
/// sequences) and compare the screens after every slice; the report of the first difference.
pub fn compare_in_steps(
    bytes: &[u8],
    cols: usize,
    lines: usize,
    history: usize,
    steps: usize,
) -> Result<(), String> {
    let step = bytes.len().div_ceil(steps.max(1)).max(1);
    compare_chunks(bytes.chunks(step), cols, lines, history)
}

/// Feed the chunks to both models in turn and compare the screens after each one.
pub fn compare_chunks<'a>(
    chunks: impl IntoIterator<Item = &'a [u8]>,
    cols: usize,
    lines: usize,
    history: usize,
) -> Result<(), String> {
    let size = paddock::term::TermSize::new(cols, lines);
    let config = paddock::term::TermConfig { scrollback_lines: history };
    let mut ours = paddock::term::Terminal::new(size, config);
    let mut reference = Reference::new(cols, lines, history);
    let mut fed = 0;
    for chunk in chunks {
        ours.advance(chunk);
        reference.advance(chunk);
        fed += chunk.len();
        let (a, b) = (snapshot::of_paddock(&ours), reference.snapshot());
        if a != b {
            return Err(format!("after {fed} bytes:\n{}", snapshot::report(&a, &b)));
        }
    }
    Ok(())
}

/// vttest's scroll tests move up with `CSI 24 A` from inside a two-row region and expect to land
/// on its top margin (the final screens agree; the screens in between do not).
pub const CURSOR_STOPS_AT_MARGINS: &str = "CUU/CUD started inside the scroll region stop at its \
     margins (VT100, xterm); Alacritty moves past them, so vttest's 'scroll region' lines land \
     at the top of its screen";

/// Check one recording: stepwise equal to Alacritty, or, when listed in `deliberate`, different
/// from it and equal to the expected screen in tests/data/divergences/NAME.json.
pub fn check_recording(
    name: &str,
    bytes: &[u8],
    (cols, lines, history): (usize, usize, usize),
    steps: usize,
    deliberate: &[(&str, &str)],
) -> Option<String> {
    let Some((_, why)) = deliberate.iter().find(|(n, _)| *n == name) else {
        return compare_in_steps(bytes, cols, lines, history, steps)
            .err()
            .map(|report| format!("== {name}\n{report}"));
    };
    let differs = compare_in_steps(bytes, cols, lines, history, steps).is_err();
    assert!(differs, "{name}: listed as deliberate ({why}) but now matches");
    let size = paddock::term::TermSize::new(cols, lines);
    let term = paddock::replay::replay(bytes, size, history);
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/divergences")
        .join(format!("{name}.json"));
    crate::expect_file(&path, &paddock::replay::to_json(&term), why);
    None
}

#[test]
fn all_45_alacritty_recordings_match_or_differ_deliberately() {
    let recordings = recordings();
    assert_eq!(recordings.len(), 45, "the alacritty_terminal 0.26.0 package ships 45 recordings");
    let failures: Vec<String> = recordings
        .iter()
        .filter_map(|rec| {
            let size = (rec.cols, rec.lines, rec.history);
            check_recording(&rec.name, &rec.bytes, size, 16, DELIBERATE)
        })
        .collect();
    assert!(failures.is_empty(), "{} of 45 differ:\n{}", failures.len(), failures.join("\n"));
}
