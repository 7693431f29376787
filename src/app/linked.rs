//! Threads a paddock on another host asks this server to run (`WindowAction::OpenThread`,
//! over `paddock server --stdio`): the definition is checked here as a thread of this host's
//! own configuration would be, so its lock is resolved and enforced by this host's kernel,
//! with this host's paths and home, and refused here when it cannot hold.

use crate::config::{parse_one_thread, ThreadSpec};

/// The longest thread definition a link may send (a definition is a few hundred bytes).
const MOST_THREAD_TEXT: usize = 1 << 20;

/// The thread `text` defines, or why this server will not run it.
pub fn thread_for_link(text: &str) -> Result<ThreadSpec, String> {
    if text.len() > MOST_THREAD_TEXT {
        return Err(format!("a thread's definition of {} bytes is too long", text.len()));
    }
    let spec = parse_one_thread(text).map_err(|problems| {
        format!("the thread's definition has problems on this host:\n{problems}")
    })?;
    // Secrets come from the vault on the user's own machine, never this host's keychain;
    // until they can be handed over the link, such a thread does not start without them.
    if !spec.secrets.is_empty() {
        return Err(format!(
            "thread \"{}\" names secrets; secrets are not yet handed to threads on another \
             host, so it does not start without them",
            spec.name
        ));
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::thread_for_link;

    #[test]
    fn a_link_gets_its_thread_checked_here() {
        let spec = thread_for_link(r#"(name: "agent", command: ["sh"], lock: (write: ["/tmp"]))"#)
            .expect("a good thread");
        assert_eq!(spec.name, "agent");
        assert!(spec.lock.is_some());
        let bad = thread_for_link(r#"(name: "agent", lock: (write: ["relative"]))"#).unwrap_err();
        assert!(bad.contains("threads[0].lock.write[0]"), "{bad}");
        let two = thread_for_link(r#"(name: "a"), (name: "b")"#).unwrap_err();
        assert!(two.contains("2 threads"), "{two}");
        let secrets = thread_for_link(r#"(name: "a", secrets: [(name: "k", env: "K")])"#);
        let secrets = secrets.unwrap_err();
        assert!(secrets.contains("not yet handed"), "{secrets}");
        assert!(thread_for_link(&" ".repeat(2 << 20)).unwrap_err().contains("too long"));
    }
}
