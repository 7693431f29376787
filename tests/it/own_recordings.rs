//! Differential test (b): streams recorded from real programs at fixed sizes (vim, less, git,
//! ls, python, tmux, vttest), kept under tests/data/recordings with the script that re-records
//! them (tests/data/record.py), fed to both models and compared cell by cell.

use std::path::Path;

use crate::alacritty_corpus::{check_recording, CURSOR_STOPS_AT_MARGINS};

/// Recordings where paddock deliberately differs from Alacritty, and why.
const DELIBERATE: &[(&str, &str)] = &[("vttest_screen", CURSOR_STOPS_AT_MARGINS)];

pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) cols: usize,
    pub(crate) lines: usize,
}

pub(crate) fn manifest() -> Vec<Entry> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recordings");
    let text = std::fs::read_to_string(dir.join("manifest.txt")).expect("manifest.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split_whitespace();
            let name = parts.next().expect("name").to_owned();
            let size = parts.next().expect("size");
            let size = paddock::replay::parse_size(size).expect("valid size");
            Entry { name, cols: size.cols, lines: size.lines }
        })
        .collect()
}

#[test]
fn recordings_of_real_programs_match_alacritty() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recordings");
    let entries = manifest();
    assert!(entries.len() >= 10, "the manifest lists every recording");
    let mut failures = Vec::new();
    for entry in &entries {
        let bytes = std::fs::read(dir.join(format!("{}.bin", entry.name))).expect("recording");
        assert!(bytes.len() > 200, "{}: recording looks empty", entry.name);
        let size = (entry.cols, entry.lines, 10_000);
        failures.extend(check_recording(&entry.name, &bytes, size, 64, DELIBERATE));
    }
    assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
}
