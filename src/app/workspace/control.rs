//! The control protocol's requests, carried out on the workspace: what `paddock ctl` and
//! `paddock ls` ask for.

use std::path::PathBuf;

use crate::ctl::protocol::{
    BrokeredInfo, ErrorCode, InstanceInfo, LockInfo, NetInfo, PaneInfo, PaneState, Reply, Request,
    SplitDirection,
};
use crate::input::{encode_key, parse_keys, InputModes};
use crate::mux::{Axis, PaneId};
use crate::pty::{PaneSession, PaneStatus};
use crate::term::{Modes, TermSize, MAX_DIMENSION};

use super::{Refusal, Workspace};
use crate::app::pulse;

/// What a request did, beyond its reply.
pub enum Outcome {
    Reply(Reply),
    /// The pane is out of the layout; close its session (off the answering thread) and reply
    /// with how it ended.
    Close(PaneId, PaneSession),
    /// Stop the instance.
    Stop,
    /// The pane runs a new session; close its old one (off the answering thread), then reply.
    Retire(PaneSession, Reply),
}

impl Workspace {
    /// Carry out one control request.
    pub fn handle(&mut self, request: Request) -> Outcome {
        let before = self.mux.focused_pane();
        let outcome = self.handle_request(request);
        // Attached windows keep their own focus, but take one a request moved.
        if self.mux.focused_pane() != before {
            self.focus_moves += 1;
        }
        outcome
    }

    fn handle_request(&mut self, request: Request) -> Outcome {
        let result = match request {
            Request::Stop => return Outcome::Stop,
            Request::Close { pane } => return self.close(PaneId(pane)),
            Request::Ls => Ok(Reply { instance: Some(self.describe()), ..Reply::ok() }),
            Request::New { thread: Some(name), cwd, command } => self
                .open_configured(&name, cwd, command)
                .map(|pane| Reply { pane: Some(pane.0), ..Reply::ok() }),
            Request::New { thread: None, cwd, command } => self
                .open_tab_inner(cwd, command)
                .map(|pane| Reply { pane: Some(pane.0), ..Reply::ok() }),
            Request::Split { pane, direction, command } => {
                let axis = match direction {
                    SplitDirection::Right => Axis::Horizontal,
                    SplitDirection::Down => Axis::Vertical,
                };
                self.split(PaneId(pane), axis, command)
                    .map(|new| Reply { pane: Some(new.0), ..Reply::ok() })
            }
            Request::Send { pane, text, keys } => {
                self.send(PaneId(pane), text, keys).map(|()| Reply::ok())
            }
            Request::Capture { pane, scrollback } => self.capture(PaneId(pane), scrollback),
            Request::Focus { pane } => match self.mux.focus(PaneId(pane)) {
                true => Ok(Reply::ok()),
                false => Err(Refusal::no_pane(PaneId(pane))),
            },
            Request::Kill { pane } => self.pane_mut(PaneId(pane)).map(|p| {
                p.session.kill();
                Reply::ok()
            }),
            Request::Resize { pane, cols, rows } => self.resize(PaneId(pane), cols, rows),
            Request::Notify { pane, text } => self.pane_mut(PaneId(pane)).and_then(|p| {
                let activity = p.session.activity().ok_or_else(|| {
                    Refusal(ErrorCode::Failed, format!("pane {pane} runs no program"))
                })?;
                // A program's words, shown wherever paddock shows a reason: no control or
                // reordering characters, and none of the pane's secrets.
                let text = p.session.term().redact(crate::sandbox::visible(&text));
                activity.notify(&text);
                Ok(Reply::ok())
            }),
            Request::Mute { pane } => self.set_muted(PaneId(pane), true).map(|()| Reply::ok()),
            #[cfg(unix)]
            Request::Reconnect { host } => self.reconnect_host(&host).map(|()| Reply::ok()),
            #[cfg(not(unix))]
            Request::Reconnect { host } => Err(Refusal(
                ErrorCode::Failed,
                format!("no thread runs on {host}: threads on other hosts need a Unix system"),
            )),
            Request::Unmute { pane } => self.set_muted(PaneId(pane), false).map(|()| Reply::ok()),
            Request::NextWaiting => match self.focus_longest_waiting() {
                Some(pane) => Ok(Reply { pane: Some(pane.0), ..Reply::ok() }),
                None => Err(Refusal(ErrorCode::NoSuchPane, "no pane waits for its user".into())),
            },
            Request::Restart { pane } => match self.restart(PaneId(pane)) {
                Ok(old) => return Outcome::Retire(old, Reply::ok()),
                Err(refusal) => Err(refusal),
            },
        };
        Outcome::Reply(result.unwrap_or_else(|Refusal(code, message)| Reply::error(code, message)))
    }

