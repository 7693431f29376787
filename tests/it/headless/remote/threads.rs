//! A configuration with one local and one remote thread: both open in one instance; the
//! remote one runs on the "remote" (this machine through a real sshd, with a paddock of
//! folders its own), locked there, typed into and read from here, and `paddock ls` names its
//! host.

use super::sshd::Sshd;
use super::{hosts_entry, remote_paddock, started_server, StopServer};
use crate::headless::config::write_config;
use crate::headless::{text, wait_for, Runtime};

#[test]
fn a_local_and_a_remote_thread_open_side_by_side() {
    let test = "headless::remote::threads::a_local_and_a_remote_thread_open_side_by_side";
    let (here, there) = (Runtime::new(), Runtime::new());
    let Some(sshd) = Sshd::start(test, &here.dir.join("sshd")) else { return };
    let paddock = remote_paddock(&there);
    let work = there.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let far =
        "echo remote-side; echo x > {outside}/f 2>/dev/null || echo refused-outside; exec cat"
            .replace("{outside}", &here.dir.display().to_string());
    let config = format!(
        r#"(
            {hosts}
            threads: [
                (name: "here", command: ["sh", "-c", "echo local-side; exec cat"]),
                (name: "far", host: "box", command: ["sh", "-c", {far:?}],
                 lock: (write: [{work:?}])),
            ],
        )"#,
        hosts = hosts_entry(&sshd, "box", &paddock),
        work = work.display().to_string(),
    );
    write_config(&here, &config);
    let instance = here.start(&[]);
    let far_pane = || instance.pane(2);
    wait_for("the remote pane, running and locked there", || {
        let pane = far_pane();
        pane["status"] == "running" && pane["lock"]["level"] == "locked"
    });
    let _stop = StopServer(&there, started_server(&there));
    let pane = far_pane();
    assert_eq!(pane["host"], "box", "{pane}");
    assert_eq!(pane["thread"], "far", "{pane}");
    assert!(instance.pane(1)["host"].is_null(), "the local thread has no host");
    let screen = instance.wait_for_text("2", "refused-outside");
    assert!(screen.contains("remote-side"), "{screen}");
    assert!(instance.capture("1").contains("local-side"));
    // A window attached here sees the remote pane as it sees a local one.
    let window = window_replicas(&instance.socket);
    // Typed here, run there, shown here and in the window.
    instance.send_keys("2", "typed-here Enter");
    instance.wait_for_text("2", "typed-here");
    wait_for("the remote pane in the window", || {
        let screen = window
            .lock()
            .unwrap()
            .get(2)
            .map(|term| term.lock().unwrap().screen_text())
            .unwrap_or_default();
        screen.contains("remote-side") && screen.contains("typed-here")
    });
    // Its title strip here shows the host's look of it: its lock and its pulse.
    wait_for("the remote pane's pulse in the window's view", || {
        let replicas = window.lock().unwrap();
        let look = replicas.view().and_then(|v| v.looks.get(&2).cloned()).unwrap_or_default();
        look["lock"]["level"] == "locked" && look["pulse"]["state"].is_string()
    });
    // The table names each pane's host.
    let table = text(&instance.run(&["ls"]).stdout);
    let header = table.lines().find(|l| l.contains("PANE")).unwrap_or_default().to_owned();
    assert!(header.contains("HOST"), "{table}");
    assert!(table.lines().any(|l| l.contains(" box ") && l.contains("far")), "{table}");
    assert!(table.lines().any(|l| l.contains(" local ") && l.contains("here")), "{table}");
    // A pane opened from it would run here, outside its lock: refused.
    let split = instance.run(&["ctl", "split", "--pane", "2", "--right"]);
    assert!(!split.status.success(), "{}", text(&split.stdout));
    assert!(text(&split.stderr).contains("this pane runs on box"), "{}", text(&split.stderr));
    // Stopping this server ends the remote agent too (only a dropped connection leaves it).
    let host_socket = started_server(&there);
    instance.ctl(&["stop"]);
    wait_for("the host's pane to end", || {
        let out = there.paddock(&["ls", "--json", "--socket"]).arg(&host_socket).output();
        let listing: serde_json::Value =
            serde_json::from_slice(&out.expect("ls there").stdout).unwrap_or_default();
        listing["instances"][0]["panes"].as_array().is_some_and(|panes| panes.is_empty())
    });
}

