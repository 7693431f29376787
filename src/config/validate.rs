//! Stage two: the raw file into a [`Config`], every problem a diagnostic that points at the
//! value at fault. Checks go on after a problem, so one run shows them all.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::path::PathBuf;

use super::locate::{locate, FieldPath};
use super::raw::{
    RawConfig, RawLimits, RawLock, RawNetwork, RawPlace, RawPulse, RawThread, RawWorktree,
};
use super::{
    Config, Diagnostic, LockPolicy, Network, Placement, PulseSettings, ThemeColors, ThreadLimits,
    ThreadSpec, Worktree,
};
use crate::egress::rules::HostRule;
use crate::egress::Rule;
use crate::input::keymap::{action_name, action_named, parse_chord, ACTIONS};
use crate::term::Rgb;

#[path = "validate_secrets.rs"]
mod validate_secrets;
use validate_secrets::secrets;
#[path = "validate_hosts.rs"]
mod validate_hosts;
use validate_hosts::{hosts, remote_secrets, remote_thread};

pub const MAX_SCROLLBACK: usize = 1_000_000;
pub const MAX_PADDING: u32 = 200;
pub const FONT_SIZES: std::ops::RangeInclusive<f32> = 4.0..=200.0;
/// Pulse samples per second: more than 20 costs CPU and shows nothing a person can see.
pub const PULSE_RATES: std::ops::RangeInclusive<u32> = 1..=20;

struct Checker<'a> {
    src: &'a str,
    diagnostics: Vec<Diagnostic>,
    home: Option<PathBuf>,
}

impl Checker<'_> {
    fn report(&mut self, path: &FieldPath, message: impl Into<String>) {
        let position = locate(self.src, path);
        self.diagnostics.push(Diagnostic { position, path: path.clone(), message: message.into() });
    }

    /// `value` when it is at most `max`; else a problem.
    fn at_most(&mut self, path: &FieldPath, value: usize, max: usize, unit: &str) -> Option<usize> {
        if value <= max {
            Some(value)
        } else {
            self.report(path, format!("expected at most {max} {unit}, found {value}"));
            None
        }
    }

    /// `~` and `~/…` expanded; relative paths refused.
    fn absolute(&mut self, path: &FieldPath, text: &str) -> Option<PathBuf> {
        let expanded = match (text.strip_prefix('~'), &self.home) {
            (Some(""), Some(home)) => home.clone(),
            (Some(rest), Some(home)) if rest.starts_with('/') => home.join(&rest[1..]),
            _ => PathBuf::from(text),
        };
        if expanded.is_absolute() {
            Some(expanded)
        } else {
            let hint = if text.starts_with('~') {
                " (`~` only works alone or as `~/…`)"
            } else {
                " (start it with `/` or `~/`)"
            };
            self.report(path, format!("expected an absolute path, found \"{text}\"{hint}"));
            None
        }
    }

    /// An absolute path to a folder that exists.
    fn folder(&mut self, path: &FieldPath, text: &str) -> Option<PathBuf> {
        let folder = self.absolute(path, text)?;
        match std::fs::metadata(&folder) {
            Ok(meta) if meta.is_dir() => Some(folder),
            Ok(_) => {
                self.report(path, format!("expected a folder, found a file: {}", folder.display()));
                None
            }
            Err(e) => {
                self.report(path, format!("the folder {} does not exist ({e})", folder.display()));
                None
            }
        }
    }
}

