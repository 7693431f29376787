//! One running paddock instance, with or without a window: its workspace, its control socket
//! (and locked panes' endpoints), the panes being closed in the background, and the
//! configuration file it watches. `headless` runs it without a window, `window` with one.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

use super::attach::{FromWindow, WindowHandle};
use super::pane_endpoint::{self, PaneEndpoints};
use super::workspace::{Outcome, Workspace, WorkspaceOptions};
use crate::config::watch::{watch, ConfigWatcher};
use crate::config::{Config, ThreadSpec};
use crate::ctl::attach::{attach_socket, AttachServer};
use crate::ctl::protocol::{Reply, SplitDirection, WindowAction};
use crate::ctl::wire::ToWindow;
use crate::ctl::{instance_socket, prepare_socket_dir, socket_dir, Call, ControlServer, Scope};
use crate::mux::{Axis, PaneId};
use crate::pty::{PaneSession, PaneStatus};
use crate::term::TermSize;
use crate::vault::handed::Handed;

/// How long `--exit-with-child` waits, after the program exits, for the rest of its output.
const OUTPUT_DRAIN: Duration = Duration::from_secs(5);
/// How long a server started for a window (`ServerOptions::for_window`) waits for that window
/// to attach before it ends: it opens its tabs only once it has (and said its size), and with
/// `--exit-with-child` a program that ended waits for it.
const FIRST_WINDOW_WAIT: Duration = Duration::from_secs(10);
/// How long a window that attached may take to say its area before the first tabs open at
/// the server's own: a window says it as soon as its window exists, before its GPU is ready,
/// well within this even on a loaded machine.
#[cfg(unix)]
const AREA_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The first tab's command; empty means the user's shell.
    pub command: Vec<String>,
    pub exit_with_child: bool,
    /// A window that started this server is about to attach: the first tabs open once a
    /// window has, and has said its size (the window starts the server while it opens its
    /// display, and one that cannot open leaves nothing running); with `exit_with_child`, the
    /// server ends only once it has, so the window is told the program's code rather than
    /// finding no server. None within `FIRST_WINDOW_WAIT`: the server ends.
    pub for_window: bool,
    /// The virtual window panes are laid out in.
    pub size: TermSize,
    /// The configuration in force (with `--scrollback` already applied).
    pub config: Config,
    /// The configuration file's problems, when it has some (the defaults are used then).
    pub config_problems: Option<String>,
    /// The configuration file, watched for edits (it need not exist yet).
    pub config_path: Option<PathBuf>,
    /// Where to listen; by default `<socket dir>/<pid>.sock`.
    pub socket: Option<PathBuf>,
    /// Records of servers that died (`lost`): their panes are named in a `lost` tab, and the
    /// configured threads wait for the user instead of starting.
    pub lost: Vec<PathBuf>,
    /// Open nothing at start (a server started for `paddock server --stdio`).
    pub open_nothing: bool,
}

/// One running instance, with or without a window: its workspace, its control socket, and the
/// panes being closed in the background.
pub struct Server {
    workspace: Workspace,
    control: ControlServer,
    /// Where windows attach (beside the control socket).
    attach: AttachServer,
    closing: Vec<JoinHandle<()>>,
    command: Vec<String>,
    lost: Vec<PathBuf>,
    /// The key that restarts a thread, named in the `lost` tab.
    restart_chord: Option<crate::input::Chord>,
    /// The tab naming what died servers lost, while it is open: restarting it starts the
    /// configured threads.
    lost_notice: Option<PaneId>,
    /// This server's own record, kept while it runs (`paddock server`).
    #[cfg(unix)]
    record: Option<super::lost::Keeper>,
    /// The configured threads, opened at launch when no command is given.
    threads: Vec<ThreadSpec>,
    /// The first tab's pane, whose end ends the instance (`--exit-with-child`).
    first: Option<PaneId>,
    exit_with_child: bool,
    /// Until when the program's end waits for the window that started this server
    /// (`ServerOptions::for_window`).
    #[cfg_attr(not(unix), allow(dead_code))]
    first_window_by: Option<std::time::Instant>,
    /// Open nothing at start (`ServerOptions::open_nothing`).
    open_nothing: bool,
    config_path: Option<PathBuf>,
    /// Signals edits of the configuration file while it lives.
    config_watch: Option<(ConfigWatcher, crossbeam_channel::Receiver<()>)>,
}