/// A window's replicas of the instance at `socket`, kept up to date by a reader thread.
fn window_replicas(
    socket: &std::path::Path,
) -> std::sync::Arc<std::sync::Mutex<paddock::ctl::replicas::Replicas>> {
    use paddock::ctl::wire::{read_frame, ToWindow, MAX_FRAME};
    let (mut stream, _) =
        paddock::ctl::attach::connect(&paddock::ctl::attach::attach_socket(socket))
            .expect("attach");
    let replicas = std::sync::Arc::new(std::sync::Mutex::new(Default::default()));
    let into = std::sync::Arc::clone(&replicas);
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        while let Ok(frame) = read_frame(&mut stream, MAX_FRAME, &mut buf) {
            let Ok(frame) = ToWindow::decode(frame) else { return };
            let mut replicas: std::sync::MutexGuard<'_, paddock::ctl::replicas::Replicas> =
                into.lock().unwrap();
            if replicas.apply(frame).is_err() {
                return;
            }
        }
    });
    replicas
}

/// The relays (`paddock server --stdio`) whose paddock uses `there`'s folders.
fn relays(there: &Runtime) -> Vec<i32> {
    let marker = format!("XDG_RUNTIME_DIR={}", there.run.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
        if has(&cmdline, b"--stdio") && has(&environ, marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

/// Kill the relays: the connection drops under the link, as when a network goes away.
fn kill_relays(there: &Runtime) -> usize {
    let found = relays(there);
    for pid in &found {
        // SAFETY: kill(2) on a process of this test's.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    found.len()
}

/// The highest `tick-N` on the screen.
fn last_tick(screen: &str) -> u64 {
    screen.split("tick-").skip(1).filter_map(|t| t.trim_end().parse().ok()).max().unwrap_or(0)
}

/// A dropped connection leaves the remote agent running: the pane reads as disconnected,
/// paddock connects again, and what the agent printed in between is on the screen.
#[test]
fn a_dropped_link_reconnects_and_loses_nothing() {
    let test = "headless::remote::threads::a_dropped_link_reconnects_and_loses_nothing";
    let (here, there) = (Runtime::new(), Runtime::new());
    let Some(sshd) = Sshd::start(test, &here.dir.join("sshd")) else { return };
    let paddock = remote_paddock(&there);
    let ticks = "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.3; done";
    let config = format!(
        r#"(
            {hosts}
            threads: [(name: "far", host: "box", command: ["sh", "-c", {ticks:?}])],
        )"#,
        hosts = hosts_entry(&sshd, "box", &paddock),
    );
    write_config(&here, &config);
    let instance = here.start(&["--size", "80x60"]);
    instance.wait_for_text("1", "tick-3");
    let _stop = StopServer(&there, started_server(&there));
    let at_drop = last_tick(&instance.capture("1"));
    assert_eq!(kill_relays(&there), 1, "one relay to kill");
    wait_for("the pane to read as disconnected", || instance.pane(1)["status"] == "disconnected");
    wait_for("the link to be back", || instance.pane(1)["status"] == "running");
    // Ticks went on meanwhile; every one of them is on the screen.
    let mut screen = String::new();
    wait_for("ticks printed after the drop", || {
        screen = instance.capture("1");
        last_tick(&screen) > at_drop + 3
    });
    for n in at_drop..=last_tick(&screen) {
        assert!(screen.contains(&format!("tick-{n}\n")), "tick-{n} is missing:\n{screen}");
    }

    // Asked to (`ctl reconnect --host`): the connection is made again at once, through a
    // new relay, and the same agent goes on.
    let old = relays(&there);
    assert_eq!(old.len(), 1, "{old:?}");
    let at_ask = last_tick(&instance.capture("1"));
    instance.ctl(&["reconnect", "--host", "box"]);
    wait_for("a new relay, the old one gone", || {
        let now = relays(&there);
        now.len() == 1 && now != old
    });
    wait_for("the link to be back", || instance.pane(1)["status"] == "running");
    wait_for("ticks printed after reconnecting", || {
        screen = instance.capture("1");
        last_tick(&screen) > at_ask + 3
    });
    for n in at_ask..=last_tick(&screen) {
        assert!(screen.contains(&format!("tick-{n}\n")), "tick-{n} is missing:\n{screen}");
    }
    let unknown = instance.run(&["ctl", "reconnect", "--host", "nowhere"]);
    assert!(!unknown.status.success());
    let said = text(&unknown.stderr);
    assert!(said.contains("no thread here runs on \"nowhere\" (hosts: box)"), "{said}");
}
