//! A locked pane whose network is an allow-list: its proxy (`egress::Proxy`) on a socket of its
//! own, the environment that points its programs there, the running counts `paddock ls` shows,
//! and the egress log (one JSON line per connection in paddock's state folder).

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::egress::broker::PaneBroker;
use crate::egress::{AllowList, Connection, Limits, Owner, Proxy, Rule};
use crate::mux::PaneId;
use crate::vault::audit::{append_json_line, utc_at};

/// The port on a lock's own loopback that leads to its proxy (the lock's network namespace is
/// its own: nothing else listens there unless the agent does).
pub const PORT: u16 = 3128;

/// The egress log's file in paddock's state folder.
pub const LOG_FILE: &str = "egress.log";
/// The log before it, once the log grew past `LOG_LIMIT`: at most twice that on disk, however
/// many connections a locked agent makes.
pub const OLD_LOG_FILE: &str = "egress.log.1";
const LOG_LIMIT: u64 = 64 << 20;
/// Most lines one pane writes to the log in a minute: past it its connections are counted and
/// summed up in one line, so that a locked agent cannot push every other pane's records out of
/// the log in minutes (at this rate a flood takes hours to fill `LOG_LIMIT`).
const LOG_LINES_PER_MINUTE: u32 = 600;

/// How many lines a pane may still write this minute, and how many it could not.
#[derive(Debug)]
struct LogBudget {
    minute: std::time::Instant,
    used: u32,
    unlogged: u64,
}

impl LogBudget {
    fn new(now: std::time::Instant) -> LogBudget {
        LogBudget { minute: now, used: 0, unlogged: 0 }
    }

    /// Whether a line may be written at `now`; with it, how many lines were not written since
    /// the last one that was (to say so first).
    fn take(&mut self, now: std::time::Instant) -> Option<u64> {
        if now.duration_since(self.minute) >= std::time::Duration::from_secs(60) {
            self.minute = now;
            self.used = 0;
        }
        if self.used >= LOG_LINES_PER_MINUTE {
            self.unlogged += 1;
            return None;
        }
        self.used += 1;
        Some(std::mem::take(&mut self.unlogged))
    }
}

/// What a pane's proxy has decided so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    pub allowed: u64,
    pub denied: u64,
    /// The last refused `host:port`.
    pub last_denied: Option<String>,
}

/// A pane's proxy, while the pane lives.
pub struct PaneEgress {
    proxy: Option<Proxy>,
    /// The host's loopback services its rules name (`forwards`).
    forwards: Vec<std::net::SocketAddr>,
    stats: Arc<Mutex<NetStats>>,
    /// The proxy's socket, removed with it.
    socket: PathBuf,
}

impl Drop for PaneEgress {
    fn drop(&mut self) {
        drop(self.proxy.take());
        let _ = std::fs::remove_file(&self.socket);
    }
}

impl PaneEgress {
    /// Serve `listener` for `pane` with `rules` (and the configuration's hosts table); every
    /// connection is counted and, with a state folder, logged.
    pub fn start(
        (listener, socket): (std::os::unix::net::UnixListener, PathBuf),
        rules: &[Rule],
        hosts: &BTreeMap<String, IpAddr>,
        owner: (PaneId, Option<String>),
        state: Option<PathBuf>,
        broker: Option<Arc<PaneBroker>>,
    ) -> std::io::Result<PaneEgress> {
        let allow = AllowList { rules: rules.to_vec(), hosts: hosts.clone() };
        let stats = Arc::new(Mutex::new(NetStats::default()));
        let counted = stats.clone();
        let budget = Mutex::new(LogBudget::new(std::time::Instant::now()));
        let report = Arc::new(move |connection: Connection| {
            {
                let mut stats = counted.lock().unwrap_or_else(PoisonError::into_inner);
                if connection.allowed {
                    stats.allowed += 1;
                } else {
                    stats.denied += 1;
                    let host = crate::sandbox::visible(&connection.host);
                    stats.last_denied = Some(format!("{host}:{}", connection.port));
                }
            }
            let Some(state) = &state else { return };
            let now = std::time::Instant::now();
            let Some(unlogged) = budget.lock().unwrap_or_else(PoisonError::into_inner).take(now)
            else {
                return;
            };
            let mut lines = Vec::new();
            if unlogged > 0 {
                lines.push(LogLine::unlogged(&connection, unlogged));
            }
            lines.push(LogLine::of(&connection));
            for line in &lines {
                if let Err(e) = append(state, line) {
                    eprintln!("paddock: cannot write the egress log: {e}");
                }
            }
        });
        let (PaneId(pane), thread) = owner;
        let owner = Owner { pane, thread };
        let proxy = Proxy::start(listener, allow, owner, report, Limits::default(), broker)?;
        let forwards = forwards(rules);
        Ok(PaneEgress { proxy: Some(proxy), forwards, stats, socket })
    }

    /// The host's loopback services forwarded into the lock.
    pub fn forwards(&self) -> &[std::net::SocketAddr] {
        &self.forwards
    }

    /// Where the lock's bridge reaches the proxy.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Let the last refused `host:port` through for this pane, until it closes: what was let
    /// through (`None`: nothing was refused, or what was is no host to allow).
    pub fn allow_last_refused(&self) -> Option<String> {
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        let refused = stats.last_denied.clone()?;
        let rule = Rule::parse(&refused).ok().filter(|rules| rules.len() == 1)?.pop()?;
        self.proxy.as_ref()?.allow(rule);
        stats.last_denied = None;
        Some(refused)
    }

