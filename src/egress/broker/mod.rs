//! The secret broker: a locked pane's brokered secrets never enter the pane. Its programs hold
//! a placeholder; the pane's proxy ends TLS for the hosts a secret is brokered to (with a
//! certificate from paddock's own authority, which only that pane's programs are told to
//! trust), puts the value in place of the placeholder in the headers the secret names, and
//! sends the request on over a new TLS connection that checks the real host's certificate.
//! A placeholder anywhere else the proxy can read (another header, the URL, a body, plain
//! HTTP to any host, clear text in any tunnel) stops the request: that is an attempt to send
//! the secret elsewhere, told to the pane's `Watcher`.
//!
//! This file holds the decisions, which are pure; `scan` finds placeholders in a stream,
//! `authority` makes certificates, `forward` (IO) serves and forwards the requests.

mod authority;
mod forward;
pub mod scan;
mod streams;
mod upstream;

use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

pub use authority::{Authority, AuthorityError};
pub use forward::{Broker, PaneBroker, Target};
use scan::Scanner;

/// A host a secret is brokered to: a name (lower case, no trailing dot) and a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerHost {
    pub name: String,
    pub port: u16,
}

impl fmt::Display for BrokerHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.name, self.port)
    }
}

/// A secret's value as the broker reads it (the vault keeps it; the broker only looks).
pub trait SecretValue: Send + Sync {
    fn bytes(&self) -> &[u8];
}

/// One brokered secret of one pane.
pub struct Grant {
    /// Its name in the vault.
    pub name: String,
    /// What the pane's programs hold instead of the value.
    pub placeholder: String,
    pub value: Arc<dyn SecretValue>,
    /// The hosts its value may go to.
    pub hosts: Vec<BrokerHost>,
    /// The request headers it may go in (lower case).
    pub headers: Vec<String>,
}

/// Whether the broker may put a secret in requests now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretState {
    Active,
    /// For a time, or until resumed.
    Suspended,
    /// Until the user sets a new value.
    Revoked,
    /// The vault has a newer value (or none): this pane's is not used again.
    Replaced,
}

impl SecretState {
    pub fn word(self) -> &'static str {
        match self {
            SecretState::Active => "active",
            SecretState::Suspended => "suspended",
            SecretState::Revoked => "revoked",
            SecretState::Replaced => "replaced",
        }
    }
}

/// A request that carried a brokered secret's placeholder to a host it is brokered to.
#[derive(Clone, Debug)]
pub struct Use {
    pub time: SystemTime,
    pub pane: u32,
    pub thread: Option<String>,
    pub secret: String,
    pub host: String,
    pub port: u16,
    pub method: String,
    /// The request's path, without its query.
    pub path: String,
    /// The response's status, when one came.
    pub status: Option<u16>,
    /// Whether the value went in (`Active`), or the placeholder went on as it was.
    pub state: SecretState,
    /// Why no response came.
    pub error: Option<String>,
}

/// Where a placeholder was seen that its value may not go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// A plain-HTTP request (to any host).
    PlainHttp,
    /// Clear text in a tunnel the broker does not open.
    Tunnel,
    /// In what asked the proxy for a tunnel (its target or headers).
    ProxyRequest,
    /// The URL of a request to a broker host.
    Url,
    /// A header the secret is not brokered in.
    Header(String),
    /// A request body.
    Body,
    /// A request to a host this secret is not brokered to (another secret's host).
    OtherHost,
    /// The value itself, in a response from a host it is brokered to: it went on with the
    /// placeholder in its place.
    Response,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::PlainHttp => f.write_str("in a plain-HTTP request"),
            Place::Tunnel => f.write_str("as clear text in a tunnel"),
            Place::ProxyRequest => f.write_str("in a request for a tunnel"),
            Place::Url => f.write_str("in a request's URL"),
            Place::Header(name) => write!(f, "in the header {name}, which it is not brokered in"),
            Place::Body => f.write_str("in a request body"),
            Place::OtherHost => f.write_str("to a host it is not brokered to"),
            Place::Response => f.write_str("came back in a response; the pane got the placeholder"),
        }
    }
}

