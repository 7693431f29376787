//! Threads that run on other hosts, as this server sees them: one link per host
//! (`host_link`), connected on a thread of its own when a thread first needs it, the threads
//! it was asked to open, and the remote panes it mirrors. The workspace hands it each local
//! pane of a remote thread and takes back what to show there: a replica of the remote pane
//! (a `PaneSession::mirror`), or why there is none.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crossbeam_channel::{Receiver, Sender};

use super::host_link::{Host, HostLink, LinkEvent};
use crate::config::HostSettings;
use crate::ctl::protocol::{PaneInfo, PaneState};
use crate::ctl::replicas::Applied;
use crate::mux::PaneId;
use crate::pty::{Mirrored, PaneStatus, PtyError};
use crate::term::{TermSize, Terminal};

/// What a link's threads tell the main loop.
pub enum LinkNews {
    Connected { host: String, result: Result<HostLink, String> },
    Event { host: String, event: LinkEvent },
}

/// What the workspace should show in a local pane.
pub enum Shown {
    /// The remote pane's replica, reached through the backing.
    Mirror { local: PaneId, term: Arc<Mutex<Terminal>>, backing: Box<dyn Mirrored> },
    /// Why the thread does not run there.
    Notice { local: PaneId, text: String },
}

struct Opening {
    local: PaneId,
    definition: String,
    size: TermSize,
}

/// A remote pane this server mirrors.
struct Linked {
    local: PaneId,
    status: Arc<Mutex<PaneStatus>>,
    /// How the remote server describes it (`paddock ls` there).
    info: Option<PaneInfo>,
    mirrored: bool,
}

enum HostState {
    Connecting(Vec<Opening>),
    Up { link: Arc<HostLink>, asked: HashMap<u32, PaneId>, panes: HashMap<u32, Linked> },
    Down,
}

pub struct RemoteThreads {
    hosts: HashMap<String, HostState>,
    news_in: Sender<LinkNews>,
    news: Receiver<LinkNews>,
    next_request: u32,
    wake: Arc<dyn Fn() + Send + Sync>,
}

impl RemoteThreads {
    pub fn new(wake: Arc<dyn Fn() + Send + Sync>) -> RemoteThreads {
        let (news_in, news) = crossbeam_channel::unbounded();
        RemoteThreads { hosts: HashMap::new(), news_in, news, next_request: 0, wake }
    }

    /// What the links say, for the main loop to hand back to `take`.
    pub fn news(&self) -> &Receiver<LinkNews> {
        &self.news
    }

    /// Open `definition` on `host` for the local pane `local`, sized `size`.
    pub fn open(&mut self, host: &HostSettings, local: PaneId, definition: String, size: TermSize) {
        let opening = Opening { local, definition, size };
        match self.hosts.get_mut(&host.name) {
            Some(HostState::Connecting(waiting)) => waiting.push(opening),
            Some(HostState::Up { link, asked, .. }) => {
                self.next_request += 1;
                ask(link, asked, self.next_request, opening);
            }
            Some(HostState::Down) | None => {
                self.hosts.insert(host.name.clone(), HostState::Connecting(vec![opening]));
                self.connect(host);
            }
        }
    }

    fn connect(&self, settings: &HostSettings) {
        let host = Host {
            destination: settings.destination.clone(),
            paddock_path: settings.paddock_path.clone(),
            ssh_options: settings.ssh_options.clone(),
        };
        let (name, news, wake) = (settings.name.clone(), self.news_in.clone(), self.wake.clone());
        let _ = std::thread::Builder::new().name("link-connect".into()).spawn(move || {
            let result = HostLink::connect(&host).map_err(|e| e.to_string());
            // Its events follow, in order, on this thread.
            let events = result.as_ref().ok().map(|link| link.events().clone());
            let _ = news.send(LinkNews::Connected { host: name.clone(), result });
            wake();
            for event in events.into_iter().flat_map(|events| events.into_iter()) {
                let ended = matches!(event, LinkEvent::Ended(_));
                if news.send(LinkNews::Event { host: name.clone(), event }).is_err() || ended {
                    break;
                }
                wake();
            }
            wake();
        });
    }

    /// Take what a link said; returns what the workspace should show where.
    pub fn take(&mut self, news: LinkNews) -> Vec<Shown> {
        match news {
            LinkNews::Connected { host, result } => self.connected(host, result),
            LinkNews::Event { host, event } => self.event(&host, event),
        }
    }

    fn connected(&mut self, host: String, result: Result<HostLink, String>) -> Vec<Shown> {
        let waiting = match self.hosts.remove(&host) {
            Some(HostState::Connecting(waiting)) => waiting,
            _ => Vec::new(),
        };
        match result {
            Ok(link) => {
                let link = Arc::new(link);
                let mut asked = HashMap::new();
                for opening in waiting {
                    self.next_request += 1;
                    ask(&link, &mut asked, self.next_request, opening);
                }
                self.hosts.insert(host, HostState::Up { link, asked, panes: HashMap::new() });
                Vec::new()
            }
            Err(why) => {
                let text = format!("this thread runs on {host}, which cannot be reached:\n{why}");
                self.hosts.insert(host, HostState::Down);
                waiting
                    .into_iter()
                    .map(|o| Shown::Notice { local: o.local, text: text.clone() })
                    .collect()
            }
        }
    }

