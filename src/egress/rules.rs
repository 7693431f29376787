//! A thread's network allow-list: which hosts and ports its proxied connections may reach, and
//! the decision for one connection. Pure but for the name lookup it is handed.
//!
//! A rule is a host name (`api.anthropic.com`), a wildcard for its subdomains only
//! (`*.github.com` holds `api.github.com`, not `github.com`), or an address (`127.0.0.1`,
//! `[::1]`), each with an optional port (443 when none is given); `@name` is a preset that
//! stands for a documented list of rules. Names are looked up by the proxy, never inside the
//! lock. An address that is not on the public internet (loopback, private, link-local, the
//! cloud metadata address, …) is reached only when a rule names that exact address and port,
//! or the proxy's hosts table maps the name to it: a listed name that resolves to the host's
//! own services is refused.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use thiserror::Error;

/// The port a rule without one allows.
pub const DEFAULT_PORT: u16 = 443;

/// The presets `@name` stands for: the hosts an agent's CLI needs to log in and talk to its
/// model. The README lists them; nothing else is added behind the user's back.
pub const PRESETS: &[(&str, &[&str])] = &[
    (
        "anthropic",
        &[
            "api.anthropic.com",
            "console.anthropic.com",
            "platform.claude.com",
            "claude.ai",
            "statsig.anthropic.com",
        ],
    ),
    ("openai", &["api.openai.com", "auth.openai.com", "chatgpt.com"]),
    (
        "google",
        &[
            "generativelanguage.googleapis.com",
            "cloudcode-pa.googleapis.com",
            "oauth2.googleapis.com",
            "accounts.google.com",
        ],
    ),
    ("github", &["github.com", "api.github.com", "codeload.github.com", "*.githubusercontent.com"]),
];

/// What a rule's host part names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostRule {
    /// This name exactly (lower case, no trailing dot).
    Name(String),
    /// Any name below this one, not the name itself.
    Subdomains(String),
    /// This address exactly.
    Address(IpAddr),
}

/// One host (or address) and port a connection may reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub host: HostRule,
    pub port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RuleError {
    #[error("an empty rule: name a host (api.example.com), *.domain, an address or @preset")]
    Empty,
    #[error("\"{0}\" is not a known preset; the presets are {names}", names = preset_names())]
    UnknownPreset(String),
    #[error("\"{0}\" has a bad port: use a number from 1 to 65535 after the colon")]
    BadPort(String),
    #[error(
        "\"{0}\" is not a host name: use letters, digits, `-` and `.` (no scheme, path or \
         user), `*.` only at the start"
    )]
    BadHost(String),
}

fn preset_names() -> String {
    PRESETS.iter().map(|(name, _)| format!("@{name}")).collect::<Vec<_>>().join(", ")
}

impl Rule {
    /// The rules `text` stands for: one, or a preset's list.
    pub fn parse(text: &str) -> Result<Vec<Rule>, RuleError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(RuleError::Empty);
        }
        if let Some(name) = text.strip_prefix('@') {
            let (_, hosts) = PRESETS
                .iter()
                .find(|(preset, _)| *preset == name)
                .ok_or_else(|| RuleError::UnknownPreset(text.to_owned()))?;
            return hosts.iter().map(|host| Rule::parse_one(host)).collect();
        }
        Rule::parse_one(text).map(|rule| vec![rule])
    }

    fn parse_one(text: &str) -> Result<Rule, RuleError> {
        // A URL, a path or a user is not a host, whatever its colons seem to say.
        if text.contains(['/', '@', ' ', '\t']) {
            return Err(RuleError::BadHost(text.to_owned()));
        }
        let bad_port = || RuleError::BadPort(text.to_owned());
        let port_of =
            |port: &str| port.parse::<u16>().ok().filter(|p| *p != 0).ok_or_else(bad_port);
        // `[v6]:port` or `[v6]`; a bare v6 address has colons of its own.
        if let Some(rest) = text.strip_prefix('[') {
            let (address, after) =
                rest.split_once(']').ok_or(RuleError::BadHost(text.to_owned()))?;
            let address: Ipv6Addr =
                address.parse().map_err(|_| RuleError::BadHost(text.to_owned()))?;
            let port = match after {
                "" => DEFAULT_PORT,
                _ => port_of(after.strip_prefix(':').ok_or_else(bad_port)?)?,
            };
            return Ok(Rule { host: HostRule::Address(IpAddr::V6(address)), port });
        }
        if let Ok(address) = text.parse::<Ipv6Addr>() {
            return Ok(Rule { host: HostRule::Address(IpAddr::V6(address)), port: DEFAULT_PORT });
        }
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => (host, port_of(port)?),
            None => (text, DEFAULT_PORT),
        };
        if let Ok(address) = host.parse::<Ipv4Addr>() {
            return Ok(Rule { host: HostRule::Address(IpAddr::V4(address)), port });
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(name) => (true, name.to_owned()),
            None => (false, host),
        };
        if !is_host_name(&name) {
            return Err(RuleError::BadHost(text.to_owned()));
        }
        let host = if wildcard { HostRule::Subdomains(name) } else { HostRule::Name(name) };
        Ok(Rule { host, port })
    }

    /// Whether this rule lets a connection to the name `host` (lower case) on `port` through,
    /// by name.
    pub fn holds_name(&self, host: &str, port: u16) -> bool {
        port == self.port
            && match &self.host {
                HostRule::Name(name) => host == name,
                HostRule::Subdomains(domain) => {
                    host.len() > domain.len() + 1
                        && host.ends_with(domain.as_str())
                        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
                }
                HostRule::Address(_) => false,
            }
    }

    fn names_address(&self, address: SocketAddr) -> bool {
        self.port == address.port()
            && matches!(self.host, HostRule::Address(ip) if canonical_ip(ip) == canonical_ip(address.ip()))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostRule::Name(name) => write!(f, "{name}:{}", self.port),
            HostRule::Subdomains(domain) => write!(f, "*.{domain}:{}", self.port),
            HostRule::Address(IpAddr::V6(address)) => write!(f, "[{address}]:{}", self.port),
            HostRule::Address(address) => write!(f, "{address}:{}", self.port),
        }
    }
}