    /// `ctl new --thread NAME`: open the configured thread of that name as at launch (its
    /// command, cwd, env, lock, secrets and place), or say which names there are.
    fn open_configured(
        &mut self,
        name: &str,
        cwd: Option<PathBuf>,
        command: Vec<String>,
    ) -> Result<PaneId, Refusal> {
        let Some(spec) = self.threads.iter().find(|t| t.name == name).cloned() else {
            let names: Vec<String> = self.threads.iter().map(|t| format!("{:?}", t.name)).collect();
            let known = match names.is_empty() {
                true => "the configuration has no threads".to_owned(),
                false => format!("the configured threads are {}", names.join(", ")),
            };
            return Err(Refusal(
                ErrorCode::BadRequest,
                format!("no thread named {name:?}: {known}"),
            ));
        };
        if cwd.is_some() || !command.is_empty() {
            return Err(Refusal(
                ErrorCode::BadRequest,
                format!(
                    "thread {name:?} opens as configured: leave out --cwd and the command (or \
                     leave out --thread for a plain tab)"
                ),
            ));
        }
        Ok(self.open_thread(&spec))
    }

    fn send(
        &mut self,
        pane: PaneId,
        text: Option<String>,
        keys: Option<String>,
    ) -> Result<(), Refusal> {
        let pane = self.pane_mut(pane)?;
        let bytes = match (text, keys) {
            (Some(text), _) => text.into_bytes(),
            (None, Some(keys)) => {
                let presses =
                    parse_keys(&keys).map_err(|e| Refusal(ErrorCode::BadRequest, e.to_string()))?;
                let modes = input_modes(&pane.session);
                presses.into_iter().flat_map(|(key, mods)| encode_key(key, mods, modes)).collect()
            }
            (None, None) => Vec::new(),
        };
        pane.session.send(bytes).map_err(|e| Refusal(ErrorCode::Failed, e.to_string()))
    }

    /// `from` acted: it is the active window now, and the panes take its size.
    #[cfg(unix)]
    pub fn window_acted(&mut self, from: &crate::app::attach::WindowHandle) {
        if let Some(area) = self.attached.typed(from) {
            self.set_area(area);
        }
    }

    /// Carry out what an attached window asks: its input for a pane (it becomes the active
    /// window, whose area the panes take), its area, scrollback rows its replica lacks. A pane
    /// gone meanwhile is no one's.
    #[cfg(unix)]
    pub fn window_asked(&mut self, asked: crate::app::attach::FromWindow) {
        use crate::app::attach::FromWindow;
        match asked {
            // The server carries out actions (closing a pane hands its session to it).
            FromWindow::Act { from, .. } => self.window_acted(&from),
            FromWindow::Input { from, pane, bytes } => {
                if let Some(area) = self.attached.typed(&from) {
                    self.set_area(area);
                }
                if let Some(entry) = self.panes.get(&pane) {
                    let _ = entry.session.send(bytes);
                }
            }
            FromWindow::Area { from, size } => {
                // A window draws a title strip above each pane, and the configuration's
                // problems in a tab.
                if self.header_rows() == 0 {
                    self.set_header_rows(1);
                    self.refresh_config_notice();
                }
                if let Some(area) = self.attached.sized(&from, size) {
                    self.set_area(area);
                }
            }
            FromWindow::Scrollback { from, pane, before, count } => {
                let session = self.panes.get(&pane).map(|entry| &entry.session);
                self.attached.send_rows(&from, pane, session, before, count);
            }
            FromWindow::CaughtUp { from } => {
                self.attached.catch_up(Some(&from), models(&self.panes));
            }
        }
    }

    fn capture(&mut self, pane: PaneId, scrollback: bool) -> Result<Reply, Refusal> {
        let pane = self.pane_mut(pane)?;
        let term = pane.session.term();
        let mut text = if scrollback { term.scrollback_text() } else { String::new() };
        text.push_str(&term.screen_text());
        Ok(Reply { text: Some(text), ..Reply::ok() })
    }

