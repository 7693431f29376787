//! The `paddock` binary: parse the command line and dispatch. Everything else is in the library.

mod cli;
#[cfg(unix)]
mod remote;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use cli::{Cli, Command, Format, ReplayArgs, RunArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Replay(args)) => finish("paddock replay", replay(&args), 2),
        #[cfg(unix)]
        Some(Command::Ls(args)) => finish("paddock ls", remote::ls(&args), 1),
        #[cfg(unix)]
        Some(Command::Ctl(args)) => finish("paddock ctl", remote::ctl(args), 1),
        #[cfg(not(unix))]
        Some(Command::Ls(_) | Command::Ctl(_)) => {
            eprintln!("paddock: the control socket is not available on this platform yet");
            ExitCode::from(2)
        }
        None => run(cli.run),
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
    let headless = args.headless;
    let options = paddock::app::headless::HeadlessOptions {
        command: args.exec,
        exit_with_child: args.exit_with_child,
        size: args.size,
        scrollback_lines: args.scrollback,
        // Panes get this path as PADDOCK_SOCKET and may run elsewhere: make it absolute.
        socket: args.listen.map(|p| std::path::absolute(&p).unwrap_or(p)),
    };
    let result = if headless {
        paddock::app::headless::run(options)
    } else {
        paddock::app::window::run(options)
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("paddock: {err:#}");
            ExitCode::from(1)
        }
    }
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
