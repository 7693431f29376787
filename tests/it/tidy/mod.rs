//! Invariants of the source tree, checked like any other test: each module imports only what
//! its layer allows (the import rules in ARCHITECTURE.md's invariants) and files stay small.

use std::path::{Path, PathBuf};

mod imports;

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

/// One row of ARCHITECTURE.md's import rules: the modules it covers (`term`, `render/glow.rs`)
/// and the paths they never import.
struct Rule {
    row: String,
    modules: Vec<String>,
    never: Vec<String>,
}

/// The backticked words of a table cell.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The import rules, from their one home: the table between `<!-- import-rules -->` markers
/// in ARCHITECTURE.md's invariants.
fn rules() -> Vec<Rule> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text.find("<!-- import-rules -->").expect("import-rules marker in ARCHITECTURE.md");
    let end = text.find("<!-- /import-rules -->").expect("closing import-rules marker");
    let rules: Vec<Rule> = text[start..end]
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').collect();
            Rule {
                row: cells[1].trim().to_owned(),
                modules: ticked(cells[1]),
                never: ticked(cells[2]),
            }
        })
        .collect();
    assert!(rules.len() >= 10, "ARCHITECTURE.md's import rules lost rows: {}", rules.len());
    rules
}

/// The source files a rule's module names: `term` is src/term/ (or src/term.rs).
fn files_of(module: &str) -> Vec<PathBuf> {
    let src = root().join("src");
    let path = src.join(module);
    if path.extension().is_some_and(|e| e == "rs") || path.is_dir() {
        assert!(
            path.exists(),
            "ARCHITECTURE.md's import rules name {module}, which does not exist"
        );
        return rust_files(&path);
    }
    let file = src.join(format!("{module}.rs"));
    assert!(file.exists(), "ARCHITECTURE.md's import rules name {module}, which does not exist");
    vec![file]
}

#[test]
fn modules_import_only_what_their_layer_allows() {
    let src = root().join("src");
    let mut broken = Vec::new();
    for rule in rules() {
        for file in rule.modules.iter().flat_map(|m| files_of(m)) {
            let text = std::fs::read_to_string(&file).expect("read");
            let module = imports::module_of(&src, &file);
            let found = imports::imports(&module, &text)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            for import in found {
                for never in rule.never.iter().filter(|never| import.is_under(never)) {
                    broken.push(format!(
                        "{}:{}: {} is under {never}, which the row {} of ARCHITECTURE.md's \
                         import rules never imports",
                        file.strip_prefix(root()).unwrap_or(&file).display(),
                        import.line,
                        import.shown(),
                        rule.row,
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "imports that run up a layer:\n{}", broken.join("\n"));
}

/// The reader sees imports however they are written, not only `use crate::x::y` on one line.
#[test]
fn the_import_reader_sees_groups_super_paths_aliases_and_macros() {
    let module: Vec<String> = ["crate", "render", "scene"].map(str::to_owned).to_vec();
    let text = r#"
        use crate::render::{gpu, text as glyphs};
        use super::super::app::Workspace;
        use std::{fs, time::Instant};
        mod inner {
            use super::super::chrome;
        }
        fn f() {
            let _ = gpu::Gpu::new();
            let _ = Instant::now();
            let _ = format!("{}", crate::pty::CHUNK);
            let _ = fs::read("x");
        }
    "#;
    let found = imports::imports(&module, text).expect("parses");
    let under = |prefix: &str| found.iter().any(|i| i.is_under(prefix));
    for path in [
        "crate::render::gpu",
        "crate::render::text",
        "crate::app::Workspace",
        "std::fs",
        "crate::render::chrome",
        "crate::render::gpu::Gpu::new",
        "std::time::Instant::now",
        "crate::pty::CHUNK",
        "std::fs::read",
    ] {
        assert!(under(path), "{path} not seen in {found:?}");
    }
    assert!(!under("crate::renderer") && !under("crate::render::scene::gpu"), "{found:?}");
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
