//! Threads that run on other hosts, as this server sees them: one link per host
//! (`host_link`), connected on a thread of its own when a thread first needs it, the threads
//! it was asked to open, and the remote panes it mirrors. The workspace hands it each local
//! pane of a remote thread and takes back what to show there: a replica of the remote pane
//! (a `PaneSession::mirror`), or why there is none.
//!
//! A link that drops leaves the remote panes running there: they read as disconnected here
//! while the link is made again (after 1 s, then twice as long each time, at most 30 s), into
//! the same replicas, so the host's fresh snapshots bring what they printed meanwhile.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use super::host_link::{Host, HostLink, LinkEvent};
use crate::config::HostSettings;
use crate::ctl::protocol::{PaneInfo, PaneState};
use crate::ctl::replicas::{Applied, Replicas};
use crate::mux::PaneId;
use crate::pty::{Mirrored, PaneStatus, PtyError};
use crate::term::{TermSize, Terminal};
use crate::vault::audit::{utc_now, AuditLog, Event, Record};
use crate::vault::handed::Handed;

/// The longest wait between attempts to connect again.
const MOST_BACKOFF: Duration = Duration::from_secs(30);

/// What a link's threads tell the main loop.
pub enum LinkNews {
    Connected {
        host: String,
        attempt: u64,
        result: Result<HostLink, String>,
    },
    Event {
        host: String,
        attempt: u64,
        event: LinkEvent,
    },
    /// The time for the host to answer `request` is up.
    Overdue {
        host: String,
        attempt: u64,
        request: u32,
    },
}

/// How long a host may take to answer a thread it was asked to open (its lock, worktree and
/// secrets decided there): then the pane says it did not open, and its secrets' records say
/// they did not start.
const OPEN_WAIT: Duration = Duration::from_secs(30);

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
    secrets: Option<HandedFor>,
}

/// A remote thread's secrets, released by the vault here for its host: the values, sent with
/// the thread, and the records to write once the host answers.
pub struct HandedFor {
    pub handed: Handed,
    pub records: Vec<Record>,
    /// The vault's state folder, where its audit log is.
    pub state: PathBuf,
}

/// A thread asked of the host and not answered yet.
struct Asked {
    local: PaneId,
    /// The `released` records of its secrets, written when the host answers.
    records: Option<(Vec<Record>, PathBuf)>,
}

/// A remote pane this server mirrors.
struct Linked {
    local: PaneId,
    status: Arc<Mutex<PaneStatus>>,
    /// How the remote server describes it (`paddock ls` there).
    info: Option<PaneInfo>,
    /// What a window there shows of it (`workspace::PaneLook` as JSON): its pulse, lock and
    /// notes, for the title strip, glow and notifications here.
    look: Option<serde_json::Value>,
    mirrored: bool,
}

/// The link in use for a host, shared with its panes' backings (a link made again replaces
/// it for all of them).
type Slot = Arc<Mutex<Option<Arc<HostLink>>>>;

enum Phase {
    /// The first connection is being made.
    Connecting,
    Up,
    /// The link dropped with panes running there; attempt `n` is under way.
    Reconnecting(u32),
}

struct HostEntry {
    settings: HostSettings,
    phase: Phase,
    slot: Slot,
    replicas: Arc<Mutex<Replicas>>,
    /// Threads to open once the link is up.
    waiting: Vec<Opening>,
    /// Requests sent and not answered yet, by request.
    asked: HashMap<u32, Asked>,
    /// By remote pane id.
    panes: HashMap<u32, Linked>,
    /// The latest connection attempt: news of an earlier one (a link replaced by `reconnect`)
    /// is old and ignored.
    attempt: u64,
    /// Requests given up on (no answer in time, their pane closed, their link gone): the host
    /// may have opened them all the same, so each is closed there by its request
    /// (`CloseOpened`), at once or as soon as a link is up.
    abandoned: Vec<u32>,
}