    fn event(&mut self, host: &str, event: LinkEvent) -> Vec<Shown> {
        let Some(HostState::Up { link, asked, panes }) = self.hosts.get_mut(host) else {
            return Vec::new();
        };
        let mut shown = Vec::new();
        match event {
            LinkEvent::Applied(Applied::Opened { request, pane }) => {
                if let Some(local) = asked.remove(&request) {
                    let status = Arc::new(Mutex::new(PaneStatus::Running));
                    panes.insert(pane, Linked { local, status, info: None, mirrored: false });
                }
            }
            LinkEvent::Applied(Applied::NotOpened { request, reason }) => {
                if let Some(local) = asked.remove(&request) {
                    let text = format!("{host} did not open this thread:\n{reason}");
                    shown.push(Shown::Notice { local, text });
                }
            }
            LinkEvent::Applied(Applied::View) => {
                let replicas = link.replicas().lock().unwrap_or_else(PoisonError::into_inner);
                let described = replicas.view().map(|v| v.instance.panes.clone());
                for info in described.unwrap_or_default() {
                    if let Some(linked) = panes.get_mut(&info.id) {
                        *linked.status.lock().unwrap_or_else(PoisonError::into_inner) =
                            status_of(&info);
                        linked.info = Some(info);
                    }
                }
            }
            LinkEvent::Applied(Applied::Closed(pane)) => {
                if let Some(linked) = panes.get(&pane) {
                    let mut status = linked.status.lock().unwrap_or_else(PoisonError::into_inner);
                    if *status == PaneStatus::Running {
                        *status = PaneStatus::Exited(None);
                    }
                }
            }
            LinkEvent::Applied(_) => {}
            LinkEvent::Ended(why) => {
                let lost: Vec<PaneId> = panes.values().map(|l| l.local).collect();
                let mut gone = asked.values().copied().collect::<Vec<_>>();
                gone.extend(lost);
                self.hosts.insert(host.to_owned(), HostState::Down);
                return gone
                    .into_iter()
                    .map(|local| Shown::Notice {
                        local,
                        text: format!(
                            "the connection to {host} ended ({why}); the thread runs on there"
                        ),
                    })
                    .collect();
            }
        }
        // Each remote pane whose replica is there now and not shown yet is shown.
        let replicas = link.replicas().lock().unwrap_or_else(PoisonError::into_inner);
        for (remote, linked) in panes.iter_mut().filter(|(_, l)| !l.mirrored) {
            if let Some(term) = replicas.get(*remote) {
                linked.mirrored = true;
                let backing = LinkedPane {
                    link: link.clone(),
                    remote: *remote,
                    status: linked.status.clone(),
                    host: host.to_owned(),
                };
                shown.push(Shown::Mirror {
                    local: linked.local,
                    term: term.clone(),
                    backing: Box::new(backing),
                });
            }
        }
        shown
    }

    /// The host a local pane's thread runs on, and how that host describes the pane.
    pub fn describe(&self, local: PaneId) -> Option<(&str, Option<&PaneInfo>)> {
        self.hosts.iter().find_map(|(host, state)| match state {
            HostState::Up { panes, asked, .. } => {
                if asked.values().any(|l| *l == local) {
                    return Some((host.as_str(), None));
                }
                let linked = panes.values().find(|l| l.local == local)?;
                Some((host.as_str(), linked.info.as_ref()))
            }
            HostState::Connecting(waiting) => {
                waiting.iter().any(|o| o.local == local).then_some((host.as_str(), None))
            }
            HostState::Down => None,
        })
    }
}

fn ask(link: &HostLink, asked: &mut HashMap<u32, PaneId>, request: u32, opening: Opening) {
    asked.insert(request, opening.local);
    // A link that cannot be written to ends, and says so through its events.
    let _ = link.open_thread(request, &opening.definition, opening.size);
}

fn status_of(info: &PaneInfo) -> PaneStatus {
    match info.status {
        PaneState::Running => PaneStatus::Running,
        PaneState::Exited => PaneStatus::Exited(info.exit_code),
        PaneState::NoProgram => PaneStatus::NoProgram,
    }
}

/// A local pane's way to its remote pane.
struct LinkedPane {
    link: Arc<HostLink>,
    remote: u32,
    status: Arc<Mutex<PaneStatus>>,
    host: String,
}

impl LinkedPane {
    fn unreachable(&self, e: impl std::fmt::Display) -> PtyError {
        PtyError::Remote(format!("cannot reach {}: {e}", self.host))
    }
}

impl Mirrored for LinkedPane {
    fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        self.link.input(self.remote, bytes).map_err(|e| self.unreachable(e))
    }
    fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        self.link.size_pane(self.remote, size).map_err(|e| self.unreachable(e))
    }
    fn status(&self) -> PaneStatus {
        *self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn close(&self) -> PaneStatus {
        let _ = self.link.close_pane(self.remote);
        self.status()
    }
}
