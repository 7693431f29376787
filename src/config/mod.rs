//! The configuration file (RON): font, theme, scrollback, padding, key bindings and the agent
//! threads started at launch, with their folder locks and vault references.
//!
//! Two stages: serde reads the file into `raw::RawConfig` (every field optional, unknown
//! fields refused), then `validate` checks it and builds a [`Config`]. Every problem becomes a
//! [`Diagnostic`] with the line:column, the field path (`threads[2].lock.write[0]`), what was
//! expected and what was found. paddock never writes the file.

mod locate;
mod raw;
mod validate;
pub mod watch;
mod widening;

pub use widening::widening;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use locate::{FieldPath, Position, Segment};
pub use validate::{FONT_SIZES, MAX_PADDING, MAX_SCROLLBACK, PULSE_RATES};

use crate::input::KeyBindings;
use crate::term::Rgb;
pub use crate::vault::SecretRef;

/// A validated configuration. `Config::default()` is what paddock uses without a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub font: FontConfig,
    pub theme: ThemeColors,
    /// Lines of scrollback kept per pane.
    pub scrollback_lines: usize,
    /// Pixels between the window's edge and the panes.
    pub padding: u32,
    /// Announce a pane that needs you while it is out of sight (window only).
    pub desktop_notifications: bool,
    /// How many times a second the pulse samples each pane.
    pub pulse_rate: u32,
    /// Whether pane borders glow with their pulse (the badges and sparklines stay either way).
    pub pulse_glow: bool,
    pub keys: KeyBindings,
    /// The agent threads opened at launch, in order.
    pub threads: Vec<ThreadSpec>,
    /// Names the network proxy maps to addresses itself, for threads whose network is an
    /// allow-list (split-horizon names, a local test server); trusted as written.
    pub proxy_hosts: BTreeMap<String, IpAddr>,
    /// How to reach each host threads may run on, by the name they use (`hosts`).
    pub hosts: BTreeMap<String, HostSettings>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FontConfig {
    pub family: String,
    /// In points (logical pixels at scale 1).
    pub size: f32,
}

/// The font paddock draws with when the configuration names none: the one it bundles
/// (assets/fonts), so that it looks the same on every machine.
pub const DEFAULT_FONT_FAMILY: &str = "JetBrains Mono";

#[derive(Clone, Debug, PartialEq)]
pub struct ThemeColors {
    pub foreground: Rgb,
    pub background: Rgb,
    pub cursor: Rgb,
    pub selection: Rgb,
    /// The 16 ANSI colors (programs may still change them with OSC 4).
    pub palette: [Rgb; 16],
}

/// One agent thread: a named tab (or split) running a command.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadSpec {
    pub name: String,
    /// The program and its arguments; empty: the user's shell. Never run through a shell.
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// Names of paddock's own environment variables a locked thread gets besides the ones every
    /// lock passes (`sandbox::env`); an unlocked thread gets all of them anyway.
    pub env_pass: Vec<String>,
    pub place: Placement,
    pub lock: Option<LockPolicy>,
    /// The config says, in so many words, that this thread runs without a lock.
    pub unlocked: bool,
    pub secrets: Vec<SecretRef>,
    pub pulse: PulseSettings,
    /// Its panes' cgroup limits (Linux, where the controllers are paddock's to use).
    pub limits: ThreadLimits,
    /// What its programs' clipboard writes (OSC 52) do; `None`: the default for its lock.
    pub clipboard: Option<ClipboardRule>,
    /// A git worktree of its own: made (or reused) when it starts, its working folder and,
    /// locked, a writable folder of its lock.
    pub worktree: Option<Worktree>,
    /// It runs on another host, which checks and enforces its definition: the fields above
    /// are then their defaults here, but for its name and place.
    pub remote: Option<RemoteThread>,
}

/// A thread that runs on another host (`host:`), reached with ssh.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteThread {
    pub host: HostSettings,
    /// The thread as the configuration writes it, less its `host` and `place`: what the host's
    /// paddock is handed to check and run.
    pub definition: String,
}

/// How to reach a host: the configuration's `hosts` entry, or the thread's `host` as it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostSettings {
    /// As the thread names it (a key of `hosts`, or the destination itself).
    pub name: String,
    /// What ssh is given: `user@build-box`, or a name from `~/.ssh/config`.
    pub destination: String,
    /// The paddock to run there.
    pub paddock_path: String,
    /// ssh options put before the destination.
    pub ssh_options: Vec<String>,
}

/// A thread's own worktree of a repository, on a branch (`app::worktree`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Worktree {
    /// The repository, as written (absolute).
    pub repo: PathBuf,
    /// The branch, made from the repository's HEAD when it does not exist yet.
    pub branch: String,
}

