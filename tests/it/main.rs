//! One integration-test binary with modules (as ripgrep does): the differential suite against
//! alacritty_terminal, property tests, the replay CLI and data-driven model tests.

mod alacritty_corpus;
mod reference;
mod snapshot;

use std::path::Path;

/// Compare `actual` with the file at `path`; with `PADDOCK_BLESS=1` (`cargo xtask bless`) write
/// it instead. `context` says what the file pins down.
pub fn expect_file(path: &Path, actual: &str, context: &str) {
    if std::env::var_os("PADDOCK_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create dir");
        std::fs::write(path, actual).expect("write expected file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{}: {e} (run `cargo xtask bless` to create it)", path.display())
    });
    if expected != actual {
        panic!(
            "{} differs ({context}):\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}
/// Whether this test may go on: it needs root (CI runs as root). Elsewhere it is skipped
/// loudly, never silently: a line on the terminal past the harness's capture, and a line in
/// target/tmp/skipped-tests.txt that `cargo xtask ci` prints at the end. In CI, missing root is
/// a failure, not a skip.
#[cfg(unix)]
pub fn needs_root(test: &str, for_what: &str) -> bool {
    // SAFETY: geteuid cannot fail and touches no memory.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    let why = format!("{for_what} needs root");
    assert!(std::env::var_os("CI").is_none(), "{test}: {why}, and CI runs as root");
    skip(test, &why);
    false
}

/// Say that `test` is skipped, and why, where a person will see it (see `needs_root`).
pub fn skip(test: &str, why: &str) {
    use std::io::Write;
    let line = format!("SKIPPED {test}: {why}\n");
    // Straight to the file descriptor: eprintln! would be captured and hidden by the harness.
    let _ = std::io::stderr().write_all(line.as_bytes());
    let list = Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests.txt");
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&list)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(e) = appended {
        let _ = writeln!(std::io::stderr(), "(cannot add it to {}: {e})", list.display());
    }
}

#[cfg(unix)]
mod agent_screens;
mod egress;
mod fast_path;
mod generated;
#[cfg(target_os = "linux")]
mod headless;
mod images;
mod model;
mod own_recordings;
#[cfg(target_os = "linux")]
mod pin_exec;
mod properties;
mod pty;
mod render;
mod replay_cli;
mod replica;
#[cfg(target_os = "linux")]
mod sandbox;
mod seatbelt;
mod tidy;
#[cfg(target_os = "linux")]
mod vault;
#[cfg(target_os = "linux")]
mod window;
#[cfg(target_os = "linux")]
mod window_attach;
