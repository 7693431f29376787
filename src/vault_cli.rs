//! `paddock vault set|ls|rm|check|approve|log|revoke|suspend|resume`: the vault from the
//! command line. Values come in through a prompt or stdin only and are never printed.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Read, Write};

use anyhow::{bail, Context, Result};
use paddock::config::{self, Config};
use paddock::vault::audit::{utc_now, AuditLog, Event, Record};
use paddock::vault::pin::{self, Approvals};
use paddock::vault::standing::{value_digest, Standing, Standings};
use paddock::vault::{valid_name, Vault, VaultError};
use zeroize::Zeroizing;

use crate::cli::{VaultArgs, VaultVerb};

pub fn run(args: VaultArgs) -> Result<()> {
    let vault = || Vault::open().context("cannot open the vault");
    match args.verb {
        VaultVerb::Set { name } => set(&vault()?, &name),
        VaultVerb::Ls { json } => ls(&vault()?, &threads(args.config)?, json),
        VaultVerb::Rm { name } => {
            let vault = vault()?;
            if vault.remove(&name)? {
                println!("removed \"{name}\" from {}", vault.describe());
                Ok(())
            } else {
                bail!("\"{name}\" is not in the vault ({})", vault.describe())
            }
        }
        VaultVerb::Check => check(),
        VaultVerb::Approve { name, program, host: None } => approve(&name, &program),
        VaultVerb::Approve { name, program, host: Some(host) } => {
            approve_on_host(&name, &program, &host, &threads(args.config)?)
        }
        VaultVerb::Log { json, uses } => log(json, uses.as_deref()),
        VaultVerb::Revoke { name } => standing(&name, Change::Revoke),
        VaultVerb::Suspend { name, time } => {
            let time = time.as_deref().map(parse_duration).transpose()?;
            standing(&name, Change::Suspend(time))
        }
        VaultVerb::Resume { name } => standing(&name, Change::Resume),
    }
}

enum Change {
    Revoke,
    Suspend(Option<std::time::Duration>),
    Resume,
}

/// Revoke, suspend or resume `name` for the broker: written to the state folder, which every
/// running instance's broker reads before each request.
fn standing(name: &str, change: Change) -> Result<()> {
    if !valid_name(name) {
        bail!("{}", VaultError::BadName(name.to_owned()));
    }
    // A lock shows its programs a state folder of their own: what they write there changes
    // nothing for the broker, and saying it did would mislead.
    if inside_a_lock() {
        bail!(
            "this runs inside a lock, whose programs cannot change what the broker does: run it \
             in your own terminal"
        );
    }
    let state = paddock::vault::state_folder().ok_or(VaultError::NoStateFolder)?;
    let mut standings = Standings::load_checked(&state)?;
    let now = std::time::SystemTime::now();
    let said = match change {
        Change::Revoke => {
            standings.revoke(name, now);
            // The value revoked is never set again: its digest is kept.
            match Vault::open().and_then(|vault| vault.get(name)) {
                Ok(Some(value)) => standings.remember_revoked(name, value_digest(&value)),
                Ok(None) => {}
                Err(e) => eprintln!(
                    "paddock: cannot read \"{name}\" from the vault ({e}): it is revoked, but \
                     setting this same value again later will not be refused"
                ),
            }
            format!(
                "revoked \"{name}\": from the next request on, no pane's broker puts it in; \
                 `paddock vault set {name}` with a new value ends this"
            )
        }
        Change::Suspend(time) => {
            if !standings.suspend(name, time, now) {
                bail!("\"{name}\" is revoked: only a new value (`paddock vault set {name}`) ends that");
            }
            match time {
                Some(time) => format!("suspended \"{name}\" for {}s", time.as_secs()),
                None => format!("suspended \"{name}\" until `paddock vault resume {name}`"),
            }
        }
        Change::Resume => match standings.resume(name) {
            true => format!("resumed \"{name}\""),
            false if matches!(standings.of(name, now), Standing::Revoked { .. }) => {
                bail!("\"{name}\" is revoked: only a new value (`paddock vault set {name}`) ends that")
            }
            false => bail!("\"{name}\" is not suspended"),
        },
    };
    standings.save(&state)?;
    println!("{said}");
    Ok(())
}