pub fn validate(
    src: &str,
    raw: RawConfig,
    home: Option<PathBuf>,
) -> Result<Config, Vec<Diagnostic>> {
    let mut check = Checker { src, diagnostics: Vec::new(), home };
    let mut config = Config::default();
    let root = FieldPath::default();
    if let Some(font) = raw.font {
        let at = root.field("font");
        if let Some(family) = font.family {
            if family.trim().is_empty() {
                check.report(&at.field("family"), "expected a font family name, found \"\"");
            } else {
                config.font.family = family;
            }
        }
        if let Some(size) = font.size {
            if FONT_SIZES.contains(&size) {
                config.font.size = size;
            } else {
                let (low, high) = (FONT_SIZES.start(), FONT_SIZES.end());
                check.report(&at.field("size"), format!("expected {low} to {high}, found {size}"));
            }
        }
    }
    if let Some(theme) = raw.theme {
        config.theme = theme_colors(&mut check, &root.field("theme"), theme);
    }
    let at = root.field("scrollback");
    if let Some(lines) = raw.scrollback.and_then(|n| check.at_most(&at, n, MAX_SCROLLBACK, "lines"))
    {
        config.scrollback_lines = lines;
    }
    let at = root.field("padding");
    let max = MAX_PADDING as usize;
    if let Some(padding) = raw.padding.and_then(|p| check.at_most(&at, p as usize, max, "pixels")) {
        config.padding = padding as u32;
    }
    if let Some(notify) = raw.desktop_notifications {
        config.desktop_notifications = notify;
    }
    if let Some(rate) = raw.pulse_rate {
        if PULSE_RATES.contains(&rate) {
            config.pulse_rate = rate;
        } else {
            let (low, high) = (PULSE_RATES.start(), PULSE_RATES.end());
            let message = format!("expected {low} to {high} samples a second, found {rate}");
            check.report(&root.field("pulse_rate"), message);
        }
    }
    if let Some(glow) = raw.pulse_glow {
        config.pulse_glow = glow;
    }
    if let Some(keys) = raw.keys {
        keys_into(&mut check, &root.field("keys"), keys, &mut config.keys);
    }
    if let Some(hosts) = raw.proxy_hosts {
        config.proxy_hosts = proxy_hosts(&mut check, &root.field("proxy_hosts"), hosts);
    }
    let hosts = hosts(&mut check, &root.field("hosts"), raw.hosts.unwrap_or_default());
    let threads = raw.threads.unwrap_or_default();
    let mut names: HashMap<String, usize> = HashMap::new();
    for (index, thread) in threads.into_iter().enumerate() {
        let at = root.field("threads").index(index);
        let name = thread.name.clone();
        if let Some(spec) = thread_spec(&mut check, &at, thread, &names, &hosts) {
            config.threads.push(spec);
        }
        // Known from here on even when the thread has other problems, so that a duplicate
        // or a split of it is judged as the person meant it.
        if let Some(name) = name {
            names.entry(name).or_insert(index);
        }
    }
    config.hosts = hosts;
    if check.diagnostics.is_empty() {
        Ok(config)
    } else {
        let mut diagnostics = check.diagnostics;
        diagnostics.sort_by_key(|d| (d.position.line, d.position.col));
        Err(diagnostics)
    }
}

fn theme_colors(
    check: &mut Checker<'_>,
    at: &FieldPath,
    theme: super::raw::RawTheme,
) -> ThemeColors {
    let mut colors = ThemeColors::default();
    let fields = [
        ("foreground", theme.foreground, &mut colors.foreground),
        ("background", theme.background, &mut colors.background),
        ("cursor", theme.cursor, &mut colors.cursor),
        ("selection", theme.selection, &mut colors.selection),
    ];
    for (name, text, slot) in fields {
        if let Some(text) = text {
            if let Some(color) = color(check, &at.field(name), &text) {
                *slot = color;
            }
        }
    }
    if let Some(palette) = theme.palette {
        let at = at.field("palette");
        if palette.len() != 16 {
            let found = palette.len();
            check.report(&at, format!("expected 16 colors (the ANSI palette), found {found}"));
        } else {
            for (i, text) in palette.iter().enumerate() {
                if let Some(color) = color(check, &at.index(i), text) {
                    colors.palette[i] = color;
                }
            }
        }
    }
    colors
}

fn color(check: &mut Checker<'_>, at: &FieldPath, text: &str) -> Option<Rgb> {
    let hex = text.strip_prefix('#').filter(|h| h.len() == 6 && h.is_ascii());
    let byte = |hex: &str, i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    let parsed = hex.and_then(|h| Some(Rgb { r: byte(h, 0)?, g: byte(h, 2)?, b: byte(h, 4)? }));
    if parsed.is_none() {
        check.report(at, format!("expected a color as \"#rrggbb\", found \"{text}\""));
    }
    parsed
}

