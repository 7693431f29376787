//! The panes of one instance: the mux model plus a PTY session for every pane in it.
//!
//! Invariant: a pane id is in the mux exactly when it has a session here. Requests that end a
//! pane hand its session back to the caller, so the slow part of closing (the hangup grace
//! period) never runs on the thread that answers everyone else.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::{ClipboardRule, Placement, ThreadSpec};
use crate::ctl::protocol::ErrorCode;
use crate::mux::{Axis, Mux, PaneId, Rect};
use crate::pty::PaneSession;
use crate::sandbox::Enforcement;
use crate::vault::Vault;

mod control;
mod linked;
mod look;
mod notice;
mod pulse;
#[cfg(unix)]
mod remote;
mod start;

pub use control::Outcome;
pub use look::{ChangedLook, LockLook, PaneLook, Shown};

use super::git_watch::{GitWatch, Who};
use super::pane_endpoint::{Endpoint, PaneEndpoints};
use super::secrets::PaneSecrets;
use super::split_lock::{self, InheritedLock};
use crate::pulse::Sampler;
use crate::term::TermSize;
use crate::vault::handed::Handed;

#[derive(Clone, Debug)]
pub struct WorkspaceOptions {
    /// The area tabs are laid out in (the window, or a virtual one when headless).
    pub area: TermSize,
    pub scrollback_lines: usize,
    /// What a pane runs when no command is given: the user's shell.
    pub default_command: Vec<String>,
    /// This instance's control socket, given to panes as PADDOCK_SOCKET.
    pub socket: PathBuf,
    /// The paddock binary, whose launcher applies a locked thread's lock.
    pub launcher: PathBuf,
    /// paddock's own files and folders, which every lock protects (`sandbox::guarded_paths`).
    pub guarded: Vec<PathBuf>,
    /// Pulse samples per second.
    pub pulse_rate: u32,
    /// Where locked panes get their own control endpoints (`None`: they get none).
    pub endpoints: Option<PaneEndpoints>,
    /// The instance's cgroups, one per pane (`Err`: why there are none; the pulse then counts
    /// process trees).
    pub cgroups: Result<Arc<crate::cgroup::Tree>, String>,
}

struct Pane {
    session: PaneSession,
    command: Vec<String>,
    cwd: Option<PathBuf>,
    size: TermSize,
    /// The configured thread this pane runs, as it was when the pane started.
    thread: Option<ThreadSpec>,
    /// What its lock enforces.
    lock: Enforcement,
    /// The names of paddock's environment variables its locked program got (`None`: not
    /// locked, so it got all of them).
    env_passed: Option<Vec<String>>,
    /// The lock it inherited from the pane it was split from (its own splits inherit it too).
    inherited: Option<InheritedLock>,
    /// The secrets its program was given.
    secrets: Option<PaneSecrets>,
    /// Pinned secrets withheld from it because their program changed since it was approved.
    changed: Vec<crate::app::secrets::Changed>,
    /// Its own control endpoint, if it is locked: held, never read (it listens until dropped
    /// with the pane).
    #[expect(dead_code, reason = "held for its lifetime: dropping it closes the endpoint")]
    endpoint: Option<Endpoint>,
    /// What its lock's writable folders held for git when it started, if it is locked.
    git_watch: Option<GitWatch>,
    /// Its proxy, when its network is an allow-list (Unix).
    #[cfg(unix)]
    egress: Option<super::egress::PaneEgress>,
    /// Its brokered secrets: each name, and the generation of the value it was given (Unix).
    #[cfg(unix)]
    brokered: Vec<(String, u64)>,
    /// Muted by its user (`ctl mute`, the `mute_pane` key): it never notifies and never
    /// counts among the panes that wait.
    muted: bool,
    /// Opened by a paddock on another host, which sizes it to its own pane: the layout here
    /// leaves it alone.
    linked_size: Option<TermSize>,
    /// The secrets that paddock handed for it (kept for a restart: this host's keychain is
    /// never asked for a linked thread's), and those withheld from its program, and why.
    handed: Option<Handed>,
    withheld: Vec<(String, String)>,
    /// The link's request it was opened for (`WindowAction::CloseOpened` finds it by that).
    opened_for: Option<u32>,
}

