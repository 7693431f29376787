//! A server that died is named by the next start: its panes in a `lost` tab, its configured
//! threads held back until the user asks. An agent is never started again unasked.

use std::io::Write;

use paddock::ctl::attach::{attach_socket, connect};
use paddock::ctl::protocol::WindowAction;
use paddock::ctl::wire::ToServer;

use super::{wait_for, Runtime};

#[test]
fn a_server_that_died_is_named_by_the_next_start_and_its_threads_wait_for_the_user() {
    let runtime = Runtime::new();
    let config = runtime.dir.join("config/paddock");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("config.ron"),
        r#"(threads: [(name: "agent", command: ["sh", "-c", "echo agent-started; exec sleep 600"])])"#,
    )
    .expect("config");
    let mut first = runtime.start(&[]);
    first.wait_for_text("1", "agent-started");
    let records = runtime.dir.join("state/paddock/servers");
    let record = records.join(format!("{}.json", first.child.id()));
    wait_for("the server's record of its panes", || {
        std::fs::read_to_string(&record).is_ok_and(|t| t.contains("\"agent\""))
    });
    // A crash: no chance to clean up.
    first.child.kill().expect("SIGKILL the server");
    first.child.wait().expect("wait");
    assert!(record.exists(), "a server that did not stop cleanly leaves its record");

    // `paddock` gives the server it starts the records of dead ones.
    // A record anywhere else is not taken, and not removed.
    let elsewhere = runtime.dir.join("elsewhere.json");
    std::fs::copy(&record, &elsewhere).expect("copy");
    let second = runtime.start(&[
        "--lost",
        record.to_str().expect("UTF-8"),
        "--lost",
        elsewhere.to_str().expect("UTF-8"),
    ]);
    assert!(elsewhere.exists(), "a path outside the records' folder is left alone");
    let ls = second.ls();
    let panes = ls["instances"][0]["panes"].as_array().expect("panes").clone();
    assert_eq!(panes.len(), 1, "only the notice, no agent: {ls}");
    assert_eq!(panes[0]["tab"], "lost", "{ls}");
    assert_eq!(panes[0]["status"], "no_program", "{ls}");
    let notice = second.capture("1").replace('\n', " ");
    assert_eq!(notice.matches("Server ").count(), 1, "one record taken: {notice}");
    assert!(
        notice.contains("pane 1 in tab agent (thread agent): sh -c echo agent-started"),
        "{notice}"
    );
    assert!(
        notice.contains("Ctrl+Shift+R in this tab starts the configured threads (agent)"),
        "{notice}"
    );
    assert!(!record.exists(), "told once");

    // The restart key in that tab, as a window sends it, starts the threads.
    let (mut window, _) = connect(&attach_socket(&second.socket)).expect("attach");
    let act = ToServer::Act(WindowAction::Restart { pane: 1 });
    window.write_all(&act.encode()).expect("act");
    // The server acts on the key in its own time: the thread's pane is there once `ls` says so.
    wait_for("the configured thread's pane", || second.pane(2) != serde_json::Value::Null);
    second.wait_for_text("2", "agent-started");
    let ls = second.ls();
    let panes = ls["instances"][0]["panes"].as_array().expect("panes").clone();
    assert_eq!(panes.len(), 1, "the notice went: {ls}");
    assert_eq!(panes[0]["thread"], "agent", "{ls}");

    // Asked to stop: nothing is lost, and no record stays.
    second.ctl(&["stop"]);
    let mut second = second;
    second.wait_exit();
    let left: Vec<_> = std::fs::read_dir(&records).expect("records").flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}
