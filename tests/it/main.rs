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
mod generated;
#[cfg(target_os = "linux")]
mod headless;
mod images;
mod model;
mod own_recordings;
mod properties;
mod pty;
mod render;
mod replay_cli;
#[cfg(target_os = "linux")]
mod sandbox;
mod seatbelt;
mod tidy;
#[cfg(target_os = "linux")]
mod vault;
#[cfg(target_os = "linux")]
mod window;
