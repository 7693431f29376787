//! The control protocol: one JSON object per line each way, both carrying `"protocol": 1`.
//!
//! A request names its verb (`{"protocol":1,"verb":"send","pane":3,"keys":"C-c"}`); a reply
//! says `ok` and carries either the verb's data or an `error` with a stable `code` and a message
//! for people. Parsing never panics: any line gets either a `Request` or a `ProtocolError` that
//! becomes an error reply. Replies are read leniently (unknown fields ignored) so later versions
//! can add fields without breaking older clients.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The version of this protocol. A request with another version is refused with a reply that
/// says which version this instance speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// The longest request line accepted, in bytes. Text sent to a pane counts, so this is generous.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Every verb, for messages that list them.
pub const VERBS: &[&str] = &[
    "ls",
    "new",
    "split",
    "send",
    "capture",
    "focus",
    "close",
    "kill",
    "resize",
    "restart",
    "notify",
    "next_waiting",
    "mute",
    "unmute",
    "reconnect",
    "stop",
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verb", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// Describe this instance and every pane in it.
    Ls,
    /// Open a tab running `command` (empty: the user's shell).
    New {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        #[serde(default)]
        command: Vec<String>,
    },
    /// Split `pane`, running `command` (empty: the user's shell) in the new pane.
    Split {
        pane: u32,
        direction: SplitDirection,
        #[serde(default)]
        command: Vec<String>,
    },
    /// Type into a pane: `text` literally, or `keys` as a key spec (`"echo hi Enter"`, `"C-c"`).
    Send {
        pane: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keys: Option<String>,
    },
    /// The pane's screen as text (the `paddock replay` format), optionally after its scrollback.
    Capture {
        pane: u32,
        #[serde(default)]
        scrollback: bool,
    },
    Focus {
        pane: u32,
    },
    /// Hang up the pane's process group, kill what is left after a grace period, remove it.
    Close {
        pane: u32,
    },
    /// Kill the pane's process group now; the pane stays, with its last screen, until closed.
    Kill {
        pane: u32,
    },
    /// Set one pane's size (headless instances, which have no window to lay panes out in).
    Resize {
        pane: u32,
        cols: usize,
        rows: usize,
    },
    /// Start a configured thread's pane again with the thread's definition in the current
    /// configuration (its old program is closed as `close` would).
    Restart {
        pane: u32,
    },
    /// The pane's program needs its user (from an agent's hook script): its pulse turns to
    /// needs-you with `text` as the reason, until someone types into it.
    Notify {
        pane: u32,
        text: String,
    },
    /// Focus the pane that has waited for its user longest, across tabs.
    NextWaiting,
    /// Mute a pane: it never notifies, and never counts among the panes that wait for their
    /// user (`next_waiting`, the order of `ls`, its tab's mark), until unmuted.
    Mute {
        pane: u32,
    },
    Unmute {
        pane: u32,
    },
    /// Drop the connection to `host` (as the configuration names it) and connect again now:
    /// its threads' panes run on there and are found again.
    Reconnect {
        host: String,
    },
    /// End the instance: every pane is closed.
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SplitDirection {
    Right,
    Down,
}

/// Why a request line was not understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError {
    pub code: ErrorCode,
    pub message: String,
}

/// Stable error codes: scripts match on these, people read the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Not JSON, or not a JSON object.
    Malformed,
    /// No protocol version, or one this instance does not speak.
    Version,
    UnknownVerb,
    /// The verb is known but its fields are wrong.
    BadRequest,
    TooLarge,
    NoSuchPane,
    /// The request was understood but could not be carried out (a program that cannot start…).
    Failed,
    /// Too many connections at once.
    Busy,
    /// The peer runs as another user.
    Refused,
    /// The instance did not answer in time.
    Timeout,
    /// An error code from a newer instance that this client does not know.
    #[serde(other)]
    Other,
}

impl ProtocolError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
        ProtocolError { code, message: message.into() }
    }
}

/// Parse one request line (without its newline).
pub fn parse_request(line: &[u8]) -> Result<Request, ProtocolError> {
    let malformed = |what: String| ProtocolError::new(ErrorCode::Malformed, what);
    let value: Value = serde_json::from_slice(line)
        .map_err(|e| malformed(format!("the request is not valid JSON: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(malformed("the request must be a JSON object".into()));
    };
    match fields.remove("protocol") {
        Some(Value::Number(n)) if n.as_u64() == Some(u64::from(PROTOCOL_VERSION)) => {}
        Some(other) => {
            return Err(ProtocolError::new(
                ErrorCode::Version,
                format!("protocol {other} is not spoken here; this instance speaks protocol {PROTOCOL_VERSION}"),
            ))
        }
        None => {
            return Err(ProtocolError::new(
                ErrorCode::Version,
                format!("the request has no \"protocol\" field (this instance speaks protocol {PROTOCOL_VERSION})"),
            ))
        }
    }
    match fields.get("verb") {
        Some(Value::String(verb)) if VERBS.contains(&verb.as_str()) => {}
        Some(Value::String(verb)) => {
            return Err(ProtocolError::new(
                ErrorCode::UnknownVerb,
                format!("unknown verb {verb:?}; known verbs: {}", VERBS.join(", ")),
            ))
        }
        _ => {
            return Err(ProtocolError::new(
                ErrorCode::BadRequest,
                format!("the request needs a \"verb\" string, one of: {}", VERBS.join(", ")),
            ))
        }
    }
    let request: Request = serde_json::from_value(Value::Object(fields))
        .map_err(|e| ProtocolError::new(ErrorCode::BadRequest, e.to_string()))?;
    if let Request::Send { text, keys, .. } = &request {
        if text.is_some() == keys.is_some() {
            return Err(ProtocolError::new(
                ErrorCode::BadRequest,
                "send needs exactly one of \"text\" and \"keys\"",
            ));
        }
    }
    Ok(request)
}

/// A request as sent on the wire. Fails only for paths that are not UTF-8, which JSON cannot
/// carry.
pub fn encode_request(request: &Request) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct Envelope<'a> {
        protocol: u32,
        #[serde(flatten)]
        request: &'a Request,
    }
    let envelope = Envelope { protocol: PROTOCOL_VERSION, request };
    let mut line = serde_json::to_string(&envelope)?;
    line.push('\n');
    Ok(line)
}

