//! The vault's audit log: one JSON line per event in paddock's state folder (mode 0600,
//! appended to, never rewritten): which secret was released to which pane's program or
//! withheld and why, and how often its value was masked there. Never a value.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::{create_private_folder, VaultError};

const AUDIT_FILE: &str = "audit.log";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// The value went into the program's environment: recorded once the program started.
    Released,
    /// It was to be released, and the program did not start: `reason` says why.
    Failed,
    /// It did not: `reason` says why.
    Withheld,
    /// The pane ended; `masked` is how often its output held the value.
    Closed,
    /// A locked pane left git something to run outside its lock (no secret: `reason` names
    /// the file and the command).
    GitPlanted,
    /// The broker put a brokered secret's value in a request (`request` says which).
    Used,
    /// A request carried a brokered secret's placeholder, and the broker left it as it was:
    /// `reason` says why (revoked, suspended).
    Held,
    /// A brokered secret's placeholder was seen where its value may not go, and the request
    /// was stopped: `reason` says where.
    Blocked,
    /// A host sent a brokered secret's value back; the pane got the placeholder in its place.
    Returned,
}

/// The request a brokered secret was used in (never its query, never a header).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLine {
    pub host: String,
    pub port: u16,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub method: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub time: String,
    pub event: Event,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub secret: String,
    pub thread: Option<String>,
    pub pane: u32,
    pub program: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masked: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestLine>,
    /// The host a thread on another host runs on (its name in the configuration's `hosts`):
    /// the secret was handed to that host's paddock over the link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

pub struct AuditLog {
    path: PathBuf,
}

impl AuditLog {
    pub fn new(state: &Path) -> AuditLog {
        AuditLog { path: state.join(AUDIT_FILE) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Add one line (one write, so lines of two panes never interleave).
    /// Whether a record could be appended now (the log opens as a log may): checked before a
    /// release, which is recorded only once its program has started.
    pub fn check(&self) -> Result<(), VaultError> {
        let error =
            |e: std::io::Error| VaultError::State { path: self.path.clone(), error: e.to_string() };
        open_for_append(&self.path).map(drop).map_err(error)
    }

    pub fn append(&self, record: &Record) -> Result<(), VaultError> {
        let error =
            |e: std::io::Error| VaultError::State { path: self.path.clone(), error: e.to_string() };
        append_json_line(&self.path, record).map_err(error)
    }

    /// Every record, oldest first; lines that do not parse are returned as they are.
    pub fn read(&self) -> Result<Vec<Result<Record, String>>, VaultError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(VaultError::State { path: self.path.clone(), error: e.to_string() })
            }
        };
        Ok(text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|_| l.to_owned()))
            .collect())
    }
}

/// Append `record` as one JSON line to the log at `path` (one write, so lines of two writers
/// never interleave), making its folder private and the file 0600 when they are new. Shared by
/// paddock's logs in the state folder.
pub fn append_json_line(path: &Path, record: &impl Serialize) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    open_for_append(path)?.write_all(&line)
}

/// The log at `path`, opened to append (made, private, when missing).
fn open_for_append(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(folder) = path.parent() {
        create_private_folder(folder)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A link put in its place (to /dev/null, to a file of the agent's) is not followed.
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    owned_private_file(&file, path)?;
    Ok(file)
}

/// Refuse anything but a regular file of this user's, and make it private (0600) whatever mode
/// it was made with: a log others may read, or a device, pipe or another user's file in its
/// place, is not a log to trust.
#[cfg(unix)]
fn owned_private_file(file: &std::fs::File, path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = file.metadata()?;
    // SAFETY: geteuid(2) cannot fail.
    let me = unsafe { libc::geteuid() };
    if !meta.is_file() || meta.uid() != me {
        return Err(std::io::Error::other(format!(
            "{} is not a regular file of yours: refusing to write a log there",
            path.display()
        )));
    }
    if meta.mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned_private_file(_file: &std::fs::File, _path: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Now, in UTC, as RFC 3339 (`2026-11-30T02:14:05Z`).
pub fn utc_now() -> String {
    utc_at(SystemTime::now())
}

/// `time`, in UTC, as RFC 3339.
pub fn utc_at(time: SystemTime) -> String {
    utc(time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

fn utc(secs: u64) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_920_845), "2026-11-29T02:54:05Z");
    }

    #[test]
    fn records_are_appended_as_private_json_lines() {
        let dir = std::env::temp_dir().join(format!("paddock-audit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let log = AuditLog::new(&dir);
        assert_eq!(log.read().expect("no log yet"), vec![]);
        let record = Record {
            time: "t".into(),
            event: Event::Withheld,
            secret: "k".into(),
            thread: Some("agent".into()),
            pane: 3,
            program: Some("/bin/sh".into()),
            reason: Some("pinned to claude".into()),
            masked: None,
            request: None,
            host: None,
        };
        log.append(&record).expect("append");
        log.append(&Record {
            event: Event::Closed,
            reason: None,
            masked: Some(2),
            ..record.clone()
        })
        .expect("append");
        let lines = log.read().expect("read");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], Ok(record));
        let text = std::fs::read_to_string(log.path()).expect("text");
        assert!(
            text.lines()
                .nth(1)
                .is_some_and(|l| l.contains("\"event\":\"closed\"") && l.contains("\"masked\":2")),
            "{text}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(log.path()).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A log that is a link (to /dev/null, to a file of someone's making) is not written
    /// through; one made readable by others is made private again.
    #[cfg(unix)]
    #[test]
    fn a_linked_log_is_refused_and_an_open_one_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("paddock-audit-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("folder");
        let (log, elsewhere) = (dir.join("audit.log"), dir.join("elsewhere"));
        std::fs::write(&elsewhere, "").expect("elsewhere");
        std::os::unix::fs::symlink(&elsewhere, &log).expect("link");
        let record = serde_json::json!({"event": "released"});
        assert!(append_json_line(&log, &record).is_err(), "a link is refused");
        assert_eq!(std::fs::read_to_string(&elsewhere).expect("elsewhere"), "");
        std::fs::remove_file(&log).expect("unlink");
        std::fs::write(&log, "").expect("log");
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        append_json_line(&log, &record).expect("appended");
        let mode = std::fs::metadata(&log).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