impl Server {
    /// Listen on the control socket. Signal handling must already be set up (see `signals`).
    /// `wake` is called when a pane parsed output.
    pub fn start(
        options: &ServerOptions,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> anyhow::Result<Server> {
        crate::vault::keep_memory_private();
        let socket = match options.socket.clone() {
            Some(path) => path,
            None => {
                let dir = socket_dir();
                prepare_socket_dir(&dir)?;
                instance_socket(&dir, std::process::id())
            }
        };
        let control = ControlServer::bind(&socket)?;
        let attach = AttachServer::bind(&attach_socket(&socket))
            .context("cannot listen for windows to attach")?;
        if let Some(problems) = &options.config_problems {
            eprintln!("paddock: the configuration has problems; using the defaults:\n{problems}");
        }
        let launcher = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("paddock"));
        let workspace_options = WorkspaceOptions {
            area: options.size,
            scrollback_lines: options.config.scrollback_lines,
            default_command: vec![user_shell()],
            guarded: super::lock::guarded_paths(options.config_path.as_deref(), &launcher),
            launcher,
            socket,
            pulse_rate: options.config.pulse_rate,
            endpoints: Some(PaneEndpoints::new(socket_dir().join("panes"), control.sender())),
            cgroups: crate::cgroup::Tree::set_up().map(Arc::new).inspect_err(|why| {
                eprintln!("paddock: no cgroup per pane ({why}); the pulse counts process trees");
            }),
        };
        let mut workspace = Workspace::new(workspace_options, wake);
        workspace.set_threads(options.config.threads.clone());
        workspace.set_proxy_hosts(options.config.proxy_hosts.clone());
        workspace.set_config_problems(options.config_problems.clone());
        let config_watch = options.config_path.as_deref().and_then(|path| {
            watch(path)
                .inspect_err(|e| {
                    // No configuration folder is the common case of no configuration at all.
                    if path.parent().is_some_and(Path::is_dir) {
                        eprintln!(
                            "paddock: cannot watch {} for changes ({e}); edits apply at the next start",
                            path.display()
                        );
                    }
                })
                .ok()
        });
        Ok(Server {
            workspace,
            control,
            attach,
            closing: Vec::new(),
            command: options.command.clone(),
            lost: options.lost.clone(),
            restart_chord: options.config.keys.chord_of(crate::input::Action::RestartThread),
            lost_notice: None,
            #[cfg(unix)]
            record: None,
            threads: options.config.threads.clone(),
            first: None,
            exit_with_child: options.exit_with_child,
            first_window_by: options
                .for_window
                .then(|| std::time::Instant::now() + FIRST_WINDOW_WAIT),
            open_nothing: options.open_nothing,
            config_path: options.config_path.clone(),
            config_watch,
        })
    }

    /// Open the first tabs (the command given, else the configured threads, else the user's
    /// shell) and print the control socket's path on stdout.
    pub fn open_first_tab(&mut self) -> anyhow::Result<()> {
        if self.open_nothing {
            announce(self.control.path());
            return Ok(());
        }
        if self.tell_lost() && self.command.is_empty() {
            announce(self.control.path());
            return Ok(());
        }
        let first = if self.command.is_empty() && !self.threads.is_empty() {
            let threads = std::mem::take(&mut self.threads);
            let panes: Vec<PaneId> =
                threads.iter().map(|spec| self.workspace.open_thread(spec)).collect();
            panes[0]
        } else {
            self.workspace
                .open_tab(None, self.command.clone())
                .map_err(anyhow::Error::msg)
                .context("cannot start the first pane")?
        };
        self.workspace.focus(first);
        self.first = Some(first);
        announce(self.control.path());
        Ok(())
    }

    pub fn calls(&self) -> &crossbeam_channel::Receiver<Call> {
        self.control.calls()
    }

    /// Where windows attach to this instance.
    pub fn attach_socket(&self) -> &Path {
        self.attach.path()
    }

    /// Windows that said hello on the attach socket, to be served (`attach_window`).
    pub fn windows(&self) -> crossbeam_channel::Receiver<std::os::unix::net::UnixStream> {
        self.attach.windows().clone()
    }

