//! The `paddock` binary: parse the command line and dispatch. Everything else is in the library.

mod cli;
mod hook_cli;
mod net_cli;
#[cfg(unix)]
mod remote;
mod sandbox_cli;
mod vault_cli;
#[cfg(unix)]
mod window;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

#[cfg(unix)]
use cli::AttachArgs;
use cli::{Cli, Command, ConfigVerb, Format, ReplayArgs, RunArgs};
use paddock::config;

fn main() -> ExitCode {
    // The lock's launcher runs first in a locked pane: before anything else, single-threaded.
    #[cfg(target_os = "linux")]
    {
        let mut args = std::env::args_os().skip(1);
        if args.next().as_deref() == Some(paddock::sandbox::linux::LAUNCHER_VERB.as_ref()) {
            paddock::sandbox::linux::launch::main(args.collect());
        }
    }
    // A pinned secret's exec step (`vault::pin_exec`), inside the pane (and its lock).
    #[cfg(unix)]
    {
        let mut args = std::env::args_os().skip(1);
        let verb = args.next();
        if verb.as_deref() == Some(paddock::vault::pin_exec::PIN_EXEC_VERB.as_ref()) {
            paddock::vault::pin_exec::main(args.collect());
        }
        #[cfg(target_os = "linux")]
        if verb.as_deref() == Some(paddock::cgroup::JOIN_VERB.as_ref()) {
            paddock::cgroup::join_and_exec(args.collect());
        }
    }
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Replay(args)) => finish("paddock replay", replay(&args), 2),
        #[cfg(unix)]
        Some(Command::Ls(args)) => finish("paddock ls", remote::ls(&args), 1),
        #[cfg(unix)]
        Some(Command::Ctl(args)) => finish("paddock ctl", remote::ctl(args), 1),
        #[cfg(unix)]
        Some(Command::KillServer(args)) => {
            let ctl = cli::CtlArgs { socket: args.socket, verb: cli::CtlVerb::Stop };
            finish("paddock kill-server", remote::ctl(ctl), 1)
        }
        #[cfg(not(unix))]
        Some(Command::Ls(_) | Command::Ctl(_) | Command::KillServer(_)) => {
            eprintln!("paddock: the control socket is not available on this platform yet");
            ExitCode::from(2)
        }
        Some(Command::Config(args)) => match args.verb {
            ConfigVerb::Check { path } => check_config(path),
            ConfigVerb::Path => match config::default_path() {
                Some(path) => {
                    finish("paddock config", print_stdout(&format!("{}\n", path.display())), 1)
                }
                None => {
                    eprintln!("paddock config: this system has no configuration folder");
                    ExitCode::from(1)
                }
            },
        },
        Some(Command::Sandbox(args)) => sandbox_cli::run(args.verb, cli.run.config.as_deref()),
        Some(Command::Vault(args)) => finish("paddock vault", vault_cli::run(args), 1),
        Some(Command::Net(args)) => finish("paddock net", net_cli::run(args), 1),
        Some(Command::Hook(args)) => {
            finish("paddock hook", hook_cli::run(args.verb, cli.run.config.as_deref()), 1)
        }
        #[cfg(unix)]
        Some(Command::Server(args)) if args.stdio => exit_with(window::relay_stdio(&args)),
        Some(Command::Server(args)) => run(RunArgs { headless: true, ..args }),
        #[cfg(unix)]
        Some(Command::Attach(args)) => attach(&args),
        #[cfg(not(unix))]
        Some(Command::Attach(_)) => run(cli.run),
        None => run(cli.run),
    }
}