/// `90s`, `30m`, `2h`, `1d` (a bare number is seconds).
fn parse_duration(text: &str) -> Result<std::time::Duration> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => bail!("\"{text}\" is not a duration: use a number and s, m, h or d (30m)"),
    };
    let number: u64 = number.parse().ok().filter(|n| *n > 0).with_context(|| {
        format!("\"{text}\" is not a duration: use a number and s, m, h or d (30m)")
    })?;
    let seconds = number.checked_mul(scale).filter(|s| *s <= 366 * 86_400);
    let seconds = seconds.with_context(|| format!("\"{text}\" is longer than a year"))?;
    Ok(std::time::Duration::from_secs(seconds))
}

/// The largest value `vault set` stores: keys and tokens are far smaller, and a pane masks
/// every value in everything it prints.
const MAX_VALUE: usize = 64 * 1024;
/// Below this, `vault set` warns: masking a short value wherever it appears reveals it.
const SHORT_VALUE: usize = 8;

fn set(vault: &Vault, name: &str) -> Result<()> {
    if !valid_name(name) {
        return Err(VaultError::BadName(name.to_owned()).into());
    }
    // The value passes through this process's memory.
    paddock::vault::keep_memory_private();
    let value = if std::io::stdin().is_terminal() {
        let prompt = format!("value of \"{name}\" (not shown): ");
        Zeroizing::new(rpassword::prompt_password(prompt).context("cannot read the value")?)
    } else {
        let mut bytes = Zeroizing::new(Vec::new());
        std::io::stdin().read_to_end(&mut bytes).context("cannot read the value from stdin")?;
        let mut text = Zeroizing::new(
            String::from_utf8(std::mem::take(&mut *bytes))
                .map_err(|_| anyhow::anyhow!("the value on stdin is not UTF-8 text"))?,
        );
        if text.ends_with('\n') {
            text.pop();
            if text.ends_with('\r') {
                text.pop();
            }
        }
        text
    };
    if value.is_empty() {
        bail!("the value is empty; nothing was stored");
    }
    // A key or token never begins or ends with a space: one there came with a paste, and would
    // make the stored value differ from the key (a revoked key would pass as new, and a host
    // sending the key back would not be caught).
    if value.trim_matches([' ', '\t']).len() != value.len() {
        bail!(
            "the value begins or ends with a space or tab (from a paste?): keys and tokens never \
             do; nothing was stored"
        );
    }
    if value.contains('\0') {
        bail!("the value holds a NUL byte, which no environment variable can carry; nothing was stored");
    }
    if value.len() > MAX_VALUE {
        bail!(
            "the value is {} bytes, more than the {MAX_VALUE} a secret may be (a key, a token); \
             nothing was stored",
            value.len()
        );
    }
    if value.len() < SHORT_VALUE {
        eprintln!(
            "warning: the value is {} bytes: it is masked wherever those bytes appear in a pane, \
             which can reveal it (and a short value is easy to guess)",
            value.len()
        );
    }
    vault.set(name, value.as_bytes())?;
    println!("stored \"{name}\" in {} (service \"{}\")", vault.describe(), vault.service());
    Ok(())
}

/// The threads of the configuration, or none when there is no file.
fn threads(path: Option<std::path::PathBuf>) -> Result<Config> {
    let Some(path) = path.or_else(config::default_path) else {
        return Ok(Config::default());
    };
    match config::load(&path) {
        Ok(config) => Ok(config.unwrap_or_default()),
        Err(problems) => {
            bail!("{} has problems (see `paddock config check`):\n{problems}", path.display())
        }
    }
}

