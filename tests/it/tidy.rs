//! Invariants of the source tree, checked like any other test: each module imports only what
//! its layer allows (the "may not import" column of ARCHITECTURE.md) and files stay small.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    if dir.is_file() {
        return vec![dir.to_owned()];
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// What the pure models may not mention: IO, threads, windows, PTYs.
const PURE: &[&str] = &[
    "winit",
    "wgpu",
    "glyphon",
    "portable_pty",
    "std::fs",
    "std::net",
    "std::process",
    "std::thread",
    "std::io",
    "crate::pty",
    "crate::render",
    "crate::app",
    "crate::ctl",
];

/// What the vault and the pulse may not mention: the window, panes, app or control socket.
const OUTSIDE_THE_APP: &[&str] = &[
    "winit",
    "wgpu",
    "glyphon",
    "portable_pty",
    "crate::pty",
    "crate::app",
    "crate::ctl",
    "crate::render",
];

/// The "may not import" column of ARCHITECTURE.md, module by module.
const LAYERS: &[(&str, &[&str])] = &[
    ("src/term", PURE),
    ("src/mux", PURE),
    ("src/view", PURE),
    ("src/input", PURE),
    ("src/pty", &["winit", "wgpu", "glyphon", "crate::render", "crate::app", "crate::ctl"]),
    // The lock: kernel mechanisms and data, nothing of the window, panes or app.
    (
        "src/sandbox",
        &["winit", "wgpu", "glyphon", "portable_pty", "crate::pty", "crate::app", "crate::render"],
    ),
    // The configuration is data and checks: no window, GPU, PTY or control socket; of drawing
    // it knows only the pure scene's default colors.
    (
        "src/config",
        &[
            "winit",
            "wgpu",
            "glyphon",
            "portable_pty",
            "crate::pty",
            "crate::app",
            "crate::ctl",
            "crate::render::text",
            "crate::render::gpu",
        ],
    ),
    (
        "src/ctl",
        &["winit", "wgpu", "glyphon", "portable_pty", "crate::render", "crate::app", "crate::pty"],
    ),
    (
        "src/render",
        &[
            "portable_pty",
            "crate::pty",
            "crate::sandbox",
            "crate::vault",
            "crate::app",
            "crate::ctl",
        ],
    ),
    // Secrets: the keychain, files of the state folder, the masker; nothing of the window,
    // panes, app or control socket. The masker itself is pure.
    ("src/vault", OUTSIDE_THE_APP),
    ("src/vault/mask.rs", PURE),
    // The pulse reads counters, terminal models and /proc: no window, panes, app or socket.
    // Its state machine is pure.
    ("src/pulse", OUTSIDE_THE_APP),
    ("src/pulse/state.rs", PURE),
    // The cells → rectangles step is tested without a GPU: it knows no GPU or window either.
    (
        "src/render/chrome.rs",
        &["wgpu", "winit", "glyphon", "std::fs", "std::thread", "std::io", "crate::pty"],
    ),
    (
        "src/render/scene.rs",
        &["wgpu", "winit", "glyphon", "std::fs", "std::thread", "std::io", "crate::pty"],
    ),
    // The pulse overlay's animation is tested with instants it is given: no GPU, no clock
    // read behind the tests' back.
    (
        "src/render/glow.rs",
        &["wgpu", "winit", "glyphon", "std::fs", "std::thread", "std::io", "Instant::now"],
    ),
];

#[test]
fn modules_import_only_what_their_layer_allows() {
    for (dir, forbidden) in LAYERS {
        for file in rust_files(&root().join(dir)) {
            let text = std::fs::read_to_string(&file).expect("read");
            for word in *forbidden {
                assert!(
                    !text.contains(word),
                    "{} mentions {word}, which {dir} may not use (see ARCHITECTURE.md)",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn source_files_stay_under_800_lines() {
    for dir in ["src", "tests", "benches", "xtask/src"] {
        for file in rust_files(&root().join(dir)) {
            let lines = std::fs::read_to_string(&file).expect("read").lines().count();
            assert!(
                lines <= 800,
                "{} has {lines} lines; split it by responsibility",
                file.display()
            );
        }
    }
}

#[test]
fn the_readme_lists_the_key_bindings_of_the_keymap() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme.find("<!-- keybindings").expect("keybindings marker in README.md");
    let table_start = start + readme[start..].find("-->\n").expect("end of marker") + 4;
    let end = readme.find("<!-- /keybindings -->").expect("closing keybindings marker");
    assert_eq!(
        &readme[table_start..end],
        paddock::input::keymap::binding_table(),
        "README.md's key binding table differs from src/input/keymap.rs"
    );
}