impl Pane {
    /// A pane that runs nothing and shows what its session says.
    fn notice(
        session: PaneSession,
        command: Vec<String>,
        cwd: Option<PathBuf>,
        size: TermSize,
        thread: Option<ThreadSpec>,
    ) -> Pane {
        Pane {
            session,
            command,
            cwd,
            size,
            thread,
            lock: Enforcement::Unlocked { chosen: false },
            env_passed: None,
            inherited: None,
            secrets: None,
            changed: Vec::new(),
            endpoint: None,
            git_watch: None,
            #[cfg(unix)]
            egress: None,
            #[cfg(unix)]
            brokered: Vec::new(),
            muted: false,
            linked_size: None,
            handed: None,
            withheld: Vec::new(),
            opened_for: None,
        }
    }
}

/// What to start in a pane.
struct Launch {
    command: Vec<String>,
    cwd: Option<PathBuf>,
    thread: Option<ThreadSpec>,
    /// The lock of the pane this one was split from.
    inherited: Option<InheritedLock>,
    /// Its secrets, handed over a link (`linked`): the vault here is not asked.
    handed: Option<Handed>,
}

impl Launch {
    fn command(command: Vec<String>, cwd: Option<PathBuf>) -> Launch {
        Launch { command, cwd, thread: None, inherited: None, handed: None }
    }

    fn thread(command: Vec<String>, cwd: Option<PathBuf>, spec: ThreadSpec) -> Launch {
        Launch { command, cwd, thread: Some(spec), inherited: None, handed: None }
    }
}

pub struct Workspace {
    mux: Mux,
    panes: HashMap<PaneId, Pane>,
    options: WorkspaceOptions,
    wake: Arc<dyn Fn() + Send + Sync>,
    header_rows: usize,
    /// The threads as the configuration in force defines them (a pane's thread may have
    /// started from an older definition).
    threads: Vec<ThreadSpec>,
    /// What is wrong with the configuration file now, if anything.
    config_problems: Option<String>,
    /// The tab showing them, while it is open.
    config_notice: Option<PaneId>,
    /// How often a control request moved the focus (attached windows follow such moves).
    focus_moves: u64,
    /// The vault, once a thread has needed it.
    vault: Option<Vault>,
    /// The pulse sampler (`None` only if its thread could not start).
    sampler: Option<Sampler>,
    /// Endpoints opened so far, to name each one apart.
    endpoints_opened: u64,
    /// The configuration's hosts table for panes' proxies.
    proxy_hosts: BTreeMap<String, IpAddr>,
    /// The secret broker, once a pane has had a brokered secret.
    #[cfg(unix)]
    broker: Option<crate::app::broker::InstanceBroker>,
    /// The windows attached to this server, which every pane's model tells of each change.
    #[cfg(unix)]
    attached: crate::app::attach::Attached,
    /// Threads that run on other hosts, and the links to them.
    #[cfg(unix)]
    remote: crate::app::remote_threads::RemoteThreads,
}

/// Why a request failed, as the error reply says it.
#[derive(Debug)]
pub struct Refusal(ErrorCode, String);