    /// Serve an attached window: every pane's snapshot, then every change.
    pub fn attach_window(&mut self, stream: std::os::unix::net::UnixStream) {
        if let Err(e) = self.workspace.attach_window(stream) {
            eprintln!("paddock: cannot serve a window that attached: {e}");
        }
    }

    /// What the attached windows ask (`window_asked`).
    pub fn window_inputs(&self) -> crossbeam_channel::Receiver<crate::app::attach::FromWindow> {
        self.workspace.attached().inputs().clone()
    }

    /// Carry out what an attached window asks; `Some(code)` when the instance should stop.
    pub fn window_asked(&mut self, asked: FromWindow) -> Option<u8> {
        let FromWindow::Act { from, action, handed } = asked else {
            self.workspace.window_asked(asked);
            return None;
        };
        // Acting is being active, as typing is: the panes take this window's size.
        self.workspace.window_acted(&from);
        match self.act(action, &from, handed) {
            Ok(code) => code,
            Err(why) => {
                from.say(why);
                None
            }
        }
    }

    /// Carry out a window's key binding on the pane it names (focused first, so the server's
    /// focus and `paddock ls` follow the window that acted last).
    fn act(
        &mut self,
        action: WindowAction,
        from: &WindowHandle,
        handed: Option<Handed>,
    ) -> Result<Option<u8>, String> {
        let workspace = &mut self.workspace;
        // A link's own requests: answered to it, the focus left where it is.
        match action {
            WindowAction::OpenThread { request, thread, cols, rows } => {
                let size = TermSize::new(usize::from(cols), usize::from(rows));
                from.tell(&match super::linked::thread_for_link(&thread, handed.as_ref()) {
                    Ok(spec) => {
                        let opened = workspace.open_linked_thread(&spec, size, handed, request);
                        let (pane, withheld) = opened;
                        ToWindow::Opened { request, pane: pane.0, withheld }
                    }
                    Err(reason) => ToWindow::NotOpened { request, reason },
                });
                return Ok(None);
            }
            WindowAction::CloseOpened { request } => {
                return match workspace.opened_for(request) {
                    Some(pane) => Ok(self.close_pane(pane)),
                    None => Ok(None),
                };
            }
            WindowAction::Fingerprint { request, program } => {
                from.tell(&ToWindow::Program {
                    request,
                    found: super::linked::fingerprint(&program),
                });
                return Ok(None);
            }
            WindowAction::SizePane { pane, cols, rows } => {
                let size = TermSize::new(usize::from(cols), usize::from(rows));
                workspace.size_linked_pane(PaneId(pane), size)?;
                return Ok(None);
            }
            _ => {}
        }
        let named = match &action {
            WindowAction::NewTab { from: None } => None,
            WindowAction::NewTab { from: Some(pane) }
            | WindowAction::Split { pane, .. }
            | WindowAction::Close { pane }
            | WindowAction::Focus { pane }
            | WindowAction::Zoom { pane }
            | WindowAction::Divider { pane, .. }
            | WindowAction::Restart { pane }
            | WindowAction::ToggleMute { pane }
            | WindowAction::AllowHost { pane }
            | WindowAction::ApproveProgram { pane } => Some(PaneId(*pane)),
            WindowAction::OpenThread { .. }
            | WindowAction::SizePane { .. }
            | WindowAction::CloseOpened { .. }
            | WindowAction::Fingerprint { .. } => return Ok(None),
        };
        if let Some(pane) = named {
            if workspace.session(pane).is_none() {
                return Err(format!("pane {} is gone", pane.0));
            }
            workspace.focus(pane);
        }
        let pane = named.unwrap_or(PaneId(0));
        match action {
            WindowAction::NewTab { .. } => {
                // Opened from a locked pane, it is locked the same way.
                workspace
                    .open_tab_from(named)
                    .map_err(|why| format!("cannot open a tab: {why}"))?;
            }
            WindowAction::Split { direction, .. } => {
                let axis = match direction {
                    SplitDirection::Right => Axis::Horizontal,
                    SplitDirection::Down => Axis::Vertical,
                };
                workspace
                    .split(pane, axis, Vec::new())
                    .map_err(|why| format!("cannot split the pane: {why}"))?;
            }
            WindowAction::Close { .. } => return Ok(self.close_pane(pane)),
            WindowAction::Focus { .. } => {}
            WindowAction::Zoom { .. } => workspace.toggle_zoom(),
            WindowAction::Divider { index, ratio, .. } => {
                if !ratio.is_finite() {
                    return Err("a divider's place must be a number".into());
                }
                workspace.set_divider_ratio(index, ratio);
            }
            WindowAction::Restart { .. } => self.restart_pane(pane),
            WindowAction::ToggleMute { .. } => {
                workspace.toggle_mute_focused();
            }
            WindowAction::AllowHost { .. } => match workspace.allow_refused_host(pane) {
                Some(host) => from.say(format!("{host} allowed for this pane until it closes")),
                None => return Err("this pane's network refused nothing to allow".into()),
            },
            WindowAction::ApproveProgram { .. } => {
                let done = workspace.approve_changed_program(pane)?;
                from.say(done);
                self.restart_pane(pane);
            }
            // Carried out above.
            WindowAction::OpenThread { .. }
            | WindowAction::SizePane { .. }
            | WindowAction::CloseOpened { .. }
            | WindowAction::Fingerprint { .. } => {}
        }
        Ok(None)
    }