/// A thread's `limits`: memory in bytes (`memory.max`) and cores' worth of CPU (`cpu.max`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThreadLimits {
    pub memory_bytes: Option<u64>,
    pub cpus: Option<f32>,
}

impl ThreadSpec {
    /// What its clipboard writes do: as configured, else refused for a locked thread (a locked
    /// agent could fill the clipboard with a command the user then pastes into an unlocked
    /// shell) and allowed for any other.
    pub fn clipboard_rule(&self) -> ClipboardRule {
        // A thread of another host counts as locked: its lock is that host's, not known here.
        let locked = self.lock.is_some() || self.remote.is_some();
        let default = if locked { ClipboardRule::Deny } else { ClipboardRule::Allow };
        self.clipboard.unwrap_or(default)
    }
}

/// What a pane's clipboard writes (OSC 52) do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename = "Clipboard")]
pub enum ClipboardRule {
    /// Refused; the pane's title strip says so.
    Deny,
    /// Held until the user lets it through with the `allow_clipboard` key; the title strip
    /// shows the request.
    Ask,
    /// Written at once.
    Allow,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// A tab of its own.
    #[default]
    Tab,
    /// A split to the right of the named thread's pane.
    RightOf(String),
    /// A split below the named thread's pane.
    Below(String),
}

/// A folder lock: what the thread's programs may write and read, and paths inside those
/// folders they may not touch. Enforced by the kernel through `sandbox`; a lock that cannot be
/// enforced as written keeps its thread from starting.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockPolicy {
    pub write: Vec<PathBuf>,
    pub read: Vec<PathBuf>,
    pub protect: Vec<PathBuf>,
    pub network: Network,
    /// Unix sockets outside its folders it may connect to (an ssh agent, a database).
    pub sockets: Vec<PathBuf>,
    /// `/` or the home folder as a `write` folder: refused unless this says yes.
    pub allow_broad_write: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Network {
    Off,
    On,
    /// Only these hosts and ports, through paddock's proxy (`egress`); nothing else.
    Allow(Vec<crate::egress::Rule>),
}

/// When a thread counts as busy or quiet (read by the pulse).
#[derive(Clone, Debug, PartialEq)]
pub struct PulseSettings {
    /// CPU percent of one core, over the thread's process tree, above which it is busy.
    pub busy_cpu: f32,
    /// Seconds without output or CPU after which a thread is quiet.
    pub quiet_after: u32,
    /// Regular expressions over the screen's rows up to the cursor that mean the agent waits
    /// for a person.
    pub needs_you: Vec<String>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            font: FontConfig { family: DEFAULT_FONT_FAMILY.to_owned(), size: 15.0 },
            theme: ThemeColors::default(),
            scrollback_lines: 10_000,
            padding: 0,
            desktop_notifications: true,
            pulse_rate: 4,
            pulse_glow: true,
            keys: KeyBindings::default(),
            threads: Vec::new(),
            proxy_hosts: BTreeMap::new(),
            hosts: BTreeMap::new(),
        }
    }
}

impl Default for ThemeColors {
    /// paddock's own colors: light grey on a near-black blue, an amber cursor, and xterm's 16
    /// ANSI colors. The window builds its theme from these.
    fn default() -> ThemeColors {
        ThemeColors {
            foreground: Rgb { r: 0xd8, g: 0xd8, b: 0xd8 },
            background: Rgb { r: 0x18, g: 0x18, b: 0x1c },
            cursor: Rgb { r: 0xf0, g: 0xc0, b: 0x40 },
            selection: Rgb { r: 0x3a, g: 0x4e, b: 0x7a },
            palette: std::array::from_fn(|i| crate::term::default_palette(i as u8)),
        }
    }
}

impl Default for PulseSettings {
    fn default() -> PulseSettings {
        PulseSettings { busy_cpu: 5.0, quiet_after: 30, needs_you: Vec::new() }
    }
}

/// One problem in a configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub position: Position,
    /// Empty for problems of the whole file (syntax before any field).
    pub path: FieldPath,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Position { line, col } = self.position;
        if self.path.0.is_empty() {
            write!(f, "{line}:{col}: {}", self.message)
        } else {
            write!(f, "{line}:{col}: {}: {}", self.path, self.message)
        }
    }
}

/// Every problem found in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    pub file: PathBuf,
    pub items: Vec<Diagnostic>,
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}:{item}", self.file.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Where the configuration is read from when no `--config` is given:
/// `$XDG_CONFIG_HOME/paddock/config.ron` (Linux), `~/Library/Application Support/paddock/
/// config.ron` (macOS), `%APPDATA%\paddock\config.ron` (Windows).
pub fn default_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("paddock").join("config.ron"))
}

