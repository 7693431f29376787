//! `paddock sandbox probe --thread NAME`: the view a thread's lock gives its programs, as this
//! host would enforce it now: what they may write, what they may only read (and which of it
//! the default read list added), the thread's own home, what is protected, the network, and
//! what the default list left out and why.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use paddock::app::lock::{self, control_folders, guarded_paths, policy_for};
use paddock::config::{self, Network};
use paddock::sandbox::{resolve::resolve, visible, Policy};

/// Print `thread`'s view under the configuration at `config` (the default one when None).
pub fn print(thread: &str, config: Option<&Path>, exe: &Path) -> Result<()> {
    let spec = config::configured_thread(config, thread).map_err(anyhow::Error::msg)?;
    let Some(mut lock_policy) = spec.lock.clone() else {
        let why = if spec.unlocked { "unlocked: true" } else { "no `lock`" };
        println!("thread \"{thread}\" runs unlocked ({why}): its programs see what you see");
        return Ok(());
    };
    // Its worktree, once made (the thread's first start makes it).
    if let Some(wanted) = &spec.worktree {
        match paddock::app::worktree::existing(wanted) {
            Some(folder) => lock_policy.write.push(folder),
            None => {
                println!("(its worktree of {} is made when it first starts)", wanted.repo.display())
            }
        }
    }
    let path_var = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.into())
        .or_else(|| std::env::var_os("PATH"));
    let policy = Policy {
        control_folders: control_folders(),
        session_folders: paddock::sandbox::policy::session_folders(),
        ..policy_for(&lock_policy, &guarded_paths(config, exe))
    };
    let configured: Vec<PathBuf> = policy.read.clone();
    let policy =
        lock::with_home(policy, thread, path_var.as_deref()).map_err(anyhow::Error::msg)?;
    let home = dirs::home_dir().map(|h| h.canonicalize().unwrap_or(h));
    let resolved = resolve(&policy, home.as_deref())
        .with_context(|| format!("thread \"{thread}\"'s lock is refused here"))?;
    // Names a locked program may have made (a link in a PATH folder inside a lock folder) are
    // shown, never sent to the terminal as they are.
    let shown = |p: &Path| {
        visible(&match home.as_deref().and_then(|h| p.strip_prefix(h).ok()) {
            Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
            Some(rest) => format!("~/{}", rest.display()),
            None => p.display().to_string(),
        })
    };
    println!("thread \"{thread}\": the view its programs get");
    match (&resolved.home, &home) {
        (Some(own), Some(real)) => println!(
            "  home       {} (writable, kept between runs), shown as {}",
            shown(own),
            real.display()
        ),
        _ => println!("  home       an empty read-only folder"),
    }
    for path in &resolved.write {
        println!("  writable   {}", shown(path));
    }
    for path in &resolved.read {
        let default = if configured.contains(path) { "" } else { "  (default)" };
        println!("  readable   {}{default}", shown(path));
    }
    for path in &resolved.protect {
        println!("  protected  {}", shown(path));
    }
    for path in &resolved.unix_sockets {
        println!("  socket     {}", shown(path));
    }
    println!("  system     /usr /bin /sbin /lib* /etc /opt /nix readable; /tmp and /dev/shm the pane's own");
    let network = match &lock_policy.network {
        Network::Off => "off (its own loopback only)".to_owned(),
        Network::On => "on (everything you can reach)".to_owned(),
        Network::Allow(rules) => {
            let rules: Vec<String> = rules.iter().map(ToString::to_string).collect();
            format!("allow-list, through paddock's proxy: {}", rules.join(", "))
        }
    };
    println!("  network    {network}");
    if let Some(real) = &home {
        for (path, why) in lock::home::home_reads(real, path_var.as_deref()).left_out {
            println!("  left out   {}: {}", shown(&path), visible(&why));
        }
    }
    Ok(())
}