    /// A signal after each edit of the configuration file (never, when it is not watched).
    pub fn config_changes(&self) -> crossbeam_channel::Receiver<()> {
        match &self.config_watch {
            Some((_, changes)) => changes.clone(),
            None => crossbeam_channel::never(),
        }
    }

    /// Read the configuration file again. A good one is in force from now on and returned
    /// (running threads keep going; the ones it defines differently are marked); a broken one
    /// changes nothing, and its problems are told on stderr and by `paddock ls`.
    pub fn reload_config(&mut self) -> Option<Config> {
        let path = self.config_path.as_ref()?;
        match crate::config::load(path) {
            Ok(loaded) => {
                let config = loaded.unwrap_or_default();
                self.workspace.set_threads(config.threads.clone());
                self.workspace.set_proxy_hosts(config.proxy_hosts.clone());
                self.workspace.set_scrollback_lines(config.scrollback_lines);
                self.workspace.set_pulse_rate(config.pulse_rate);
                self.workspace.set_config_problems(None);
                Some(config)
            }
            Err(problems) => {
                let text = problems.to_string();
                eprintln!(
                    "paddock: the configuration has problems; keeping the last good one:\n{text}"
                );
                self.workspace.set_config_problems(Some(text));
                None
            }
        }
    }

    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn workspace_mut(&mut self) -> &mut Workspace {
        &mut self.workspace
    }

    /// Carry out a control request; `Some(code)` when the instance should stop.
    pub fn answer(&mut self, call: Call) -> Option<u8> {
        let first = self.first.filter(|_| self.exit_with_child);
        let (control, attach) = (&self.control, &self.attach);
        let ending = || {
            control.stop_listening();
            attach.stop_listening();
        };
        let code = answer(&mut self.workspace, call, first, &mut self.closing, &ending);
        self.closing.retain(|handle| !handle.is_finished());
        code
    }

    /// Close `pane` (the window's key binding): its grace period runs off this thread, but the
    /// instance's first pane under `--exit-with-child` ends the instance with its program's
    /// exit code, returned here.
    pub fn close_pane(&mut self, pane: PaneId) -> Option<u8> {
        let session = self.workspace.take(pane)?;
        if self.exit_with_child && self.first == Some(pane) {
            self.stop_listening();
            return Some(process_exit_code(session.close()));
        }
        self.retire(session);
        None
    }

    /// Name what died servers lost in a `lost` tab, holding the configured threads back for
    /// the user. Whether there was anything to tell.
    fn tell_lost(&mut self) -> bool {
        #[cfg(unix)]
        {
            use super::lost;
            // Told once: the next start is a first start again. Only a record in the records'
            // folder is taken and removed; any other path given is left alone.
            let mut records = Vec::new();
            for path in std::mem::take(&mut self.lost) {
                if let Some(record) = lost::read(&path).filter(|_| lost::is_kept_record(&path)) {
                    let _ = std::fs::remove_file(&path);
                    records.push(record);
                }
            }
            if records.is_empty() {
                return false;
            }
            let names: Vec<String> = self.threads.iter().map(|t| t.name.clone()).collect();
            let chord = self.restart_chord.map(|c| c.to_string());
            let text = lost::notice(&records, &names, chord.as_deref());
            let notice = self.workspace.open_notice("lost", &text);
            self.workspace.focus(notice);
            self.lost_notice = Some(notice);
            true
        }
        #[cfg(not(unix))]
        false
    }