/// A DNS name: labels of letters, digits and `-`, at most 253 bytes.
fn is_host_name(name: &str) -> bool {
    let label = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !name.is_empty() && name.len() <= 253 && name.split('.').all(label)
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical_ip(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether `ip` is an address of the public internet: not loopback, private, link-local (the
/// cloud metadata address among them), shared (CGNAT), unspecified, broadcast, multicast,
/// documentation or reserved.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical_ip(ip) {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (18..20).contains(&b))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && v6.segments()[1] == 0x0db8
                || first == 0x0064 && v6.segments()[1] == 0xff9b)
        }
    }
}

/// Why a connection was refused, as the log and the pane say it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    /// No rule names this host and port.
    NotListed,
    /// The name is listed, but resolves to an address off the public internet that no rule
    /// names.
    NotPublic(IpAddr),
    /// The name could not be resolved.
    NoAddress(String),
}

impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denied::NotListed => f.write_str("not in the thread's network allow-list"),
            Denied::NotPublic(ip) => write!(
                f,
                "resolves to {ip}, which is not on the public internet (name that address and \
                 port in a rule to allow it)"
            ),
            Denied::NoAddress(why) => write!(f, "cannot be resolved: {why}"),
        }
    }
}

/// A thread's allow-list, and the proxy's hosts table (names it maps to addresses itself, for
/// split-horizon names and local test servers; an address given there is trusted as the user
/// wrote it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowList {
    pub rules: Vec<Rule>,
    pub hosts: BTreeMap<String, IpAddr>,
}

impl AllowList {
    /// Where a connection to `host:port` may go: the addresses to try, in order, or why not.
    /// `resolve` looks a name up (the system's resolver, or a fake in tests).
    pub fn decide(
        &self,
        host: &str,
        port: u16,
        resolve: impl Fn(&str, u16) -> std::io::Result<Vec<SocketAddr>>,
    ) -> Result<Vec<SocketAddr>, Denied> {
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        if let Ok(ip) = literal.parse::<IpAddr>() {
            let address = SocketAddr::new(ip, port);
            return match self.rules.iter().any(|rule| rule.names_address(address)) {
                true => Ok(vec![address]),
                false => Err(Denied::NotListed),
            };
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if !self.rules.iter().any(|rule| rule.holds_name(&name, port)) {
            return Err(Denied::NotListed);
        }
        if let Some(ip) = self.hosts.get(&name) {
            return Ok(vec![SocketAddr::new(*ip, port)]);
        }
        let found = resolve(&name, port).map_err(|e| Denied::NoAddress(e.to_string()))?;
        let allowed = |a: &SocketAddr| {
            is_public(a.ip()) || self.rules.iter().any(|rule| rule.names_address(*a))
        };
        match found.iter().find(|a| !allowed(a)) {
            // One address off the public internet refuses the name: a resolver that answers
            // both could be steering the connection to the host's own services.
            Some(bad) => Err(Denied::NotPublic(bad.ip())),
            None if found.is_empty() => Err(Denied::NoAddress("no addresses".into())),
            None => Ok(found),
        }
    }
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