/// One reply. Fields a verb does not use are absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub protocol: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// The new pane (`new`, `split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane: Option<u32>,
    /// The captured text (`capture`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// This instance and its panes (`ls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<InstanceInfo>,
    /// How a closed pane's program ended (`close`): its exit code, or null after a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<Option<i32>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

impl Reply {
    pub fn ok() -> Reply {
        Reply { protocol: PROTOCOL_VERSION, ok: true, ..Reply::default() }
    }

    pub fn error(code: ErrorCode, message: impl Into<String>) -> Reply {
        let error = Some(ErrorBody { code, message: message.into() });
        Reply { protocol: PROTOCOL_VERSION, ok: false, error, ..Reply::default() }
    }

    /// The reply as one line, newline included. A reply that cannot be encoded (a path that
    /// is not UTF-8) becomes an error reply saying so.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_else(|e| {
            let error = Reply::error(ErrorCode::Failed, format!("cannot encode the reply: {e}"));
            serde_json::to_string(&error).unwrap_or_default()
        });
        line.push('\n');
        line
    }
}

impl From<ProtocolError> for Reply {
    fn from(e: ProtocolError) -> Reply {
        Reply::error(e.code, e.message)
    }
}

/// One running instance, as `paddock ls --json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InstanceInfo {
    pub pid: u32,
    pub socket: PathBuf,
    pub panes: Vec<PaneInfo>,
    /// What is wrong with the configuration file now, when something is (the last good
    /// configuration stays in force).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_problems: Option<String>,
    /// Whether each pane has a cgroup of its own, and what is in effect, in words.
    #[serde(default)]
    pub cgroups: String,
    /// The windows attached to this instance (other than its own, if it has one).
    #[serde(default)]
    pub windows: Vec<WindowInfo>,
}

/// A window attached to an instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowInfo {
    /// Its process, where the system tells it.
    pub pid: Option<u32>,
}

/// A brokered secret of a pane: `active`, `suspended` or `revoked`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokeredInfo {
    pub name: String,
    pub state: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaneInfo {
    pub id: u32,
    pub tab: String,
    pub thread: Option<String>,
    pub command: Vec<String>,
    pub pid: Option<u32>,
    pub cols: usize,
    pub rows: usize,
    pub status: PaneState,
    pub exit_code: Option<i32>,
    pub focused: bool,
    /// The title the program set (OSC 0/2), if any.
    #[serde(default)]
    pub title: Option<String>,
    /// The pane's thread is defined differently in the configuration now than when it
    /// started (`restart` applies the new definition).
    #[serde(default)]
    pub config_changed: bool,
    /// How the new definition would loosen the pane's lock, in words (empty: it would not).
    /// Only the user's restart applies it, never one from inside a locked pane.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_widening: Vec<String>,
    /// What the pane's folder lock enforces.
    #[serde(default)]
    pub lock: Option<LockInfo>,
    /// The names of the secrets its program was given (never values).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Those of them the pane's broker puts in, and whether it may now.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub brokered: Vec<BrokeredInfo>,
    /// What its program is doing now (absent for a pane that runs nothing).
    #[serde(default)]
    pub pulse: Option<PulseInfo>,
    /// What a locked pane's network reaches, and what its proxy decided (absent when not
    /// locked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetInfo>,
    /// The host its thread runs on, for a thread of another host (absent: this one). Its lock,
    /// pulse and secrets are then as that host's paddock describes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// A locked pane's network: `mode` is off, on or allow; with allow, the connections its proxy
/// let through and refused, and the last one refused (`host:port`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInfo {
    pub mode: String,
    #[serde(default)]
    pub allowed: u64,
    #[serde(default)]
    pub denied: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_denied: Option<String>,
}

/// A pane's pulse: `state` is working, quiet, needs_you or exited.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PulseInfo {
    pub state: String,
    pub cpu_percent: f32,
    pub out_bytes_per_s: f32,
    /// Seconds in this state.
    pub since_s: f32,
    /// Why it needs its user (needs_you only).
    pub reason: Option<String>,
    /// Muted by its user: it never notifies and never counts among the waiting.
    #[serde(default)]
    pub muted: bool,
    /// Memory in use: its cgroup's, else its process tree's resident memory.
    #[serde(default)]
    pub memory_bytes: u64,
}

/// A pane's lock: `level` is locked, degraded, unlocked or refused; `detail` says what is
/// enforced (locked), what is not (degraded) or why not (refused).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockInfo {
    pub level: String,
    pub detail: String,
    /// For a locked program, the names of paddock's environment variables it got (its
    /// environment is built from an allow-list; never the values). Absent when not locked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env_passed: Option<Vec<String>>,
    /// What the locked program left git to run outside its lock, found when it ended: each
    /// file and the command.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub git_planted: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaneState {
    Running,
    Exited,
    /// The pane shows a notice and runs no program (a thread refused to start).
    NoProgram,
    /// Its thread runs on another host, and the connection there dropped: it runs on there,
    /// and paddock connects again.
    Disconnected,
}

mod window;
pub use window::{WindowAction, WindowView};

#[cfg(test)]
mod tests;
