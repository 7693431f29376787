//! A thread's secrets, checked: names, variables, pins, and where a brokered secret's value
//! may go (named hosts its lock's network allow-list lets through, and header names).

use super::{valid_env_name, Checker};
use crate::config::locate::FieldPath;
use crate::config::raw::{RawBroker, RawSecret};
use crate::config::{LockPolicy, Network, SecretRef};
use crate::egress::rules::HostRule;
use crate::egress::Rule;
use crate::vault::BrokerSpec;

pub(super) fn secrets(
    check: &mut Checker<'_>,
    at: &FieldPath,
    raw: Vec<RawSecret>,
    lock: Option<&LockPolicy>,
) -> Vec<SecretRef> {
    let mut out: Vec<SecretRef> = Vec::new();
    for (i, secret) in raw.into_iter().enumerate() {
        let at = at.index(i);
        let name = match secret.name {
            Some(name) if crate::vault::valid_name(&name) => name,
            Some(name) if !name.trim().is_empty() => {
                let message = format!(
                    "expected a secret's name in the vault (1 to 64 letters, digits, `-`, `_` or \
                     `.`, starting with a letter or digit), found \"{name}\""
                );
                check.report(&at.field("name"), message);
                continue;
            }
            Some(_) => {
                check.report(
                    &at.field("name"),
                    "expected the secret's name in the vault, found \"\"",
                );
                continue;
            }
            None => {
                check.report(&at, "`name` is required: the secret's name in the vault");
                continue;
            }
        };
        let env = match secret.env {
            Some(env) if valid_env_name(&env) => env,
            Some(env) => {
                let message = format!(
                    "expected an environment variable name (letters, digits, _), found \"{env}\""
                );
                check.report(&at.field("env"), message);
                continue;
            }
            None => {
                check.report(&at, "`env` is required: the variable that carries the secret");
                continue;
            }
        };
        if let Some(first) = out.iter().position(|s| s.env == env) {
            let message = format!("{env} is already given by secrets[{first}]");
            check.report(&at.field("env"), message);
            continue;
        }
        let pin = match secret.pin {
            Some(pin) if pin.trim().is_empty() => {
                check.report(&at.field("pin"), "expected a program name or path, found \"\"");
                continue;
            }
            pin => pin,
        };
        let broker = match secret.broker {
            Some(raw) => match broker(check, &at.field("broker"), raw, lock) {
                Some(spec) => Some(spec),
                None => continue,
            },
            None => None,
        };
        out.push(SecretRef { name, env, pin, broker });
    }
    out
}

/// Headers a brokered secret may not name: they belong to the connection or the proxy, or
/// they choose where the request goes.
const NOT_SECRET_HEADERS: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// Where a brokered secret's value may go: host names its thread's network allow-list lets
/// through, and header names.
fn broker(
    check: &mut Checker<'_>,
    at: &FieldPath,
    raw: RawBroker,
    lock: Option<&LockPolicy>,
) -> Option<BrokerSpec> {
    let rules = match lock.map(|l| &l.network) {
        Some(Network::Allow(rules)) => Some(rules),
        _ => {
            check.report(
                at,
                "a brokered secret needs its thread locked with `network: Allow([...])` listing \
                 its hosts: the broker is that lock's proxy, and with any other network a \
                 program could go around it",
            );
            None
        }
    };
    let mut hosts = Vec::new();
    match raw.hosts {
        Some(list) if !list.is_empty() => {
            for (i, text) in list.iter().enumerate() {
                let at = at.field("hosts").index(i);
                let parsed = Rule::parse(text);
                let name = match parsed.as_deref() {
                    Ok([Rule { host: HostRule::Name(name), port }]) if !text.starts_with('@') => {
                        (name.clone(), *port)
                    }
                    Ok(_) => {
                        check.report(
                            &at,
                            format!(
                                "expected one host name (api.example.com, or api.example.com:443), \
                                 found \"{text}\": a secret is brokered to named hosts only, not \
                                 to a preset, a `*.` pattern or an address"
                            ),
                        );
                        continue;
                    }
                    Err(e) => {
                        check.report(&at, e.to_string());
                        continue;
                    }
                };
                if let Some(rules) = rules {
                    if !rules.iter().any(|rule| rule.holds_name(&name.0, name.1)) {
                        check.report(
                            &at,
                            format!(
                                "{}:{} is not in the thread's network allow-list: add it to \
                                 `network: Allow([...])`, or the broker could never reach it",
                                name.0, name.1
                            ),
                        );
                    }
                }
                hosts.push(name);
            }
        }
        _ => check.report(at, "`hosts` is required: the hosts the secret's value may go to"),
    }
    let mut headers = Vec::new();
    match raw.headers {
        Some(list) if !list.is_empty() => {
            for (i, text) in list.iter().enumerate() {
                let at = at.field("headers").index(i);
                let name = text.trim().to_ascii_lowercase();
                let token = !name.is_empty()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
                if !token {
                    check.report(&at, format!("expected a request header name, found \"{text}\""));
                } else if NOT_SECRET_HEADERS.contains(&name.as_str()) {
                    check.report(
                        &at,
                        format!("{name} cannot carry a secret: it belongs to the connection"),
                    );
                } else if !headers.contains(&name) {
                    headers.push(name);
                }
            }
        }
        _ => check.report(
            at,
            "`headers` is required: the request headers the secret's value may go in (x-api-key, \
             authorization)",
        ),
    }
    (rules.is_some() && !hosts.is_empty() && !headers.is_empty())
        .then_some(BrokerSpec { hosts, headers })
}