fn keys_into(
    check: &mut Checker<'_>,
    at: &FieldPath,
    keys: std::collections::BTreeMap<String, String>,
    bindings: &mut crate::input::KeyBindings,
) {
    // In the file's order, so that a conflict is reported at the later of the two.
    let mut entries: Vec<(String, String)> = keys.into_iter().collect();
    entries.sort_by_key(|(name, _)| locate_order(check.src, &at.key_name(name)));
    let mut set = Vec::new();
    for (name, chord_text) in entries {
        let Some(action) = action_named(&name) else {
            let known = ACTIONS.iter().map(|(_, n, _, _)| *n);
            check.report(&at.key_name(&name), super::unknown("action", &name, known));
            continue;
        };
        if chord_text.eq_ignore_ascii_case("none") {
            bindings.bind(action, None);
            continue;
        }
        match parse_chord(&chord_text) {
            Some(chord) => {
                bindings.bind(action, Some(chord));
                set.push((action, chord, name));
            }
            None => check.report(
                &at.key(&name),
                format!(
                    "expected a key chord such as \"Ctrl+Shift+T\" (Ctrl, Alt, Shift, then one \
                     key: a character or a name like PageUp, F5, Enter) or \"none\", found \"{chord_text}\""
                ),
            ),
        }
    }
    for (i, (action, chord, name)) in set.iter().enumerate() {
        let (action, chord) = (*action, *chord);
        let later = |other| set[i + 1..].iter().any(|(a, _, _)| *a == other);
        // Two chords of the file that collide are reported once, at the second.
        if let Some(other) = bindings.bound_to(chord, action).filter(|o| !later(*o)) {
            let other = action_name(other);
            let text = check_text(check, &at.key(name));
            check.report(
                &at.key(name),
                format!(
                    "{text} is already bound to `{other}` (unbind it with `\"{other}\": \"none\"`)"
                ),
            );
        }
    }
}

fn locate_order(src: &str, path: &FieldPath) -> (usize, usize) {
    let position = locate(src, path);
    (position.line, position.col)
}

fn check_text(check: &Checker<'_>, path: &FieldPath) -> String {
    let position = locate(check.src, path);
    let line = check.src.lines().nth(position.line - 1).unwrap_or("");
    let rest: String = line.chars().skip(position.col - 1).collect();
    rest.split('"')
        .nth(1)
        .map(|chord| format!("\"{chord}\""))
        .unwrap_or_else(|| "this chord".into())
}

