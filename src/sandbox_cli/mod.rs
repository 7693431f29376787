//! `paddock sandbox run|probe`: one command under a lock in this terminal, and what this system
//! can enforce.

#[cfg(unix)]
mod relay;
mod view;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::cli::{Net, SandboxVerb};
use paddock::app::lock::{control_folders, exposed_control_sockets, guarded_paths, policy_for};
use paddock::config::{LockPolicy, Network};
use paddock::sandbox::{self, git_planted, Enforcement, Policy};

/// `config`: a `--config` given before `sandbox`, guarded like the default file.
pub fn run(verb: SandboxVerb, config: Option<&Path>) -> ExitCode {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("paddock"));
    let isolation = sandbox::host(exe.clone());
    match verb {
        SandboxVerb::Probe { thread: Some(thread) } => match view::print(&thread, config, &exe) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("paddock sandbox probe: {error:#}");
                ExitCode::from(1)
            }
        },
        SandboxVerb::Probe { thread: None } => {
            let probe = isolation.probe();
            for line in &probe.lines {
                println!("{line}");
            }
            println!("pane cgroups: {}", paddock::cgroup::probe());
            match (&probe.blocker, probe.gaps.is_empty()) {
                (Some(why), _) => {
                    println!("locks: refused here ({why})");
                    ExitCode::from(1)
                }
                (None, true) => {
                    println!("locks: enforced (files + network)");
                    ExitCode::SUCCESS
                }
                (None, false) => {
                    println!("locks: degraded ({})", probe.gaps.join("; "));
                    ExitCode::SUCCESS
                }
            }
        }
        SandboxVerb::Run { write, read, protect, socket, net, env_pass, command } => {
            let absolute = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
                paths.into_iter().map(|p| std::path::absolute(&p).unwrap_or(p)).collect()
            };
            // Folders and sockets canonical, as a configuration's are once read (see
            // `sandbox::resolve`); protected paths as given (a link there is refused).
            let canonical = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
                absolute(paths).into_iter().map(|p| p.canonicalize().unwrap_or(p)).collect()
            };
            let lock = LockPolicy {
                write: canonical(write),
                read: canonical(read),
                protect: absolute(protect),
                network: if net == Net::On { Network::On } else { Network::Off },
                sockets: canonical(socket),
                allow_broad_write: false,
            };
            // Run from a pane: that instance's control socket must stay out of reach too.
            let policy = Policy {
                control_folders: control_folders(),
                session_folders: paddock::sandbox::policy::session_folders(),
                control_sockets: std::env::var_os("PADDOCK_SOCKET")
                    .map(|socket| exposed_control_sockets(Path::new(&socket)))
                    .unwrap_or_default(),
                ..policy_for(&lock, &guarded_paths(config, &exe))
            };
            let launch = isolation.wrap(&policy, &command);
            let Some(argv) = launch.argv else {
                eprintln!("paddock sandbox: {}; the command did not run", launch.enforcement);
                return ExitCode::from(125);
            };
            if let Enforcement::Degraded(_) = &launch.enforcement {
                eprintln!("paddock sandbox: {}", launch.enforcement);
            }
            // Built, not inherited, as in a locked pane.
            let env = sandbox::env::build(std::env::vars_os(), &env_pass);
            // What git would find in the writable folders, to compare with when it returns.
            let before = git_planted::snapshot(&lock.write);
            let code = exec(argv, env.vars);
            let after = git_planted::snapshot_again(&lock.write, &before);
            for finding in git_planted::planted(&before, &after) {
                eprintln!("paddock sandbox: left for git to run outside the lock: {finding}");
            }
            code
        }
    }
}

/// Run the launcher with only `env`, in a session (and on a terminal) of its own.
fn exec(argv: Vec<String>, env: Vec<(OsString, OsString)>) -> ExitCode {
    #[cfg(unix)]
    match relay::run(&argv, env) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(error) => {
            eprintln!("paddock sandbox: cannot run {}: {error}; the command did not run", argv[0]);
            ExitCode::from(125)
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (argv, env);
        eprintln!("paddock sandbox: this platform cannot lock commands yet");
        ExitCode::from(125)
    }
}
