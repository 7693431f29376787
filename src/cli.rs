//! The command line: what paddock accepts, and nothing else.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "paddock",
    version,
    about = "A terminal multiplexer for running coding agents side by side"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Feed a recorded byte stream to the terminal model and print the final screen.
    Replay(ReplayArgs),
}

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The recorded bytes (for example from `script -q -O FILE` or a PTY capture).
    pub file: PathBuf,
    /// Screen size as COLSxROWS.
    #[arg(long, default_value = "80x24", value_parser = paddock::replay::parse_size)]
    pub size: paddock::term::TermSize,
    /// Scrollback lines kept above the screen.
    #[arg(long, default_value_t = 10_000)]
    pub scrollback: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per row, then `cursor ROW COL`.
    Text,
    /// The rows with attribute runs, as JSON.
    Json,
}
