//! Differential test (a): the recorded sessions that ship inside the alacritty_terminal package
//! (`tests/ref/*/alacritty.recording`), fed to both models, compared cell by cell.
//!
//! The package directory is found through `cargo metadata` at test time; nothing is copied into
//! this repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::reference::Reference;
use crate::snapshot::{self, Snapshot};

/// Recordings where paddock deliberately differs, and why. Each one is still checked: against
/// the expected screen in tests/data/alacritty-divergences/NAME.json (`paddock replay --format
/// json` output; `cargo xtask bless` rewrites it). A unit test in `model` pins each behaviour.
const DELIBERATE: &[(&str, &str)] = &[
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
    Path::new(manifest)
        .parent()
        .expect("package dir")
        .join("tests/ref")
}

struct Recording {
    name: String,
    bytes: Vec<u8>,
    cols: usize,
    lines: usize,
    history: usize,
}

fn recordings() -> Vec<Recording> {
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
            name: path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned(),
            bytes: std::fs::read(path.join("alacritty.recording")).expect("recording"),
            cols: size["columns"].as_u64().expect("columns") as usize,
            lines: size["screen_lines"].as_u64().expect("screen_lines") as usize,
            history: config["history_size"].as_u64().unwrap_or(0) as usize,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

pub fn both(bytes: &[u8], cols: usize, lines: usize, history: usize) -> (Snapshot, Snapshot) {
    let term = paddock::replay::replay(bytes, paddock::term::TermSize::new(cols, lines), history);
    let mut reference = Reference::new(cols, lines, history);
    reference.advance(bytes);
    (snapshot::of_paddock(&term), reference.snapshot())
}

#[test]
fn all_45_alacritty_recordings_match_or_differ_deliberately() {
    let recordings = recordings();
    assert_eq!(
        recordings.len(),
        45,
        "the alacritty_terminal 0.26.0 package ships 45 recordings"
    );
    let mut failures = Vec::new();
    for rec in &recordings {
        let (ours, theirs) = both(&rec.bytes, rec.cols, rec.lines, rec.history);
        match DELIBERATE.iter().find(|(name, _)| *name == rec.name) {
            None if ours != theirs => failures.push(format!(
                "== {}\n{}",
                rec.name,
                snapshot::report(&ours, &theirs)
            )),
            None => {}
            Some((_, why)) => {
                assert_ne!(
                    ours, theirs,
                    "{}: listed as deliberate ({why}) but now matches",
                    rec.name
                );
                let size = paddock::term::TermSize::new(rec.cols, rec.lines);
                let term = paddock::replay::replay(&rec.bytes, size, rec.history);
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/data/alacritty-divergences")
                    .join(format!("{}.json", rec.name));
                crate::expect_file(&path, &paddock::replay::to_json(&term), why);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 45 differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