    /// Keep this server's record of its panes on disk (`lost`), from now on.
    #[cfg(unix)]
    pub fn keep_record(&mut self) {
        let record = match &mut self.record {
            Some(record) => record,
            None => match super::lost::Keeper::new() {
                Some(keeper) => self.record.insert(keeper),
                None => return,
            },
        };
        let mux = self.workspace.mux();
        let panes = mux
            .all_panes()
            .into_iter()
            .filter(|(_, pane)| Some(*pane) != self.lost_notice)
            .filter_map(|(tab, pane)| {
                let tab = mux.tabs().iter().find(|t| t.id == tab)?;
                let command = self.workspace.command_of(pane)?.to_vec();
                let thread = self.workspace.thread_of(pane).map(|t| t.name.clone());
                Some(super::lost::LostPane {
                    id: pane.0,
                    tab: tab.name.clone(),
                    thread: thread.or_else(|| tab.thread.clone()),
                    command,
                })
            })
            .collect();
        record.keep(panes);
    }

    /// The server was asked to stop: its panes are not lost.
    #[cfg(unix)]
    pub fn forget_record(&mut self) {
        if let Some(record) = self.record.take() {
            record.forget();
        }
    }

    /// Start `pane`'s thread again from its current definition (the window's key binding);
    /// why not goes to stderr, as there is nobody to reply to. In the `lost` tab: start the
    /// configured threads.
    pub fn restart_pane(&mut self, pane: PaneId) {
        if self.lost_notice == Some(pane) && !self.threads.is_empty() {
            self.lost_notice = None;
            let threads = std::mem::take(&mut self.threads);
            let panes: Vec<PaneId> =
                threads.iter().map(|spec| self.workspace.open_thread(spec)).collect();
            if let Some(session) = self.workspace.take(pane) {
                self.retire(session);
            }
            if let Some(first) = panes.first() {
                self.workspace.focus(*first);
            }
            return;
        }
        match self.workspace.restart(pane) {
            Ok(old) => self.retire(old),
            Err(why) => eprintln!("paddock: cannot restart pane {}: {why}", pane.0),
        }
    }

    /// Close `session` off this thread; `shut_down` waits for it.
    fn retire(&mut self, session: PaneSession) {
        self.closing.retain(|handle| !handle.is_finished());
        self.closing.push(std::thread::spawn(move || {
            session.close();
        }));
    }

    /// Whether the first tabs of a server started for a window are due: the window has
    /// attached and said the area it lays tabs out in, so that their programs start at the size
    /// they are shown at (no reflow of their first output, no SIGWINCH as they start); or it
    /// attached `AREA_WAIT` ago and has said none.
    #[cfg(unix)]
    pub fn first_window_ready(&self) -> bool {
        let attached = self.workspace.attached();
        attached.ever_sized()
            || attached.first_attached().is_some_and(|at| at.elapsed() >= AREA_WAIT)
    }

    /// Whether the window that started this server has yet to attach (for at most
    /// `FIRST_WINDOW_WAIT`): a program that ended meanwhile leaves the server running until
    /// it has, so the window is told its code.
    #[cfg(unix)]
    pub fn awaits_first_window(&self) -> bool {
        self.first_window_by.is_some_and(|by| {
            std::time::Instant::now() < by && !self.workspace.attached().ever_attached()
        })
    }

    /// With `--exit-with-child`, the first program's exit code once it has ended.
    pub fn first_exit(&mut self) -> Option<u8> {
        match (self.exit_with_child, self.first) {
            (true, Some(first)) => first_exit(&mut self.workspace, first),
            _ => None,
        }
    }

    /// Take no more control connections or windows: an instance still closing its panes is
    /// not found by the next `paddock`, which starts a server of its own rather than asking
    /// this one for a tab.
    pub fn stop_listening(&self) {
        self.control.stop_listening();
        self.attach.stop_listening();
    }

    /// Close every pane (all at once) and wait for panes being closed. `exit_code`: the first
    /// program's, when the instance ends with it (attached windows exit with it too).
    pub fn shut_down(&mut self, exit_code: Option<u8>) {
        shut_down(&mut self.workspace, std::mem::take(&mut self.closing), exit_code);
    }
}

