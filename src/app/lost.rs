//! A server's panes, kept on disk while it runs, so that after it died (a crash, a reboot, a
//! kill it was not asked for) the next `paddock` says which panes were lost and offers to
//! start the configured threads again, instead of starting agents unasked.
//!
//! The record is `servers/<pid>.json` in paddock's state folder (0600, written whole and
//! renamed into place). A server removes its own when it is asked to stop (`ctl stop`,
//! `kill-server`) or its last pane goes; one that ends otherwise leaves it behind.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a server held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub pid: u32,
    /// The boot it ran in (Linux): a record from before a reboot is a dead server's, whatever
    /// process has its pid now.
    pub boot: Option<String>,
    /// When it started, in seconds since the Unix epoch.
    pub started: u64,
    pub panes: Vec<LostPane>,
}

/// One pane of a server, as the offer names it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LostPane {
    pub id: u32,
    pub tab: String,
    pub thread: Option<String>,
    pub command: Vec<String>,
}

/// This server's record, kept up to date.
pub struct Keeper {
    path: PathBuf,
    record: Record,
    written: bool,
}

fn folder() -> Option<PathBuf> {
    crate::vault::state_folder().map(|state| state.join("servers"))
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_owned())
}

impl Keeper {
    /// The record of this process; none where there is no state folder.
    pub fn new() -> Option<Keeper> {
        let pid = std::process::id();
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let record = Record { pid, boot: boot_id(), started, panes: Vec::new() };
        Some(Keeper { path: folder()?.join(format!("{pid}.json")), record, written: false })
    }

    /// Write the record when the panes changed. Failing to is said once; the server runs on.
    pub fn keep(&mut self, panes: Vec<LostPane>) {
        if self.written && panes == self.record.panes {
            return;
        }
        self.record.panes = panes;
        self.written = true;
        if let Err(e) = write_private(&self.path, &self.record) {
            eprintln!(
                "paddock: cannot keep the record of this server's panes ({e}): after a crash, \
                 the next start cannot say what was lost"
            );
        }
    }

    /// The server was asked to stop: nothing was lost.
    pub fn forget(self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn write_private(path: &Path, record: &Record) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let folder = path.parent().unwrap_or(Path::new("."));
    // Nothing is made in, or written to, a folder someone else owns (a shared or planted one).
    if let Some(state) = folder.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(state)?;
        own_folder(state, false)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        _ => own_folder(folder, true)?,
    }
    let json = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    let temporary = path.with_extension("json.new");
    let _ = std::fs::remove_file(&temporary);
    let mut file =
        std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temporary)?;
    file.write_all(&json)?;
    std::fs::rename(&temporary, path)
}

/// `folder` is a real folder of this user's (closed to others too, when `private`).
fn own_folder(folder: &Path, private: bool) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(folder)?;
    // SAFETY: getuid(2) cannot fail.
    let ours = meta.uid() == unsafe { libc::getuid() };
    if !meta.is_dir() || !ours || (private && meta.mode() & 0o077 != 0) {
        let what = if private { "a private folder of yours" } else { "a folder of yours" };
        return Err(std::io::Error::other(format!("{} is not {what}", folder.display())));
    }
    Ok(())
}

/// The records of servers that are gone (the pid no longer runs, or ran before this boot).
pub fn dead_servers() -> Vec<PathBuf> {
    let Some(entries) = folder().and_then(|f| std::fs::read_dir(f).ok()) else {
        return Vec::new();
    };
    let boot = boot_id();
    let mut dead: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| read(p).is_some_and(|record| !runs(&record, boot.as_deref())))
        .collect();
    dead.sort();
    dead
}

fn runs(record: &Record, boot: Option<&str>) -> bool {
    if record.boot.as_deref() != boot {
        return false;
    }
    let Ok(pid) = libc::pid_t::try_from(record.pid) else { return false };
    // SAFETY: kill with signal 0 only checks that the process exists.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    exists || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether `path` lies in the folder records are kept in (the only place `--lost` takes one
/// from, and removes it).
pub fn is_kept_record(path: &Path) -> bool {
    let canonical = |p: &Path| p.canonicalize().ok();
    let parent = path.parent().and_then(canonical);
    parent.is_some() && parent == folder().as_deref().and_then(canonical)
}

/// The largest record read: a server's panes take a few hundred bytes each.
const MOST_RECORD_BYTES: u64 = 1 << 20;

/// A record, if it reads as one: a plain file of ours (not a link, and not a FIFO or device
/// put there to hang the reader), of at most `MOST_RECORD_BYTES`.
pub fn read(path: &Path) -> Option<Record> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    // SAFETY: getuid(2).
    let ours = meta.uid() == unsafe { libc::getuid() };
    if !meta.is_file() || !ours || meta.len() > MOST_RECORD_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MOST_RECORD_BYTES).read_to_end(&mut bytes).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The `lost` tab's text: what each dead server held, and what the restart key does.