#[derive(serde::Serialize)]
struct Listed {
    name: String,
    stored: Option<bool>,
    threads: Vec<String>,
    pins: Vec<String>,
    approved: Vec<String>,
}

fn ls(vault: &Vault, config: &Config, json: bool) -> Result<()> {
    let mut by_name: BTreeMap<String, Listed> = BTreeMap::new();
    fn entry<'a>(by_name: &'a mut BTreeMap<String, Listed>, name: &str) -> &'a mut Listed {
        by_name.entry(name.to_owned()).or_insert_with(|| Listed {
            name: name.to_owned(),
            stored: None,
            threads: Vec::new(),
            pins: Vec::new(),
            approved: Vec::new(),
        })
    }
    for thread in &config.threads {
        for secret in &thread.secrets {
            let listed = entry(&mut by_name, &secret.name);
            listed.threads.push(thread.name.clone());
            listed.pins.extend(secret.pin.clone());
        }
    }
    for name in vault.known_names() {
        entry(&mut by_name, &name);
    }
    let approvals = Approvals::load(vault.state());
    let mut unreachable = None;
    for listed in by_name.values_mut() {
        listed.pins.sort();
        listed.pins.dedup();
        listed.approved = approvals
            .approvals
            .iter()
            .filter(|a| a.secret == listed.name)
            .map(|a| match &a.host {
                Some(host) => format!("{host}:{}", a.program.display()),
                None => a.program.display().to_string(),
            })
            .collect();
        match vault.get(&listed.name) {
            Ok(value) => listed.stored = Some(value.is_some()),
            Err(e) => unreachable = Some(e.to_string()),
        }
    }
    let listed: Vec<&Listed> = by_name.values().collect();
    let mut out = String::new();
    if json {
        let body = serde_json::json!({
            "store": vault.describe(),
            "service": vault.service(),
            "secrets": listed,
        });
        out = format!("{body}\n");
    } else if listed.is_empty() {
        out.push_str(
            "no secrets: the configuration names none and none were set through paddock\n",
        );
    } else {
        let rows: Vec<[String; 5]> = listed
            .iter()
            .map(|l| {
                let or_dash =
                    |list: &[String]| if list.is_empty() { "-".into() } else { list.join(",") };
                let stored = match l.stored {
                    Some(true) => "yes",
                    Some(false) => "MISSING",
                    None => "?",
                };
                [
                    l.name.clone(),
                    stored.into(),
                    or_dash(&l.threads),
                    or_dash(&l.pins),
                    or_dash(&l.approved),
                ]
            })
            .collect();
        let header = ["NAME", "STORED", "THREADS", "PIN", "APPROVED"].map(String::from);
        let widths: Vec<usize> = (0..5)
            .map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in [&header].into_iter().chain(&rows) {
            let cells: Vec<String> =
                row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
    }
    std::io::stdout().write_all(out.as_bytes()).context("cannot write")?;
    match unreachable {
        Some(e) => bail!("could not ask the keychain about every secret: {e}"),
        None => Ok(()),
    }
}

fn check() -> Result<()> {
    let vault = match Vault::open() {
        Ok(vault) => vault,
        Err(e) => bail!("{e}"),
    };
    println!("store: {}", vault.describe());
    if let Some(note) = vault.note() {
        println!("note: {note}");
    }
    println!("service: {}", vault.service());
    println!("state folder: {}", vault.state().display());
    // A read of a name nobody uses: reaches the store and, for the Secret Service, its
    // collections (a locked one refuses or asks to be unlocked).
    match vault.get("paddock-vault-check") {
        Ok(_) => {
            println!("reachable: yes");
            Ok(())
        }
        Err(e) => bail!("the keychain is not usable: {e}"),
    }
}

