use std::net::{IpAddr, SocketAddr};

use super::*;

fn one(text: &str) -> Rule {
    let mut rules = Rule::parse(text).expect(text);
    assert_eq!(rules.len(), 1, "{text}");
    rules.remove(0)
}

fn list(rules: &[&str]) -> AllowList {
    let rules = rules.iter().flat_map(|r| Rule::parse(r).expect(r)).collect();
    AllowList { rules, hosts: Default::default() }
}

/// A resolver that knows a few names, and counts nothing else.
fn resolver(name: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    let ip: IpAddr = match name {
        "api.anthropic.com" | "api.github.com" => "160.79.104.10".parse().unwrap(),
        "rebind.example.com" => "10.0.0.7".parse().unwrap(),
        "meta.example.com" => "169.254.169.254".parse().unwrap(),
        "local.example.com" => "127.0.0.1".parse().unwrap(),
        _ => return Err(std::io::Error::other("no such host")),
    };
    Ok(vec![SocketAddr::new(ip, port)])
}

#[test]
fn rules_read_as_written() {
    assert_eq!(
        one("API.Anthropic.com."),
        Rule { host: HostRule::Name("api.anthropic.com".into()), port: 443 }
    );
    assert_eq!(one("*.github.com").host, HostRule::Subdomains("github.com".into()));
    assert_eq!(one("git.example.com:22").port, 22);
    assert_eq!(
        one("127.0.0.1:11434"),
        Rule { host: HostRule::Address("127.0.0.1".parse().unwrap()), port: 11434 }
    );
    assert_eq!(
        one("[::1]:8080"),
        Rule { host: HostRule::Address("::1".parse().unwrap()), port: 8080 }
    );
    assert_eq!(one("::1").port, 443);
    assert_eq!(one("*.github.com:8443").to_string(), "*.github.com:8443");
    let anthropic = Rule::parse("@anthropic").expect("a preset");
    assert!(anthropic.contains(&one("api.anthropic.com")), "{anthropic:?}");
}

#[test]
fn bad_rules_say_what_is_wrong() {
    let error = |text: &str| Rule::parse(text).expect_err(text).to_string();
    assert!(error("").contains("empty"));
    assert!(error("@nope").contains("@anthropic, @openai, @google, @github"), "{}", error("@nope"));
    for bad in ["host:0", "host:99999", "host:x", "[::1]x"] {
        assert!(
            error(bad).contains("port") || error(bad).contains("host name"),
            "{bad}: {}",
            error(bad)
        );
    }
    for bad in ["https://api.example.com", "a b", "*.", "user@host", "-x.com", "api.example.com/v1"]
    {
        assert!(error(bad).contains("not a host name"), "{bad}: {}", error(bad));
    }
}

#[test]
fn a_wildcard_holds_subdomains_not_the_domain() {
    let allow = list(&["*.github.com"]);
    assert!(allow.decide("api.github.com", 443, resolver).is_ok());
    assert_eq!(allow.decide("github.com", 443, resolver), Err(Denied::NotListed));
    assert_eq!(allow.decide("evilgithub.com", 443, resolver), Err(Denied::NotListed));
    assert_eq!(allow.decide("api.github.com", 80, resolver), Err(Denied::NotListed), "other port");
}

#[test]
fn a_listed_name_that_leads_off_the_internet_is_refused() {
    let allow = list(&["rebind.example.com", "meta.example.com", "local.example.com"]);
    for name in ["rebind.example.com", "meta.example.com", "local.example.com"] {
        assert!(matches!(allow.decide(name, 443, resolver), Err(Denied::NotPublic(_))), "{name}");
    }
    // Unless a rule names that very address and port.
    let allow = list(&["local.example.com:8080", "127.0.0.1:8080"]);
    assert!(allow.decide("local.example.com", 8080, resolver).is_ok());
    let denied = list(&["nowhere.example.com"]).decide("nowhere.example.com", 443, resolver);
    assert!(matches!(denied, Err(Denied::NoAddress(_))), "{denied:?}");
}

#[test]
fn addresses_need_a_rule_of_their_own() {
    let allow = list(&["api.anthropic.com", "127.0.0.1:11434", "[::1]:9000"]);
    assert_eq!(allow.decide("160.79.104.10", 443, resolver), Err(Denied::NotListed));
    assert_eq!(
        allow.decide("127.0.0.1", 11434, resolver),
        Ok(vec!["127.0.0.1:11434".parse().unwrap()])
    );
    assert_eq!(allow.decide("127.0.0.1", 22, resolver), Err(Denied::NotListed));
    assert!(allow.decide("[::1]", 9000, resolver).is_ok());
    // An IPv4-mapped address is the IPv4 address.
    assert!(allow.decide("::ffff:127.0.0.1", 11434, resolver).is_ok());
}

#[test]
fn the_hosts_table_maps_a_listed_name_to_its_address() {
    let mut allow = list(&["fake.test:8443"]);
    allow.hosts.insert("fake.test".into(), "127.0.0.1".parse().unwrap());
    assert_eq!(
        allow.decide("fake.test", 8443, resolver),
        Ok(vec!["127.0.0.1:8443".parse().unwrap()])
    );
    assert_eq!(allow.decide("fake.test", 443, resolver), Err(Denied::NotListed), "still by port");
}

#[test]
fn public_means_public() {
    let public = |ip: &str| is_public(ip.parse().unwrap());
    for ip in ["160.79.104.10", "8.8.8.8", "192.0.3.1", "2606:4700::1111"] {
        assert!(public(ip), "{ip}");
    }
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "192.0.2.1",
        "192.0.0.8",
        "240.0.0.1",
        "::1",
        "::",
        "fd00::1",
        "fe80::1",
        "::ffff:10.0.0.1",
        "2001:db8::1",
        "64:ff9b::a00:1",
    ] {
        assert!(!public(ip), "{ip}");
    }
}