pub struct RemoteThreads {
    hosts: HashMap<String, HostEntry>,
    news_in: Sender<LinkNews>,
    news: Receiver<LinkNews>,
    next_request: u32,
    wake: Arc<dyn Fn() + Send + Sync>,
}

impl RemoteThreads {
    pub fn new(wake: Arc<dyn Fn() + Send + Sync>) -> RemoteThreads {
        let (news_in, news) = crossbeam_channel::unbounded();
        // Requests are told apart by the host across connections and restarts of this server:
        // each server starts its numbering somewhere of its own.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let next_request = nanos ^ std::process::id().rotate_left(16);
        RemoteThreads { hosts: HashMap::new(), news_in, news, next_request, wake }
    }

    /// What the links say, for the main loop to hand back to `take`.
    pub fn news(&self) -> &Receiver<LinkNews> {
        &self.news
    }

    /// Open `definition` on `host` for the local pane `local`, sized `size`.
    pub fn open(
        &mut self,
        host: &HostSettings,
        local: PaneId,
        definition: String,
        size: TermSize,
        secrets: Option<HandedFor>,
    ) {
        let opening = Opening { local, definition, size, secrets };
        let entry = self.hosts.entry(host.name.clone()).or_insert_with(|| HostEntry {
            settings: host.clone(),
            phase: Phase::Connecting,
            slot: Arc::new(Mutex::new(None)),
            replicas: Arc::new(Mutex::new(Replicas::default())),
            waiting: Vec::new(),
            asked: HashMap::new(),
            panes: HashMap::new(),
            attempt: 0,
            abandoned: Vec::new(),
        });
        let first = matches!(entry.phase, Phase::Connecting)
            && entry.waiting.is_empty()
            && entry.panes.is_empty()
            && entry.asked.is_empty();
        let link = lock(&entry.slot).clone();
        match (&entry.phase, link) {
            (Phase::Up, Some(link)) => {
                self.next_request = self.next_request.wrapping_add(1);
                ask(&link, &mut entry.asked, self.next_request, opening);
                let due = Overdue::new(&self.news_in, &self.wake, &host.name, entry.attempt);
                due.after(self.next_request);
            }
            // Asked once the link is up (again).
            _ => entry.waiting.push(opening),
        }
        if first {
            self.connect(&host.name, Duration::ZERO);
        }
    }

    /// Connect to `host` after `wait`, on a thread of its own.
    fn connect(&mut self, name: &str, wait: Duration) {
        let Some(entry) = self.hosts.get_mut(name) else { return };
        entry.attempt += 1;
        let attempt = entry.attempt;
        let host = Host {
            destination: entry.settings.destination.clone(),
            paddock_path: entry.settings.paddock_path.clone(),
            ssh_options: entry.settings.ssh_options.clone(),
        };
        let replicas = entry.replicas.clone();
        let (name, news, wake) = (name.to_owned(), self.news_in.clone(), self.wake.clone());
        let _ = std::thread::Builder::new().name("link-connect".into()).spawn(move || {
            std::thread::sleep(wait);
            let result = HostLink::connect_into(&host, replicas).map_err(|e| e.to_string());
            // Its events follow, in order, on this thread.
            let events = result.as_ref().ok().map(|link| link.events().clone());
            let _ = news.send(LinkNews::Connected { host: name.clone(), attempt, result });
            wake();
            for event in events.into_iter().flat_map(|events| events.into_iter()) {
                let ended = matches!(event, LinkEvent::Ended(_));
                let told = news.send(LinkNews::Event { host: name.clone(), attempt, event });
                if told.is_err() || ended {
                    break;
                }
                wake();
            }
            wake();
        });
    }

    /// Take what a link said; returns what the workspace should show where.
    pub fn take(&mut self, news: LinkNews) -> Vec<Shown> {
        let (host, attempt) = match &news {
            LinkNews::Connected { host, attempt, .. }
            | LinkNews::Event { host, attempt, .. }
            | LinkNews::Overdue { host, attempt, .. } => (host.clone(), *attempt),
        };
        // A replaced link's news (its ending, above all) is not the host's.
        if self.hosts.get(&host).is_none_or(|entry| entry.attempt != attempt) {
            return Vec::new();
        }
        match news {
            LinkNews::Connected { host, result, .. } => self.connected(&host, result),
            LinkNews::Event { host, event, .. } => self.event(&host, event),
            LinkNews::Overdue { host, request, .. } => self.overdue(&host, request),
        }
    }

