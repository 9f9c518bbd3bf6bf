//! Destinations a person allowed always for proxied sandboxes, as the approvals file holds them
//! (`[[domain]] address = "host:port"`).

use serde::{Deserialize, Serialize};

/// One destination a person allowed always for proxied sandboxes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredDomain {
    /// `host:port`, exactly (never a wildcard).
    pub address: String,
    /// When it was added (RFC 3339, UTC).
    #[serde(default)]
    pub added: String,
    /// The command whose run met it.
    #[serde(default)]
    pub command: String,
}

/// `host:port` with a port and no wildcard: what a domain approval may hold.
pub(super) fn is_exact_address(address: &str) -> bool {
    let Some((host, port)) = address.rsplit_once(':') else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    !host.is_empty()
        && !host.contains('*')
        && port.parse::<u16>().is_ok_and(|p| p != 0)
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:".contains(c))
}

#[cfg(test)]
mod tests {
    use super::super::ApprovalsFile;

    #[test]
    fn domains_are_stored_exactly_next_to_the_rules() {
        let dir = tempfile::tempdir().unwrap();
        let file = ApprovalsFile::new(dir.path().join("approvals.toml"));
        file.add(&[vec!["ls".to_owned()]], "ls").unwrap();
        assert!(file.add_domain("pypi.org:443", "pip install x").unwrap());
        assert!(!file.add_domain("pypi.org:443", "again").unwrap());
        for wide in ["*.pypi.org:443", "pypi.org", "pypi.org:0", "a b:1"] {
            assert!(file.add_domain(wide, "x").is_err(), "{wide}");
        }
        let domains = file.load_domains().unwrap();
        assert_eq!(domains.len(), 1);
        assert_eq!(domains[0].address, "pypi.org:443");
        assert_eq!(file.load().unwrap().len(), 1, "the rules stay");
        let text = std::fs::read_to_string(file.path()).unwrap();
        assert!(text.contains("[[domain]]"), "{text}");
        std::fs::write(file.path(), "version = 1\n[[domain]]\naddress = \"*.evil:443\"\n").unwrap();
        assert!(file.load().unwrap_err().to_string().contains("line 2"));
    }
}
