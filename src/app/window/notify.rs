//! Desktop notifications: a pane that turns needs-you while out of sight (in another tab, or
//! with the window unfocused) is announced once, through the system's notifications.
//! Which panes to announce is decided here, purely; sending is best effort (no service, no
//! notification, never an error for the window).

use std::collections::HashSet;
use std::sync::Arc;

use crate::mux::PaneId;
use crate::pulse::{PulseState, Reason, Snapshot};

/// One pane as the notifier sees it.
pub struct Seen<'a> {
    pub pane: PaneId,
    pub name: &'a str,
    pub visible: bool,
    pub state: Option<&'a PulseState>,
}

/// Which panes were already waiting, so each wait is announced once.
#[derive(Default)]
pub struct Notifier {
    waiting: HashSet<PaneId>,
    /// The sampler's snapshot last looked at.
    looked_at: Option<Arc<Snapshot>>,
}

impl Notifier {
    /// Whether `pulses` is a snapshot not looked at yet (remembered from now on).
    pub fn is_new(&mut self, pulses: Arc<Snapshot>) -> bool {
        if self.looked_at.as_ref().is_some_and(|seen| Arc::ptr_eq(seen, &pulses)) {
            return false;
        }
        self.looked_at = Some(pulses);
        true
    }

    /// The announcements due now: (title, body) for each pane that has just turned needs-you
    /// and cannot be seen.
    pub fn due(&mut self, panes: &[Seen<'_>]) -> Vec<(String, String)> {
        let mut due = Vec::new();
        let mut waiting = HashSet::new();
        for pane in panes {
            let Some(PulseState::NeedsYou(reason)) = pane.state else {
                continue;
            };
            waiting.insert(pane.pane);
            if !self.waiting.contains(&pane.pane) && !pane.visible {
                let body = match reason {
                    Reason::Bell => "rang the bell".to_owned(),
                    Reason::Prompt => "is back at its prompt".to_owned(),
                    other => other.to_string(),
                };
                due.push((format!("{} needs you", pane.name), body));
            }
        }
        self.waiting = waiting;
        due
    }
}

/// Show one notification, from a thread of its own (a D-Bus call or a helper program may wait
/// on a slow service; the window never does); failures (no notification service) are ignored.
pub fn send(title: &str, body: &str) {
    let (title, body) = (title.to_owned(), body.to_owned());
    let _ = std::thread::Builder::new().name("notify".into()).spawn(move || show(&title, &body));
}

/// Linux and the BSDs: the freedesktop notification service on the session bus. Windows: a
/// toast, through WinRT.
#[cfg(any(windows, all(unix, not(target_os = "macos"))))]
fn show(title: &str, body: &str) {
    let _ = notify_rust::Notification::new().appname("paddock").summary(title).body(body).show();
}

/// macOS: Notification Center through osascript, which every Mac has (a native binding would
/// need an Objective-C build and an app bundle for little more). Title and body travel as
/// arguments, never spliced into the script, so no text can change what it does.
#[cfg(target_os = "macos")]
fn show(title: &str, body: &str) {
    let _ = std::process::Command::new("/usr/bin/osascript")
        .args(["-e", "on run argv", "-e"])
        .arg("display notification (item 2 of argv) with title (item 1 of argv)")
        // `--`: a title that starts with `-` (a thread's name) is not an option.
        .args(["-e", "end run", "--", title, body])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

#[cfg(not(any(unix, windows)))]
fn show(_: &str, _: &str) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_out_of_sight_is_announced_once() {
        let mut notifier = Notifier::default();
        let bell = PulseState::NeedsYou(Reason::Bell);
        let working = PulseState::Working;
        let seen = |visible, state| vec![Seen { pane: PaneId(3), name: "claude", visible, state }];
        assert!(notifier.due(&seen(false, Some(&working))).is_empty());
        assert_eq!(
            notifier.due(&seen(false, Some(&bell))),
            [("claude needs you".to_owned(), "rang the bell".to_owned())]
        );
        assert!(notifier.due(&seen(false, Some(&bell))).is_empty(), "once per wait");
        assert!(notifier.due(&seen(false, Some(&working))).is_empty());
        // A wait in plain sight needs no notification.
        assert!(notifier.due(&seen(true, Some(&bell))).is_empty());
    }

    #[test]
    fn one_wait_is_one_announcement_whatever_its_reasons_and_a_wait_in_sight_is_none() {
        let mut notifier = Notifier::default();
        let bell = PulseState::NeedsYou(Reason::Bell);
        let asked = PulseState::NeedsYou(Reason::Screen("Trust this folder?".into()));
        let seen = |visible, state| vec![Seen { pane: PaneId(3), name: "codex", visible, state }];
        assert_eq!(notifier.due(&seen(false, Some(&bell))).len(), 1);
        // The same wait, another reason: still one episode.
        assert!(notifier.due(&seen(false, Some(&asked))).is_empty());
        // A wait that began while the user looked at the pane is not announced when they look
        // away: they saw it begin.
        assert!(notifier.due(&seen(false, Some(&PulseState::Quiet))).is_empty());
        assert!(notifier.due(&seen(true, Some(&asked))).is_empty());
        assert!(notifier.due(&seen(false, Some(&asked))).is_empty());
        // A muted pane's state is not given to the notifier (the window leaves it out).
        assert!(notifier.due(&seen(false, None)).is_empty());
    }

    #[test]
    fn each_snapshot_is_looked_at_once() {
        let mut notifier = Notifier::default();
        let first = Arc::new(Snapshot::default());
        assert!(notifier.is_new(first.clone()));
        assert!(!notifier.is_new(first));
        assert!(notifier.is_new(Arc::new(Snapshot::default())), "a new sample, however alike");
    }
}