    /// The host has not answered `request` in time: its pane says so, and an answer that
    /// comes after all closes what it opened (`event`).
    fn overdue(&mut self, host: &str, request: u32) -> Vec<Shown> {
        let Some(entry) = self.hosts.get_mut(host) else { return Vec::new() };
        let Some(Asked { local, records }) = entry.asked.remove(&request) else {
            return Vec::new();
        };
        let text = format!("{host} did not answer within {} s", OPEN_WAIT.as_secs());
        record_answer(records, host, Err(&text));
        abandon(entry, request);
        vec![Shown::Notice { local, text }]
    }

    /// This server stops: every remote pane it opened is closed on its host, and each link
    /// sees its closes through before ssh ends (`HostLink`'s drop), so no agent is left
    /// running there with its secrets. What was never sent is on record as not started.
    pub fn close_all(&mut self) {
        for (host, mut entry) in std::mem::take(&mut self.hosts) {
            for opening in std::mem::take(&mut entry.waiting) {
                let records = opening.secrets.map(|s| (s.records, s.state));
                record_answer(records, &host, Err("paddock stopped before it was sent"));
            }
            let link = lock(&entry.slot).take();
            if let Some(link) = &link {
                for remote in entry.panes.keys() {
                    let _ = link.close_pane(*remote);
                }
            }
            // An open the host has not answered yet is given up, and closed there too.
            let _ = unanswered(&mut entry, &host, "paddock stopped");
            if let Some(link) = &link {
                for request in std::mem::take(&mut entry.abandoned) {
                    let _ = link.close_opened(request);
                }
            }
            drop(link);
        }
    }

    /// The local pane `local` is gone (closed, or started again): forget what it asked of its
    /// host. Secrets waiting to be sent are dropped; a request not answered yet has its
    /// records say the program did not start here. With `idle_link_goes`, a host with nothing
    /// left to do here is disconnected (no reconnecting for panes nobody has).
    pub fn forget(&mut self, local: PaneId, idle_link_goes: bool) {
        let mut idle = Vec::new();
        for (host, entry) in self.hosts.iter_mut() {
            let (gone, waiting) = std::mem::take(&mut entry.waiting)
                .into_iter()
                .partition::<Vec<_>, _>(|o| o.local == local);
            entry.waiting = waiting;
            for opening in gone {
                let records = opening.secrets.map(|s| (s.records, s.state));
                record_answer(records, host, Err("its pane closed before it was sent to the host"));
            }
            let unanswered: Vec<u32> =
                entry.asked.iter().filter(|(_, a)| a.local == local).map(|(r, _)| *r).collect();
            for request in unanswered {
                if let Some(Asked { records, .. }) = entry.asked.remove(&request) {
                    record_answer(records, host, Err("its pane closed before the host answered"));
                    abandon(entry, request);
                }
            }
            entry.panes.retain(|_, linked| linked.local != local);
            let done = entry.abandoned.is_empty() || lock(&entry.slot).is_some();
            if entry.waiting.is_empty() && entry.asked.is_empty() && entry.panes.is_empty() && done
            {
                idle.push(host.clone());
            }
        }
        if idle_link_goes {
            for host in idle {
                self.hosts.remove(&host);
            }
        }
    }