/// Parse and check a configuration text (`~` is the user's home folder).
pub fn parse(src: &str) -> Result<Config, Vec<Diagnostic>> {
    parse_with_home(src, dirs::home_dir())
}

/// Parse and check a configuration text, `~` being `home`.
pub fn parse_with_home(src: &str, home: Option<PathBuf>) -> Result<Config, Vec<Diagnostic>> {
    let raw = read_raw(src).map_err(|d| vec![d])?;
    validate::validate(src, raw, home)
}

/// One thread as the configuration writes it (`(name: "agent", command: […], lock: …)`),
/// checked as a thread of a file is, `~` being this user's home: how a paddock on another host
/// hands this one a thread to run here. The problems, one per line, when it is not exactly
/// one good thread.
pub fn parse_one_thread(text: &str) -> Result<ThreadSpec, String> {
    // On a line of its own, so that problems' lines count from the thread's first line + 1.
    let problems = |items: Vec<Diagnostic>| {
        items.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
    };
    let config = parse(&format!("(threads: [\n{text}\n])")).map_err(problems)?;
    match <[ThreadSpec; 1]>::try_from(config.threads) {
        Ok([thread]) => Ok(thread),
        Err(threads) => Err(format!("{} threads where one was expected", threads.len())),
    }
}

/// Read `path`: `Ok(None)` when it does not exist (built-in defaults apply).
/// The configured thread `name`, from the file at `path` (the default one when `None`), for
/// the commands that act on one thread: why not when the file has problems, or no thread of
/// that name (naming those there are).
pub fn configured_thread(path: Option<&Path>, name: &str) -> Result<ThreadSpec, String> {
    let path = path.map(Path::to_owned).or_else(default_path);
    let loaded = match &path {
        Some(path) => load(path)
            .map_err(|problems| {
                format!("{} has problems (see `paddock config check`):\n{problems}", path.display())
            })?
            .unwrap_or_default(),
        None => Config::default(),
    };
    let found = loaded.threads.iter().find(|t| t.name == name).cloned();
    found.ok_or_else(|| {
        let names: Vec<&str> = loaded.threads.iter().map(|t| t.name.as_str()).collect();
        format!("no thread named \"{name}\" in the configuration (threads: {})", names.join(", "))
    })
}

pub fn load(path: &Path) -> Result<Option<Config>, Diagnostics> {
    let src = match std::fs::read_to_string(path) {
        Ok(src) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let message = format!("cannot read the file: {e}");
            let item = Diagnostic {
                position: Position { line: 1, col: 1 },
                path: FieldPath::default(),
                message,
            };
            return Err(Diagnostics { file: path.to_owned(), items: vec![item] });
        }
    };
    parse(&src).map(Some).map_err(|items| Diagnostics { file: path.to_owned(), items })
}

fn ron_options() -> ron::Options {
    // `cwd: "~/src"` rather than `cwd: Some("~/src")`.
    ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
}

/// Stage one: the file into the raw schema, the first error with its place and field path.
fn read_raw(src: &str) -> Result<raw::RawConfig, Diagnostic> {
    let whole_file = |e: ron::error::SpannedError| Diagnostic {
        position: Position { line: e.span.start.line, col: e.span.start.col },
        path: FieldPath::default(),
        message: describe(&e.code, src, e.span.start),
    };
    let options = ron_options();
    let mut de = ron::Deserializer::from_str_with_options(src, &options).map_err(whole_file)?;
    let mut track = serde_path_to_error::Track::new();
    let result =
        raw::RawConfig::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    let error = match result {
        Ok(raw) => match de.end() {
            Ok(()) => return Ok(raw),
            Err(code) => de.span_error(code),
        },
        Err(code) => de.span_error(code),
    };
    let path = from_serde_path(&track.path());
    let at = past_whitespace(src, error.span.start);
    let mut position = Position { line: at.line, col: at.col };
    if at_end(&error.code, src, at) {
        // Where the missing text should have been.
        position = locate::position_of(src, src.trim_end().len());
    }
    Err(Diagnostic { position, path, message: describe(&error.code, src, at) })
}

fn from_serde_path(path: &serde_path_to_error::Path) -> FieldPath {
    use serde_path_to_error::Segment as S;
    FieldPath(
        path.iter()
            .filter_map(|segment| match segment {
                S::Seq { index } => Some(Segment::Index(*index)),
                S::Map { key } => Some(Segment::Field(key.clone())),
                S::Enum { .. } | S::Unknown => None,
            })
            .collect(),
    )
}

