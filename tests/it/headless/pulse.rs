//! The pulse end to end: real programs in real panes, read through `paddock ls --json` as a
//! script would. Each waits (with a generous bound) for the state a person would see.

use serde_json::Value;

use super::config::write_config;
use super::{text, wait_for, Instance, Runtime};

/// The pane's pulse once `wanted` says yes (within the bound `wait_for` allows); on a
/// timeout the failure shows the last pulse seen, not only that it timed out.
fn pulse_when(instance: &Instance, pane: u64, wanted: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let last = instance.pane(pane)["pulse"].clone();
        if wanted(&last) {
            return last;
        }
        assert!(std::time::Instant::now() < deadline, "pane {pane}'s pulse stayed at {last}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn state_is(state: &'static str) -> impl Fn(&Value) -> bool {
    move |pulse| pulse["state"] == state
}

/// One thread per case, each in its own tab (pane ids follow the order), quiet after 1 s.
fn start(runtime: &Runtime, threads: &[(&str, &str)]) -> Instance {
    let threads: String = threads
        .iter()
        .map(|(name, script)| {
            format!(
                "(name: \"{name}\", command: [\"/bin/sh\", \"-c\", {script:?}], pulse: (quiet_after: 1)),\n"
            )
        })
        .collect();
    write_config(runtime, &format!("(threads: [\n{threads}])"));
    runtime.start(&[])
}

/// Output at a steady rate reads as working at that rate; silence turns quiet.
#[test]
fn output_is_working_at_its_rate_and_silence_is_quiet() {
    let runtime = Runtime::new();
    // About 40 KB/s: 4000 bytes (no newlines, so the terminal adds none) every 100 ms, for a minute.
    // The writer logs when each chunk went out: on a busy machine its sleeps stretch, so the
    // rate to compare with is the one it really achieved, measured in the same run.
    let log = runtime.dir.join("writer.log");
    let writer = format!(
        "exec /usr/bin/python3 -c \"import sys, time\nlog = open('{log}', 'w', buffering=1)\nfor i in range(600):\n    sys.stdout.write('x' * 4000)\n    sys.stdout.flush()\n    log.write('%f %d\\n' % (time.monotonic(), (i + 1) * 4000))\n    time.sleep(0.1)\"",
        log = log.display()
    );
    let instance = start(&runtime, &[("writer", &writer), ("sleeper", "exec sleep 30")]);
    pulse_when(&instance, 1, |p| {
        p["state"] == "working" && p["out_bytes_per_s"].as_f64().is_some_and(|r| r > 1000.0)
    });
    // The pulse's rate (over its last 2 s) within 15% of the writer's own over its last 2 s.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(45);
    let mut seen = Vec::new();
    loop {
        let rate = instance.pane(1)["pulse"]["out_bytes_per_s"].as_f64().unwrap_or(0.0);
        let true_rate = achieved_rate(&log, 2.0);
        if true_rate > 0.0 && (rate - true_rate).abs() / true_rate < 0.15 {
            break;
        }
        seen.push(format!("{rate:.0} vs {true_rate:.0}"));
        assert!(
            std::time::Instant::now() < deadline,
            "the pulse's rate never came within 15% of the writer's (B/s): {seen:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    let quiet = pulse_when(&instance, 2, state_is("quiet"));
    assert!(quiet["since_s"].as_f64().is_some(), "{quiet}");
    let table = text(&instance.run(&["ls"]).stdout);
    assert!(
        table.contains("PULSE") && table.contains("quiet") && table.contains("working"),
        "{table}"
    );
}

/// Bytes per second the writer achieved over the last `window` seconds of its log.
fn achieved_rate(log: &std::path::Path, window: f64) -> f64 {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let points: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|line| {
            let (at, total) = line.split_once(' ')?;
            Some((at.parse().ok()?, total.parse().ok()?))
        })
        .collect();
    let Some(&(last_at, last_total)) = points.last() else { return 0.0 };
    match points.iter().find(|(at, _)| last_at - at <= window) {
        Some(&(first_at, first_total)) if last_at > first_at => {
            (last_total - first_total) / (last_at - first_at)
        }
        _ => 0.0,
    }
}

/// A bell and a desktop notification raise needs-you with their reason; typing clears it.
#[test]
fn bells_and_notifications_need_you_until_you_type() {
    let runtime = Runtime::new();
    let instance = start(
        &runtime,
        &[
            ("bell", "printf 'done\\a'; exec cat"),
            ("osc9", "printf '\\033]9;build finished\\a'; exec sleep 30"),
        ],
    );
    let bell = pulse_when(&instance, 1, state_is("needs_you"));
    assert_eq!(bell["reason"], "bell");
    let osc = pulse_when(&instance, 2, state_is("needs_you"));
    assert_eq!(osc["reason"], "notification: build finished");
    instance.send_keys("1", "ok Enter");
    pulse_when(&instance, 1, |p| p["state"] != "needs_you");
    let table = text(&instance.run(&["ls"]).stdout);
    assert!(table.contains("NEEDS YOU") && table.contains("build finished"), "{table}");
    // The waiting pane comes first in the table, and `next-waiting` goes to it.
    let first = table.lines().nth(2).unwrap_or_default();
    assert!(first.trim_start().starts_with('2'), "{table}");
    assert_eq!(instance.ctl(&["next-waiting"]).trim(), "2");
    assert_eq!(instance.pane(2)["focused"], true);
    // Nothing waits once it is answered: a clear error.
    instance.send_keys("2", "x");
    pulse_when(&instance, 2, |p| p["state"] != "needs_you");
    let none = instance.run(&["ctl", "next-waiting"]);
    assert!(!none.status.success());
    assert!(text(&none.stderr).contains("no pane waits for its user"), "{}", text(&none.stderr));
}

/// A muted pane's need is said in `ls` but never counts: not first, not next-waiting; unmuted,
/// it counts again. A locked pane cannot mute itself (its endpoint refuses: unit tested).
#[test]
fn a_muted_pane_never_counts_as_waiting() {
    let runtime = Runtime::new();
    let instance =
        start(&runtime, &[("quiet", "exec sleep 30"), ("bell", "printf 'done\\a'; exec cat")]);
    pulse_when(&instance, 2, state_is("needs_you"));
    instance.ctl(&["mute", "--pane", "2"]);
    let muted = pulse_when(&instance, 2, |p| p["muted"] == true);
    assert_eq!(muted["state"], "needs_you", "ls still says what it is: {muted}");
    let table = text(&instance.run(&["ls"]).stdout);
    let first = table.lines().nth(2).unwrap_or_default();
    assert!(first.trim_start().starts_with('1'), "not first once muted:\n{table}");
    assert!(table.contains("muted, needs you"), "{table}");
    let none = instance.run(&["ctl", "next-waiting"]);
    assert!(!none.status.success(), "a muted pane is not waited on");
    instance.ctl(&["unmute", "--pane", "2"]);
    pulse_when(&instance, 2, |p| p["muted"] == false);
    assert_eq!(instance.ctl(&["next-waiting"]).trim(), "2");
    let out = instance.run(&["ctl", "mute", "--pane", "9"]);
    assert!(text(&out.stderr).contains("no pane 9"), "{}", text(&out.stderr));
}

/// A program under tmux inside a pane notifies through tmux's passthrough: the pane needs you,
/// the notification's text the reason.
#[test]
fn a_notification_from_under_tmux_needs_you() {
    let runtime = Runtime::new();
    let conf = runtime.dir.join("tmux.conf");
    std::fs::write(&conf, "set -g allow-passthrough on\nset -g status off\n").expect("tmux.conf");
    // tmux passes a sequence on to the clients attached at that moment: the first may come
    // before its client is, so it is said again each second.
    let inner = "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 1; printf '\\033Ptmux;\\033\\033]9;tests passed under tmux\\007\\033\\\\'; done; exec sleep 30";
    let script = format!(
        "exec tmux -L paddock-pulse-{} -f {} new-session {inner:?}",
        std::process::id(),
        conf.display()
    );
    let instance = start(&runtime, &[("tmux", &script)]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while instance.pane(1)["pulse"]["state"] != "needs_you" {
        let screen = instance.capture("1");
        assert!(std::time::Instant::now() < deadline, "no notification from tmux:\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let told = instance.pane(1)["pulse"].clone();
    assert_eq!(told["reason"], "notification: tests passed under tmux", "{told}");
}

/// CPU with no output reads as working, also when it is spent in many short-lived children.
#[test]
fn cpu_without_output_is_working_even_in_short_children() {
    let runtime = Runtime::new();
    let busy_child = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done";
    let instance = start(
        &runtime,
        &[
            ("spin", "while :; do :; done"),
            ("short", &format!("while :; do /bin/sh -c '{busy_child}'; done")),
        ],
    );
    // On a busy machine a busy loop gets less than a core: what counts is that its CPU is seen
    // (tens of percent, not the near zero of a waiting shell) and that it reads as working.
    let busy = |p: &Value| p["cpu_percent"].as_f64().is_some_and(|c| c > 10.0);
    let spin = pulse_when(&instance, 1, busy);
    assert_eq!(spin["state"], "working", "{spin}");
    assert_eq!(spin["out_bytes_per_s"], 0.0, "working without output: {spin}");
    let short = pulse_when(&instance, 2, busy);
    assert_eq!(short["state"], "working", "{short}");
}

/// A screen rule (here a default one, a permission question) raises needs-you; answering it
/// clears it; `paddock ctl notify` raises it from a hook script.
#[test]
fn a_question_on_screen_needs_you_and_an_answer_clears_it() {
    let runtime = Runtime::new();
    let instance = start(
        &runtime,
        &[("ask", "printf 'Delete 3 files?\\nDo you want to proceed? (y/n) '; read a; echo \"answered $a\"; exec sleep 30")],
    );
    let asked = pulse_when(&instance, 1, state_is("needs_you"));
    assert_eq!(asked["reason"], "screen shows \"Do you want to proceed?\"", "{asked}");
    instance.send_keys("1", "y Enter");
    instance.wait_for_text("1", "answered y");
    pulse_when(&instance, 1, |p| p["state"] != "needs_you");

    instance.ctl(&["notify", "--pane", "1", "review the plan"]);
    let told = pulse_when(&instance, 1, state_is("needs_you"));
    assert_eq!(told["reason"], "notification: review the plan");
    let out = instance.run(&["ctl", "notify", "--pane", "99", "x"]);
    assert!(
        !out.status.success() && text(&out.stderr).contains("no pane 99"),
        "{}",
        text(&out.stderr)
    );
}

/// `paddock ls --watch --json` prints a fresh listing every second until stopped.
#[test]
fn ls_watch_keeps_answering() {
    use std::io::{BufRead, BufReader};
    let runtime = Runtime::new();
    let instance = runtime.start(&["-e", "sleep", "30"]);
    let mut watch = std::process::Command::new(super::PADDOCK)
        .args(["ls", "--watch", "--json", "--socket"])
        .arg(&instance.socket)
        .env("XDG_RUNTIME_DIR", &runtime.run)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("paddock ls --watch");
    let mut lines = BufReader::new(watch.stdout.take().expect("stdout")).lines();
    let started = std::time::Instant::now();
    for _ in 0..2 {
        let line = lines.next().expect("a listing").expect("read");
        let listing: Value = serde_json::from_str(&line).expect("JSON");
        assert!(listing["instances"][0]["panes"][0]["pulse"]["state"].is_string(), "{listing}");
    }
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(900),
        "two listings a second apart"
    );
    let _ = watch.kill();
    let _ = watch.wait();
}

/// A program that daemonizes (forks twice, leaving the pane's session and process tree) is
/// still the pane's: its CPU and memory count in the pane's pulse, and closing the pane ends
/// it. Needs cgroups paddock may make (root, a delegated subtree, or systemd's user manager):
/// skipped loudly elsewhere, a failure in CI.
#[test]
fn a_daemon_the_pane_started_is_counted_and_ended_with_it() {
    let test = "headless::pulse::a_daemon_the_pane_started_is_counted_and_ended_with_it";
    let runtime = Runtime::new();
    let (pidfile, go) = (runtime.dir.join("daemon.pid"), runtime.dir.join("go"));
    // It daemonizes only once the test has seen that there are cgroups: without them it
    // would escape its pane, as daemons do.
    let daemon = format!(
        "while [ ! -e {go} ]; do sleep 0.1; done; /usr/bin/python3 -c \"import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        open('{pid}.new', 'w').write(str(os.getpid()))\n        os.rename('{pid}.new', '{pid}')\n        data = bytearray(64 << 20)\n        while True:\n            pass\n    os._exit(0)\nos.wait()\"; exec sleep 60",
        pid = pidfile.display(),
        go = go.display()
    );
    let instance = start(&runtime, &[("daemon", &daemon), ("other", "exec sleep 60")]);
    let cgroups = instance.ls()["instances"][0]["cgroups"].as_str().unwrap_or_default().to_owned();
    if cgroups.starts_with("none") {
        assert!(std::env::var_os("CI").is_none(), "{test}: no cgroups in CI: {cgroups}");
        crate::skip(test, &format!("no cgroups here: {cgroups}"));
        return;
    }
    std::fs::write(&go, "").expect("go");
    wait_for("the daemon's pid", || pidfile.exists());
    let pid: i64 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("a pid");
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    assert!(own.contains("/pane-1-"), "the daemon is in pane 1's cgroup: {own}");
    // Out of the pane's process tree, yet counted: its 64 MiB, and its CPU (the pane's own
    // tree only sleeps). Only "busy", not a share of a core: with the whole suite on two
    // cores a busy loop's share is not ours to promise (CI on 1c79dc2 timed out here once,
    // under load; the failure now shows the last pulse).
    let busy = pulse_when(&instance, 1, |p| {
        p["cpu_percent"].as_f64().is_some_and(|c| c > 10.0)
            && p["memory_bytes"].as_u64().is_some_and(|m| m > 64 << 20)
    });
    assert_eq!(busy["state"], "working", "{busy}");
    let table = text(&instance.run(&["ls"]).stdout);
    assert!(table.contains("MEM") && table.contains('M'), "{table}");
    instance.ctl(&["close", "--pane", "1"]);
    wait_for("the daemon to end with its pane", || !super::alive(pid));
}

/// The step a pane's program joins its cgroup through writes only to a cgroup's file that is
/// there: given a plain folder, it makes nothing in it, says so, and still runs the program.
#[test]
fn joining_a_cgroup_never_makes_a_file() {
    let runtime = Runtime::new();
    let folder = runtime.dir.join("not-a-cgroup");
    std::fs::create_dir_all(&folder).expect("folder");
    let out = std::process::Command::new(super::PADDOCK)
        .arg("__cgroup-exec")
        .arg(&folder)
        .args(["--", "sh", "-c", "echo ran"])
        .output()
        .expect("paddock __cgroup-exec");
    assert_eq!(text(&out.stdout), "ran\n");
    assert!(text(&out.stderr).contains("not in a cgroup of its own"), "{}", text(&out.stderr));
    assert!(std::fs::read_dir(&folder).expect("folder").next().is_none(), "it made a file");
    // A FIFO planted where the cgroup's file would be is refused, not waited on forever.
    let fifo =
        std::ffi::CString::new(folder.join("cgroup.procs").display().to_string()).expect("path");
    // SAFETY: mkfifo(3) with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = std::process::Command::new("timeout")
        .arg("20")
        .arg(super::PADDOCK)
        .arg("__cgroup-exec")
        .arg(&folder)
        .args(["--", "sh", "-c", "echo ran"])
        .output()
        .expect("timeout paddock __cgroup-exec");
    assert_eq!(text(&out.stdout), "ran\n", "{}", text(&out.stderr));
}
