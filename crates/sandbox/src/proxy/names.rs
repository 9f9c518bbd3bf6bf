//! Destination names and the patterns they are matched against.
//!
//! A name is normalised before it meets a pattern, so that spellings a resolver treats alike
//! match alike: it is mapped to its ASCII form by UTS 46 (IDNA: `Bücher.example` and
//! `xn--bcher-kva.example` are one name; case is folded, full-width dots are dots) and one
//! trailing dot is dropped (`Uploads.GitHub.com.` is `uploads.github.com`). A name the mapping
//! refuses (an `xn--` label that is not valid punycode, a forbidden character) matches no
//! pattern. Only names a resolver would look up as names pass: letters, digits, `-` and `_` in
//! labels of 1 to 63 bytes. Anything else — an empty label, a last label of digits or hex that
//! the C resolver would read as a number (`2130706433`, `0x7f.1`) — is not a name and matches no
//! pattern. Address literals are kept in their canonical form (`[::1]` is `::1`).

use std::net::IpAddr;

use crate::ProxyPolicy;

/// A normalised destination name (ASCII), or an address literal in canonical form.
pub fn normalize(host: &str) -> Option<String> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(ip.to_string());
    }
    if bare.len() != host.len() {
        return None;
    }
    // UTS 46 as URLs apply it (nontransitional; `_` allowed); an error is no name at all.
    let mapped = idna::domain_to_ascii(host).ok()?;
    let name = mapped.strip_suffix('.').unwrap_or(&mapped);
    if name.is_empty() || name.len() > 253 {
        return None;
    }
    let labels: Vec<&str> = name.split('.').collect();
    let valid_label = |label: &&str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !labels.iter().all(valid_label) {
        return None;
    }
    let last = labels.last().copied().unwrap_or_default();
    let numeric = last.bytes().all(|b| b.is_ascii_digit())
        || (last.starts_with("0x") && last[2..].bytes().all(|b| b.is_ascii_hexdigit()));
    if numeric {
        return None;
    }
    Some(name.to_ascii_lowercase())
}

/// Whether `text` is a destination pattern of `allowed_domains`/`denied_domains`: `host`,
/// `*.suffix`, either with an optional `:port`. The error says what is expected.
pub fn check_domain_pattern(text: &str) -> Result<(), String> {
    Pattern::parse(text).map(|_| ())
}

/// One `host`, `*.suffix`, `host:port` or `*.suffix:port` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// The name, or the suffix of a wildcard.
    name: String,
    /// `*.name`: any name below `name`, not `name` itself.
    below: bool,
    port: Option<u16>,
}

impl Pattern {
    fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("malformed domain pattern {text:?} (expected host, *.suffix, optionally :port)");
        let (host, port) = split_port(text).ok_or_else(bad)?;
        let (below, host) = match host.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, host),
        };
        let name = normalize(host).ok_or_else(bad)?;
        if below && name.parse::<IpAddr>().is_ok() {
            return Err(bad());
        }
        Ok(Self { name, below, port })
    }

    fn matches(&self, name: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        if self.below {
            name.strip_suffix(self.name.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            name == self.name
        }
    }
}

/// `host` and its port: `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address.
fn split_port(text: &str) -> Option<(&str, Option<u16>)> {
    if text.starts_with('[') {
        let end = text.find(']')?;
        let (host, rest) = text.split_at(end + 1);
        return match rest.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if rest.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match text.rsplit_once(':') {
        Some((host, _)) if host.contains(':') => Some((text, None)),
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((text, None)),
    }
}

/// What the lists say about one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listed {
    /// `allowed_domains` lists it and `denied_domains` does not.
    Allowed,
    /// `denied_domains` lists it (whatever `allowed_domains` says).
    Denied,
    /// Neither list does, or it is not a name.
    NotAllowed,
}

/// The compiled lists and static names of a [`ProxyPolicy`].
#[derive(Debug, Clone)]
pub struct DomainRules {
    allowed: Vec<Pattern>,
    denied: Vec<Pattern>,
    /// A request's narrower list, which a destination must match too.
    narrowed: Option<Vec<Pattern>>,
    hosts: Vec<(String, IpAddr)>,
    /// Local addresses are reachable.
    pub allow_local_addresses: bool,
}