    pub fn stats(&self) -> NetStats {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// The services on the host's loopback that `rules` name by address: forwarded into the lock
/// at the same address and port (`sandbox::EgressRoute::forwards`).
pub fn forwards(rules: &[Rule]) -> Vec<std::net::SocketAddr> {
    rules
        .iter()
        .filter_map(|rule| match rule.host {
            crate::egress::rules::HostRule::Address(ip) if ip.is_loopback() => {
                Some(std::net::SocketAddr::new(ip, rule.port))
            }
            _ => None,
        })
        .collect()
}

/// The environment that sends a locked program's connections to its proxy: the usual proxy
/// variables in both cases (curl, git, pip, Python, Go, Rust read one or the other), loopback
/// kept direct, and Node's fetch told to honour them.
pub fn proxy_env() -> Vec<(String, String)> {
    let proxy = format!("http://127.0.0.1:{PORT}");
    let direct = "localhost,127.0.0.1,::1".to_owned();
    let mut env = Vec::new();
    for name in ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"] {
        env.push((name.to_owned(), proxy.clone()));
        env.push((name.to_ascii_lowercase(), proxy.clone()));
    }
    env.push(("NO_PROXY".to_owned(), direct.clone()));
    env.push(("no_proxy".to_owned(), direct));
    env.push(("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()));
    env
}

/// One line of the egress log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    pub time: String,
    pub pane: u32,
    pub thread: Option<String>,
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub sent: u64,
    pub received: u64,
    pub duration_ms: u64,
}

impl LogLine {
    /// The line that says a pane's `count` connections before `c` were not logged.
    fn unlogged(c: &Connection, count: u64) -> LogLine {
        LogLine {
            host: "-".into(),
            port: 0,
            allowed: false,
            reason: Some(format!(
                "{count} connections not logged: over {LOG_LINES_PER_MINUTE} a minute from this \
                 pane"
            )),
            sent: 0,
            received: 0,
            duration_ms: 0,
            ..LogLine::of(c)
        }
    }

    fn of(c: &Connection) -> LogLine {
        LogLine {
            time: utc_at(c.time),
            pane: c.pane,
            thread: c.thread.clone(),
            host: crate::sandbox::visible(&c.host),
            port: c.port,
            allowed: c.allowed,
            reason: c.reason.clone(),
            sent: c.sent,
            received: c.received,
            duration_ms: u64::try_from(c.duration.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// Add `line` to the egress log in `state`, moving a log past `LOG_LIMIT` aside first (the
/// one before it goes).
fn append(state: &Path, line: &LogLine) -> std::io::Result<()> {
    append_limited(state, line, LOG_LIMIT)
}

fn append_limited(state: &Path, line: &LogLine, limit: u64) -> std::io::Result<()> {
    let log = state.join(LOG_FILE);
    if std::fs::metadata(&log).is_ok_and(|m| m.len() > limit) {
        std::fs::rename(&log, state.join(OLD_LOG_FILE))?;
    }
    append_json_line(&log, line)
}

/// Every line of the egress log in `state` (the one moved aside first), oldest first; lines
/// that do not parse are given as they are.
pub fn read_log(state: &Path) -> std::io::Result<Vec<Result<LogLine, String>>> {
    let mut lines = Vec::new();
    for file in [OLD_LOG_FILE, LOG_FILE] {
        let text = match std::fs::read_to_string(state.join(file)) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        lines.extend(
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).map_err(|_| l.to_owned())),
        );
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_writes_at_most_its_budget_a_minute_and_says_what_it_left_out() {
        let start = std::time::Instant::now();
        let mut budget = LogBudget::new(start);
        let written = (0..LOG_LINES_PER_MINUTE + 50).filter(|_| budget.take(start).is_some());
        assert_eq!(written.count(), LOG_LINES_PER_MINUTE as usize);
        let later = start + std::time::Duration::from_secs(61);
        assert_eq!(budget.take(later), Some(50));
        assert_eq!(budget.take(later), Some(0));
    }

    fn line(host: &str) -> LogLine {
        LogLine {
            time: "2026-12-01T00:00:00Z".into(),
            pane: 1,
            thread: None,
            host: host.into(),
            port: 443,
            allowed: false,
            reason: Some("not in the thread's network allow-list".into()),
            sent: 0,
            received: 0,
            duration_ms: 0,
        }
    }

    /// However many connections a locked agent makes, the log keeps at most twice its limit.
    #[test]
    fn a_full_log_is_moved_aside_and_the_one_before_it_goes() {
        let state = std::env::temp_dir().join(format!("paddock-egress-log-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&state);
        for host in ["a.example", "b.example", "c.example", "d.example"] {
            append_limited(&state, &line(host), 100).expect("append");
        }
        let hosts: Vec<String> =
            read_log(&state).expect("read").into_iter().map(|l| l.expect("a line").host).collect();
        assert_eq!(hosts, ["c.example", "d.example"], "a and b were moved aside, then dropped");
        let size = |file| std::fs::metadata(state.join(file)).map_or(0, |m| m.len());
        assert!(size(LOG_FILE) + size(OLD_LOG_FILE) < 2 * 200 + 400, "bounded");
        let _ = std::fs::remove_dir_all(&state);
    }
}