/// An attempt to send a brokered secret's placeholder where its value may not go: stopped.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub time: SystemTime,
    pub pane: u32,
    pub thread: Option<String>,
    pub secret: String,
    pub host: String,
    pub port: u16,
    pub place: Place,
}

/// What the pane's owner is told, and asked.
pub trait Watcher: Send + Sync {
    /// Whether `secret` may be put in requests now.
    fn state(&self, secret: &str) -> SecretState;
    /// A request carried `secret` (or its placeholder, when not active).
    fn used(&self, record: Use);
    /// A placeholder was seen where its value may not go; the request was stopped.
    fn blocked(&self, attempt: Attempt);
}

/// A pane's brokered secrets.
pub struct Grants {
    list: Vec<Grant>,
    needles: scan::Needles,
}

/// A header of a request to a broker host that gets a secret: its index among the request's
/// headers, and the secret's among the grants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Injection {
    pub header: usize,
    pub grant: usize,
}

impl Grants {
    pub fn new(list: Vec<Grant>) -> Grants {
        let needles: Vec<&[u8]> = list.iter().map(|g| g.placeholder.as_bytes()).collect();
        let needles = scan::Needles::new(&needles);
        Grants { list, needles }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, index: usize) -> &Grant {
        &self.list[index]
    }

    pub fn iter(&self) -> impl Iterator<Item = &Grant> {
        self.list.iter()
    }

    /// Whether the broker opens connections to `host:port` (a name some grant lists).
    pub fn intercepts(&self, host: &str, port: u16) -> bool {
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        self.list.iter().any(|g| g.brokered_to(&name, port))
    }

    /// Each value and its placeholder, for a `Replacer`.
    pub fn pairs(&self) -> Vec<scan::Pair<'_>> {
        self.list.iter().map(|g| (g.value.bytes(), g.placeholder.as_bytes())).collect()
    }

    /// Whether some value's placeholder is not as long as the value (a response whose values
    /// are replaced then changes length).
    pub fn lengths_differ(&self) -> bool {
        self.list.iter().any(|g| g.value.bytes().len() != g.placeholder.len())
    }

    /// A search for this pane's placeholders in a stream.
    pub fn scanner(&self) -> Scanner {
        self.needles.scanner()
    }

    /// The grant whose placeholder `bytes` holds, if any.
    pub fn found_in(&self, bytes: &[u8]) -> Option<usize> {
        self.scanner().feed(bytes)
    }

    /// What a request to `host:port` for `target` (its path and query) with `headers` (name,
    /// value) may do: which headers get which secret, or where a placeholder was seen that its
    /// value may not go.
    pub fn examine(
        &self,
        host: &str,
        port: u16,
        target: &str,
        headers: &[(&str, &[u8])],
    ) -> Result<Vec<Injection>, (usize, Place)> {
        if let Some(grant) = self.found_in(target.as_bytes()) {
            return Err((grant, Place::Url));
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        let mut injections = Vec::new();
        for (index, (header, value)) in headers.iter().enumerate() {
            let header = header.to_ascii_lowercase();
            if let Some(grant) = self.found_in(header.as_bytes()) {
                return Err((grant, Place::Header(header)));
            }
            for (grant_index, grant) in self.list.iter().enumerate() {
                if memchr::memmem::find(value, grant.placeholder.as_bytes()).is_none() {
                    // In other letters' case it is no use here: the value goes only in place
                    // of the placeholder as it was given.
                    if self.found_in(value) == Some(grant_index) {
                        return Err((grant_index, Place::Header(header)));
                    }
                    continue;
                }
                if !grant.brokered_to(&name, port) {
                    return Err((grant_index, Place::OtherHost));
                }
                if !grant.headers.contains(&header) {
                    return Err((grant_index, Place::Header(header)));
                }
                injections.push(Injection { header: index, grant: grant_index });
            }
        }
        Ok(injections)
    }
}

