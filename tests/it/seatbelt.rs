//! The macOS lock, checked without a Mac: the whole `sandbox-exec` argv (profile included)
//! against goldens, a structural checker over every profile (balanced, only operations and
//! filters we know, every parameter given and every given parameter used), and folder names
//! built to break out of a profile that cannot change it.

use std::collections::BTreeSet;
use std::path::Path;

use paddock::sandbox::resolve::Resolved;
use paddock::sandbox::seatbelt::{argv, profile};

/// Operations and filters the profiles may use: a typo, or an operation nobody reviewed,
/// fails here.
const KNOWN: &[&str] = &[
    "version",
    "deny",
    "allow",
    "default",
    "process-exec",
    "process-fork",
    "signal",
    "target",
    "same-sandbox",
    "sysctl-read",
    "ipc-posix-shm",
    "mach-lookup",
    "global-name",
    "file-read-metadata",
    "file-read*",
    "file-write*",
    "file-ioctl",
    "file-link",
    "subpath",
    "literal",
    "param",
    "require-all",
    "require-not",
    "network*",
    "system-socket",
    "network-outbound",
    "network-bind",
    "network-inbound",
    "local",
    "ip",
    "remote",
    "unix-socket",
    "path-literal",
];

fn resolved(root: &Path, network: bool) -> Resolved {
    Resolved {
        write: vec![root.join("app")],
        read: vec![root.join("docs"), root.join(".gitconfig")],
        protect: vec![root.join("app/.git/hooks"), root.join("app/.env")],
        unix_sockets: vec![root.join(".ssh/agent.sock")],
        network,
        control_folders: vec![],
        egress: None,
        home: None,
    }
}

fn render(root: &Path, network: bool) -> Vec<String> {
    let resolved = resolved(root, network);
    let tmp = root.join("tmp");
    let profile = profile(&resolved, Some(Path::new("/dev/ttys003")), &tmp);
    argv(&profile, &tmp, &["claude".into(), "--verbose".into()])
}

#[test]
fn the_sandbox_exec_argv_is_as_reviewed() {
    let root = Path::new("/Users/u/src");
    for (name, network) in [("network-off", false), ("network-on", true)] {
        let argv = render(root, network);
        let shown = argv.join("\n--- argument ---\n");
        let golden =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/data/seatbelt/{name}.txt"));
        crate::expect_file(&golden, &shown, "the whole sandbox-exec command line");
        check_structure(&argv);
    }
}

#[test]
fn folder_names_cannot_change_the_profile() {
    let plain = render(Path::new("/Users/u/src"), false);
    for hostile in [
        "/Users/u/a\") (allow default) (\"",
        "/Users/u/new\nline (allow file-write* (subpath \"/\"))",
        "/Users/u/paren)(",
        "/Users/u/back\\slash\"quote",
    ] {
        let argv = render(Path::new(hostile), false);
        assert_eq!(argv[2], plain[2], "the profile text is the same for {hostile:?}");
        assert!(!argv[2].contains(hostile));
        check_structure(&argv);
        // The hostile name is only ever a parameter's value.
        assert!(argv.iter().any(|a| a.starts_with("-DWRITE_0=") && a.contains(hostile)));
    }
}

/// Balanced s-expressions, known names only, parameters given and used one for one.
fn check_structure(argv: &[String]) {
    assert_eq!(argv[0], "/usr/bin/sandbox-exec", "never looked up in PATH");
    assert_eq!(argv[1], "-p");
    let text = &argv[2];
    let (heads, params) = parse(text);
    for head in &heads {
        assert!(KNOWN.contains(&head.as_str()), "unknown operation or filter {head:?}");
    }
    let given: BTreeSet<String> = argv[3..]
        .iter()
        .take_while(|a| *a != "--")
        .map(|a| {
            let a = a.strip_prefix("-D").unwrap_or_else(|| panic!("not a parameter: {a}"));
            a.split_once('=').expect("KEY=VALUE").0.to_owned()
        })
        .collect();
    assert_eq!(params, given, "every (param \"K\") has its -DK= and every -DK= is used");
    let command_at = argv.iter().position(|a| a == "--").expect("--") + 1;
    assert_eq!(argv[command_at], "/usr/bin/env");
    assert!(argv[command_at + 1].starts_with("TMPDIR="));
}

/// The heads of every list, and the names of every parameter, of a Seatbelt profile.
fn parse(text: &str) -> (Vec<String>, BTreeSet<String>) {
    let mut heads = Vec::new();
    let mut params = BTreeSet::new();
    let mut depth = 0i32;
    let mut chars = text.chars().peekable();
    let mut expect_head = false;
    let mut last_head = String::new();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                depth += 1;
                expect_head = true;
            }
            ')' => {
                depth -= 1;
                assert!(depth >= 0, "unbalanced ) in the profile");
            }
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next().expect("unterminated string") {
                        '\\' => s.push(chars.next().expect("escape")),
                        '"' => break,
                        other => s.push(other),
                    }
                }
                if last_head == "param" {
                    params.insert(s);
                }
                expect_head = false;
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || n == '(' || n == ')' {
                        break;
                    }
                    word.push(n);
                    chars.next();
                }
                if expect_head {
                    last_head = word.clone();
                    heads.push(word);
                } else if !word.chars().all(|c| c.is_ascii_digit()) {
                    // A bare word in argument position is an operation name too (allow X Y).
                    heads.push(word);
                }
                expect_head = false;
            }
        }
    }
    assert_eq!(depth, 0, "unbalanced ( in the profile");
    (heads, params)
}

#[test]
fn the_checker_catches_what_it_should() {
    let ok = vec![
        "/usr/bin/sandbox-exec".to_owned(),
        "-p".into(),
        "(version 1)(allow (param \"A_0\"))".into(),
        "-DA_0=/x".into(),
        "--".into(),
        "/usr/bin/env".into(),
        "TMPDIR=/t".into(),
    ];
    check_structure(&ok);
    let broken = |text: &str, params: &[&str]| {
        let mut argv = ok.clone();
        argv[2] = text.into();
        argv.splice(3..4, params.iter().map(|p| p.to_string()));
        std::panic::catch_unwind(|| check_structure(&argv)).is_err()
    };
    assert!(broken("(version 1)(allow (param \"A_0\")", &["-DA_0=/x"]), "unbalanced");
    assert!(broken("(version 1)(alow (param \"A_0\"))", &["-DA_0=/x"]), "unknown name");
    assert!(broken("(version 1)(allow (param \"B_0\"))", &["-DA_0=/x"]), "parameter without -D");
    assert!(broken("(version 1)(allow default)", &["-DA_0=/x"]), "unused -D");
}

/// On a Mac: a locked command writes inside its folder and cannot read outside it.
#[cfg(target_os = "macos")]
#[test]
fn on_macos_a_locked_command_is_held_by_seatbelt() {
    let root =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("seatbelt-{}", std::process::id()));
    let (inside, outside) = (root.join("inside"), root.join("outside"));
    std::fs::create_dir_all(&inside).expect("inside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("secret"), "s").expect("secret");
    let script = format!(
        "echo in > {i}/x && (cat {o}/secret && echo LEAK || echo denied) && (echo y > {o}/y && echo LEAK || echo denied)",
        i = inside.display(),
        o = outside.display()
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_paddock"))
        .args(["sandbox", "run", "--write"])
        .arg(&inside)
        .args(["--", "/bin/sh", "-c", &script])
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, "denied\ndenied\n", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(inside.join("x").exists());
    assert!(!outside.join("y").exists());
    let _ = std::fs::remove_dir_all(&root);
}