/// RON's error in words a person editing the file can act on: what was expected, what was
/// found, and for a misspelt name the nearest known one.
fn describe(code: &ron::Error, src: &str, at: ron::error::Position) -> String {
    use ron::Error as E;
    match code {
        E::NoSuchStructField { expected, found, .. } => {
            unknown("field", found, expected.iter().copied())
        }
        E::NoSuchEnumVariant { expected, found, .. } => {
            unknown("choice", found, expected.iter().copied())
        }
        E::DuplicateStructField { field, .. } => format!("`{field}` is given twice"),
        E::MissingStructField { field, .. } => format!("`{field}` is required"),
        E::InvalidValueForType { expected, found } => {
            format!("expected {expected}, found {found}")
        }
        E::Message(message) => message.clone(),
        E::ExpectedDifferentStructName { expected, found } => {
            format!("expected `{expected}(…)` or `(…)` here, found `{found}(…)`")
        }
        _ if at_end(code, src, at) => {
            "the file ends before the configuration does: a `(`, `[`, `{` or `\"` is not \
             closed"
                .to_owned()
        }
        E::TrailingCharacters => match token_at(src, at) {
            Some(found) => {
                format!("expected nothing after the configuration's closing `)`, found `{found}`")
            }
            None => "expected nothing after the configuration's closing `)`".to_owned(),
        },
        other => {
            let found = token_at(src, at);
            let mut message = other.to_string();
            if let Some(first) = message.get(..1) {
                message = first.to_lowercase() + &message[1..];
            }
            match found {
                Some(found) => format!("{message}, found `{found}`"),
                None => format!("{message}, found the end of the file"),
            }
        }
    }
}

/// `unknown field `nmae`: did you mean `name`? (known: …)`.
pub(crate) fn unknown<'a>(what: &str, found: &str, known: impl Iterator<Item = &'a str>) -> String {
    let known: Vec<&str> = known.collect();
    let nearest = known
        .iter()
        .map(|name| (strsim::damerau_levenshtein(found, name), *name))
        .filter(|(distance, name)| *distance <= (name.len() / 3).max(2))
        .min();
    let list = known.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
    match nearest {
        Some((_, name)) => {
            format!("unknown {what} `{found}`: did you mean `{name}`? (known: {list})")
        }
        None => format!("unknown {what} `{found}` (known: {list})"),
    }
}

/// RON points just before a value it rejects; the value is what the person should look at.
fn past_whitespace(src: &str, at: ron::error::Position) -> ron::error::Position {
    let offset = offset_of(src, at);
    let rest = &src[offset..];
    let skipped = rest.len() - rest.trim_start().len();
    if skipped == rest.len() {
        return at;
    }
    let Position { line, col } = locate::position_of(src, offset + skipped);
    ron::error::Position { line, col }
}

fn offset_of(src: &str, at: ron::error::Position) -> usize {
    let line_start: usize =
        src.split_inclusive('\n').take(at.line.saturating_sub(1)).map(str::len).sum();
    let line_start = line_start.min(src.len());
    let in_line: usize =
        src[line_start..].chars().take(at.col.saturating_sub(1)).map(char::len_utf8).sum();
    line_start + in_line
}

/// Whether the error is that the file ended too soon.
fn at_end(code: &ron::Error, src: &str, at: ron::error::Position) -> bool {
    matches!(code, ron::Error::Eof)
        || (!matches!(code, ron::Error::TrailingCharacters) && ends_after(src, at))
}

/// Whether nothing but whitespace and comments follows the token at `at`: the file ended
/// where more was needed.
fn ends_after(src: &str, at: ron::error::Position) -> bool {
    let offset = offset_of(src, at);
    let token = token_at(src, at).map_or(0, |t| t.len());
    let rest = src.get(offset + token..).unwrap_or("");
    rest.lines().all(|line| {
        let line = line.trim();
        line.is_empty() || line.starts_with("//")
    })
}

/// The text at a position, up to the end of its token, for "found …".
fn token_at(src: &str, at: ron::error::Position) -> Option<String> {
    let line = src.lines().nth(at.line.checked_sub(1)?)?;
    let rest: String = line.chars().skip(at.col.saturating_sub(1)).collect();
    let rest = rest.trim_start();
    if rest.is_empty() {
        return None;
    }
    let end = rest
        .char_indices()
        .find(|&(i, c)| i > 0 && (c.is_whitespace() || ",()[]{}:".contains(c)))
        .map_or(rest.len(), |(i, _)| i);
    Some(rest[..end].chars().take(40).collect())
}
