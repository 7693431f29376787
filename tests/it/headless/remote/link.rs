//! paddock's own end of a link (`app::host_link`): ssh to a real sshd on a loopback port,
//! the remote paddock found through the host's `paddock_path`, what a login prints skipped,
//! and the ways a link fails said in words.

use std::path::Path;
use std::time::{Duration, Instant};

use paddock::app::host_link::{Host, HostLink, LinkError, LinkEvent};
use paddock::ctl::replicas::Applied;
use paddock::term::TermSize;

use super::sshd::Sshd;
use super::{locked_probe, remote_paddock, started_server, StopServer};
use crate::headless::Runtime;

fn host(sshd: &Sshd, paddock: &Path) -> Host {
    Host {
        destination: sshd.destination(),
        paddock_path: paddock.display().to_string(),
        ssh_options: sshd.client_options(),
    }
}

/// The next event `wanted` picks within 60 s.
fn next<T>(link: &HostLink, what: &str, wanted: impl Fn(LinkEvent) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = link
            .events()
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("no {what} over the link; ssh said: {}", link.said()));
        if let LinkEvent::Ended(why) = &event {
            panic!("the link ended waiting for {what}: {why}; ssh said: {}", link.said());
        }
        if let Some(found) = wanted(event) {
            return found;
        }
    }
}

fn replica_shows(link: &HostLink, pane: u32, wanted: &[&str]) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let screen = link
            .replicas()
            .lock()
            .unwrap()
            .get(pane)
            .map(|term| term.lock().unwrap().screen_text())
            .unwrap_or_default();
        if wanted.iter().all(|w| screen.contains(w)) {
            return screen;
        }
        assert!(Instant::now() < deadline, "no {wanted:?} in the replica:\n{screen}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// A thread opened over ssh runs locked on the remote, its replica here shows what it
/// printed and what is typed to it, through a login that prints a greeting first.
#[test]
fn a_locked_thread_runs_on_the_remote_through_the_link() {
    let test = "headless::remote::link::a_locked_thread_runs_on_the_remote_through_the_link";
    let runtime = Runtime::new();
    let Some(sshd) = Sshd::start(test, &runtime.dir.join("sshd")) else { return };
    let paddock = remote_paddock(&runtime);
    // A login whose start-up prints to standard output, as many do.
    let script = std::fs::read_to_string(&paddock).expect("script");
    let chatty = script.replacen("#!/bin/sh\n", "#!/bin/sh\necho 'Welcome to the box!'\n", 1);
    std::fs::write(&paddock, chatty).expect("rewrite");
    let (thread, outside) = locked_probe(&runtime);
    let link = HostLink::connect(&host(&sshd, &paddock)).expect("the link");
    let _stop = StopServer(&runtime, started_server(&runtime));
    link.open_thread(1, &thread, TermSize::new(90, 20)).expect("ask");
    let pane = next(&link, "the answer", |e| match e {
        LinkEvent::Applied(Applied::Opened { request: 1, pane, .. }) => Some(pane),
        LinkEvent::Applied(Applied::NotOpened { reason, .. }) => panic!("not opened: {reason}"),
        _ => None,
    });
    replica_shows(&link, pane, &["refused-outside", "wrote-inside"]);
    assert!(!outside.join("f").exists());
    link.input(pane, b"typed-over-ssh\r".to_vec()).expect("type");
    replica_shows(&link, pane, &["typed-over-ssh"]);
    let level = link.replicas().lock().unwrap().view().and_then(|view| {
        let entry = view.instance.panes.iter().find(|p| p.id == pane)?;
        Some(entry.lock.as_ref()?.level.clone())
    });
    assert_eq!(level.as_deref(), Some("locked"));
    let size = link.replicas().lock().unwrap().get(pane).map(|t| t.lock().unwrap().size());
    assert_eq!(size, Some(TermSize::new(90, 20)));
}

/// A remote paddock of another protocol version: the link fails naming the host and both
/// versions.
#[test]
fn another_version_on_the_remote_is_named() {
    let test = "headless::remote::link::another_version_on_the_remote_is_named";
    let runtime = Runtime::new();
    let Some(sshd) = Sshd::start(test, &runtime.dir.join("sshd")) else { return };
    // An older paddock's relay: the preamble, then a hello of version 2.
    let old = runtime.dir.join("old-paddock");
    let hello = r"\007\000\000\000\001\002\000\001\000\000\000";
    std::fs::write(&old, format!("#!/bin/sh\nprintf '\\npaddock-stdio\\n{hello}'\nsleep 30\n"))
        .expect("old paddock");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let error = HostLink::connect(&host(&sshd, &old)).err().expect("refused");
    assert!(matches!(error, LinkError::Version { theirs: 2, .. }), "{error}");
    let said = error.to_string();
    assert!(said.contains("version 2") && said.contains("speaks 4"), "{said}");
    assert!(said.contains(&sshd.destination()), "{said}");
}

/// No paddock where the host's `paddock_path` says: the link fails with what the remote
/// shell said.
#[test]
fn no_paddock_on_the_remote_says_what_the_shell_said() {
    let test = "headless::remote::link::no_paddock_on_the_remote_says_what_the_shell_said";
    let runtime = Runtime::new();
    let Some(sshd) = Sshd::start(test, &runtime.dir.join("sshd")) else { return };
    let missing = runtime.dir.join("no-such-paddock");
    let error = HostLink::connect(&host(&sshd, &missing)).err().expect("refused");
    let said = error.to_string();
    assert!(matches!(error, LinkError::NoPaddock { .. }), "{said}");
    assert!(said.contains("no-such-paddock: No such file"), "{said}");
    assert!(said.contains("paddock_path"), "the message says where to name it: {said}");
}
