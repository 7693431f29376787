//! `paddock` and `paddock attach`: a window on this user's paddock server, which owns the
//! panes. Closing the window leaves them running.

use std::ffi::OsString;

use anyhow::Context;

use paddock::app::launch::{attach_socket_of, find_server, spawn_server, start_server};
use paddock::ctl::protocol::Request;
use paddock::ctl::Client;

use crate::cli::{AttachArgs, RunArgs};

/// `paddock`: a window on the running server (a new tab in it for `-e CMD`), or on one
/// started now with these arguments. The server's control socket is printed first.
pub fn open(args: &RunArgs) -> anyhow::Result<u8> {
    let config_path = crate::config_path(args.config.as_deref());
    let (config, problems) = crate::load_config(args.config.is_some(), config_path.as_deref());
    let running = match &args.listen {
        Some(_) => None,
        None => find_server()?,
    };
    let (display, socket) = match running {
        Some(socket) => {
            let display = paddock::app::window::open_display()?;
            if !args.exec.is_empty() {
                if let Some(problems) = problems {
                    eprintln!("paddock: the configuration has problems:\n{problems}");
                }
                new_tab(&socket, &args.exec)?;
            }
            (display, socket)
        }
        None => {
            let listen = args.listen.as_ref().map(|p| std::path::absolute(p).unwrap_or(p.clone()));
            // The server opens its tabs once this window has attached and said its size (before
            // its GPU is ready), so it starts while the
            // display opens (on X11 reading the input method's and the keyboard's compose
            // tables takes tens of milliseconds), and a window that cannot open stops it
            // before anything has run.
            let mut flags: Vec<OsString> = vec!["--for-window".into()];
            // A server that died left its record: the new one says what was lost and starts
            // no agent unasked.
            for record in paddock::app::lost::dead_servers() {
                flags.push("--lost".into());
                flags.push(record.into());
            }
            let server = server_args(args, listen.as_deref(), flags);
            let starting = spawn_server(&server, listen.as_deref())?;
            let display = match paddock::app::window::open_display() {
                Ok(display) => display,
                Err(e) => {
                    starting.stop();
                    return Err(e);
                }
            };
            (display, starting.listening()?)
        }
    };
    crate::print_stdout(&format!("{}\n", socket.display()))?;
    paddock::app::window::run_attached(display, &attach_socket_of(&socket), config, config_path)
}

/// `paddock server --stdio`: standard input and output relayed to this user's server, the
/// running one or one started now that opens nothing unasked (the paddock at the other end of
/// ssh says what to run). Nothing but the server's frames goes to standard output.
pub fn relay_stdio(args: &RunArgs) -> anyhow::Result<u8> {
    let socket = match &args.listen {
        Some(listen) => std::path::absolute(listen).unwrap_or(listen.clone()),
        None => match find_server()? {
            Some(socket) => socket,
            None => {
                let server = server_args(args, None, vec!["--open-nothing".into()]);
                start_server(&server, None)?
            }
        },
    };
    // Secrets a link hands to a thread pass through this relay's buffers: its memory is
    // kept from other processes of the user's (ptrace, /proc/PID/mem) and from core dumps.
    paddock::vault::keep_memory_private();
    paddock::ctl::stdio_relay::relay(&attach_socket_of(&socket))?;
    Ok(0)
}

/// `paddock attach`: a window on a running server.
pub fn attach(args: &AttachArgs) -> anyhow::Result<u8> {
    let display = paddock::app::window::open_display()?;
    let socket = match &args.socket {
        Some(socket) => socket.clone(),
        None => find_server()?.context(
            "no paddock server is running for this user (`paddock` starts one with a window)",
        )?,
    };
    let config_path = crate::config_path(args.config.as_deref());
    let (config, problems) = crate::load_config(args.config.is_some(), config_path.as_deref());
    if let Some(problems) = problems {
        eprintln!(
            "paddock: the configuration has problems; this window uses the defaults:\n{problems}"
        );
    }
    paddock::app::window::run_attached(display, &attach_socket_of(&socket), config, config_path)
}

/// Open a tab running `command` in the server at `socket`.
fn new_tab(socket: &std::path::Path, command: &[String]) -> anyhow::Result<()> {
    let cwd = std::env::current_dir().ok();
    let request = Request::New { thread: None, cwd, command: command.to_vec() };
    let reply = Client::connect(socket)?.call(&request)?;
    match reply.error {
        Some(error) => anyhow::bail!("cannot open a tab for {}: {}", command[0], error.message),
        None => Ok(()),
    }
}

/// What the started server is told: everything `paddock` was given that is the server's.
/// The arguments of `paddock server` for a window's `args`, with `flags` of the launcher's
/// own. Every flag comes before `-e`: what follows it is the pane's command, word for word.
fn server_args(
    args: &RunArgs,
    listen: Option<&std::path::Path>,
    flags: Vec<OsString>,
) -> Vec<OsString> {
    let mut out: Vec<OsString> = flags;
    if let Some(config) = &args.config {
        out.push("--config".into());
        out.push(std::path::absolute(config).unwrap_or(config.clone()).into());
    }
    if let Some(lines) = args.scrollback {
        out.push("--scrollback".into());
        out.push(lines.to_string().into());
    }
    if let Some(listen) = listen {
        out.push("--listen".into());
        out.push(listen.into());
    }
    if args.exit_with_child {
        out.push("--exit-with-child".into());
    }
    if !args.exec.is_empty() {
        out.push("-e".into());
        out.extend(args.exec.iter().map(OsString::from));
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::server_args;
    use crate::cli::Cli;

    #[test]
    fn the_launchers_own_flags_never_land_in_the_panes_command() {
        let cli = Cli::try_parse_from(["paddock", "--exit-with-child", "-e", "cat", "f"]).unwrap();
        let flags = vec!["--for-window".into(), "--lost".into(), "/state/9.json".into()];
        let server = server_args(&cli.run, None, flags);
        let words: Vec<&str> = server.iter().map(|w| w.to_str().unwrap()).collect();
        let want =
            ["--for-window", "--lost", "/state/9.json", "--exit-with-child", "-e", "cat", "f"];
        assert_eq!(words, want);
        // And the server reads them so: the pane runs `cat f`, nothing more.
        let mut server_cli = vec!["paddock", "server"];
        server_cli.extend(&words);
        let Some(crate::cli::Command::Server(parsed)) =
            Cli::try_parse_from(server_cli).unwrap().command
        else {
            panic!("not the server's command line");
        };
        assert_eq!(parsed.exec, ["cat", "f"]);
    }
}
