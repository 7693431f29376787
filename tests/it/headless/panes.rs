//! Real programs in headless panes: bash, vim, tput, exit codes, process groups, floods.

use std::time::{Duration, Instant};

use super::{alive, text, wait_for, Runtime};

const BASH: &[&str] = &["-e", "bash", "--norc", "--noprofile"];

#[test]
fn echo_in_bash_shows_up_in_capture() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    instance.send_keys("1", "echo hi $((6*7)) Enter");
    let screen = instance.wait_for_text("1", "\nhi 42\n");
    // The command line itself is on the screen above the output, as a user would see it.
    assert!(screen.contains("echo hi $((6*7))"), "{screen}");
    let pane = instance.pane(1);
    assert_eq!(pane["status"], "running");
    assert_eq!(pane["focused"], true);
    assert_eq!(pane["command"], serde_json::json!(["bash", "--norc", "--noprofile"]));
    assert_eq!((pane["cols"].as_u64(), pane["rows"].as_u64()), (Some(80), Some(24)));
}

#[test]
fn vim_opens_a_file_and_quits() {
    let runtime = Runtime::new();
    let file = runtime.dir.join("notes.txt");
    std::fs::write(&file, "first line of the notes\nsecond line\n").expect("write file");
    let instance = runtime.start(&["-e", "vim", "-u", "NONE", "-N", file.to_str().unwrap()]);
    let screen = instance.wait_for_text("1", "first line of the notes");
    assert!(screen.contains("second line"), "{screen}");
    assert!(screen.contains("\n~"), "vim marks lines past the end: {screen}");
    instance.send_keys("1", "Escape :q Enter");
    wait_for("vim to exit", || instance.pane(1)["status"] == "exited");
    assert_eq!(instance.pane(1)["exit_code"], 0);
}

#[test]
fn tput_sees_a_resize() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    instance.ctl(&["resize", "--pane", "1", "--size", "100x30"]);
    instance.send_keys("1", "echo size=$(tput cols)x$(tput lines) Enter");
    instance.wait_for_text("1", "size=100x30");
    let pane = instance.pane(1);
    assert_eq!((pane["cols"].as_u64(), pane["rows"].as_u64()), (Some(100), Some(30)));
    // The capture has the new height: 30 rows, then the cursor line.
    let capture = instance.capture("1");
    assert_eq!(capture.lines().count(), 31, "{capture}");
}

#[test]
fn splits_lay_panes_out_and_programs_see_their_size() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["--size", "81x24", "-e", "bash", "--norc", "--noprofile"]);
    let right = instance.ctl(&["split", "--pane", "1", "--right", "--", "bash", "--norc"]);
    assert_eq!(right.trim(), "2");
    let down = instance.ctl(&["split", "--pane", "2", "--down"]);
    assert_eq!(down.trim(), "3");
    // 81 columns: 40 + a one-column divider + 40; the right side is split 11 + 1 + 12 rows.
    let size = |id| {
        let pane = instance.pane(id);
        (pane["cols"].as_u64().unwrap(), pane["rows"].as_u64().unwrap())
    };
    assert_eq!(size(1), (40, 24));
    assert_eq!((size(2).0, size(3).0), (40, 40));
    assert_eq!(size(2).1 + 1 + size(3).1, 24);
    instance.wait_for_prompt("2");
    instance.send_keys("2", "echo cols=$(tput cols) Enter");
    instance.wait_for_text("2", "cols=40");
    assert_eq!(instance.pane(3)["focused"], true);
    instance.ctl(&["focus", "--pane", "1"]);
    assert_eq!(instance.pane(1)["focused"], true);
    // Closing a pane gives its space back to its sibling.
    instance.ctl(&["close", "--pane", "3"]);
    assert_eq!(size(2), (40, 24));
    instance.ctl(&["close", "--pane", "2"]);
    assert_eq!(size(1), (81, 24));
}

#[test]
fn an_exit_code_is_shown_and_exit_with_child_returns_it() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    let pane = instance.ctl(&["new", "--", "sh", "-c", "echo bye; exit 3"]);
    let pane = pane.trim();
    wait_for("the program to exit", || instance.pane(2)["status"] == "exited");
    let info = instance.pane(2);
    assert_eq!(info["exit_code"], 3);
    assert_eq!(info["tab"], "sh");
    // The pane keeps its last screen.
    assert!(instance.capture(pane).contains("bye"));
    let listing = text(&instance.run(&["ls"]).stdout);
    assert!(listing.contains("exited 3"), "{listing}");

    let mut exiting = runtime.start(&["--exit-with-child", "-e", "sh", "-c", "echo done; exit 7"]);
    assert_eq!(exiting.wait_exit(), Some(7));
    assert!(!super::socket_exists(&exiting.socket), "the socket is removed on exit");

    // Closing the first pane ends such an instance too, with the code its program exits with
    // on the hangup; the close is still answered.
    let trap = "trap 'exit 5' HUP; echo ready; while :; do sleep 0.05; done";
    let mut closing = runtime.start(&["--exit-with-child", "-e", "sh", "-c", trap]);
    closing.wait_for_text("1", "ready");
    closing.ctl(&["close", "--pane", "1"]);
    assert_eq!(closing.wait_exit(), Some(5));
}