    /// Drop the link to `host` and connect again now (`paddock ctl reconnect --host`): its
    /// panes run on there and are found again, as after a dropped connection. What to show
    /// for threads it had not answered for yet.
    pub fn reconnect(&mut self, host: &str) -> Result<Vec<Shown>, String> {
        let Some(entry) = self.hosts.get_mut(host) else {
            let known: Vec<&str> = self.hosts.keys().map(String::as_str).collect();
            return Err(match known.as_slice() {
                [] => format!("no thread here runs on \"{host}\" (none runs on another host)"),
                _ => format!("no thread here runs on \"{host}\" (hosts: {})", known.join(", ")),
            });
        };
        // Dropped, it ends its ssh.
        *lock(&entry.slot) = None;
        let why = "asked to connect again";
        let shown = unanswered(entry, host, why);
        if !matches!(entry.phase, Phase::Connecting) {
            entry.phase = Phase::Reconnecting(0);
        }
        self.connect(host, Duration::ZERO);
        Ok(shown)
    }

    fn connected(&mut self, host: &str, result: Result<HostLink, String>) -> Vec<Shown> {
        let Some(entry) = self.hosts.get_mut(host) else { return Vec::new() };
        match result {
            Ok(link) => {
                let link = Arc::new(link);
                *lock(&entry.slot) = Some(link.clone());
                entry.phase = Phase::Up;
                for request in std::mem::take(&mut entry.abandoned) {
                    let _ = link.close_opened(request);
                }
                for opening in std::mem::take(&mut entry.waiting) {
                    self.next_request = self.next_request.wrapping_add(1);
                    ask(&link, &mut entry.asked, self.next_request, opening);
                    let due = Overdue::new(&self.news_in, &self.wake, host, entry.attempt);
                    due.after(self.next_request);
                }
                for linked in entry.panes.values() {
                    let mut status = lock(&linked.status);
                    if *status == PaneStatus::NoProgram {
                        *status = PaneStatus::Running;
                    }
                }
                Vec::new()
            }
            Err(why) => match &mut entry.phase {
                Phase::Reconnecting(attempt) => {
                    *attempt += 1;
                    let wait = backoff(*attempt);
                    self.connect(host, wait);
                    Vec::new()
                }
                Phase::Connecting => {
                    let why = host_words(&why);
                    let text =
                        format!("this thread runs on {host}, which cannot be reached:\n{why}");
                    let shown = entry
                        .waiting
                        .drain(..)
                        .map(|o| Shown::Notice { local: o.local, text: text.clone() })
                        .collect();
                    self.hosts.remove(host);
                    shown
                }
                Phase::Up => Vec::new(),
            },
        }
    }