fn thread_spec(
    check: &mut Checker<'_>,
    at: &FieldPath,
    mut raw: RawThread,
    earlier: &HashMap<String, usize>,
    hosts: &BTreeMap<String, super::HostSettings>,
) -> Option<ThreadSpec> {
    let before = check.diagnostics.len();
    let name = match raw.name {
        None => {
            check.report(at, "`name` is required: every thread needs a unique name");
            String::new()
        }
        Some(name) if name.trim().is_empty() || name.chars().any(char::is_control) => {
            check.report(&at.field("name"), format!("expected a name, found {name:?}"));
            String::new()
        }
        Some(name) => {
            if let Some(first) = earlier.get(&name) {
                check.report(
                    &at.field("name"),
                    format!("a thread named \"{name}\" is already defined (threads[{first}])"),
                );
            }
            name
        }
    };
    let place = match raw.place.take() {
        None | Some(RawPlace::Tab) => Placement::Tab,
        Some(RawPlace::RightOf(of)) => {
            placement(check, at, &of, &name, earlier, Placement::RightOf)
        }
        Some(RawPlace::Below(of)) => placement(check, at, &of, &name, earlier, Placement::Below),
    };
    if let Some(host) = raw.host.take() {
        raw.name = Some(name.clone());
        let remote = remote_thread(check, &at.field("host"), &host, &raw, hosts);
        // What its programs may do to this machine's clipboard is this side's to say.
        let clipboard = raw.clipboard;
        let given = raw.secrets.as_deref().unwrap_or_default();
        let secrets = remote_secrets(check, &at.field("secrets"), given);
        // Its program, as written: a pinned secret is sent only with a command that could be
        // the pinned program (the host checks the file itself).
        let command = raw.command.clone().unwrap_or_default();
        let spec = ThreadSpec {
            name,
            place,
            remote,
            clipboard,
            secrets,
            command,
            ..ThreadSpec::default()
        };
        return (check.diagnostics.len() == before).then_some(spec);
    }
    let command = match raw.command {
        None => Vec::new(),
        Some(command) if command.first().is_some_and(|program| !program.trim().is_empty()) => {
            command
        }
        Some(command) => {
            let message = format!(
                "expected a program and its arguments such as [\"claude\"], found {command:?} \
                 (leave `command` out for your shell)"
            );
            check.report(&at.field("command"), message);
            Vec::new()
        }
    };
    let cwd = raw.cwd.and_then(|dir| check.folder(&at.field("cwd"), &dir));
    let mut env = Vec::new();
    for (key, value) in raw.env.unwrap_or_default() {
        if valid_env_name(&key) {
            env.push((key, value));
        } else {
            let message = format!(
                "expected an environment variable name (letters, digits, _), found \"{key}\""
            );
            check.report(&at.field("env").key_name(&key), message);
        }
    }
    let mut env_pass = Vec::new();
    for (index, name) in raw.env_pass.unwrap_or_default().into_iter().enumerate() {
        // What the lock replaces (see sandbox::env): passing the host's value could not work.
        if name == "XDG_RUNTIME_DIR" || name == "TMPDIR" {
            let message = format!(
                "{name} cannot be passed into a lock: the lock hides your runtime folder and gives \
                 the program a temporary folder of its own"
            );
            check.report(&at.field("env_pass").index(index), message);
        } else if valid_env_name(&name) {
            env_pass.push(name);
        } else {
            let message = format!(
                "expected an environment variable name (letters, digits, _), found \"{name}\""
            );
            check.report(&at.field("env_pass").index(index), message);
        }
    }
    let unlocked = raw.unlocked.unwrap_or(false);
    if unlocked && raw.lock.is_some() {
        let message =
            "a thread is either locked or unlocked: remove `unlocked: true` or its `lock`";
        check.report(&at.field("unlocked"), message);
    }
    let worktree = raw.worktree.and_then(|w| worktree(check, &at.field("worktree"), w));
    if worktree.is_some() && cwd.is_some() {
        let message = "a thread with a `worktree` starts in it: remove `cwd`";
        check.report(&at.field("cwd"), message);
    }
    let mut lock = raw.lock.and_then(|lock| lock_policy(check, &at.field("lock"), lock));
    // Locked to its worktree: a thread that does not say `unlocked: true` gets a lock with no
    // other writable folder, and no network, when it has none.
    if worktree.is_some() && lock.is_none() && !unlocked {
        lock = Some(LockPolicy {
            write: Vec::new(),
            read: Vec::new(),
            protect: Vec::new(),
            network: Network::Off,
            sockets: Vec::new(),
            allow_broad_write: false,
        });
    }
    let secrets =
        secrets(check, &at.field("secrets"), raw.secrets.unwrap_or_default(), lock.as_ref());
    let pulse = raw.pulse.map(|p| pulse(check, &at.field("pulse"), p)).unwrap_or_default();
    let limits = raw.limits.map(|l| limits(check, &at.field("limits"), l)).unwrap_or_default();
    let clipboard = raw.clipboard;
    let spec = ThreadSpec {
        name,
        command,
        cwd,
        env,
        env_pass,
        place,
        lock,
        unlocked,
        secrets,
        pulse,
        limits,
        clipboard,
        worktree,
        remote: None,
    };
    (check.diagnostics.len() == before).then_some(spec)
}

fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn placement(
    check: &mut Checker<'_>,
    at: &FieldPath,
    of: &str,
    name: &str,
    earlier: &HashMap<String, usize>,
    place: fn(String) -> Placement,
) -> Placement {
    if earlier.contains_key(of) {
        return place(of.to_owned());
    }
    let message = if of == name {
        format!("a thread cannot split itself: \"{of}\" names this thread")
    } else if earlier.is_empty() {
        format!(
            "no thread named \"{of}\" is defined before this one (a split needs an earlier thread)"
        )
    } else {
        let mut known: Vec<&str> = earlier.keys().map(String::as_str).collect();
        known.sort_by_key(|k| earlier[*k]);
        let list = known.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(", ");
        format!("no thread named \"{of}\" is defined before this one (earlier threads: {list})")
    };
    check.report(&at.field("place"), message);
    Placement::Tab
}