fn approve(name: &str, program: &str) -> Result<()> {
    if !valid_name(name) {
        return Err(VaultError::BadName(name.to_owned()).into());
    }
    let cwd = std::env::current_dir().ok();
    let path_var = std::env::var_os("PATH");
    let Some(found) = pin::find_program(program, cwd.as_deref(), path_var.as_deref()) else {
        bail!("no program \"{program}\": give its path, or a name found on PATH");
    };
    let fingerprint =
        pin::fingerprint(&found).with_context(|| format!("cannot read {}", found.display()))?;
    confirm_in_person(name, &fingerprint, None)?;
    let state = paddock::vault::state_folder().ok_or(VaultError::NoStateFolder)?;
    Approvals::load(&state).approve(name, &fingerprint, utc_now()).save(&state)?;
    println!(
        "approved {} (sha256 {}) for \"{name}\"; a changed file needs approving again",
        fingerprint.path.display(),
        fingerprint.sha256
    );
    Ok(())
}

/// Approve `program` on `host` for `name`: the host's paddock finds and hashes it there (the
/// file that host's threads would run), and the approval is kept here, with the vault.
#[cfg(unix)]
fn approve_on_host(name: &str, program: &str, host: &str, config: &Config) -> Result<()> {
    if !valid_name(name) {
        return Err(VaultError::BadName(name.to_owned()).into());
    }
    let settings = config.hosts.get(host);
    let reach = paddock::app::host_link::Host {
        destination: settings.map_or(host, |s| s.destination.as_str()).to_owned(),
        paddock_path: settings.map_or("paddock", |s| s.paddock_path.as_str()).to_owned(),
        ssh_options: settings.map(|s| s.ssh_options.clone()).unwrap_or_default(),
    };
    let (path, sha256) = paddock::app::host_link::fingerprint_on(&reach, program)
        .map_err(|why| anyhow::anyhow!("cannot fingerprint {program} on {host}: {why}"))?;
    let fingerprint = pin::Fingerprint { path: path.into(), sha256 };
    confirm_in_person(name, &fingerprint, Some(host))?;
    let state = paddock::vault::state_folder().ok_or(VaultError::NoStateFolder)?;
    let approvals = Approvals::load(&state);
    approvals.approve_on(Some(host), name, &fingerprint, utc_now()).save(&state)?;
    println!(
        "approved {} on {host} (sha256 {}) for \"{name}\"; a changed file needs approving again",
        fingerprint.path.display(),
        fingerprint.sha256
    );
    Ok(())
}

#[cfg(not(unix))]
fn approve_on_host(_name: &str, _program: &str, _host: &str, _config: &Config) -> Result<()> {
    bail!("threads on other hosts are not supported on this platform yet")
}

/// An approval is a person's decision: refused inside a lock (a locked agent must not approve
/// its own program), and asked at a terminal, where the user types the secret's name. Another
/// unlocked process of the same user could write the approvals file itself: this guards
/// against a mistake or a locked agent, not against such a process (the README says so).
fn confirm_in_person(name: &str, fingerprint: &pin::Fingerprint, host: Option<&str>) -> Result<()> {
    if inside_a_lock() {
        bail!(
            "this process runs under no_new_privs, as everything inside a paddock lock does: \
             approve programs from a terminal outside any lock"
        );
    }
    if !std::io::stdin().is_terminal() {
        bail!(
            "approving a program needs a person at a terminal: run `paddock vault approve` in \
             one and type the secret's name when asked"
        );
    }
    let on = host.map(|host| format!(" on {host}")).unwrap_or_default();
    eprintln!(
        "approve {}{on} (sha256 {}) to receive \"{name}\"?",
        fingerprint.path.display(),
        fingerprint.sha256
    );
    eprint!("type the secret's name to approve, anything else to cancel: ");
    let mut typed = String::new();
    std::io::stdin().read_line(&mut typed).context("cannot read the answer")?;
    if typed.trim_end_matches(['\r', '\n']) != name {
        bail!("not approved: the name typed was not \"{name}\"");
    }
    Ok(())
}

