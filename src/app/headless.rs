//! `paddock --headless`: the multiplexer without a window, driven through its control socket
//! until `paddock ctl stop`, SIGTERM, SIGINT or SIGHUP (or, with `--exit-with-child`, until
//! the first tab's program exits).

use std::sync::Arc;

use anyhow::Context;
use crossbeam_channel::select;

use super::server::{Server, ServerOptions};
use super::signals::{Signal, SignalListener};

/// How often attached windows are told of the panes' pulse (and anything else that changed).
const WINDOW_VIEW_PERIOD: std::time::Duration = std::time::Duration::from_millis(250);

/// Run until stopped. Returns the process exit code: 0 when stopped, the first program's exit
/// code with `--exit-with-child`.
pub fn run(options: ServerOptions) -> anyhow::Result<u8> {
    // Before any other thread exists: see `signals`.
    let signals = SignalListener::start().context("cannot set up signal handling")?;
    // Nothing is drawn, so there is nothing to wake for.
    let mut server = Server::start(&options, Arc::new(|| {}))?;
    // A server started for a window opens its tabs once a window has attached and said its
    // size: the window starts it while it opens the display, and one that cannot open leaves
    // nothing running.
    let mut first_tab_due = options.for_window;
    if !first_tab_due {
        server.open_first_tab()?;
    }
    let config_changes = server.config_changes();
    let (windows, window_inputs) = (server.windows(), server.window_inputs());
    let link_news = server.workspace().link_news();
    // The pulse moves on its own: attached windows are told of it this often.
    let pulse_tick = crossbeam_channel::tick(WINDOW_VIEW_PERIOD);
    if !first_tab_due {
        server.keep_record();
    }
    // Whether the server ends because it was asked to (its panes are not lost then).
    let mut asked = true;
    // The first program's code, when the instance ends with it (`--exit-with-child`).
    let mut child_exit = None;
    let exit_code = loop {
        select! {
            recv(pulse_tick) -> _ => {}
            recv(link_news) -> news => {
                if let Ok(news) = news {
                    server.workspace_mut().take_link_news(news);
                }
            }
            recv(windows) -> stream => {
                if let Ok(stream) = stream {
                    server.attach_window(stream);
                }
            }
            recv(window_inputs) -> input => {
                if let Some(code) = input.ok().and_then(|input| server.window_asked(input)) {
                    break code;
                }
            }
            recv(server.calls()) -> call => {
                let Ok(call) = call else { break 0 };
                if let Some(code) = server.answer(call) {
                    break code;
                }
            }
            recv(signals.receiver()) -> signal => match signal {
                Ok(Signal::Child) => server.workspace_mut().check_ended_locks(),
                Ok(Signal::Stop(_)) | Err(_) => {
                    asked = false;
                    break 0;
                }
            },
            recv(config_changes) -> _ => {
                server.reload_config();
            }
        }
        if first_tab_due && server.first_window_ready() {
            first_tab_due = false;
            if let Err(e) = server.open_first_tab() {
                // The window is told why, and ends with the code.
                let why = format!("{e:#}");
                eprintln!("paddock: {why}");
                server.workspace().attached().say(&why);
                child_exit = Some(1);
                break 1;
            }
            // The configuration's problems (opened when the window said its size) go after
            // the program's tabs, as in a window that owns its panes.
            server.workspace_mut().refresh_config_notice();
        } else if first_tab_due
            && !server.workspace().attached().ever_attached()
            && !server.awaits_first_window()
        {
            eprintln!("paddock: the window this server was started for never attached; ending");
            break 1;
        }
        // Asked only once the window that started the server has attached: an ended program's
        // code waits for its output to end, which a process left holding the PTY delays.
        if let Some(code) = (!server.awaits_first_window()).then(|| server.first_exit()).flatten() {
            child_exit = Some(code);
            break code;
        }
        // Nothing before the first tabs: a window that has a layout takes keys and carries out
        // its bindings, which would then act on no tab (it holds them until it has one), and a
        // record with no panes would be told as a lost server by the next start.
        if !first_tab_due {
            server.workspace_mut().sync_windows();
            server.keep_record();
        }
    };
    server.stop_listening();
    if asked {
        server.forget_record();
    }
    server.shut_down(child_exit);
    Ok(exit_code)
}