impl DomainRules {
    /// Compile `policy`'s lists; the first malformed pattern or name is the error.
    pub fn new(policy: &ProxyPolicy) -> Result<Self, String> {
        let compile = |list: &[String]| {
            list.iter()
                .map(|p| Pattern::parse(p))
                .collect::<Result<Vec<_>, _>>()
        };
        let hosts = policy
            .hosts
            .iter()
            .map(|(name, ip)| {
                normalize(name)
                    .map(|n| (n, *ip))
                    .ok_or_else(|| format!("malformed name {name:?} in the proxy's hosts"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            allowed: compile(&policy.allowed_domains)?,
            denied: compile(&policy.denied_domains)?,
            narrowed: policy.narrowed_to.as_deref().map(compile).transpose()?,
            hosts,
            allow_local_addresses: policy.allow_local_addresses,
        })
    }

    /// What the lists say about `host` (as the client wrote it) on `port`.
    pub fn judge(&self, host: &str, port: u16) -> Listed {
        let Some(name) = normalize(host) else {
            return Listed::NotAllowed;
        };
        if self.denied.iter().any(|p| p.matches(&name, port)) {
            Listed::Denied
        } else if self.allowed.iter().any(|p| p.matches(&name, port))
            && self
                .narrowed
                .as_ref()
                .is_none_or(|narrowed| narrowed.iter().any(|p| p.matches(&name, port)))
        {
            Listed::Allowed
        } else {
            Listed::NotAllowed
        }
    }

    /// The static address of `host`, looked up before DNS.
    pub fn static_address(&self, host: &str) -> Option<IpAddr> {
        let name = normalize(host)?;
        self.hosts.iter().find(|(n, _)| *n == name).map(|(_, ip)| *ip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allowed: &[&str], denied: &[&str]) -> DomainRules {
        let mut policy = ProxyPolicy::allowing(allowed.iter().copied());
        policy.denied_domains = denied.iter().map(|d| (*d).to_owned()).collect();
        DomainRules::new(&policy).unwrap()
    }

    #[test]
    fn spellings_of_a_denied_name_are_denied() {
        let rules = rules(&["*.github.com", "github.com:443"], &["uploads.github.com"]);
        for host in [
            "uploads.github.com",
            "uploads.github.com.",
            "UPLOADS.GitHub.COM",
            "Uploads.github.com.",
        ] {
            assert_eq!(rules.judge(host, 443), Listed::Denied, "{host}");
        }
        for host in [
            "uploads.github.com..",
            "uploads .github.com",
            "uploads%2egithub.com",
            "uploads/.github.com",
        ] {
            assert_eq!(rules.judge(host, 443), Listed::NotAllowed, "{host}");
        }
        // Spellings UTS 46 maps to the same name: full-width letters and dots, a Unicode dot.
        for host in [
            "ｕｐｌｏａｄｓ.github.com",
            "uploads。github．com",
            "UPLOADS．GITHUB．COM．",
        ] {
            assert_eq!(rules.judge(host, 443), Listed::Denied, "{host}");
        }
        // Another name below github.com: allowed as such, not mistaken for the denied one.
        assert_eq!(rules.judge("uplöads.github.com", 443), Listed::Allowed);
        assert_eq!(rules.judge("api.github.com", 22), Listed::Allowed);
        assert_eq!(rules.judge("GitHub.com.", 443), Listed::Allowed);
        assert_eq!(rules.judge("github.com", 80), Listed::NotAllowed);
    }

    #[test]
    fn internationalised_names_meet_their_ascii_form() {
        let rules = rules(
            &["bücher.example", "xn--caf-dma.example", "*.ÖL.example"],
            &["xn--bse-sna.öl.example"],
        );
        for (host, listed) in [
            ("xn--bcher-kva.example", Listed::Allowed),
            ("Bücher.Example.", Listed::Allowed),
            ("BÜCHER.example", Listed::Allowed),
            ("café.example", Listed::Allowed),
            ("xn--caf-dma.example", Listed::Allowed),
            ("ein.öl.example", Listed::Allowed),
            ("ein.xn--l-0ga.example", Listed::Allowed),
            ("böse.öl.example", Listed::Denied),
            ("böse.xn--l-0ga.example", Listed::Denied),
            ("buecher.example", Listed::NotAllowed),
            // Punycode that does not decode, and what UTS 46 refuses, are no names.
            ("xn--zz.example", Listed::NotAllowed),
            ("xn--.example", Listed::NotAllowed),
            ("b\u{fffd}cher.example", Listed::NotAllowed),
        ] {
            assert_eq!(rules.judge(host, 443), listed, "{host}");
        }
        assert_eq!(
            normalize("Bücher.example.").as_deref(),
            Some("xn--bcher-kva.example")
        );
        assert_eq!(normalize("xn--zz.example"), None);
        // A bad pattern is an error, not a pattern that matches nothing.
        assert!(DomainRules::new(&ProxyPolicy::allowing(["xn--zz.example"])).is_err());
    }

    #[test]
    fn a_narrower_list_tightens_and_never_widens() {
        let mut policy = ProxyPolicy::allowing(["*.crates.io", "pypi.org"]);
        policy.narrowed_to = Some(vec!["static.crates.io:443".into(), "evil.example".into()]);
        let rules = DomainRules::new(&policy).unwrap();
        assert_eq!(rules.judge("static.crates.io", 443), Listed::Allowed);
        assert_eq!(rules.judge("static.crates.io", 80), Listed::NotAllowed);
        assert_eq!(rules.judge("index.crates.io", 443), Listed::NotAllowed);
        assert_eq!(rules.judge("pypi.org", 443), Listed::NotAllowed);
        assert_eq!(
            rules.judge("evil.example", 443),
            Listed::NotAllowed,
            "not widened"
        );
    }

    #[test]
    fn a_wildcard_covers_names_below_it_only() {
        let rules = rules(&["*.crates.io"], &[]);
        assert_eq!(rules.judge("static.crates.io", 443), Listed::Allowed);
        assert_eq!(rules.judge("a.b.crates.io", 443), Listed::Allowed);
        assert_eq!(rules.judge("crates.io", 443), Listed::NotAllowed);
        assert_eq!(rules.judge("evilcrates.io", 443), Listed::NotAllowed);
        assert_eq!(rules.judge("crates.io.evil.com", 443), Listed::NotAllowed);
    }

    #[test]
    fn numbers_are_not_names_and_addresses_are_canonical() {
        let rules = rules(&["127.0.0.1", "[::1]:80"], &[]);
        assert_eq!(rules.judge("2130706433", 80), Listed::NotAllowed);
        assert_eq!(rules.judge("0x7f.1", 80), Listed::NotAllowed);
        assert_eq!(rules.judge("127.1", 80), Listed::NotAllowed);
        assert_eq!(rules.judge("127.0.0.1", 80), Listed::Allowed);
        assert_eq!(rules.judge("[0:0::1]", 80), Listed::Allowed);
        assert_eq!(rules.judge("::1", 81), Listed::NotAllowed);
        assert_eq!(
            normalize("[::ffff:127.0.0.1]").as_deref(),
            Some("::ffff:127.0.0.1")
        );
    }

    #[test]
    fn malformed_patterns_are_refused() {
        for bad in [
            "",
            "*",
            "*.",
            "a..b",
            "host:port",
            "host:99999",
            "*.1.2.3.4",
            "ex ample.com",
            "[::1",
        ] {
            let policy = ProxyPolicy::allowing([bad]);
            assert!(DomainRules::new(&policy).is_err(), "{bad:?}");
        }
        let mut policy = ProxyPolicy::allowing(["ok.example"]);
        policy
            .hosts
            .insert("Registry.Internal.".into(), "10.1.2.3".parse().unwrap());
        let rules = DomainRules::new(&policy).unwrap();
        assert_eq!(
            rules.static_address("registry.internal"),
            Some("10.1.2.3".parse().unwrap())
        );
        assert_eq!(rules.static_address("other.internal"), None);
    }
}