/// Whether this process runs with no_new_privs set, which every locked program does (Landlock
/// and seccomp need it) and a user's own terminal does not.
fn inside_a_lock() -> bool {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|s| s.lines().any(|l| l.replace(' ', "") == "NoNewPrivs:\t1"))
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

fn log(json: bool, uses: Option<&str>) -> Result<()> {
    let state = paddock::vault::state_folder().ok_or(VaultError::NoStateFolder)?;
    let audit = AuditLog::new(&state);
    let mut out = String::new();
    let wanted = |line: &Result<Record, String>| match (uses, line) {
        (None, _) => true,
        (Some(name), Ok(r)) => {
            r.secret == name
                && matches!(r.event, Event::Used | Event::Held | Event::Blocked | Event::Returned)
        }
        (Some(_), Err(_)) => false,
    };
    for line in audit.read()?.into_iter().filter(wanted) {
        match line {
            Ok(record) if json => {
                out.push_str(&serde_json::to_string(&record).unwrap_or_default());
                out.push('\n');
            }
            Ok(record) => {
                out.push_str(&describe(&record));
                out.push('\n');
            }
            Err(raw) => {
                out.push_str(&format!("(unreadable line) {raw}\n"));
            }
        }
    }
    if out.is_empty() && !json {
        out = match uses {
            Some(name) => format!("no uses of \"{name}\" yet in {}\n", audit.path().display()),
            None => format!("no entries yet in {}\n", audit.path().display()),
        };
    }
    std::io::stdout().write_all(out.as_bytes()).context("cannot write")
}

/// A brokered secret's use, or an attempt to send it elsewhere.
fn describe_request(r: &Record) -> String {
    let Some(request) = &r.request else { return format!("{:?} (no request)", r.event) };
    let target = format!("{}:{}", request.host, request.port);
    let outcome = match (request.status, &request.error) {
        (Some(status), _) => format!(" → {status}"),
        (None, Some(error)) => format!(" → no response: {error}"),
        (None, None) => String::new(),
    };
    let line = format!("{} {target}{}{outcome}", request.method, request.path);
    match r.event {
        Event::Used => format!("used in {line}"),
        Event::Held => format!("not used ({}): {line}", r.reason.as_deref().unwrap_or("")),
        Event::Returned => format!("came back from {target}; the pane got the placeholder"),
        _ => format!("stopped: its placeholder {} to {target}", r.reason.as_deref().unwrap_or("")),
    }
}

fn describe(r: &Record) -> String {
    let thread = r.thread.as_deref().map(|t| format!(" thread {t}")).unwrap_or_default();
    let program = match (r.program.as_deref(), r.host.as_deref()) {
        (Some(program), Some(host)) => format!("{program} on {host}"),
        (None, Some(host)) => format!("a program on {host}"),
        (program, None) => program.unwrap_or("?").to_owned(),
    };
    // Written by paddock, but a host's reasons pass through it: nothing may drive the terminal.
    let reason = r.reason.as_deref().map(paddock::sandbox::visible);
    let r = &Record { reason, ..r.clone() };
    let what = match r.event {
        Event::Released => match r.reason.as_deref() {
            Some(how) => format!("released to {program} ({how})"),
            None => format!("released to {program}"),
        },
        Event::Withheld => {
            format!("withheld from {program}: {}", r.reason.as_deref().unwrap_or(""))
        }
        Event::Failed => {
            format!("not released to {program}: {}", r.reason.as_deref().unwrap_or(""))
        }
        Event::Closed => match r.masked {
            Some(masked) => format!("pane closed; masked {masked} times"),
            None => "pane closed".to_owned(),
        },
        Event::GitPlanted => {
            format!("left git something to run: {}", r.reason.as_deref().unwrap_or(""))
        }
        Event::Used | Event::Held | Event::Blocked | Event::Returned => describe_request(r),
    };
    format!("{}  {}  pane {}{thread}  {what}", r.time, r.secret, r.pane)
}