impl Grant {
    fn brokered_to(&self, name: &str, port: u16) -> bool {
        self.hosts.iter().any(|h| h.name == name && h.port == port)
    }
}

/// `value` with every `placeholder` in it replaced by `secret`.
pub fn replaced(value: &[u8], placeholder: &[u8], secret: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len() + secret.len());
    let mut rest = value;
    while let Some(at) = memchr::memmem::find(rest, placeholder) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(secret);
        rest = &rest[at + placeholder.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Plain(&'static [u8]);
    impl SecretValue for Plain {
        fn bytes(&self) -> &[u8] {
            self.0
        }
    }

    fn grants() -> Grants {
        let host = |name: &str| BrokerHost { name: name.into(), port: 443 };
        Grants::new(vec![
            Grant {
                name: "anthropic".into(),
                placeholder: "sk-ant-api03-PLACEHOLDERaaaa".into(),
                value: Arc::new(Plain(b"sk-ant-api03-REALVALUE")),
                hosts: vec![host("api.anthropic.com")],
                headers: vec!["x-api-key".into(), "authorization".into()],
            },
            Grant {
                name: "openai".into(),
                placeholder: "sk-proj-PLACEHOLDERbbbb".into(),
                value: Arc::new(Plain(b"sk-proj-REAL")),
                hosts: vec![host("api.openai.com")],
                headers: vec!["authorization".into()],
            },
        ])
    }

    #[test]
    fn a_placeholder_in_a_listed_header_to_a_listed_host_gets_the_value() {
        let grants = grants();
        assert!(grants.intercepts("API.Anthropic.com.", 443));
        assert!(!grants.intercepts("api.anthropic.com", 8443));
        assert!(!grants.intercepts("example.com", 443));
        let headers: [(&str, &[u8]); 3] = [
            ("Accept", b"*/*"),
            ("X-Api-Key", b"sk-ant-api03-PLACEHOLDERaaaa"),
            ("Authorization", b"Bearer sk-ant-api03-PLACEHOLDERaaaa"),
        ];
        let injections =
            grants.examine("api.anthropic.com", 443, "/v1/messages?beta=true", &headers);
        assert_eq!(
            injections,
            Ok(vec![Injection { header: 1, grant: 0 }, Injection { header: 2, grant: 0 }])
        );
        assert_eq!(
            replaced(headers[2].1, b"sk-ant-api03-PLACEHOLDERaaaa", b"sk-ant-api03-REALVALUE"),
            b"Bearer sk-ant-api03-REALVALUE"
        );
        // No placeholder: nothing to do, and nothing wrong.
        assert_eq!(grants.examine("api.anthropic.com", 443, "/", &headers[..1]), Ok(vec![]));
    }

    #[test]
    fn a_placeholder_anywhere_else_is_an_attempt_and_says_where() {
        let grants = grants();
        let key: &[u8] = b"sk-ant-api03-PLACEHOLDERaaaa";
        type Case<'a> = (&'a str, &'a str, Vec<(&'a str, &'a [u8])>, (usize, Place));
        let cases: [Case<'_>; 4] = [
            ("api.anthropic.com", "/v1?key=sk-ant-api03-PLACEHOLDERaaaa", vec![], (0, Place::Url)),
            (
                "api.anthropic.com",
                "/",
                vec![("X-Forward-To", key)],
                (0, Place::Header("x-forward-to".into())),
            ),
            // Another secret's host, in a header that secret would go in.
            ("api.openai.com", "/", vec![("Authorization", key)], (0, Place::OtherHost)),
            (
                "api.anthropic.com",
                "/",
                vec![("Authorization", b"Bearer sk-proj-PLACEHOLDERbbbb")],
                (1, Place::OtherHost),
            ),
        ];
        for (host, target, headers, expected) in cases {
            assert_eq!(grants.examine(host, 443, target, &headers), Err(expected), "{target}");
        }
        assert_eq!(grants.found_in(b"{\"k\":\"sk-proj-PLACEHOLDERbbbb\"}"), Some(1));
    }
}