#[test]
fn closing_a_pane_kills_its_process_group() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    // The background job ignores the hangup: only the kill after the grace period ends it.
    instance.send_keys("1", "(trap '' HUP; exec sleep 1000) & Enter");
    instance.send_keys("1", "echo bg=$! Enter");
    let screen = instance.wait_for_text("1", "\nbg=");
    let pid: i64 = screen
        .split("\nbg=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .expect("background pid on screen");
    // A job that cleans up on hangup gets the whole grace period to do it, even though its
    // shell exits at once.
    let cleaned = runtime.dir.join("cleaned");
    let job = format!(
        "(trap 'echo cleaned > {}; exit' HUP; while :; do sleep 0.05; done) & Enter",
        cleaned.display()
    );
    instance.send_keys("1", &job);
    instance.send_keys("1", "echo job=$! Enter");
    instance.wait_for_text("1", "\njob=");
    let shell = instance.pane(1)["pid"].as_i64().expect("shell pid");
    assert!(alive(pid) && alive(shell));
    instance.ctl(&["new", "--", "sleep", "1000"]);
    instance.ctl(&["close", "--pane", "1"]);
    wait_for("the background sleep to go", || !alive(pid));
    assert!(!alive(shell));
    let note = std::fs::read_to_string(&cleaned).unwrap_or_default();
    assert_eq!(note, "cleaned\n", "the job's hangup trap ran before the kill");
    let panes = instance.ls()["instances"][0]["panes"].as_array().cloned().unwrap_or_default();
    assert_eq!(panes.len(), 1, "the closed pane is gone from ls");
}

#[test]
fn kill_ends_the_program_and_keeps_the_pane() {
    let runtime = Runtime::new();
    let instance =
        runtime.start(&["-e", "sh", "-c", "trap '' HUP TERM; echo stubborn; sleep 1000"]);
    instance.wait_for_text("1", "stubborn");
    instance.ctl(&["kill", "--pane", "1"]);
    wait_for("the program to die", || instance.pane(1)["status"] == "exited");
    assert_eq!(instance.pane(1)["exit_code"], serde_json::Value::Null, "killed by a signal");
    assert!(instance.capture("1").contains("stubborn"));
    assert!(text(&instance.run(&["ls"]).stdout).contains("killed"));
}

#[test]
fn eight_floods_finish_while_ls_keeps_answering() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sh", "-c", "yes | head -c 50000000; echo flood-done"]);
    for _ in 1..8 {
        instance.ctl(&["new", "--", "sh", "-c", "yes | head -c 50000000; echo flood-done"]);
    }
    let started = Instant::now();
    let (mut answers, mut slowest) = (0, Duration::ZERO);
    loop {
        let asked = Instant::now();
        let ls = instance.ls();
        slowest = slowest.max(asked.elapsed());
        answers += 1;
        let panes = ls["instances"][0]["panes"].as_array().cloned().unwrap_or_default();
        assert_eq!(panes.len(), 8, "every pane is listed while they flood");
        if panes.iter().all(|p| p["status"] == "exited") {
            assert!(panes.iter().all(|p| p["exit_code"] == 0), "{panes:?}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(600), "the floods did not finish");
        std::thread::sleep(Duration::from_millis(200));
    }
    for pane in 1..=8 {
        let screen = instance.capture(&pane.to_string());
        assert!(screen.contains("y\ny\nflood-done\n"), "pane {pane} saw the whole flood: {screen}");
        assert!(!screen.contains("Broken pipe"), "yes ends quietly on SIGPIPE: {screen}");
    }
    // Latency is reported, not asserted (benchmarks measure speed; this proves liveness).
    eprintln!("ls answered {answers} times during the floods; slowest {slowest:?}");
}

#[test]
fn a_pane_that_never_reads_does_not_block_another() {
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sh", "-c", "stty raw -echo; sleep 1000"]);
    instance.ctl(&["new", "--", "bash", "--norc", "--noprofile"]);
    let chunk = "x".repeat(100_000);
    // Far more than a PTY buffers: the stuck pane's writer blocks, nobody else does.
    for _ in 0..20 {
        instance.ctl(&["send", "--pane", "1", "--text", &chunk]);
    }
    instance.wait_for_prompt("2");
    instance.send_keys("2", "echo still-typing Enter");
    instance.wait_for_text("2", "\nstill-typing\n");
    assert_eq!(instance.pane(1)["status"], "running");
}

#[test]
fn a_split_starts_where_the_split_pane_is_now() {
    let runtime = Runtime::new();
    let instance = runtime.start(BASH);
    instance.wait_for_prompt("1");
    let dir = std::env::temp_dir().join(format!("pdk-split-cwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    instance.send_keys("1", &format!("cd {} Enter", dir.display()));
    instance.send_keys("1", "echo moved Enter");
    instance.wait_for_text("1", "\nmoved\n");
    let new = instance.ctl(&["split", "--pane", "1", "--down", "--", "bash", "--norc"]);
    let new = new.trim();
    instance.wait_for_prompt(new);
    instance.send_keys(new, "pwd Enter");
    instance.wait_for_text(new, &format!("\n{}\n", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
}
