//! How a thread's new definition loosens what its running pane was started with: what a
//! restart would let its program do that it may not do now. A configuration edit is easy to
//! make from inside a lock's reach (a configuration file is text), so a loosening is named
//! where the user sees it and takes effect only on the user's own restart.

use std::path::{Path, PathBuf};

use super::{ClipboardRule, Network, ThreadSpec};

/// What a new network setting reaches that the old one did not.
fn network_widening(old: &Network, new: &Network) -> Vec<String> {
    match (old, new) {
        (Network::On, _) | (Network::Off, Network::Off) => Vec::new(),
        (_, Network::On) => vec!["network on".to_owned()],
        (Network::Off, Network::Allow(rules)) => {
            rules.iter().map(|rule| format!("network to {rule}")).collect()
        }
        (Network::Allow(old), Network::Allow(new)) => new
            .iter()
            .filter(|rule| !old.contains(rule))
            .map(|rule| format!("network to {rule}"))
            .collect(),
        (Network::Allow(_), Network::Off) => Vec::new(),
    }
}

/// What `new` allows that `old` did not, in words (empty: nothing; the lock is as tight).
pub fn widening(old: &ThreadSpec, new: &ThreadSpec) -> Vec<String> {
    let mut wider = Vec::new();
    match (&old.lock, &new.lock) {
        (Some(_), None) => wider.push("no lock".to_owned()),
        (Some(old_lock), Some(new_lock)) => {
            wider.extend(network_widening(&old_lock.network, &new_lock.network));
            let writable = &old_lock.write;
            for folder in new_lock.write.iter().filter(|f| !under_any(f, writable)) {
                wider.push(format!("writes {}", folder.display()));
            }
            let readable: Vec<PathBuf> =
                old_lock.write.iter().chain(&old_lock.read).cloned().collect();
            for folder in new_lock.read.iter().filter(|f| !under_any(f, &readable)) {
                wider.push(format!("reads {}", folder.display()));
            }
            for socket in new_lock.sockets.iter().filter(|s| !old_lock.sockets.contains(s)) {
                wider.push(format!("reaches {}", socket.display()));
            }
            for path in old_lock.protect.iter().filter(|p| !new_lock.protect.contains(p)) {
                wider.push(format!("no longer protects {}", path.display()));
            }
            if new_lock.allow_broad_write && !old_lock.allow_broad_write {
                wider.push("broad write allowed".to_owned());
            }
        }
        (None, _) => {}
    }
    if old.lock.is_some() && new.worktree.is_some() && new.worktree != old.worktree {
        if let Some(wt) = &new.worktree {
            wider.push(format!("writes a worktree of {} ({})", wt.repo.display(), wt.branch));
        }
    }
    if old.lock.is_some() {
        for name in new.env_pass.iter().filter(|n| !old.env_pass.contains(n)) {
            wider.push(format!("passes {name}"));
        }
    }
    if rank(old.clipboard_rule()) < rank(new.clipboard_rule()) {
        wider.push(format!("clipboard {:?}", new.clipboard_rule()));
    }
    wider
}

fn under_any(path: &Path, folders: &[PathBuf]) -> bool {
    folders.iter().any(|folder| path.starts_with(folder))
}

fn rank(rule: ClipboardRule) -> u8 {
    match rule {
        ClipboardRule::Deny => 0,
        ClipboardRule::Ask => 1,
        ClipboardRule::Allow => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::LockPolicy;

    fn locked(write: &[&str]) -> ThreadSpec {
        ThreadSpec {
            name: "agent".into(),
            command: vec![],
            cwd: None,
            env: vec![],
            env_pass: vec![],
            place: crate::config::Placement::Tab,
            lock: Some(LockPolicy {
                write: write.iter().map(PathBuf::from).collect(),
                read: vec![],
                protect: vec![PathBuf::from("/src/app/.env")],
                network: Network::Off,
                sockets: vec![],
                allow_broad_write: false,
            }),
            unlocked: false,
            secrets: vec![],
            pulse: Default::default(),
            limits: Default::default(),
            clipboard: None,
            worktree: None,
            remote: None,
        }
    }

    #[test]
    fn every_way_a_lock_loosens_is_named_and_tightening_is_not() {
        let old = locked(&["/src/app"]);
        assert!(widening(&old, &old).is_empty());
        let mut new = locked(&["/src/app", "/home/me/.ssh"]);
        let lock = new.lock.as_mut().expect("lock");
        lock.network = Network::On;
        lock.read.push(PathBuf::from("/src/app/docs"));
        lock.read.push(PathBuf::from("/etc/secrets"));
        lock.sockets.push(PathBuf::from("/run/docker.sock"));
        lock.protect.clear();
        new.env_pass.push("GITHUB_TOKEN".into());
        new.clipboard = Some(ClipboardRule::Allow);
        assert_eq!(
            widening(&old, &new),
            [
                "network on",
                "writes /home/me/.ssh",
                "reads /etc/secrets",
                "reaches /run/docker.sock",
                "no longer protects /src/app/.env",
                "passes GITHUB_TOKEN",
                "clipboard Allow",
            ]
        );
        let unlocked = ThreadSpec { lock: None, unlocked: true, ..old.clone() };
        assert_eq!(widening(&old, &unlocked), ["no lock", "clipboard Allow"]);
        // Narrower: a folder inside the old one, no network change.
        assert!(widening(&old, &locked(&["/src/app/sub"])).is_empty());
    }

    #[test]
    fn an_allow_list_widens_by_each_new_rule() {
        let with = |network: Network| {
            let mut spec = locked(&["/src/app"]);
            spec.lock.as_mut().expect("lock").network = network;
            spec
        };
        let rules = |texts: &[&str]| {
            Network::Allow(
                texts.iter().flat_map(|t| crate::egress::Rule::parse(t).unwrap()).collect(),
            )
        };
        let anthropic = with(rules(&["api.anthropic.com"]));
        assert_eq!(widening(&with(Network::Off), &anthropic), ["network to api.anthropic.com:443"]);
        let more = with(rules(&["api.anthropic.com", "*.github.com"]));
        assert_eq!(widening(&anthropic, &more), ["network to *.github.com:443"]);
        assert!(widening(&more, &anthropic).is_empty(), "fewer hosts is narrower");
        assert_eq!(widening(&anthropic, &with(Network::On)), ["network on"]);
        assert!(widening(&anthropic, &with(Network::Off)).is_empty());
    }
}
