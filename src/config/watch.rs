//! Live reload: a watcher on the configuration file's folder (editors save by writing a new
//! file and renaming it over the old one, which a watch on the file itself would miss), with
//! bursts of events folded into one signal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};

/// How long the file must stay quiet before it is read: a save is several events.
const SETTLE: Duration = Duration::from_millis(150);

/// Watches one configuration file for as long as it lives.
pub struct ConfigWatcher {
    _watcher: RecommendedWatcher,
}

/// Watch `file`: the receiver gets one `()` after each burst of changes to it (written,
/// replaced, removed). Fails when its folder does not exist or cannot be watched.
pub fn watch(file: &Path) -> Result<(ConfigWatcher, Receiver<()>), notify::Error> {
    let folder = file.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = file.file_name().map(PathBuf::from);
    let (events, raw) = crossbeam_channel::unbounded::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let ours = match &event {
            Ok(event) => event.paths.iter().any(|p| p.file_name().map(PathBuf::from) == name),
            // Lost events may have been ours: read the file again to be sure.
            Err(_) => true,
        };
        if ours {
            let _ = events.send(());
        }
    })?;
    watcher.watch(folder, RecursiveMode::NonRecursive)?;
    let (changes, receiver) = crossbeam_channel::bounded::<()>(1);
    std::thread::Builder::new()
        .name("config-watch".into())
        .spawn(move || settle(&raw, &changes))
        .map_err(|e| notify::Error::generic(&e.to_string()))?;
    Ok((ConfigWatcher { _watcher: watcher }, receiver))
}

/// Forward one signal per burst; ends when the watcher is dropped.
fn settle(raw: &Receiver<()>, changes: &Sender<()>) {
    while raw.recv().is_ok() {
        while raw.recv_timeout(SETTLE).is_ok() {}
        // A signal already waiting covers this burst too.
        let _ = changes.try_send(());
    }
}