/// `paddock config check [PATH]`: every problem, and exit code 1 when there is any.
fn check_config(path: Option<std::path::PathBuf>) -> ExitCode {
    let explicit = path.is_some();
    let Some(path) = path.or_else(config::default_path) else {
        eprintln!("paddock config check: this system has no configuration folder; give a PATH");
        return ExitCode::from(2);
    };
    match config::load(&path) {
        Ok(Some(config)) => {
            let names: Vec<&str> = config.threads.iter().map(|t| t.name.as_str()).collect();
            let threads = match names.len() {
                0 => "no threads".to_owned(),
                1 => format!("1 thread ({})", names[0]),
                n => format!("{n} threads ({})", names.join(", ")),
            };
            println!("{}: ok, {threads}", path.display());
            ExitCode::SUCCESS
        }
        Ok(None) if explicit => {
            eprintln!("{}: no such file", path.display());
            ExitCode::from(1)
        }
        Ok(None) => {
            println!("{}: no configuration file; paddock uses its defaults", path.display());
            ExitCode::SUCCESS
        }
        Err(diagnostics) => {
            eprintln!("{diagnostics}");
            let count = diagnostics.items.len();
            eprintln!("{count} problem{}", if count == 1 { "" } else { "s" });
            ExitCode::from(1)
        }
    }
}

/// The configuration file: `explicit` (--config), else the default place. Made absolute: the
/// file is watched, and read again, for as long as paddock runs.
#[cfg(unix)]
fn config_path(explicit: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    explicit
        .map(ToOwned::to_owned)
        .or_else(config::default_path)
        .map(|p| std::path::absolute(&p).unwrap_or(p))
}

/// The configuration to run with: the file's (`--config`, else the default place), or the
/// defaults and the reason when it cannot be used. A bad file never stops paddock.
#[cfg(unix)]
fn load_config(explicit: bool, path: Option<&std::path::Path>) -> (config::Config, Option<String>) {
    let Some(path) = path else {
        return (config::Config::default(), None);
    };
    match config::load(path) {
        Ok(Some(config)) => (config, None),
        Ok(None) if explicit => {
            (config::Config::default(), Some(format!("{}: no such file", path.display())))
        }
        Ok(None) => (config::Config::default(), None),
        Err(diagnostics) => (config::Config::default(), Some(diagnostics.to_string())),
    }
}

fn finish(what: &str, result: anyhow::Result<()>, failure: u8) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{what}: {err:#}");
            ExitCode::from(failure)
        }
    }
}

#[cfg(unix)]
fn run(args: RunArgs) -> ExitCode {
    if !args.headless && !args.single_process {
        return exit_with(window::open(&args));
    }
    let headless = args.headless;
    let config_path = config_path(args.config.as_deref());
    let (mut config, config_problems) = load_config(args.config.is_some(), config_path.as_deref());
    if let Some(lines) = args.scrollback {
        config.scrollback_lines = lines;
    }
    let options = paddock::app::server::ServerOptions {
        command: args.exec,
        exit_with_child: args.exit_with_child,
        for_window: args.for_window,
        size: args.size,
        config,
        config_problems,
        config_path,
        // Panes get this path as PADDOCK_SOCKET and may run elsewhere: make it absolute.
        socket: args.listen.map(|p| std::path::absolute(&p).unwrap_or(p)),
        lost: args.lost,
        open_nothing: args.open_nothing,
    };
    let result = if headless {
        paddock::app::headless::run(options)
    } else {
        paddock::app::window::run(options)
    };
    exit_with(result)
}

#[cfg(unix)]
fn exit_with(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("paddock: {err:#}");
            ExitCode::from(1)
        }
    }
}

/// `paddock attach`: a window on a running server.
#[cfg(unix)]
fn attach(args: &AttachArgs) -> ExitCode {
    exit_with(window::attach(args))
}

#[cfg(not(unix))]
fn run(_args: RunArgs) -> ExitCode {
    eprintln!("paddock: the window and headless mode are not available on this platform yet");
    ExitCode::from(2)
}

fn replay(args: &ReplayArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let term = paddock::replay::replay(&bytes, args.size, args.scrollback);
    let out = match args.format {
        Format::Text => paddock::replay::to_text(&term),
        Format::Json => paddock::replay::to_json(&term),
    };
    print_stdout(&out)
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth a message.
pub(crate) fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