    fn event(&mut self, host: &str, event: LinkEvent) -> Vec<Shown> {
        let Some(entry) = self.hosts.get_mut(host) else { return Vec::new() };
        let mut shown = Vec::new();
        match event {
            LinkEvent::Applied(Applied::Opened { request, pane, withheld }) => {
                let asked = entry.asked.remove(&request);
                if asked.is_none() {
                    // Opened after its pane here gave up on it, or closed: it ends there too.
                    if let Some(link) = lock(&entry.slot).clone() {
                        let _ = link.close_pane(pane);
                    }
                }
                if let Some(Asked { local, records }) = asked {
                    record_answer(records, host, Ok(&withheld));
                    let status = Arc::new(Mutex::new(PaneStatus::Running));
                    let linked = Linked { local, status, info: None, look: None, mirrored: false };
                    entry.panes.insert(pane, linked);
                }
            }
            LinkEvent::Applied(Applied::NotOpened { request, reason }) => {
                if let Some(Asked { local, records }) = entry.asked.remove(&request) {
                    record_answer(records, host, Err(&reason));
                    let text = format!("{host} did not open this thread:\n{}", host_words(&reason));
                    shown.push(Shown::Notice { local, text });
                }
            }
            LinkEvent::Applied(Applied::View) => {
                let replicas = lock(&entry.replicas);
                let described =
                    replicas.view().map(|v| (v.instance.panes.clone(), v.looks.clone()));
                let (described, mut looks) = described.unwrap_or_default();
                for info in described {
                    if let Some(linked) = entry.panes.get_mut(&info.id) {
                        *lock(&linked.status) = status_of(&info);
                        linked.look = looks.remove(&info.id);
                        linked.info = Some(info);
                    }
                }
            }
            LinkEvent::Applied(Applied::Closed(pane)) => {
                if let Some(linked) = entry.panes.get(&pane) {
                    let mut status = lock(&linked.status);
                    if *status == PaneStatus::Running {
                        *status = PaneStatus::Exited(None);
                    }
                }
            }
            LinkEvent::Applied(_) => {}
            LinkEvent::Ended(why) => {
                *lock(&entry.slot) = None;
                shown.extend(unanswered(entry, host, &why));
                if entry.panes.is_empty() {
                    self.hosts.remove(host);
                } else {
                    entry.phase = Phase::Reconnecting(0);
                    self.connect(host, backoff(0));
                }
                return shown;
            }
        }
        // Each remote pane whose replica is there now and not shown yet is shown.
        let replicas = lock(&entry.replicas);
        for (remote, linked) in entry.panes.iter_mut().filter(|(_, l)| !l.mirrored) {
            if let Some(term) = replicas.get(*remote) {
                linked.mirrored = true;
                let backing = LinkedPane {
                    slot: entry.slot.clone(),
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

    /// What a window on the host shows of the remote pane behind `local` (as JSON), and
    /// whether the link there is down (then its pulse is old news).
    pub fn look(&self, local: PaneId) -> Option<(&serde_json::Value, bool)> {
        self.hosts.values().find_map(|entry| {
            let linked = entry.panes.values().find(|l| l.local == local)?;
            let down = matches!(entry.phase, Phase::Reconnecting(_));
            Some((linked.look.as_ref()?, down))
        })
    }

    /// For `paddock ls`: the host a local pane's thread runs on, how that host describes the
    /// pane, and whether the link to it is down.
    pub fn describe(&self, local: PaneId) -> Option<(&str, Option<&PaneInfo>, bool)> {
        self.hosts.iter().find_map(|(host, entry)| {
            let down = matches!(entry.phase, Phase::Reconnecting(_));
            if let Some(linked) = entry.panes.values().find(|l| l.local == local) {
                return Some((host.as_str(), linked.info.as_ref(), down));
            }
            let waiting = entry.waiting.iter().any(|o| o.local == local);
            (waiting || entry.asked.values().any(|a| a.local == local)).then_some((
                host.as_str(),
                None,
                down,
            ))
        })
    }
}

/// What a host (or the ssh that reaches it) said, fit to show here: each line's controls and
/// reordering characters made visible, at most 4 KiB. A host is not trusted to write to this
/// machine's screen or log.
fn host_words(text: &str) -> String {
    let mut words: String =
        text.lines().map(crate::sandbox::visible).collect::<Vec<_>>().join("\n");
    if words.len() > 4096 {
        let mut end = 4096;
        while !words.is_char_boundary(end) {
            end -= 1;
        }
        words.truncate(end);
        words.push('…');
    }
    words
}

/// Tells the main loop, `OPEN_WAIT` after a request, that its time is up.
struct Overdue {
    news: Sender<LinkNews>,
    wake: Arc<dyn Fn() + Send + Sync>,
    host: String,
    attempt: u64,
}

impl Overdue {
    fn new(
        news: &Sender<LinkNews>,
        wake: &Arc<dyn Fn() + Send + Sync>,
        host: &str,
        attempt: u64,
    ) -> Overdue {
        let (news, wake) = (news.clone(), wake.clone());
        Overdue { news, wake, host: host.to_owned(), attempt }
    }

    fn after(self, request: u32) {
        let _ = std::thread::Builder::new().name("link-open-wait".into()).spawn(move || {
            std::thread::sleep(OPEN_WAIT);
            let Overdue { news, wake, host, attempt } = self;
            if news.send(LinkNews::Overdue { host, attempt, request }).is_ok() {
                wake();
            }
        });
    }
}

/// Requests the host never answered, now that its link is gone: it may have opened them, or
/// not. Their panes say so, and their secrets' records say they did not start.
fn unanswered(entry: &mut HostEntry, host: &str, why: &str) -> Vec<Shown> {
    let mut shown = Vec::new();
    for (request, Asked { local, records }) in std::mem::take(&mut entry.asked) {
        let text = format!("the connection to {host} ended before it answered: {why}");
        record_answer(records, host, Err(&text));
        shown.push(Shown::Notice { local, text });
        entry.abandoned.push(request);
    }
    shown
}

/// Give up on `request`: close what the host opened for it now if a link is up, else once
/// one is (`connected`).
fn abandon(entry: &mut HostEntry, request: u32) {
    match lock(&entry.slot).clone() {
        Some(link) if link.close_opened(request).is_ok() => {}
        _ => entry.abandoned.push(request),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How long to wait before attempt `attempt` to connect again.
fn backoff(attempt: u32) -> Duration {
    Duration::from_secs(1 << attempt.min(5)).min(MOST_BACKOFF)
}

fn ask(link: &HostLink, asked: &mut HashMap<u32, Asked>, request: u32, opening: Opening) {
    let (handed, records) = match opening.secrets {
        Some(HandedFor { handed, records, state }) => (Some(handed), Some((records, state))),
        None => (None, None),
    };
    asked.insert(request, Asked { local: opening.local, records });
    // A link that cannot be written to ends, and says so through its events (and the records
    // then say the program did not start).
    let _ = link.open_thread_with(request, &opening.definition, opening.size, handed);
}

/// Write what became of a remote thread's secrets once its host answered: `released` for
/// each its program got, `withheld` with the host's reason for the others, or `failed` for
/// all when the thread did not open.
fn record_answer(
    records: Option<(Vec<Record>, PathBuf)>,
    host: &str,
    answer: Result<&[(String, String)], &str>,
) {
    let Some((records, state)) = records else { return };
    let log = AuditLog::new(&state);
    for mut record in records {
        record.time = utc_now();
        match answer {
            Ok(withheld) => {
                // The value reached the host either way: released, with what the host says.
                if let Some((_, why)) = withheld.iter().find(|(name, _)| *name == record.secret) {
                    let why = host_words(why);
                    record.reason = Some(format!(
                        "handed to {host}, which withheld it from the program: {why}"
                    ));
                }
            }
            Err(why) => {
                record.event = Event::Failed;
                record.reason = Some(host_words(why));
            }
        }
        if let Err(e) = log.append(&record) {
            eprintln!("paddock: cannot write the vault's audit log: {e}");
        }
    }
}

fn status_of(info: &PaneInfo) -> PaneStatus {
    match info.status {
        PaneState::Running | PaneState::Disconnected => PaneStatus::Running,
        PaneState::Exited => PaneStatus::Exited(info.exit_code),
        PaneState::NoProgram => PaneStatus::NoProgram,
    }
}

/// A local pane's way to its remote pane, through whichever link to its host is up.
struct LinkedPane {
    slot: Slot,
    remote: u32,
    status: Arc<Mutex<PaneStatus>>,
    host: String,
}

impl LinkedPane {
    fn link(&self) -> Result<Arc<HostLink>, PtyError> {
        lock(&self.slot).clone().ok_or_else(|| {
            PtyError::Remote(format!("the connection to {} is down; connecting again", self.host))
        })
    }
}

impl Mirrored for LinkedPane {
    fn send(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        let unreachable = |e| PtyError::Remote(format!("cannot reach {}: {e}", self.host));
        self.link()?.input(self.remote, bytes).map_err(unreachable)
    }
    fn resize(&self, size: TermSize) -> Result<(), PtyError> {
        let unreachable = |e| PtyError::Remote(format!("cannot reach {}: {e}", self.host));
        self.link()?.size_pane(self.remote, size).map_err(unreachable)
    }
    fn status(&self) -> PaneStatus {
        *lock(&self.status)
    }
    fn close(&self) -> PaneStatus {
        if let Ok(link) = self.link() {
            let _ = link.close_pane(self.remote);
        }
        self.status()
    }
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn attempts_wait_twice_as_long_up_to_half_a_minute() {
        let waits: Vec<u64> = (0..8).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        assert!(backoff(u32::MAX) <= Duration::from_secs(30));
    }
}