pub fn notice(records: &[Record], threads: &[String], restart: Option<&str>) -> String {
    let mut text = String::from(
        "The paddock server that ran before ended without being asked to (a crash, a reboot, \
         a logout or a kill), and its programs with it.\n",
    );
    for record in records {
        text.push_str(&format!("\nServer {} had {} panes:\n", record.pid, record.panes.len()));
        for pane in &record.panes {
            // A record is a file anyone of this uid could have written: shown, never run.
            let visible = crate::sandbox::visible;
            let thread = pane.thread.as_deref().map(|t| format!(" (thread {})", visible(t)));
            let thread = thread.unwrap_or_default();
            let command = visible(&pane.command.join(" "));
            let tab = visible(&pane.tab);
            text.push_str(&format!("  pane {} in tab {tab}{thread}: {command}\n", pane.id));
        }
    }
    text.push('\n');
    match (threads.is_empty(), restart) {
        (true, _) => text.push_str("No threads are configured to start again.\n"),
        (false, Some(key)) => text.push_str(&format!(
            "Nothing was started again. {key} in this tab starts the configured threads ({}); \
             closing it leaves them stopped.\n",
            threads.join(", ")
        )),
        (false, None) => text.push_str(&format!(
            "Nothing was started again. `restart_thread` in this tab starts the configured \
             threads ({}).\n",
            threads.join(", ")
        )),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_another_boot_or_an_ended_process_is_a_dead_servers() {
        let boot = boot_id();
        let me = Record { pid: std::process::id(), boot: boot.clone(), started: 0, panes: vec![] };
        assert!(runs(&me, boot.as_deref()));
        let rebooted = Record { boot: Some("another boot".into()), ..me.clone() };
        assert!(!runs(&rebooted, boot.as_deref()));
        // A pid past the kernel's largest.
        let ended = Record { pid: 1 << 30, ..me };
        assert!(!runs(&ended, boot.as_deref()));
    }

    #[test]
    fn a_record_is_written_only_into_a_private_folder_of_ours() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("paddock-lost-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let record = Record { pid: 7, boot: None, started: 0, panes: vec![] };
        let kept = dir.join("state/servers/7.json");
        write_private(&kept, &record).expect("written");
        assert_eq!(read(&kept), Some(record.clone()));
        // A records folder that leads elsewhere, or that others may write in: nothing written.
        let elsewhere = dir.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).expect("a folder");
        std::os::unix::fs::symlink(&elsewhere, dir.join("linked-servers")).expect("a link");
        let linked = dir.join("linked-servers/7.json");
        assert!(write_private(&linked, &record).is_err());
        assert!(std::fs::read_dir(&elsewhere).expect("listed").next().is_none());
        let open = dir.join("open");
        std::fs::create_dir_all(&open).expect("a folder");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let err = write_private(&open.join("7.json"), &record).expect_err("refused");
        assert!(err.to_string().contains("is not a private folder of yours"), "{err}");
        assert!(!open.join("7.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn only_a_plain_file_of_a_records_size_reads_as_a_record() {
        let dir = std::env::temp_dir().join(format!("paddock-lost-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("folder");
        let record = Record { pid: 7, boot: None, started: 0, panes: vec![] };
        let plain = dir.join("7.json");
        std::fs::write(&plain, serde_json::to_vec(&record).expect("json")).expect("write");
        assert!(read(&plain).is_some(), "a record reads");
        // A FIFO would hang a reader that waits for its writer.
        let fifo = dir.join("8.json");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: mkfifo(3) with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        assert!(read(&fifo).is_none());
        let huge = dir.join("9.json");
        let padding = " ".repeat(MOST_RECORD_BYTES as usize);
        let text = format!("{}{padding}", serde_json::to_string(&record).expect("json"));
        std::fs::write(&huge, text).expect("write");
        assert!(read(&huge).is_none(), "a record past the size is not read whole");
        let link = dir.join("10.json");
        std::os::unix::fs::symlink(&plain, &link).expect("link");
        assert!(read(&link).is_none(), "a link is not followed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_notice_names_each_lost_pane_and_the_key() {
        let pane = |id: u32, thread: Option<&str>| LostPane {
            id,
            tab: "agents".into(),
            thread: thread.map(str::to_owned),
            command: vec!["claude".into(), "--resume\x1b[2J".into()],
        };
        // A forged record's tab and thread are shown as text too.
        let forged = LostPane {
            id: 3,
            tab: "\x1b]0;FAKE\x07\x1b[2J".into(),
            thread: Some("\x1b[8m".into()),
            command: vec![],
        };
        let record = Record {
            pid: 42,
            boot: None,
            started: 0,
            panes: vec![pane(1, Some("a")), pane(2, None), forged],
        };
        let text = notice(&[record], &["a".into()], Some("Ctrl+Shift+R"));
        assert!(text.contains("Server 42 had 3 panes"), "{text}");
        assert!(text.contains("pane 1 in tab agents (thread a): claude --resume"), "{text}");
        assert!(!text.contains('\x1b'), "control characters are shown, not run: {text:?}");
        assert!(text.contains("Ctrl+Shift+R in this tab starts the configured threads (a)"));
        let none = notice(&[], &[], None);
        assert!(none.contains("No threads are configured"), "{none}");
    }
}