fn lock_policy(check: &mut Checker<'_>, at: &FieldPath, raw: RawLock) -> Option<LockPolicy> {
    let before = check.diagnostics.len();
    let folders = |check: &mut Checker<'_>, field: &str, list: Option<Vec<String>>| {
        let at = at.field(field);
        let list = list.unwrap_or_default();
        // In their canonical form, read once here: a link swapped in later (a lock folder
        // replaced by a link to ~/.ssh) then fails the lock instead of widening it.
        let canonical = |dir: PathBuf| dir.canonicalize().unwrap_or(dir);
        list.iter()
            .enumerate()
            .filter_map(|(i, dir)| check.folder(&at.index(i), dir).map(canonical))
            .collect()
    };
    let write: Vec<PathBuf> = folders(check, "write", raw.write);
    let read: Vec<PathBuf> = folders(check, "read", raw.read);
    let mut protect = Vec::new();
    for (i, text) in raw.protect.unwrap_or_default().iter().enumerate() {
        let at = at.field("protect").index(i);
        let Some(path) = check.absolute(&at, text) else {
            continue;
        };
        if write.iter().chain(&read).any(|folder| path.starts_with(folder)) {
            protect.push(path);
        } else {
            let message = format!(
                "{} is not inside a `write` or `read` folder, so the lock already keeps it out",
                path.display()
            );
            check.report(&at, message);
        }
    }
    let network = match raw.network {
        None | Some(RawNetwork::Off) => Network::Off,
        Some(RawNetwork::On) => Network::On,
        Some(RawNetwork::Allow(texts)) => allow_list(check, &at.field("network"), &texts),
    };
    // Sockets may appear later (a service not started yet): only their form is checked here.
    let sockets = raw.sockets.unwrap_or_default();
    let sockets = sockets
        .iter()
        .enumerate()
        .filter_map(|(i, path)| check.absolute(&at.field("sockets").index(i), path))
        .map(|path| path.canonicalize().unwrap_or(path))
        .collect();
    let allow_broad_write = raw.allow_broad_write.unwrap_or(false);
    let lock = LockPolicy { write, read, protect, network, sockets, allow_broad_write };
    (check.diagnostics.len() == before).then_some(lock)
}

/// A thread's worktree: an absolute repository path (checked when the thread starts: it may
/// not be there yet) and a branch name git accepts.
fn worktree(check: &mut Checker<'_>, at: &FieldPath, raw: RawWorktree) -> Option<Worktree> {
    let Some(repo) = raw.repo else {
        check.report(at, "`repo` is required: the repository to make the worktree of");
        return None;
    };
    let repo = check.absolute(&at.field("repo"), &repo)?;
    let Some(branch) = raw.branch else {
        check.report(at, "`branch` is required: the branch the thread works on");
        return None;
    };
    if let Err(why) = branch_name(&branch) {
        check.report(
            &at.field("branch"),
            format!("\"{branch}\" is not a branch name git takes: {why}"),
        );
        return None;
    }
    Some(Worktree { repo, branch })
}

/// Whether git takes `name` as a branch (the rules of `git check-ref-format --branch`).
fn branch_name(name: &str) -> Result<(), &'static str> {
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    if name.is_empty() || name.len() > 200 {
        Err("it must be 1 to 200 bytes")
    } else if name.chars().any(bad_char) {
        Err("it may not hold spaces, control characters or any of ~^:?*[\\")
    } else if name.starts_with(['-', '/', '.']) || name.ends_with(['/', '.']) {
        Err("it may not start with -, / or . nor end with / or .")
    } else if name.contains("..") || name.contains("//") || name.contains("@{") || name == "@" {
        Err("it may not hold .., //, @{ or be @")
    } else if name.ends_with(".lock") || name.split('/').any(|part| part.starts_with('.')) {
        Err("no part may start with . or end with .lock")
    } else {
        Ok(())
    }
}

/// A network allow-list's rules (`egress::Rule`), each problem reported with the rule's text.
fn allow_list(check: &mut Checker<'_>, at: &FieldPath, texts: &[String]) -> Network {
    if texts.is_empty() {
        check.report(at, "an empty allow-list lets nothing through: write Off for no network");
    }
    let mut rules = Vec::new();
    for text in texts {
        match Rule::parse(text) {
            Ok(parsed) => rules.extend(parsed),
            Err(e) => check.report(at, format!("Allow: {e}")),
        }
    }
    Network::Allow(rules)
}

