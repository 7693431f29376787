//! Starting a pane's program: its environment, secrets, lock, endpoint and git snapshot put
//! together into a `SpawnSpec`, and what the pane holds once it runs (or why it does not).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{not_started, Launch, Pane, Refusal, Workspace};
#[cfg(unix)]
use crate::app::broker::InstanceBroker;
#[cfg(unix)]
use crate::app::egress::{PaneEgress, PORT as PROXY_PORT};
use crate::app::git_watch::GitWatch;
use crate::app::pane_endpoint::Endpoint;
use crate::app::pulse;
use crate::app::secrets::{self, Granted, PaneSecrets};
use crate::config::{LockPolicy, Network, ThreadSpec};
use crate::ctl::protocol::ErrorCode;
use crate::mux::PaneId;
use crate::pty::{CgroupJoin, Locked, PaneLock, PaneSession, PtyError, SpawnSpec};
use crate::pulse::Activity;
use crate::sandbox::{EgressRoute, Enforcement, Policy};
use crate::term::TermSize;
use crate::vault::release::Brokered;

impl Workspace {
    /// Start `launch` in `pane` at `size`. A lock that cannot be enforced leaves the pane
    /// showing why (it never runs unlocked); anything else that fails is the refusal.
    pub(super) fn start(
        &mut self,
        pane: PaneId,
        mut launch: Launch,
        size: TermSize,
    ) -> Result<(), Refusal> {
        // A thread of another host never runs here: its definition is that host's to check,
        // and nothing of it (not even the shell an empty command means) starts on this one.
        if let Some(remote) = launch.thread.as_ref().and_then(|t| t.remote.as_ref()) {
            let message = format!("this thread runs on {}, not here", remote.host.destination);
            return Err(Refusal(ErrorCode::Failed, message));
        }
        // A thread's own worktree, made or found first: it is the thread's working folder and,
        // locked, a writable folder of its lock.
        let worktree = match launch.thread.as_ref().and_then(|t| t.worktree.as_ref()) {
            Some(wanted) => match crate::app::worktree::ensure(wanted, &self.worktree_git()) {
                Ok(folder) => {
                    launch.cwd = Some(folder.clone());
                    Some(folder)
                }
                Err(why) => return Err(Refusal(ErrorCode::Failed, why)),
            },
            None => None,
        };
        let mut env = vec![("PADDOCK_SOCKET".into(), self.options.socket.display().to_string())];
        let thread = launch.thread.as_ref();
        if let Some(thread) = thread {
            env.push(("PADDOCK_THREAD".into(), thread.name.clone()));
            env.extend(thread.env.iter().cloned());
        }
        let granted = match thread {
            Some(thread) => {
                let values = match &launch.handed {
                    Some(handed) => secrets::Values::Handed(handed),
                    None => secrets::Values::Vault(&mut self.vault),
                };
                let cwd = launch.cwd.as_deref();
                secrets::grant(values, thread, &launch.command, cwd, pane)
                    .map_err(|why| Refusal(ErrorCode::Failed, why))?
            }
            None => Granted::default(),
        };
        let Granted {
            env: secret_env,
            names: secret_names,
            masked,
            brokered,
            notice,
            records,
            pinned_sha256,
            changed,
            withheld,
        } = granted;
        // A pinned secret's program runs through paddock's exec step, which checks the file it
        // runs against the approved hash (inside the lock, for a locked pane).
        let argv = match &pinned_sha256 {
            #[cfg(unix)]
            Some(sha256) => {
                let mut argv = vec![
                    self.options.launcher.display().to_string(),
                    crate::vault::pin_exec::PIN_EXEC_VERB.to_owned(),
                    sha256.clone(),
                    "--".to_owned(),
                ];
                argv.extend(launch.command.iter().cloned());
                argv
            }
            _ => launch.command.clone(),
        };
        // The thread's lock (with its worktree), or the one of the pane this one was split from.
        let own_lock = thread.and_then(|t| t.lock.clone()).map(|mut lock| {
            lock.write.extend(worktree.clone().filter(|w| !lock.write.contains(w)));
            lock
        });
        let own = own_lock.as_ref().zip(thread).map(|(lock, t)| (lock, t.env_pass.as_slice()));
        let split = launch.inherited.as_ref().map(|i| (&i.lock, i.env_pass.as_slice()));
        // A locked program's environment is built from an allow-list (`sandbox::env`).
        let lock = own.or(split).map(|(lock, env_pass)| {
            (lock, crate::sandbox::env::build(std::env::vars_os(), env_pass))
        });
        let env_names = lock.as_ref().map(|(_, built)| built.names.clone());
        // Whose home a locked pane gets, and the PATH its toolchains are found on.
        let home_thread = thread
            .map(|t| t.name.clone())
            .or_else(|| launch.inherited.as_ref().map(|i| i.thread.clone()));
        let path_var = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v.into());
        let path_var: Option<std::ffi::OsString> = path_var.or_else(|| std::env::var_os("PATH"));
        // Before the program runs: what git would find in its writable folders.
        let git_watch = lock.as_ref().map(|(lock, _)| GitWatch::start(lock));
        let endpoint = self.open_endpoint(pane, lock.is_some())?;
        let endpoint_path = endpoint.as_ref().map(|(_, path)| path.clone());
        if let Some(path) = &endpoint_path {
            env[0].1 = path.display().to_string();
        }
        let network = lock.as_ref().map(|(lock, _)| &lock.network);
        let activity = self.sampler.as_ref().map(|s| Arc::new(Activity::new(s.epoch())));
        // Brokered secrets: the pane's proxy puts their values in; its programs trust the
        // broker's authority.
        let program = launch.command.first().cloned();
        #[cfg(unix)]
        let brokered_names: Vec<(String, u64)> =
            brokered.iter().map(|b| (b.name.clone(), b.generation)).collect();
        let (broker, bundle) =
            self.broker_for(pane, brokered, network, thread, activity.clone(), program, &mut env)?;
        let (egress, route) = self.egress_for(pane, network, thread, &mut env, broker)?;
        #[cfg(not(unix))]
        let () = egress;
        let spec = SpawnSpec {
            argv,
            strip_loader_env: pinned_sha256.is_some(),
            cwd: launch.cwd.clone(),
            env,
            pane: pane.0,
            size,
            scrollback_lines: self.options.scrollback_lines,
            lock: match (lock, thread) {
                (Some((lock, built)), _) => PaneLock::Locked(Box::new(Locked {
                    policy: self.pane_policy(
                        lock,
                        endpoint_path.as_deref(),
                        route,
                        bundle,
                        home_thread.as_deref().map(|name| (name, path_var.as_deref())),
                    )?,
                    launcher: self.options.launcher.clone(),
                    inherited_env: built.vars,
                })),
                (None, Some(ThreadSpec { unlocked: true, .. })) => PaneLock::Unlocked,
                _ => PaneLock::None,
            },
            secrets: secret_env,
            masked,
            notice,
            activity,
            cgroup: self.pane_cgroup(pane, thread),
        };
        let Launch { command, cwd, thread, inherited, handed } = launch;
        let started = self.spawn(pane, spec, thread.as_ref());
        let why_not = match &started {
            Ok((_, Enforcement::Refused(why))) => {
                Some(format!("its lock cannot be enforced: {why}"))
            }
            Ok(_) => None,
            Err(Refusal(_, why)) => Some(why.clone()),
        };
        secrets::record_start(self.vault.as_ref(), records, why_not.as_deref());
        let (session, lock) = started?;
        // Handed values are recorded by the paddock that handed them, never on this host.
        let audit_state = match &handed {
            Some(_) => None,
            None => self.vault.as_ref().map(|v| v.state().to_owned()),
        };
        let secrets = (!secret_names.is_empty()).then(|| PaneSecrets {
            names: secret_names,
            thread: thread.as_ref().map(|t| t.name.clone()),
            pane,
            program: command.first().cloned(),
            counts: session.mask_counts(),
            state: audit_state,
            host: None,
        });
        let ran_locked = matches!(lock, Enforcement::Locked { .. } | Enforcement::Degraded(_));
        let env_passed = env_names.filter(|_| ran_locked);
        let endpoint = endpoint.map(|(server, _)| server);
        let entry = Pane {
            session,
            command,
            cwd,
            size,
            thread,
            lock,
            env_passed,
            inherited,
            secrets,
            changed,
            endpoint,
            git_watch,
            #[cfg(unix)]
            egress,
            #[cfg(unix)]
            brokered: brokered_names,
            muted: false,
            linked_size: None,
            handed,
            withheld,
            opened_for: None,
        };
        self.adopt(pane, entry);
        Ok(())
    }

    /// The git that makes a thread's worktree, in a lock of its own.
    fn worktree_git(&self) -> crate::app::worktree_git::LockedGit<'_> {
        crate::app::worktree_git::LockedGit {
            launcher: &self.options.launcher,
            guarded: &self.options.guarded,
            socket: &self.options.socket,
        }
    }

    /// A locked program talks to its own endpoint, never to the instance's socket: open it
    /// (none for an unlocked pane, or where locks cannot let one through yet).
    fn open_endpoint(
        &mut self,
        pane: PaneId,
        locked: bool,
    ) -> Result<Option<(Endpoint, PathBuf)>, Refusal> {
        let Some(endpoints) = self.options.endpoints.as_ref().filter(|_| locked) else {
            return Ok(None);
        };
        self.endpoints_opened += 1;
        endpoints.open(pane, self.endpoints_opened).map_err(|why| {
            Refusal(ErrorCode::Failed, format!("cannot open the pane's endpoint: {why}"))
        })
    }

    /// Run `spec`, watched by the pulse; a lock the kernel cannot enforce gives a pane that
    /// says why its thread did not start, and shows the refusal.
    fn spawn(
        &self,
        pane: PaneId,
        spec: SpawnSpec,
        thread: Option<&ThreadSpec>,
    ) -> Result<(PaneSession, Enforcement), Refusal> {
        let (size, activity) = (spec.size, spec.activity.clone());
        match PaneSession::spawn(spec, self.wake.clone()) {
            Ok(session) => {
                if let Some((sampler, activity)) = self.sampler.as_ref().zip(activity) {
                    sampler.watch(pulse::watch(pane, activity, &session, thread));
                }
                let lock = session.enforcement();
                Ok((session, lock))
            }
            Err(PtyError::LockRefused(why)) => {
                let name = thread.map_or("", |t| t.name.as_str());
                let why_not =
                    format!("its folder lock cannot be enforced: {why}. It never runs unlocked.");
                let text = not_started(name, &why_not);
                let session = PaneSession::notice(&text, size, self.options.scrollback_lines);
                Ok((session, Enforcement::Refused(why)))
            }
            Err(e) => Err(Refusal(ErrorCode::Failed, e.to_string())),
        }
    }

    /// A cgroup of the pane's own, for its program to join through paddock itself (none where
    /// the instance has no cgroups, or this one cannot be made: then its process tree counts).
    fn pane_cgroup(&self, pane: PaneId, thread: Option<&ThreadSpec>) -> Option<CgroupJoin> {
        let tree = self.options.cgroups.as_ref().ok()?;
        let limits = thread.map(|t| t.limits).unwrap_or_default();
        let limits = crate::cgroup::Limits { memory_bytes: limits.memory_bytes, cpus: limits.cpus };
        let cgroup = tree
            .pane(pane.0, limits)
            .inspect_err(|why| {
                eprintln!("paddock: pane {} has no cgroup of its own: {why}", pane.0)
            })
            .ok()?;
        Some(CgroupJoin { cgroup: Arc::new(cgroup), paddock: self.options.launcher.clone() })
    }

    /// What the kernel is asked to enforce for a pane under `lock`: the lock, paddock's own
    /// files guarded, its control sockets kept out, the pane's own endpoint let through, its
    /// proxy's route, and for a thread's pane (`home`: the thread and the pane's PATH) the
    /// thread's own home and the default read list (`lock::with_home`).
    fn pane_policy(
        &self,
        lock: &LockPolicy,
        endpoint: Option<&Path>,
        egress: Option<EgressRoute>,
        bundle: Option<PathBuf>,
        home: Option<(&str, Option<&std::ffi::OsStr>)>,
    ) -> Result<Policy, Refusal> {
        let mut policy = Policy {
            control_sockets: crate::app::lock::exposed_control_sockets(&self.options.socket),
            control_folders: crate::app::lock::control_folders(),
            session_folders: crate::sandbox::policy::session_folders(),
            ..crate::app::lock::policy_for(lock, &self.options.guarded)
        };
        policy.unix_sockets.extend(endpoint.map(Path::to_owned));
        policy.own_endpoint = endpoint.map(Path::to_owned);
        policy.egress = egress;
        policy.read.extend(bundle);
        match home {
            Some((thread, path_var)) => crate::app::lock::with_home(policy, thread, path_var)
                .map_err(|why| Refusal(ErrorCode::Failed, why)),
            None => Ok(policy),
        }
    }

    /// With brokered secrets: the pane's broker (the instance's started on first need), the
    /// variables that point its programs at the broker's bundle (added to `env`), and the
    /// bundle, which its lock shows. Refused without a network allow-list: the broker is the
    /// allow-list's proxy, and any other network would let a program go around it.
    #[cfg(unix)]
    #[allow(clippy::too_many_arguments)]
    fn broker_for(
        &mut self,
        pane: PaneId,
        brokered: Vec<Brokered>,
        network: Option<&Network>,
        thread: Option<&ThreadSpec>,
        activity: Option<Arc<Activity>>,
        program: Option<String>,
        env: &mut Vec<(String, String)>,
    ) -> Result<(Option<Arc<crate::egress::broker::PaneBroker>>, Option<PathBuf>), Refusal> {
        let Some(first) = brokered.first() else { return Ok((None, None)) };
        let failed = |why: String| Refusal(ErrorCode::Failed, why);
        if !matches!(network, Some(Network::Allow(_))) {
            return Err(failed(format!(
                "secret \"{}\" is brokered, which needs the pane locked with `network: \
                 Allow([...])` listing its hosts: the broker is that lock's proxy",
                first.name
            )));
        }
        if self.broker.is_none() {
            let folder =
                dirs::data_dir().map(|dir| dir.join("paddock").join("broker")).ok_or_else(
                    || failed("paddock has no data folder here (no home folder?)".into()),
                )?;
            // A linked thread's values were handed over the link and the vault here is never
            // opened for it: the broker's standings and records are this host's state folder's.
            let state = self.vault.as_ref().map(|v| v.state().to_owned());
            let state = state.or_else(crate::vault::state_folder);
            let state = state.ok_or_else(|| failed("paddock has no state folder here".into()))?;
            self.broker = Some(InstanceBroker::start(&folder, &state).map_err(failed)?);
        }
        let Some(broker) = self.broker.as_ref() else { return Ok((None, None)) };
        env.extend(broker.env());
        let thread = thread.map(|t| t.name.clone());
        let pane_broker = broker.for_pane(brokered, activity, pane.0, thread, program);
        Ok((Some(pane_broker), Some(broker.bundle().to_owned())))
    }

    /// Brokered secrets need a network allow-list, which this platform does not enforce yet.
    #[cfg(not(unix))]
    #[allow(clippy::too_many_arguments)]
    fn broker_for(
        &mut self,
        _pane: PaneId,
        brokered: Vec<Brokered>,
        _network: Option<&Network>,
        _thread: Option<&ThreadSpec>,
        _activity: Option<Arc<Activity>>,
        _program: Option<String>,
        _env: &mut Vec<(String, String)>,
    ) -> Result<((), Option<PathBuf>), Refusal> {
        match brokered.first() {
            Some(first) => Err(Refusal(
                ErrorCode::Failed,
                format!(
                    "secret \"{}\" is brokered, which needs a network allow-list: not enforced \
                     on this platform yet",
                    first.name
                ),
            )),
            None => Ok(((), None)),
        }
    }

    /// With a network allow-list: the pane's proxy, the variables that lead its programs
    /// there (added to `env`), and the route its lock is given to it.
    #[cfg(unix)]
    fn egress_for(
        &mut self,
        pane: PaneId,
        network: Option<&Network>,
        thread: Option<&ThreadSpec>,
        env: &mut Vec<(String, String)>,
        broker: Option<Arc<crate::egress::broker::PaneBroker>>,
    ) -> Result<(Option<PaneEgress>, Option<EgressRoute>), Refusal> {
        let Some(Network::Allow(rules)) = network else { return Ok((None, None)) };
        let egress = self.open_egress(pane, rules, thread, broker)?;
        env.extend(crate::app::egress::proxy_env());
        let route = EgressRoute {
            socket: egress.socket().to_owned(),
            port: PROXY_PORT,
            forwards: egress.forwards().to_vec(),
        };
        Ok((Some(egress), Some(route)))
    }

    /// Without unix sockets there is no proxy: an allow-list is refused.
    #[cfg(not(unix))]
    fn egress_for(
        &mut self,
        _pane: PaneId,
        network: Option<&Network>,
        _thread: Option<&ThreadSpec>,
        _env: &mut Vec<(String, String)>,
        _broker: (),
    ) -> Result<((), Option<EgressRoute>), Refusal> {
        if let Some(Network::Allow(_)) = network {
            let why = "a network allow-list is not enforced on this platform yet";
            return Err(Refusal(ErrorCode::Failed, why.into()));
        }
        Ok(((), None))
    }

    /// A proxy for a pane whose network is the allow-list `rules`, on a socket of its own
    /// beside the pane's endpoint. Refused where a lock cannot reach one.
    #[cfg(unix)]
    fn open_egress(
        &mut self,
        pane: PaneId,
        rules: &[crate::egress::Rule],
        thread: Option<&ThreadSpec>,
        broker: Option<Arc<crate::egress::broker::PaneBroker>>,
    ) -> Result<PaneEgress, Refusal> {
        let failed = |why: String| Refusal(ErrorCode::Failed, why);
        let not_here =
            || failed("a network allow-list is not enforced on this platform yet".into());
        let endpoints = self.options.endpoints.as_ref().ok_or_else(not_here)?;
        self.endpoints_opened += 1;
        let bound = endpoints
            .bind_egress(pane, self.endpoints_opened)
            .map_err(|why| failed(format!("cannot open the pane's network proxy: {why}")))?
            .ok_or_else(not_here)?;
        let owner = (pane, thread.map(|t| t.name.clone()));
        let state = crate::vault::state_folder();
        PaneEgress::start(bound, rules, &self.proxy_hosts, owner, state, broker)
            .map_err(|e| failed(format!("cannot start the pane's network proxy: {e}")))
    }
}
