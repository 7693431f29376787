//! `paddock net log`: the egress log of locked threads' proxies, as a table or JSON lines.

use anyhow::Result;

use crate::cli::{NetArgs, NetVerb};

pub fn run(args: NetArgs) -> Result<()> {
    match args.verb {
        NetVerb::Log { json, pane } => log(json, pane),
    }
}

#[cfg(unix)]
fn log(json: bool, pane: Option<u32>) -> Result<()> {
    use anyhow::Context;
    use paddock::app::egress::{read_log, LOG_FILE};
    use std::io::Write;
    let state = paddock::vault::state_folder().context("paddock has no state folder here")?;
    let lines = read_log(&state)
        .with_context(|| format!("cannot read {}", state.join(LOG_FILE).display()))?;
    let mut out = String::new();
    for line in lines {
        match line {
            Ok(line) if pane.is_some_and(|p| p != line.pane) => {}
            Ok(line) if json => {
                out.push_str(&serde_json::to_string(&line).unwrap_or_default());
                out.push('\n');
            }
            Ok(l) => {
                let verdict = if l.allowed { "allowed" } else { "REFUSED" };
                let thread =
                    l.thread.as_deref().map(|t| format!(" thread {t}")).unwrap_or_default();
                let why = l.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default();
                let host = paddock::sandbox::visible(&l.host);
                out.push_str(&format!(
                    "{}  pane {}{thread}  {host}:{}  {verdict}{why}  sent {} B, received {} B, {} ms\n",
                    l.time, l.pane, l.port, l.sent, l.received, l.duration_ms
                ));
            }
            // Shown as it is, its control characters escaped.
            Err(raw) => {
                out.push_str(&format!("(unreadable line) {}\n", paddock::sandbox::visible(&raw)))
            }
        }
    }
    if out.is_empty() && !json {
        out = format!("no connections yet in {}\n", state.join(LOG_FILE).display());
    }
    std::io::stdout().write_all(out.as_bytes()).context("cannot write")
}

#[cfg(not(unix))]
fn log(_json: bool, _pane: Option<u32>) -> Result<()> {
    anyhow::bail!("a network allow-list is not available on this platform yet")
}