impl Refusal {
    fn no_pane(pane: PaneId) -> Refusal {
        let PaneId(pane) = pane;
        Refusal(ErrorCode::NoSuchPane, format!("there is no pane {pane} (paddock ls lists them)"))
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

impl Workspace {
    /// `wake` is called by each pane's reader thread after it parses output.
    pub fn new(options: WorkspaceOptions, wake: Arc<dyn Fn() + Send + Sync>) -> Workspace {
        let sampler = Sampler::start(sample_period(options.pulse_rate), wake.clone()).ok();
        #[cfg(unix)]
        let remote = crate::app::remote_threads::RemoteThreads::new(wake.clone());
        Workspace {
            mux: Mux::new(),
            panes: HashMap::new(),
            options,
            wake,
            header_rows: 0,
            threads: Vec::new(),
            config_problems: None,
            config_notice: None,
            focus_moves: 0,
            vault: None,
            sampler,
            endpoints_opened: 0,
            proxy_hosts: BTreeMap::new(),
            #[cfg(unix)]
            broker: None,
            #[cfg(unix)]
            attached: Default::default(),
            #[cfg(unix)]
            remote,
        }
    }

    pub fn mux(&self) -> &Mux {
        &self.mux
    }

    pub fn session(&self, pane: PaneId) -> Option<&PaneSession> {
        self.panes.get(&pane).map(|p| &p.session)
    }

    /// The area tabs are laid out in, in cells.
    pub fn area_size(&self) -> TermSize {
        self.options.area
    }

    /// Lay every tab out again in a new area (the window was resized).
    pub fn set_area(&mut self, area: TermSize) {
        if area == self.options.area {
            return;
        }
        self.options.area = area;
        self.relayout_all();
    }

    fn relayout_all(&mut self) {
        let firsts: Vec<PaneId> =
            self.mux.tabs().iter().filter_map(|t| t.panes().first().copied()).collect();
        for pane in firsts {
            self.relayout(pane);
        }
    }

    /// Move the focus to the neighbour of the focused pane in `direction`.
    pub fn focus_direction(&mut self, direction: crate::mux::Direction) -> bool {
        let area = self.area();
        self.mux.focus_direction(direction, area)
    }

    /// Zoom the focused pane to the whole tab, or back; the panes get their new sizes.
    pub fn toggle_zoom(&mut self) {
        self.mux.toggle_zoom();
        let Some(focused) = self.mux.focused_pane() else {
            return;
        };
        self.relayout(focused);
    }

    pub fn cycle_tab(&mut self, step: isize) {
        self.mux.cycle_tab(step);
    }

    /// Activate the tab at `index` (the tab bar's order).
    pub fn activate_tab(&mut self, index: usize) {
        self.mux.activate_tab(index);
    }

    /// Focus `pane` (and its tab).
    pub fn focus(&mut self, pane: PaneId) {
        self.mux.focus(pane);
    }

    /// Move the active tab's divider `index` (in its layout's order) to `ratio`.
    pub fn set_divider_ratio(&mut self, index: usize, ratio: f32) {
        if self.mux.set_divider_ratio(index, ratio) {
            if let Some(pane) = self.mux.focused_pane() {
                self.relayout(pane);
            }
        }
    }

    /// Rows at the top of each pane's rectangle kept for its title strip (the window shows one;
    /// headless instances none). Panes are sized to the rest.
    pub fn set_header_rows(&mut self, rows: usize) {
        if rows != self.header_rows {
            self.header_rows = rows;
            self.relayout_all();
        }
    }

    pub fn header_rows(&self) -> usize {
        self.header_rows
    }

    /// The pane's program as the user started it.
    pub fn command_of(&self, pane: PaneId) -> Option<&[String]> {
        self.panes.get(&pane).map(|p| p.command.as_slice())
    }

    pub fn session_mut(&mut self, pane: PaneId) -> Option<&mut PaneSession> {
        self.panes.get_mut(&pane).map(|p| &mut p.session)
    }

    /// Open a tab running `command` (empty: the default command). Returns its pane.
    pub fn open_tab(
        &mut self,
        cwd: Option<PathBuf>,
        command: Vec<String>,
    ) -> Result<PaneId, String> {
        self.open_tab_inner(cwd, command).map_err(|Refusal(_, message)| message)
    }

    /// A plain tab, named after its program (`ctl new --thread` opens a configured thread).
    fn open_tab_inner(
        &mut self,
        cwd: Option<PathBuf>,
        command: Vec<String>,
    ) -> Result<PaneId, Refusal> {
        let command = self.command_or_default(command);
        check_cwd(cwd.as_ref())?;
        let (_, pane) = self.mux.new_tab(program_name(&command), None);
        let size = self.pane_size(self.area());
        if let Err(refusal) = self.start(pane, Launch::command(command, cwd), size) {
            self.mux.close(pane);
            return Err(refusal);
        }
        Ok(pane)
    }

    /// A new tab running the user's shell, opened while `from` has the focus: locked the same
    /// way as `from` when that is locked, starting where its program really is (`split_lock`).
    pub fn open_tab_from(&mut self, from: Option<PaneId>) -> Result<PaneId, String> {
        let source = from.and_then(|pane| self.panes.get(&pane));
        if let Some(why) = source.and_then(|s| split_lock::remote_source(s.thread.as_ref())) {
            return Err(why);
        }
        let (inherited, cwd) = source.and_then(inherited_lock).unzip();
        let command = self.command_or_default(Vec::new());
        let (_, pane) = self.mux.new_tab(program_name(&command), None);
        let size = self.pane_size(self.area());
        let launch = Launch { inherited, ..Launch::command(command, cwd.flatten()) };
        if let Err(Refusal(_, why)) = self.start(pane, launch, size) {
            self.mux.close(pane);
            return Err(why);
        }
        Ok(pane)
    }

    /// Open a configured thread where its placement says: a tab of its own, or a split of an
    /// earlier thread's pane (a tab of its own when that thread is not open). A thread that
    /// cannot start (a lock or secrets paddock cannot give it yet, a program that is not
    /// there) still gets its pane, which says why.
    pub fn open_thread(&mut self, spec: &ThreadSpec) -> PaneId {
        let of = match &spec.place {
            Placement::Tab => None,
            Placement::RightOf(of) => Some((of, Axis::Horizontal)),
            Placement::Below(of) => Some((of, Axis::Vertical)),
        };
        let split = of.and_then(|(of, axis)| {
            let target = self.thread_pane(of)?;
            self.mux.split(target, axis)
        });
        let pane = match split {
            Some(pane) => pane,
            None => self.mux.new_tab(spec.name.clone(), Some(spec.name.clone())).1,
        };
        let size = self.layout_of(pane).unwrap_or_else(|| self.pane_size(self.area()));
        #[cfg(unix)]
        if let Some(remote) = &spec.remote {
            self.open_remote(pane, spec, remote, size);
            self.relayout(pane);
            return pane;
        }
        let command = self.command_or_default(spec.command.clone());
        let launch = Launch::thread(command, start_dir(spec), spec.clone());
        if let Err(Refusal(_, message)) = self.start(pane, launch, size) {
            self.insert_notice(pane, spec, &message, size);
        }
        self.relayout(pane);
        pane
    }

    /// Open a tab that shows `text` and runs nothing (the configuration's problems).
    pub fn open_notice(&mut self, name: &str, text: &str) -> PaneId {
        let (_, pane) = self.mux.new_tab(name, None);
        let size = self.pane_size(self.area());
        let session = PaneSession::notice(text, size, self.options.scrollback_lines);
        let entry = Pane::notice(session, Vec::new(), None, size, None);
        self.adopt(pane, entry);
        pane
    }

    /// The configuration in force changed: these are its threads now. Running panes keep
    /// going as they started; the ones whose thread changed say so (see `config_changed`).
    pub fn set_threads(&mut self, threads: Vec<ThreadSpec>) {
        self.threads = threads;
    }

    /// The names panes' proxies map to addresses themselves (for panes started from now on).
    pub fn set_proxy_hosts(&mut self, hosts: BTreeMap<String, IpAddr>) {
        self.proxy_hosts = hosts;
    }

    /// Scrollback kept by panes opened from now on.
    pub fn set_scrollback_lines(&mut self, lines: usize) {
        self.options.scrollback_lines = lines;
    }

    /// Sample every pane's pulse `rate` times a second from the next tick on.
    pub fn set_pulse_rate(&mut self, rate: u32) {
        if rate != self.options.pulse_rate {
            self.options.pulse_rate = rate;
            if let Some(sampler) = &self.sampler {
                sampler.set_period(sample_period(rate));
            }
        }
    }

    /// The configuration file's problems (the last good configuration stays in force).
    pub fn set_config_problems(&mut self, problems: Option<String>) {
        self.config_problems = problems;
        self.refresh_config_notice();
    }

    pub fn config_problems(&self) -> Option<&str> {
        self.config_problems.as_deref()
    }

    /// Whether `pane`'s thread is defined differently now (or no longer) than when it started.
    pub fn config_changed(&self, pane: PaneId) -> bool {
        // A linked thread is defined by the link, never by this host's configuration.
        let entry = self.panes.get(&pane).filter(|p| p.linked_size.is_none());
        let Some(started) = entry.and_then(|p| p.thread.as_ref()) else {
            return false;
        };
        self.threads.iter().find(|t| t.name == started.name) != Some(started)
    }

    /// Look, once, at what each locked pane whose program ended left git to run (`git_watch`).
    pub fn check_ended_locks(&mut self) {
        let state = crate::vault::state_folder();
        for (id, pane) in &mut self.panes {
            let Some(watch) = &mut pane.git_watch else { continue };
            let who = Who {
                thread: pane.thread.as_ref().map(|t| t.name.clone()),
                program: pane.command.first().cloned(),
            };
            watch.check(&mut pane.session, *id, &who, state.as_deref());
        }
    }

    /// How `pane`'s thread's current definition would loosen the lock it started with (empty:
    /// it would not, or nothing changed).
    pub fn lock_widening(&self, pane: PaneId) -> Vec<String> {
        let Some(started) = self.panes.get(&pane).and_then(|p| p.thread.as_ref()) else {
            return Vec::new();
        };
        match self.threads.iter().find(|t| t.name == started.name) {
            Some(now) => crate::config::widening(started, now),
            None => Vec::new(),
        }
    }

    /// Start `pane`'s thread again from its current definition, in the same place. Returns
    /// the old session, still running, for closing.
    pub fn restart(&mut self, id: PaneId) -> Result<PaneSession, Refusal> {
        let entry = self.panes.get(&id).ok_or_else(|| Refusal::no_pane(id))?;
        let Some(started) = &entry.thread else {
            let message = format!("pane {} does not run a configured thread", id.0);
            return Err(Refusal(ErrorCode::BadRequest, message));
        };
        // A linked thread's definition is the link's, not this host's configuration's.
        if let Some(size) = entry.linked_size {
            let (spec, handed, request) = (started.clone(), entry.handed.clone(), entry.opened_for);
            let old = self.panes.remove(&id).map(|p| p.session);
            self.start_linked(id, &spec, size, handed);
            if let Some(entry) = self.panes.get_mut(&id) {
                entry.opened_for = request;
            }
            return old.ok_or_else(|| Refusal::no_pane(id));
        }
        let Some(spec) = self.threads.iter().find(|t| t.name == started.name).cloned() else {
            let message = format!(
                "the thread \"{}\" is no longer in the configuration (close the pane instead)",
                started.name
            );
            return Err(Refusal(ErrorCode::Failed, message));
        };
        let size = entry.size;
        let old = self.panes.remove(&id).map(|p| p.session);
        // A thread of another host opens there again (the old pane there ends with its
        // mirror here), with its secrets released again.
        #[cfg(unix)]
        if let Some(remote) = spec.remote.clone() {
            self.remote.forget(id, false);
            self.open_remote(id, &spec, &remote, size);
            return old.ok_or_else(|| Refusal::no_pane(id));
        }
        let command = self.command_or_default(spec.command.clone());
        let launch = Launch::thread(command, start_dir(&spec), spec.clone());
        if let Err(Refusal(_, message)) = self.start(id, launch, size) {
            self.insert_notice(id, &spec, &message, size);
        }
        old.ok_or_else(|| Refusal::no_pane(id))
    }

    fn insert_notice(&mut self, pane: PaneId, spec: &ThreadSpec, why: &str, size: TermSize) {
        let text = not_started(&spec.name, why);
        let session = PaneSession::notice(&text, size, self.options.scrollback_lines);
        let command = self.command_or_default(spec.command.clone());
        let entry = Pane::notice(session, command, spec.cwd.clone(), size, Some(spec.clone()));
        self.adopt(pane, entry);
    }

    /// The last `host:port` `pane`'s network allow-list refused, not allowed since.
    pub fn net_refused(&self, pane: PaneId) -> Option<String> {
        #[cfg(unix)]
        return self.panes.get(&pane)?.egress.as_ref()?.stats().last_denied;
        #[cfg(not(unix))]
        return self.panes.get(&pane).and(None);
    }

    /// Let the last host `pane`'s allow-list refused through, for that pane until it closes
    /// (the configuration is not written): what was let through.
    pub fn allow_refused_host(&mut self, pane: PaneId) -> Option<String> {
        #[cfg(unix)]
        return self.panes.get(&pane)?.egress.as_ref()?.allow_last_refused();
        #[cfg(not(unix))]
        return self.panes.get(&pane).and(None);
    }

    /// A pinned program `pane` did not get its secret for because it changed since it was
    /// approved: what the window offers to approve again.
    pub fn changed_program(&self, pane: PaneId) -> Option<&crate::app::secrets::Changed> {
        self.panes.get(&pane)?.changed.first()
    }

    /// A person approved `pane`'s changed program again (in the window, whose key press is the
    /// presence `vault approve` asks a terminal for): record the file as it is now for every
    /// secret withheld from it, if it is still the file that was shown. The pane is then
    /// restarted by the caller.
    pub fn approve_changed_program(&mut self, pane: PaneId) -> Result<String, String> {
        use crate::vault::pin::{fingerprint, Approvals};
        let changed = self.panes.get(&pane).map(|p| p.changed.clone()).unwrap_or_default();
        let first = changed.first().ok_or("nothing in this pane waits for approval")?;
        let state = self.vault.as_ref().map(|v| v.state().to_owned()).ok_or("no vault open")?;
        let now = fingerprint(&first.path)
            .map_err(|e| format!("cannot read {}: {e}", first.path.display()))?;
        if now.sha256 != first.sha256 {
            return Err(format!(
                "{} changed again since it was shown (sha256 now {}): not approved",
                first.path.display(),
                now.sha256
            ));
        }
        let mut approvals = Approvals::load(&state);
        for entry in changed.iter().filter(|c| c.path == first.path) {
            approvals = approvals.approve(&entry.secret, &now, crate::vault::audit::utc_now());
        }
        approvals.save(&state).map_err(|e| e.to_string())?;
        Ok(format!("approved {} (sha256 {}) again", now.path.display(), now.sha256))
    }

    /// What `pane`'s lock enforces.
    pub fn lock_of(&self, pane: PaneId) -> Option<&Enforcement> {
        self.panes.get(&pane).map(|p| &p.lock)
    }

    /// The pane of the configured thread named `name`.
    fn thread_pane(&self, name: &str) -> Option<PaneId> {
        let mut panes: Vec<_> = self
            .panes
            .iter()
            .filter(|(_, p)| p.thread.as_ref().is_some_and(|t| t.name == name))
            .map(|(id, _)| *id)
            .collect();
        panes.sort();
        panes.first().copied()
    }

    /// What `pane`'s clipboard writes do: its thread's rule, or the rule of the locked pane it
    /// was split from; a pane of neither is a plain terminal's and may write.
    pub fn clipboard_rule(&self, pane: PaneId) -> ClipboardRule {
        let Some(pane) = self.panes.get(&pane) else { return ClipboardRule::Deny };
        match (&pane.thread, &pane.inherited) {
            (Some(thread), _) => thread.clipboard_rule(),
            (None, Some(inherited)) => inherited.clipboard,
            (None, None) => ClipboardRule::Allow,
        }
    }

    /// The configured thread `pane` runs.
    pub fn thread_of(&self, pane: PaneId) -> Option<&ThreadSpec> {
        self.panes.get(&pane).and_then(|p| p.thread.as_ref())
    }

    fn command_or_default(&self, command: Vec<String>) -> Vec<String> {
        if command.is_empty() {
            self.options.default_command.clone()
        } else {
            command
        }
    }

    fn pane_mut(&mut self, pane: PaneId) -> Result<&mut Pane, Refusal> {
        self.panes.get_mut(&pane).ok_or_else(|| Refusal::no_pane(pane))
    }

    /// Split `pane` along `axis`, the new pane running `command` (the user's shell when empty):
    /// locked as `pane` is, else in the folder its shell is in now. Returns the new pane.
    pub fn split(
        &mut self,
        pane: PaneId,
        axis: Axis,
        command: Vec<String>,
    ) -> Result<PaneId, Refusal> {
        let source = self.pane_mut(pane)?;
        if let Some(why) = split_lock::remote_source(source.thread.as_ref()) {
            return Err(Refusal(ErrorCode::Failed, why));
        }
        // Locked the same way as a locked pane (`split_lock`); else it starts where the split
        // one is now (the directory its shell is in), falling back to where it started.
        let (inherited, cwd) = match inherited_lock(source) {
            Some((inherited, cwd)) => (Some(inherited), cwd),
            None => (None, current_dir(&source.session).or_else(|| source.cwd.clone())),
        };
        let command = self.command_or_default(command);
        let new = self.mux.split(pane, axis).ok_or_else(|| Refusal::no_pane(pane))?;
        let size = self.layout_of(new).unwrap_or(self.options.area);
        let launch = Launch { inherited, ..Launch::command(command, cwd) };
        if let Err(refusal) = self.start(new, launch, size) {
            self.mux.close(new);
            return Err(refusal);
        }
        self.relayout(new);
        Ok(new)
    }

    /// The size `pane` gets in its tab's layout.
    fn layout_of(&self, pane: PaneId) -> Option<TermSize> {
        let tab = self.mux.tab_of(pane)?;
        let (rects, _) = tab.layout(self.area());
        let rect = rects.iter().find(|(id, _)| *id == pane).map(|(_, r)| *r)?;
        Some(self.pane_size(rect))
    }

    /// The terminal size of a pane laid out in `rect`: below its title strip.
    fn pane_size(&self, rect: Rect) -> TermSize {
        TermSize::new(rect.cols.max(1), rect.rows.saturating_sub(self.header_rows).max(1))
    }

    fn area(&self) -> Rect {
        Rect::new(0, 0, self.options.area.cols, self.options.area.lines)
    }

    /// Give every pane in the tab of `pane` its rectangle's size.
    fn relayout(&mut self, pane: PaneId) {
        let Some(tab) = self.mux.tab_of(pane) else {
            return;
        };
        let (rects, _) = tab.layout(self.area());
        for (id, rect) in rects {
            let laid_out = self.pane_size(rect);
            if let Some(pane) = self.panes.get_mut(&id) {
                let size = pane.linked_size.unwrap_or(laid_out);
                if pane.size != size && pane.session.resize(size).is_ok() {
                    pane.size = size;
                }
            }
        }
    }

    /// Add `pane`, and have its model tell the attached windows of each change.
    fn adopt(&mut self, pane: PaneId, entry: Pane) {
        #[cfg(unix)]
        self.attached.follow(pane, &entry.session);
        self.panes.insert(pane, entry);
    }

    /// The windows attached to this server.
    #[cfg(unix)]
    pub fn attached(&self) -> &crate::app::attach::Attached {
        &self.attached
    }

    /// Serve a window that said hello on `stream`.
    #[cfg(unix)]
    pub fn attach_window(&mut self, stream: std::os::unix::net::UnixStream) -> std::io::Result<()> {
        let panes = self.panes.iter().map(|(id, pane)| (*id, &pane.session));
        self.attached.attach(stream, panes)
    }

    /// Take `pane` out of the layout and return its session, still running, for closing.
    pub fn take(&mut self, pane: PaneId) -> Option<PaneSession> {
        #[cfg(unix)]
        self.attached.closed(pane);
        #[cfg(unix)]
        self.remote.forget(pane, true);
        let entry = self.panes.remove(&pane)?;
        if let Some(sampler) = &self.sampler {
            sampler.forget(pane.0);
        }
        let heir = self.mux.tab_of(pane).map(|t| t.panes()).unwrap_or_default();
        self.mux.close(pane);
        if let Some(other) = heir.into_iter().find(|p| *p != pane) {
            self.relayout(other);
        }
        Some(entry.session)
    }

    /// Take every pane out, for stopping.
    pub fn take_all(&mut self) -> Vec<PaneSession> {
        #[cfg(unix)]
        self.remote.close_all();
        let panes: Vec<PaneId> = self.mux.all_panes().into_iter().map(|(_, p)| p).collect();
        panes.into_iter().filter_map(|p| self.take(p)).collect()
    }
}

/// The lock a pane opened from `source` inherits, and where it starts, when `source` is locked.
fn inherited_lock(source: &Pane) -> Option<(InheritedLock, Option<PathBuf>)> {
    let inherited =
        split_lock::inherited(source.thread.as_ref()).or_else(|| source.inherited.clone())?;
    let cwd = split_lock::start_dir(&source.session, &inherited.lock);
    Some((inherited, cwd))
}

/// What the pane of a thread that did not start says.
fn not_started(thread: &str, why: &str) -> String {
    format!("paddock: thread \"{thread}\" was not started: {why}\n")
}

/// Where a thread starts: its `cwd`, else (locked) its first writable folder, which is where a
/// locked agent works; else where paddock was started.
fn start_dir(spec: &ThreadSpec) -> Option<PathBuf> {
    spec.cwd.clone().or_else(|| spec.lock.as_ref().and_then(|lock| lock.write.first().cloned()))
}

/// The working directory of a pane's program: the one it reported (OSC 7), else on Linux the
/// one the kernel knows for its process; only if it is a directory that exists.
fn current_dir(session: &PaneSession) -> Option<PathBuf> {
    let reported = {
        let term = session.term();
        term.working_directory().map(PathBuf::from)
    };
    let kernel = || {
        let pid = session.pid()?;
        std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
    };
    reported.or_else(kernel).filter(|dir| dir.is_dir())
}

fn check_cwd(cwd: Option<&PathBuf>) -> Result<(), Refusal> {
    match cwd {
        Some(dir) if !dir.is_dir() => Err(Refusal(
            ErrorCode::Failed,
            format!("cannot start in {}: it is not a directory", dir.display()),
        )),
        _ => Ok(()),
    }
}

/// A tab's name when it runs no named thread: the program's file name.
fn program_name(command: &[String]) -> String {
    let program = command.first().map(String::as_str).unwrap_or("shell");
    program.rsplit('/').next().unwrap_or(program).to_owned()
}

/// The time between pulse samples at `rate` a second (a rate of 0 reads as 1).
fn sample_period(rate: u32) -> std::time::Duration {
    std::time::Duration::from_secs(1) / rate.max(1)
}