/// The proxy's hosts table: host names mapped to addresses.
fn proxy_hosts(
    check: &mut Checker<'_>,
    at: &FieldPath,
    raw: BTreeMap<String, String>,
) -> BTreeMap<String, IpAddr> {
    let mut hosts = BTreeMap::new();
    for (name, address) in raw {
        let named = Rule::parse(&name)
            .ok()
            .and_then(|mut r| r.pop())
            .filter(|r| matches!(&r.host, HostRule::Name(n) if *n == name.to_ascii_lowercase()));
        match (named, address.parse::<IpAddr>()) {
            (None, _) => check.report(at, format!("\"{name}\" is not a host name")),
            (_, Err(_)) => {
                check.report(at, format!("\"{address}\" (for {name}) is not an IP address"))
            }
            (Some(_), Ok(ip)) => {
                hosts.insert(name.to_ascii_lowercase(), ip);
            }
        }
    }
    hosts
}

fn pulse(check: &mut Checker<'_>, at: &FieldPath, raw: RawPulse) -> PulseSettings {
    let mut pulse = PulseSettings::default();
    if let Some(busy) = raw.busy_cpu {
        if busy > 0.0 && busy <= 10_000.0 {
            pulse.busy_cpu = busy;
        } else {
            check.report(
                &at.field("busy_cpu"),
                format!("expected a percentage above 0, found {busy}"),
            );
        }
    }
    if let Some(quiet) = raw.quiet_after {
        if (1..=86_400).contains(&quiet) {
            pulse.quiet_after = quiet;
        } else {
            check.report(
                &at.field("quiet_after"),
                format!("expected 1 to 86400 seconds, found {quiet}"),
            );
        }
    }
    for (i, text) in raw.needs_you.unwrap_or_default().into_iter().enumerate() {
        if text.is_empty() {
            check.report(
                &at.field("needs_you").index(i),
                "expected screen text to look for, found \"\"",
            );
        } else if let Err(e) = regex::Regex::new(&text) {
            let error = e.to_string().lines().last().unwrap_or_default().trim().to_owned();
            let message = format!(
                "expected a regular expression (escape `? ( ) [ ] .` with `\\\\` to match them \
                 as they are), found \"{text}\": {error}"
            );
            check.report(&at.field("needs_you").index(i), message);
        } else {
            pulse.needs_you.push(text);
        }
    }
    pulse
}

fn limits(check: &mut Checker<'_>, at: &FieldPath, raw: RawLimits) -> ThreadLimits {
    let mut limits = ThreadLimits::default();
    if let Some(text) = raw.memory {
        match size_in_bytes(&text) {
            Some(bytes) if bytes >= 1 << 20 => limits.memory_bytes = Some(bytes),
            _ => check.report(
                &at.field("memory"),
                format!(
                    "expected a size of 1M or more, such as \"512M\" or \"4G\", found \"{text}\""
                ),
            ),
        }
    }
    if let Some(cpus) = raw.cpu {
        if cpus.is_finite() && (0.01..=1024.0).contains(&cpus) {
            limits.cpus = Some(cpus);
        } else {
            check.report(
                &at.field("cpu"),
                format!(
                    "expected cores' worth of CPU from 0.01 to 1024, such as 2.0, found {cpus}"
                ),
            );
        }
    }
    limits
}

/// "512M", "4G", "1.5G", "2048K", "1T" or plain bytes (the letters are powers of 1024; `B`,
/// `iB` after them and any case are fine).
fn size_in_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    let number = lower.trim_end_matches("ib").trim_end_matches('b');
    let (digits, unit) = match number.char_indices().last() {
        Some((at, c)) if c.is_ascii_alphabetic() => (&number[..at], Some(c)),
        _ => (number, None),
    };
    let scale: u64 = match unit {
        None => 1,
        Some('k') => 1 << 10,
        Some('m') => 1 << 20,
        Some('g') => 1 << 30,
        Some('t') => 1 << 40,
        Some(_) => return None,
    };
    let value: f64 = digits.trim().parse().ok().filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let bytes = value * scale as f64;
    (bytes < u64::MAX as f64).then_some(bytes as u64)
}
