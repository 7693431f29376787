//! `paddock replay` as a user runs it: the real binary, real files, exit codes and messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn paddock(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_paddock")).args(args).output().expect("paddock runs")
}

fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("paddock-replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

#[test]
fn prints_the_final_screen_as_text() {
    let file = temp_file("hello.bin", "hello\r\n\x1b[31m你好\x1b[0m e\u{301}".as_bytes());
    let out = paddock(&["replay", file.to_str().unwrap(), "--size", "12x3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\n你好 e\u{301}\n\ncursor 1 6\n");
}

#[test]
fn default_size_is_80x24() {
    let file = temp_file("wide.bin", "x".repeat(100).as_bytes());
    let out = paddock(&["replay", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 25);
    assert_eq!(lines[0].len(), 80);
    assert_eq!(lines[24], "cursor 1 20");
}

#[test]
fn json_adds_attribute_runs() {
    let file = temp_file("styled.bin", b"ab\x1b[1;38;2;255;0;0mcd\x1b[0m");
    let out = paddock(&["replay", file.to_str().unwrap(), "--size", "6x1", "--format", "json"]);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(json["lines"][0]["text"], "abcd");
    let run = &json["lines"][0]["runs"][0];
    assert_eq!((run["col"].as_u64(), run["len"].as_u64()), (Some(2), Some(2)));
    assert_eq!(run["fg"], "#ff0000");
    assert_eq!(run["attrs"][0], "bold");
    assert_eq!(json["cursor"]["col"], 4);
}

#[test]
fn scrollback_option_limits_history_not_the_screen() {
    let file = temp_file("lines.bin", b"1\r\n2\r\n3\r\n4");
    let out = paddock(&["replay", file.to_str().unwrap(), "--size", "3x2", "--scrollback", "0"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3\n4\ncursor 1 1\n");
}

#[test]
fn bad_input_gets_a_clear_message_and_exit_code_2() {
    let missing = std::env::temp_dir().join("paddock-no-such-recording.bin");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["replay".into(), missing.display().to_string()], "cannot read"),
        (vec!["replay".into(), std::env::temp_dir().display().to_string()], "cannot read"),
        (vec!["replay".into(), "x".into(), "--size".into(), "80".into()], "COLSxROWS"),
        (vec!["replay".into(), "x".into(), "--size".into(), "0x24".into()], "out of range"),
        (vec!["replay".into(), "x".into(), "--size".into(), "99999x2".into()], "out of range"),
        (vec!["replay".into(), "x".into(), "--format".into(), "xml".into()], "xml"),
        (vec!["replay".into()], "FILE"),
    ];
    for (args, message) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = paddock(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_lists_the_commands() {
    let out = paddock(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for command in ["replay", "ls", "ctl", "--headless", "--exit-with-child"] {
        assert!(help.contains(command), "{command} in {help}");
    }
}
