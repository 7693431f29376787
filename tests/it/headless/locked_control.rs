//! A locked pane's own control endpoint: its agent's hook can say "I need you" and read its own
//! pulse from inside the lock, and nothing more; the instance's control socket refuses a client
//! inside a lock even when that lock lets the socket through.

use std::process::{Command, Stdio};

use super::config::write_config;
use super::{wait_for, Runtime, PADDOCK};

#[test]
fn a_locked_pane_notifies_through_its_own_endpoint_and_nothing_more() {
    let runtime = Runtime::new();
    let work = runtime.dir.join("work");
    std::fs::create_dir_all(&work).expect("work");
    let listing = work.join("ls.json");
    // What an agent's hook would run, then what a prompt-injected agent would try.
    let script = format!(
        "{PADDOCK} ctl notify 'waiting for approval'; echo notify=$?; \
         {PADDOCK} ctl new -- sh -c 'touch {escaped}'; echo new=$?; \
         {PADDOCK} ctl notify --pane 2 'not mine'; echo other=$?; \
         {PADDOCK} ls --json > {listing}; echo ls=$?; exec sleep 600",
        escaped = work.join("escaped").display(),
        listing = listing.display(),
    );
    write_config(
        &runtime,
        &format!(
            r#"(threads: [
                (name: "agent", command: ["sh", "-c", {script:?}], lock: (write: ["{work}"])),
                (name: "other", command: ["sleep", "600"]),
            ])"#,
            work = work.display()
        ),
    );
    let instance = runtime.start(&[]);
    // Read as one line: the pane wraps long messages.
    let screen = instance.wait_for_text("1", "ls=").replace('\n', "");
    assert!(screen.contains("notify=0"), "{screen}");
    assert!(screen.contains("may only notify") && screen.contains("new=1"), "{screen}");
    assert!(screen.contains("speaks only of pane 1") && screen.contains("other=1"), "{screen}");
    assert!(screen.contains("ls=0"), "{screen}");
    let mut pulse = serde_json::Value::Null;
    wait_for("the locked pane's notification", || {
        pulse = instance.pane(1)["pulse"].clone();
        pulse["state"] == "needs_you"
    });
    assert_eq!(pulse["reason"], "notification: waiting for approval", "{pulse}");
    assert_ne!(instance.pane(2)["pulse"]["state"], "needs_you", "the other pane is untouched");
    let panes = instance.ls()["instances"][0]["panes"].as_array().map(Vec::len);
    assert_eq!(panes, Some(2), "no tab was opened from inside the lock");
    assert!(!work.join("escaped").exists());
    // Another lock may not be handed this pane's endpoint.
    let panes_folder = runtime.run.join("paddock/panes");
    let this_pane = std::fs::read_dir(&panes_folder)
        .expect("endpoints")
        .flatten()
        .map(|e| e.path().display().to_string())
        .next()
        .expect("pane 1's endpoint");
    let out = runtime
        .paddock(&[
            "sandbox",
            "run",
            "--write",
            &work.display().to_string(),
            "--socket",
            &this_pane,
        ])
        .args(["--", "true"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(125), "{}", String::from_utf8_lossy(&out.stderr));
    // The lock read its own pane, and only it.
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&listing).expect("ls.json")).expect("json");
    let seen_panes = seen["instances"][0]["panes"].as_array().cloned().unwrap_or_default();
    assert_eq!(seen_panes.len(), 1, "{seen}");
    assert_eq!(seen_panes[0]["id"], 1);
}

/// A lock never lets a control socket it knows of through: `--socket` naming one (by its path
/// or a second hard link) refuses the lock. A client in another user and PID namespace that
/// reaches an instance's socket all the same (a lock started where the instance's runtime
/// folder is not known, or outside any lock) is refused by the instance: the second wall.
#[test]
fn the_instance_socket_refuses_a_client_inside_a_lock() {
    let runtime = Runtime::new();
    let (work, home) = (runtime.dir.join("work"), runtime.dir.join("home"));
    std::fs::create_dir_all(&work).expect("work");
    std::fs::create_dir_all(&home).expect("home");
    let instance = runtime.start(&["-e", "sleep", "600"]);
    let socket = instance.socket.display().to_string();
    let second_name = work.join("hard.sock");
    std::fs::hard_link(&instance.socket, &second_name).expect("hard link");
    let second_name = second_name.display().to_string();
    let locked_ctl = |listed: &str, runtime_dir: Option<&std::path::Path>| {
        let mut command = Command::new(PADDOCK);
        command
            .args(["sandbox", "run", "--write", &work.display().to_string(), "--socket", listed])
            .args(["--", PADDOCK, "ctl", "--socket", listed, "new", "--", "sleep", "600"])
            .env("HOME", &home)
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::null());
        if let Some(dir) = runtime_dir {
            command.env("XDG_RUNTIME_DIR", dir);
        }
        command.output().expect("run")
    };
    for listed in [&socket, &second_name] {
        let out = locked_ctl(listed, Some(&runtime.run));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{listed}: {stderr}");
        assert!(stderr.contains("is a paddock control socket"), "{stderr}");
    }
    let out = locked_ctl(&socket, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("runs in another PID namespace"), "{stderr}");
    // The second wall: a client in namespaces of its own (util-linux unshare).
    let out = Command::new("unshare")
        .args(["--user", "--pid", "--fork", PADDOCK, "ctl", "--socket", &socket, "new"])
        .args(["--", "sleep", "600"])
        .stdin(Stdio::null())
        .output()
        .expect("unshare");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("runs in another PID namespace"), "{stderr}");
    let panes = instance.ls()["instances"][0]["panes"].as_array().map(Vec::len);
    assert_eq!(panes, Some(1), "no tab was opened");
}