    fn resize(&mut self, pane: PaneId, cols: usize, rows: usize) -> Result<Reply, Refusal> {
        let valid = 1..=MAX_DIMENSION;
        if !valid.contains(&cols) || !valid.contains(&rows) {
            return Err(Refusal(
                ErrorCode::BadRequest,
                format!("size {cols}x{rows} is out of range: columns and rows must be 1 to {MAX_DIMENSION}"),
            ));
        }
        let pane = self.pane_mut(pane)?;
        let size = TermSize::new(cols, rows);
        pane.session.resize(size).map_err(|e| Refusal(ErrorCode::Failed, e.to_string()))?;
        pane.size = size;
        Ok(Reply::ok())
    }

    fn close(&mut self, pane: PaneId) -> Outcome {
        match self.take(pane) {
            Some(session) => Outcome::Close(pane, session),
            None => Outcome::Reply(Reply::error(ErrorCode::NoSuchPane, Refusal::no_pane(pane).1)),
        }
    }

    /// The server stops: the attached windows are sent what they are owed, then let go.
    #[cfg(unix)]
    pub fn farewell_windows(&mut self, exit_code: Option<u8>) {
        if exit_code.is_some() && self.attached.any() {
            let view = self.window_view(exit_code);
            self.attached.show(&view);
        }
        self.attached.farewell(models(&self.panes));
    }

    /// Tell the attached windows of the tabs, splits and panes as they are now (when any is
    /// attached, and only what changed reaches them).
    #[cfg(unix)]
    pub fn sync_windows(&mut self) {
        if self.attached.any() {
            self.attached.catch_up(None, models(&self.panes));
            let view = self.window_view(None);
            self.attached.show(&view);
        }
    }

    /// What an attached window draws besides the panes' screens.
    #[cfg(unix)]
    fn window_view(&mut self, exit_code: Option<u8>) -> crate::ctl::protocol::WindowView {
        let looks = self
            .mux
            .all_panes()
            .into_iter()
            .filter_map(|(_, pane)| {
                // Plain data: serializing cannot fail.
                Some((pane.0, serde_json::to_value(self.look_of(pane)?).ok()?))
            })
            .collect();
        crate::ctl::protocol::WindowView {
            layout: self.mux.layout_info(),
            instance: self.describe(),
            looks,
            focus_moves: self.focus_moves,
            exit_code,
        }
    }

