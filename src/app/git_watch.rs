//! What a locked pane leaves for git to run later, outside its lock. The kernel protects the
//! git files that exist when a lock starts (`sandbox::git`); a repository the agent makes during
//! the lock is found when its pane ends, by comparing git's files with a snapshot taken at the
//! start, and said in the pane, in `paddock ls` and in the audit log, naming each file and the
//! command it would run.

use std::path::PathBuf;

use crate::config::LockPolicy;
use crate::mux::PaneId;
use crate::pty::{PaneSession, PaneStatus};
use crate::sandbox::git_planted::{planted, snapshot, snapshot_again, GitSnapshot};
use crate::vault::audit::{utc_now, AuditLog, Event, Record};

pub struct GitWatch {
    folders: Vec<PathBuf>,
    before: GitSnapshot,
    /// What was found once the pane's program ended (`None`: not ended yet).
    findings: Option<Vec<String>>,
}

impl GitWatch {
    /// Watch the lock's writable folders from now.
    pub fn start(lock: &LockPolicy) -> GitWatch {
        GitWatch { folders: lock.write.clone(), before: snapshot(&lock.write), findings: None }
    }

    /// What was found (empty until the pane ended, and when nothing was).
    pub fn findings(&self) -> &[String] {
        self.findings.as_deref().unwrap_or_default()
    }

    /// Once `session`'s program has ended, look once, and say what was found: in the pane,
    /// and in the audit log in paddock's state folder `state`.
    pub fn check(
        &mut self,
        session: &mut PaneSession,
        pane: PaneId,
        who: &Who,
        state: Option<&std::path::Path>,
    ) {
        if self.findings.is_some() || session.status() == PaneStatus::Running {
            return;
        }
        let found = planted(&self.before, &snapshot_again(&self.folders, &self.before));
        if !found.is_empty() {
            let mut text = String::from(
                "\r\n\x1b[1;31mpaddock: this locked pane left git something to run outside its \
                 lock; look before you run git here:\x1b[0m\r\n",
            );
            for finding in &found {
                text.push_str(&format!("\x1b[31m  {finding}\x1b[0m\r\n"));
            }
            let mut term = session.term();
            term.advance(text.as_bytes());
            drop(term);
            let log = state.map(AuditLog::new);
            for finding in found.iter().filter(|_| log.is_some()) {
                let record = Record {
                    time: utc_now(),
                    event: Event::GitPlanted,
                    secret: String::new(),
                    thread: who.thread.clone(),
                    pane: pane.0,
                    program: who.program.clone(),
                    reason: Some(finding.clone()),
                    masked: None,
                    request: None,
                    host: None,
                };
                if let Some(Err(e)) = log.as_ref().map(|log| log.append(&record)) {
                    eprintln!("paddock: cannot write the audit log: {e}");
                }
            }
        }
        self.findings = Some(found);
    }
}

/// The pane's thread and program, for the audit log.
pub struct Who {
    pub thread: Option<String>,
    pub program: Option<String>,
}
