//! The `hosts` table and threads that name a `host`: how to reach each host with ssh, and a
//! remote thread's definition, written back as the configuration writes a thread, for the
//! host's paddock to check and run. Nothing of a remote thread but its name and place is
//! checked here: its paths, lock and the rest are the host's.

use std::collections::BTreeMap;

use super::super::raw::{RawHost, RawSecret, RawThread};
use super::super::{HostSettings, RemoteThread};
use super::{Checker, FieldPath};
use crate::vault::SecretRef;

/// Each host's settings, by the name threads use.
pub(super) fn hosts(
    check: &mut Checker<'_>,
    at: &FieldPath,
    raw: BTreeMap<String, RawHost>,
) -> BTreeMap<String, HostSettings> {
    let mut hosts = BTreeMap::new();
    for (name, host) in raw {
        let at = at.key_name(&name);
        let destination = host.destination.unwrap_or_else(|| name.clone());
        let mut ok = destination_ok(check, &at.field("destination"), &destination);
        let paddock_path = host.paddock_path.unwrap_or_else(|| "paddock".into());
        if paddock_path.is_empty() || paddock_path.chars().any(char::is_control) {
            let message =
                format!("expected the path of paddock on that host, found {paddock_path:?}");
            check.report(&at.field("paddock_path"), message);
            ok = false;
        }
        let ssh_options = host.ssh_options.unwrap_or_default();
        for (i, option) in ssh_options.iter().enumerate() {
            if option.is_empty() || option.chars().any(char::is_control) {
                let message = format!("expected an ssh option such as \"-p\", found {option:?}");
                check.report(&at.field("ssh_options").index(i), message);
                ok = false;
            }
        }
        if ok {
            hosts.insert(
                name.clone(),
                HostSettings { name, destination, paddock_path, ssh_options },
            );
        }
    }
    hosts
}

/// Whether `destination` is something ssh reads as a destination, never as an option.
fn destination_ok(check: &mut Checker<'_>, at: &FieldPath, destination: &str) -> bool {
    let why = if destination.is_empty() {
        "it is empty"
    } else if destination.starts_with('-') {
        "it starts with `-`, which ssh would read as an option"
    } else if destination.chars().any(|c| c.is_whitespace() || c.is_control()) {
        "it holds a space or a control character"
    } else {
        return true;
    };
    check.report(at, format!("expected a host for ssh such as \"me@build-box\": {why}"));
    false
}

/// A remote thread's secrets as this side needs them: the names its vault releases to the
/// host (and which are pinned, needing an approval for a program there). Everything else of
/// them (variables, brokers) is the host's to check, with the rest of the definition.
pub(super) fn remote_secrets(
    check: &mut Checker<'_>,
    at: &FieldPath,
    raw: &[RawSecret],
) -> Vec<SecretRef> {
    let mut out = Vec::new();
    for (i, secret) in raw.iter().enumerate() {
        match &secret.name {
            Some(name) if crate::vault::valid_name(name) => out.push(SecretRef {
                name: name.clone(),
                env: secret.env.clone().unwrap_or_default(),
                pin: secret.pin.clone(),
                broker: None,
            }),
            other => {
                let message = format!(
                    "expected a secret's name in the vault (1 to 64 letters, digits, `-`, `_` or \
                     `.`, starting with a letter or digit), found {other:?}"
                );
                check.report(&at.index(i).field("name"), message);
            }
        }
    }
    out
}

/// A thread that runs on `host`: how to reach it, and the definition it is handed.
pub(super) fn remote_thread(
    check: &mut Checker<'_>,
    at: &FieldPath,
    host: &str,
    raw: &RawThread,
    hosts: &BTreeMap<String, HostSettings>,
) -> Option<RemoteThread> {
    let settings = match hosts.get(host) {
        Some(settings) => settings.clone(),
        None => {
            if !destination_ok(check, at, host) {
                return None;
            }
            HostSettings {
                name: host.to_owned(),
                destination: host.to_owned(),
                paddock_path: "paddock".into(),
                ssh_options: Vec::new(),
            }
        }
    };
    let options = super::super::ron_options();
    match options.to_string(raw) {
        Ok(definition) => Some(RemoteThread { host: settings, definition }),
        Err(e) => {
            check.report(at, format!("this thread cannot be written for the host: {e}"));
            None
        }
    }
}