    /// This instance and its panes, as `paddock ls` shows them.
    pub fn describe(&mut self) -> InstanceInfo {
        self.check_ended_locks();
        let focused = self.mux.focused_pane();
        let snapshot = self.pulses();
        let mut panes = Vec::new();
        for (tab_id, id) in self.mux.all_panes() {
            let tab = self.mux.tabs().iter().find(|t| t.id == tab_id);
            let (tab_name, tab_thread) = match tab {
                Some(tab) => (tab.name.clone(), tab.thread.clone()),
                None => continue,
            };
            let config_changed = self.config_changed(id);
            let lock_widening = self.lock_widening(id);
            let brokered = self.panes.get(&id).map(|p| self.brokered_info(p)).unwrap_or_default();
            let Some(pane) = self.panes.get_mut(&id) else {
                continue;
            };
            // A split opened for a configured thread is that thread's, not its tab's.
            let thread = pane.thread.as_ref().map(|t| t.name.clone()).or(tab_thread);
            let pane_status = pane.session.status();
            let (status, exit_code) = match pane_status {
                PaneStatus::Running => (PaneState::Running, None),
                PaneStatus::Exited(code) => (PaneState::Exited, code),
                PaneStatus::NoProgram => (PaneState::NoProgram, None),
            };
            let title = {
                let term = pane.session.term();
                term.title().map(str::to_owned)
            };
            panes.push(PaneInfo {
                id: id.0,
                tab: tab_name,
                thread,
                command: pane.command.clone(),
                pid: pane.session.pid(),
                cols: pane.size.cols,
                rows: pane.size.lines,
                status,
                exit_code,
                focused: focused == Some(id),
                title,
                config_changed,
                lock_widening,
                lock: Some(LockInfo {
                    level: pane.lock.level().into(),
                    detail: pane.lock.detail(),
                    env_passed: pane.env_passed.clone(),
                    git_planted: pane
                        .git_watch
                        .as_ref()
                        .map(|w| w.findings().to_vec())
                        .unwrap_or_default(),
                }),
                secrets: pane.secrets.as_ref().map(|s| s.names.clone()).unwrap_or_default(),
                brokered,
                pulse: pulse::info(snapshot.as_deref(), id, pane_status, pane.muted),
                net: net_info(pane),
                host: None,
            });
            #[cfg(unix)]
            if let (Some(shown), Some((host, info, down))) =
                (panes.last_mut(), self.remote_info(id))
            {
                shown.host = Some(host);
                shown.pid = None;
                if down && shown.status == PaneState::Running {
                    shown.status = PaneState::Disconnected;
                }
                if let Some(info) = info {
                    // The host's words, shown here: nothing in them may drive a terminal.
                    let visible = |text: &str| crate::sandbox::visible(text);
                    shown.lock = info.lock.map(|mut lock| {
                        lock.level = visible(&lock.level);
                        lock.detail = visible(&lock.detail);
                        lock
                    });
                    shown.pulse = info.pulse;
                    shown.secrets = info.secrets.iter().map(|name| visible(name)).collect();
                    shown.title = info.title.as_deref().map(visible);
                    shown.command = info.command.iter().map(|word| visible(word)).collect();
                }
            }
            // A remote thread whose host could not be reached, or did not open it, still
            // belongs to that host.
            let remote = self.panes.get(&id).and_then(|p| p.thread.as_ref()?.remote.as_ref());
            if let (Some(shown), Some(remote)) = (panes.last_mut(), remote) {
                shown.host.get_or_insert_with(|| remote.host.name.clone());
            }
        }
        InstanceInfo {
            pid: std::process::id(),
            socket: self.options.socket.clone(),
            panes,
            config_problems: self.config_problems.clone(),
            cgroups: self.cgroups_described(),
            #[cfg(unix)]
            windows: self.attached().describe(),
            #[cfg(not(unix))]
            windows: Vec::new(),
        }
    }
}

impl Workspace {
    /// A pane's brokered secrets, each with its standing now.
    #[cfg(unix)]
    fn brokered_info(&self, pane: &super::Pane) -> Vec<BrokeredInfo> {
        let Some(broker) = self.broker.as_ref() else { return Vec::new() };
        let info = |(name, generation): &(String, u64)| BrokeredInfo {
            name: name.clone(),
            state: broker.standing(name, *generation).word().to_owned(),
        };
        pane.brokered.iter().map(info).collect()
    }

    #[cfg(not(unix))]
    fn brokered_info(&self, _pane: &super::Pane) -> Vec<BrokeredInfo> {
        Vec::new()
    }
}

fn input_modes(session: &PaneSession) -> InputModes {
    let term = session.term();
    InputModes { app_cursor: term.modes().flags.contains(Modes::APP_CURSOR) }
}

/// What a locked pane's network reaches, and its proxy's counts.
fn net_info(pane: &super::Pane) -> Option<NetInfo> {
    use crate::config::Network;
    use crate::sandbox::Enforcement;
    if !matches!(pane.lock, Enforcement::Locked { .. } | Enforcement::Degraded(_)) {
        return None;
    }
    let own = pane.thread.as_ref().and_then(|t| t.lock.as_ref());
    let network = &own.or(pane.inherited.as_ref().map(|i| &i.lock))?.network;
    let mode = match network {
        Network::Off => "off",
        Network::On => "on",
        Network::Allow(_) => "allow",
    };
    #[cfg(unix)]
    let stats = pane.egress.as_ref().map(|e| e.stats()).unwrap_or_default();
    #[cfg(unix)]
    let (allowed, denied, last_denied) = (stats.allowed, stats.denied, stats.last_denied);
    #[cfg(not(unix))]
    let (allowed, denied, last_denied) = (0, 0, None);
    Some(NetInfo { mode: mode.into(), allowed, denied, last_denied })
}

/// Each pane's model by id, for the attached windows' snapshots.
#[cfg(unix)]
fn models<'a>(
    panes: &'a std::collections::HashMap<PaneId, super::Pane>,
) -> impl Fn(PaneId) -> Option<&'a std::sync::Mutex<crate::term::Terminal>> {
    |pane| panes.get(&pane).map(|entry| &**entry.session.terminal())
}