/// Carry out one call; `Some(code)` when the instance should stop. `first` is the pane whose
/// end ends the instance (`--exit-with-child`).
/// `ending` is called when the instance is about to end, before its panes are closed.
fn answer(
    workspace: &mut Workspace,
    call: Call,
    first: Option<PaneId>,
    closing: &mut Vec<JoinHandle<()>>,
    ending: &dyn Fn(),
) -> Option<u8> {
    // A locked pane's endpoint may ask only about its own pane (see `pane_endpoint`).
    let own = match call.scope {
        Scope::Instance => None,
        Scope::Pane(own) => Some(PaneId(own)),
    };
    if let Some(refusal) = own.and_then(|own| pane_endpoint::allowed(own, &call.request).err()) {
        call.answer(refusal.reply());
        return None;
    }
    let request = call.request.clone();
    match workspace.handle(request) {
        Outcome::Reply(mut reply) => {
            if let Some(own) = own {
                pane_endpoint::own_view(own, &mut reply);
            }
            call.answer(reply)
        }
        Outcome::Close(pane, session) if Some(pane) == first => {
            // The instance ends with this pane, with its program's exit code.
            ending();
            let status = session.close();
            let reply = Reply { exit_code: Some(exit_code_of(status)), ..Reply::ok() };
            let code = process_exit_code(status);
            shut_down(workspace, std::mem::take(closing), Some(code));
            call.answer_and_wait(reply);
            return Some(code);
        }
        Outcome::Retire(old, reply) => {
            call.answer(reply);
            closing.push(std::thread::spawn(move || {
                old.close();
            }));
        }
        Outcome::Close(_, session) => {
            // The grace period runs on its own thread; everyone else keeps being answered.
            let handle = std::thread::spawn(move || {
                let status = session.close();
                // The instance may be about to exit (`--exit-with-child`): see the reply out.
                let reply = Reply { exit_code: Some(exit_code_of(status)), ..Reply::ok() };
                call.answer_and_wait(reply);
            });
            closing.push(handle);
        }
        Outcome::Stop => {
            ending();
            shut_down(workspace, std::mem::take(closing), None);
            call.answer_and_wait(Reply::ok());
            return Some(0);
        }
    }
    None
}

/// With `--exit-with-child`: the first program's exit code once it has ended and its output has
/// been read to the end (or the pane is gone).
fn first_exit(workspace: &mut Workspace, first: PaneId) -> Option<u8> {
    // A closed first pane ends the instance where it is closed (see `answer`).
    let session = workspace.session_mut(first)?;
    match session.status() {
        PaneStatus::Running => None,
        status @ (PaneStatus::Exited(_) | PaneStatus::NoProgram) => {
            // A process that left the group may hold the PTY open: wait only so long.
            session.wait_output_end(OUTPUT_DRAIN);
            Some(process_exit_code(status))
        }
    }
}

/// The instance's exit code for its first program's end: the program's own, or 1 when a signal
/// ended it (or the code does not fit a process exit code).
fn process_exit_code(status: PaneStatus) -> u8 {
    match status {
        PaneStatus::Exited(Some(code)) => u8::try_from(code).unwrap_or(1),
        PaneStatus::Exited(None) | PaneStatus::Running | PaneStatus::NoProgram => 1,
    }
}

fn exit_code_of(status: PaneStatus) -> Option<i32> {
    match status {
        PaneStatus::Exited(code) => code,
        PaneStatus::Running | PaneStatus::NoProgram => None,
    }
}

/// Close every pane at once (each grace period overlaps the others) and wait for them.
fn shut_down(workspace: &mut Workspace, closing: Vec<JoinHandle<()>>, exit_code: Option<u8>) {
    #[cfg(unix)]
    workspace.farewell_windows(exit_code);
    #[cfg(not(unix))]
    let _ = exit_code;
    let sessions: Vec<PaneSession> = workspace.take_all();
    std::thread::scope(|scope| {
        for session in sessions {
            scope.spawn(move || session.close());
        }
    });
    for handle in closing {
        let _ = handle.join();
    }
}

fn announce(socket: &std::path::Path) {
    let mut stdout = std::io::stdout().lock();
    // Whoever started us may not be reading; the instance runs on regardless.
    let _ = writeln!(stdout, "{}", socket.display()).and_then(|()| stdout.flush());
}

fn user_shell() -> String {
    std::env::var("SHELL").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "/bin/sh".into())
}
