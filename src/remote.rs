//! `paddock ls` and `paddock ctl`: requests to running instances, printed for people or scripts.

use anyhow::Context;
use serde::Serialize;

use paddock::ctl::protocol::{InstanceInfo, Request, SplitDirection};
use paddock::ctl::{format_listing, resolve_all, resolve_one, Client};

use crate::cli::{CtlArgs, CtlVerb, LsArgs};
use crate::print_stdout;

#[derive(Serialize)]
struct Listing<'a> {
    instances: &'a [InstanceInfo],
}

pub fn ls(args: &LsArgs) -> anyhow::Result<()> {
    if !args.watch {
        return print_stdout(&listing(args)?);
    }
    let clear = std::io::IsTerminal::is_terminal(&std::io::stdout()) && !args.json;
    loop {
        let out = listing(args)?;
        // Home and clear below, so the table is redrawn in place rather than scrolled.
        let frame = if clear { format!("\x1b[H\x1b[2J{out}") } else { out };
        print_stdout(&frame)?;
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// One `paddock ls` answer, as text or JSON.
fn listing(args: &LsArgs) -> anyhow::Result<String> {
    let sockets = resolve_all(args.socket.as_deref())?;
    let explicit = sockets.len() == 1 && args.socket.is_some();
    let mut instances = Vec::new();
    for socket in sockets {
        let answer = Client::connect(&socket).and_then(|mut client| client.call(&Request::Ls));
        match answer {
            Ok(reply) => instances.extend(reply.instance),
            // One instance asked for by name must answer; of several found, the others still count.
            Err(e) if explicit => return Err(e.into()),
            Err(e) => eprintln!("paddock ls: skipping {}: {e}", socket.display()),
        }
    }
    Ok(if args.json {
        let mut json = serde_json::to_string(&Listing { instances: &instances })?;
        json.push('\n');
        json
    } else {
        format_listing(&instances)
    })
}

pub fn ctl(args: CtlArgs) -> anyhow::Result<()> {
    let socket = resolve_one(args.socket.as_deref())?;
    let request = request_for(args.verb);
    let mut client = Client::connect(&socket)?;
    let reply = client.call(&request).with_context(|| describe(&request))?;
    match request {
        Request::New { .. } | Request::Split { .. } | Request::NextWaiting => {
            let pane = reply.pane.context("the instance did not say which pane it opened")?;
            print_stdout(&format!("{pane}\n"))
        }
        Request::Capture { .. } => print_stdout(&reply.text.unwrap_or_default()),
        _ => Ok(()),
    }
}

fn request_for(verb: CtlVerb) -> Request {
    match verb {
        CtlVerb::New { thread, cwd, command } => {
            // The instance runs elsewhere: a relative directory means the caller's.
            let cwd = cwd.map(|dir| std::path::absolute(&dir).unwrap_or(dir));
            Request::New { thread, cwd, command }
        }
        CtlVerb::Split { pane, right, down: _, command } => {
            let direction = if right { SplitDirection::Right } else { SplitDirection::Down };
            Request::Split { pane: pane.pane, direction, command }
        }
        CtlVerb::Send { pane, text, keys } => Request::Send { pane: pane.pane, text, keys },
        CtlVerb::Capture { pane, scrollback } => Request::Capture { pane: pane.pane, scrollback },
        CtlVerb::Focus(pane) => Request::Focus { pane: pane.pane },
        CtlVerb::Close(pane) => Request::Close { pane: pane.pane },
        CtlVerb::Kill(pane) => Request::Kill { pane: pane.pane },
        CtlVerb::Restart(pane) => Request::Restart { pane: pane.pane },
        CtlVerb::Notify { pane, text } => Request::Notify { pane: pane.pane, text },
        CtlVerb::Resize { pane, size } => {
            Request::Resize { pane: pane.pane, cols: size.cols, rows: size.lines }
        }
        CtlVerb::NextWaiting => Request::NextWaiting,
        CtlVerb::Mute(pane) => Request::Mute { pane: pane.pane },
        CtlVerb::Unmute(pane) => Request::Unmute { pane: pane.pane },
        CtlVerb::Reconnect { host } => Request::Reconnect { host },
        CtlVerb::Stop => Request::Stop,
    }
}

/// What failed, for the error message: "cannot send to pane 3".
fn describe(request: &Request) -> String {
    match request {
        Request::Ls => "cannot list panes".into(),
        Request::New { .. } => "cannot open a tab".into(),
        Request::Split { pane, .. } => format!("cannot split pane {pane}"),
        Request::Send { pane, .. } => format!("cannot send to pane {pane}"),
        Request::Capture { pane, .. } => format!("cannot capture pane {pane}"),
        Request::Focus { pane } => format!("cannot focus pane {pane}"),
        Request::Close { pane } => format!("cannot close pane {pane}"),
        Request::Kill { pane } => format!("cannot kill pane {pane}"),
        Request::Restart { pane } => format!("cannot restart pane {pane}"),
        Request::Notify { pane, .. } => format!("cannot notify pane {pane}"),
        Request::Resize { pane, .. } => format!("cannot resize pane {pane}"),
        Request::NextWaiting => "cannot go to a waiting pane".into(),
        Request::Mute { pane } => format!("cannot mute pane {pane}"),
        Request::Unmute { pane } => format!("cannot unmute pane {pane}"),
        Request::Reconnect { host } => format!("cannot connect to {host} again"),
        Request::Stop => "cannot stop the instance".into(),
    }
}
