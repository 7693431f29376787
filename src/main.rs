//! The `paddock` binary: parse the command line and dispatch. Everything else is in the library.

mod cli;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, Parser};

use cli::{Cli, Command, Format, ReplayArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Replay(args)) => match replay(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("paddock replay: {err:#}");
                ExitCode::from(2)
            }
        },
        None => {
            // The window arrives with a later release; until then, say what there is.
            let _ = Cli::command().print_help();
            ExitCode::SUCCESS
        }
    }
}

fn replay(args: &ReplayArgs) -> anyhow::Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let term = paddock::replay::replay(&bytes, args.size, args.scrollback);
    let out = match args.format {
        Format::Text => paddock::replay::to_text(&term),
        Format::Json => paddock::replay::to_json(&term),
    };
    let mut stdout = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth a message.
    match stdout.write_all(out.as_bytes()).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to stdout"),
    }
}
