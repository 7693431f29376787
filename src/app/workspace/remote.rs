//! Local panes of threads that run on other hosts (`remote_threads`): a notice while the
//! host is reached, then a mirror of the remote pane (its replica, input and size sent
//! there), or why it does not run.

use crossbeam_channel::Receiver;

use super::{not_started, Pane, Refusal, Workspace};
use crate::app::remote_threads::{LinkNews, Shown};
use crate::app::secrets::{self, PaneSecrets};
use crate::config::{RemoteThread, ThreadSpec};
use crate::ctl::protocol::ErrorCode;
use crate::ctl::protocol::PaneInfo;
use crate::mux::PaneId;
use crate::pty::PaneSession;
use crate::term::TermSize;

impl Workspace {
    /// Start `spec` on its host for `pane`: the pane says so until the remote pane is there.
    pub(super) fn open_remote(
        &mut self,
        pane: PaneId,
        spec: &ThreadSpec,
        remote: &RemoteThread,
        size: TermSize,
    ) {
        let text = format!("Opening {} on {}…", spec.name, remote.host.destination);
        let session = PaneSession::notice(&text, size, self.options.scrollback_lines);
        let mut entry = Pane::notice(session, Vec::new(), None, size, Some(spec.clone()));
        // Its secrets come from the vault here, handed to its host for that one spawn.
        let host = &remote.host.name;
        let secrets = match secrets::hand_to_host(&mut self.vault, spec, pane, host) {
            Ok(secrets) => secrets,
            Err(why) => {
                let text = not_started(&spec.name, &why);
                entry.session = PaneSession::notice(&text, size, self.options.scrollback_lines);
                self.adopt(pane, entry);
                return;
            }
        };
        entry.secrets = secrets.as_ref().map(|given| PaneSecrets {
            names: given.handed.secrets.iter().map(|s| s.name.clone()).collect(),
            thread: Some(spec.name.clone()),
            pane,
            program: None,
            counts: None,
            state: Some(given.state.clone()),
            host: Some(host.clone()),
        });
        self.adopt(pane, entry);
        self.remote.open(&remote.host, pane, remote.definition.clone(), size, secrets);
    }

    /// What the links to other hosts say, for the main loop to hand to `take_link_news`.
    pub fn link_news(&self) -> Receiver<LinkNews> {
        self.remote.news().clone()
    }

    /// Take what a link said: show remote panes that are there, and why others are not.
    pub fn take_link_news(&mut self, news: LinkNews) {
        let shown = self.remote.take(news);
        self.show(shown);
    }

    /// `paddock ctl reconnect --host`: drop the link to `host` and connect again now.
    pub(super) fn reconnect_host(&mut self, host: &str) -> Result<(), Refusal> {
        let shown =
            self.remote.reconnect(host).map_err(|why| Refusal(ErrorCode::BadRequest, why))?;
        self.show(shown);
        Ok(())
    }

    fn show(&mut self, shown: Vec<Shown>) {
        for shown in shown {
            match shown {
                Shown::Mirror { local, term, backing } => {
                    let session = PaneSession::mirror(term, backing);
                    self.replace_session(local, session);
                }
                Shown::Notice { local, text } => {
                    let Some(entry) = self.panes.get(&local) else { continue };
                    let name = entry.thread.as_ref().map_or("", |t| t.name.as_str());
                    let text = not_started(name, &text);
                    let session = PaneSession::notice(&text, entry.size, 0);
                    self.replace_session(local, session);
                }
            }
        }
    }

    fn replace_session(&mut self, pane: PaneId, session: PaneSession) {
        let Some(entry) = self.panes.get_mut(&pane) else { return };
        // The pane is sized here: its remote pane takes this size.
        let _ = session.resize(entry.size);
        entry.session = session;
        self.attached.follow(pane, &entry.session);
        (self.wake)();
    }

    /// For `paddock ls`: the host `pane`'s thread runs on, with what that host says of it,
    /// and whether the link there is down.
    pub(super) fn remote_info(&self, pane: PaneId) -> Option<(String, Option<PaneInfo>, bool)> {
        let (host, info, down) = self.remote.describe(pane)?;
        Some((host.to_owned(), info.cloned(), down))
    }
}
