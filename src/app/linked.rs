//! Threads a paddock on another host asks this server to run (`WindowAction::OpenThread`,
//! over `paddock server --stdio`): the definition is checked here as a thread of this host's
//! own configuration would be, so its lock is resolved and enforced by this host's kernel,
//! with this host's paths and home, and refused here when it cannot hold. Its secrets come
//! with it from the vault of the machine that opened it (`vault::handed`); this host's
//! keychain is never asked.

use crate::config::{parse_one_thread, ThreadSpec};
use crate::vault::handed::Handed;
use crate::vault::pin;

/// The longest thread definition a link may send (a definition is a few hundred bytes).
const MOST_THREAD_TEXT: usize = 1 << 20;

/// The thread `text` defines, or why this server will not run it: its definition has
/// problems here, or it names a secret the link did not hand over (nothing starts without
/// its secrets).
pub fn thread_for_link(text: &str, handed: Option<&Handed>) -> Result<ThreadSpec, String> {
    if text.len() > MOST_THREAD_TEXT {
        return Err(format!("a thread's definition of {} bytes is too long", text.len()));
    }
    let spec = parse_one_thread(text).map_err(|problems| {
        format!("the thread's definition has problems on this host:\n{problems}")
    })?;
    let missing: Vec<&str> = spec
        .secrets
        .iter()
        .map(|s| s.name.as_str())
        .filter(|name| !handed.is_some_and(|h| h.covers(name)))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "thread \"{}\" names secrets the link did not hand over ({}); this host's keychain \
             is never asked, so it does not start without them",
            spec.name,
            missing.join(", ")
        ));
    }
    Ok(spec)
}

/// A program on this host for an approval on the machine that links here: found as execvp
/// would find it on this server's PATH (or a path), its canonical path and SHA-256.
pub fn fingerprint(program: &str) -> Result<(String, String), String> {
    let path_var = std::env::var_os("PATH");
    let found = pin::find_program(program, None, path_var.as_deref())
        .ok_or_else(|| format!("no program \"{program}\" here: give its path"))?;
    let print =
        pin::fingerprint(&found).map_err(|e| format!("cannot read {}: {e}", found.display()))?;
    Ok((print.path.display().to_string(), print.sha256))
}

#[cfg(test)]
mod tests {
    use super::thread_for_link;
    use crate::vault::handed::{Handed, HandedSecret};
    use crate::vault::SecretBytes;

    #[test]
    fn a_link_gets_its_thread_checked_here() {
        let spec =
            thread_for_link(r#"(name: "agent", command: ["sh"], lock: (write: ["/tmp"]))"#, None)
                .expect("a good thread");
        assert_eq!(spec.name, "agent");
        assert!(spec.lock.is_some());
        let bad = thread_for_link(r#"(name: "agent", lock: (write: ["relative"]))"#, None);
        let bad = bad.unwrap_err();
        assert!(bad.contains("threads[0].lock.write[0]"), "{bad}");
        let two = thread_for_link(r#"(name: "a"), (name: "b")"#, None).unwrap_err();
        assert!(two.contains("2 threads"), "{two}");
        let text = r#"(name: "a", secrets: [(name: "k", env: "K"), (name: "j", env: "J")])"#;
        let none = thread_for_link(text, None).unwrap_err();
        assert!(none.contains("did not hand over (k, j)"), "{none}");
        let one =
            HandedSecret { name: "k".into(), value: SecretBytes::new(b"v"), approved: vec![] };
        let mut handed = Handed { host: "box".into(), secrets: vec![one], withheld: vec![] };
        let part = thread_for_link(text, Some(&handed)).unwrap_err();
        assert!(part.contains("did not hand over (j)"), "{part}");
        handed.withheld.push(("j".into(), "pinned to x".into()));
        assert_eq!(thread_for_link(text, Some(&handed)).expect("covered").secrets.len(), 2);
        assert!(thread_for_link(&" ".repeat(2 << 20), None).unwrap_err().contains("too long"));
    }
}
