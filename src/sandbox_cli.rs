//! `paddock sandbox run|probe`: one command under a lock in this terminal, and what this system
//! can enforce.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::{Net, SandboxVerb};
use paddock::config::{LockPolicy, Network};
use paddock::sandbox::{self, Enforcement, Policy};

pub fn run(verb: SandboxVerb) -> ExitCode {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("paddock"));
    let isolation = sandbox::host(exe);
    match verb {
        SandboxVerb::Probe => {
            let probe = isolation.probe();
            for line in &probe.lines {
                println!("{line}");
            }
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
        SandboxVerb::Run { write, read, protect, socket, net, command } => {
            let absolute = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
                paths.into_iter().map(|p| std::path::absolute(&p).unwrap_or(p)).collect()
            };
            let lock = LockPolicy {
                write: absolute(write),
                read: absolute(read),
                protect: absolute(protect),
                network: if net == Net::On { Network::On } else { Network::Off },
                sockets: absolute(socket),
                allow_broad_write: false,
            };
            let policy = Policy::from_lock(&lock, &sandbox::guarded_folders());
            let launch = isolation.wrap(&policy, &command);
            let Some(argv) = launch.argv else {
                eprintln!("paddock sandbox: {}; the command did not run", launch.enforcement);
                return ExitCode::from(125);
            };
            if let Enforcement::Degraded(_) = &launch.enforcement {
                eprintln!("paddock sandbox: {}", launch.enforcement);
            }
            exec(argv)
        }
    }
}

/// Become the launcher (the same process: nothing else runs in it yet).
fn exec(argv: Vec<String>) -> ExitCode {
    #[cfg(target_os = "linux")]
    {
        let args = argv.into_iter().skip(2).map(std::ffi::OsString::from).collect();
        paddock::sandbox::linux::launch::main(args)
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        use std::os::unix::process::CommandExt;
        let error = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
        eprintln!("paddock sandbox: cannot run {}: {error}; the command did not run", argv[0]);
        ExitCode::from(125)
    }
    #[cfg(not(unix))]
    {
        let _ = argv;
        eprintln!("paddock sandbox: this platform cannot lock commands yet");
        ExitCode::from(125)
    }
}
