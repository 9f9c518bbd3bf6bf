//! Parsing the text of Landlock's audit records.
//!
//! ```text
//! audit(1729738800.268:30): domain=1a6fdc66f blockers=fs.make_reg path="/etc" dev="vda2" ino=351
//! audit(1729738800.268:30): domain=1a6fdc66f status=allocated mode=enforcing pid=286 uid=0 exe="/usr/bin/shellgate" comm="shellgate"
//! audit(1729738800.268:30): domain=1a6fdc66f blockers=net.connect_tcp daddr=127.0.0.1 dest=8080
//! ```
//!
//! Values are either `"quoted"` or bare; strings the kernel considers unsafe (spaces, quotes,
//! control or non-ASCII bytes) are printed bare as hexadecimal.

/// One `AUDIT_LANDLOCK_ACCESS` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessRecord {
    /// The Landlock domain that denied the access.
    pub domain: u64,
    /// The denied rights (`fs.write_file`, `net.connect_tcp`, …).
    pub blockers: Vec<String>,
    /// The file or directory the kernel checked.
    pub path: Option<String>,
    /// `host:port` for network denials.
    pub address: Option<String>,
}

/// The creator of a domain, from an `AUDIT_LANDLOCK_DOMAIN` record with `status=allocated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainRecord {
    /// The domain id.
    pub domain: u64,
    /// The pid (thread group id) of the process that created it.
    pub pid: u32,
    /// The creator's parent and session, when the creator was our helper (see [`creator_tag`]).
    pub parent_and_session: Option<(u32, u32)>,
}

/// The command name the helper gives itself just before it creates its Landlock domain. The
/// kernel records the creator's name with the domain, so this carries the helper's parent pid and
/// session id to the collector: an executor may put a guard process (or a session leader) between
/// the pid it knows and the helper. Base 36 keeps it within the 15 bytes of a command name.
pub fn creator_tag(parent: u32, session: u32) -> String {
    format!("sg{}-{}", base36(parent), base36(session))
}

fn base36(mut n: u32) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(n % 36, 36).expect("digit below 36"));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// Read a [`creator_tag`] back.
pub fn parse_creator_tag(comm: &str) -> Option<(u32, u32)> {
    let (parent, session) = comm.strip_prefix("sg")?.split_once('-')?;
    Some((
        u32::from_str_radix(parent, 36).ok()?,
        u32::from_str_radix(session, 36).ok()?,
    ))
}

/// The `key=value` fields of a record, values unquoted or hex-decoded.
pub fn fields(text: &str) -> Vec<(&str, String)> {
    let body = text.split_once("): ").map_or(text, |(_, rest)| rest);
    let mut out = Vec::new();
    let mut rest = body.trim_start();
    while let Some((key, after)) = rest.split_once('=') {
        let key = key.trim();
        let (value, remainder) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.split_once('"') {
                Some((value, remainder)) => (value.to_owned(), remainder),
                None => (quoted.to_owned(), ""),
            }
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_owned(), &after[end..])
        };
        out.push((key, value));
        rest = remainder.trim_start();
    }
    out
}

/// Decode a bare value that the kernel hex-encoded (`audit_log_untrustedstring`).
fn untrusted(value: &str, was_quoted: bool) -> String {
    if was_quoted || !value.len().is_multiple_of(2) || !value.bytes().all(|b| b.is_ascii_hexdigit()) {
        return value.to_owned();
    }
    let bytes: Option<Vec<u8>> = (0..value.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&value[i..i + 2], 16).ok())
        .collect();
    bytes.map_or_else(|| value.to_owned(), |b| String::from_utf8_lossy(&b).into_owned())
}

fn field<'a>(fields: &'a [(&str, String)], key: &str) -> Option<&'a String> {
    fields.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
}

fn was_quoted(text: &str, key: &str) -> bool {
    text.contains(&format!(" {key}=\""))
}

/// Parse an `AUDIT_LANDLOCK_ACCESS` record.
pub fn parse_access(text: &str) -> Option<AccessRecord> {
    let fields = fields(text);
    let domain = u64::from_str_radix(field(&fields, "domain")?, 16).ok()?;
    let blockers = field(&fields, "blockers")?
        .split(',')
        .map(str::to_owned)
        .collect();
    let path = field(&fields, "path")
        .map(|p| untrusted(p, was_quoted(text, "path")))
        .or_else(|| field(&fields, "name").map(|n| untrusted(n, was_quoted(text, "name"))));
    let address = address(&fields, "daddr", "dest").or_else(|| address(&fields, "saddr", "src"));
    Some(AccessRecord {
        domain,
        blockers,
        path,
        address,
    })
}

fn address(fields: &[(&str, String)], host_key: &str, port_key: &str) -> Option<String> {
    let host = field(fields, host_key);
    let port = field(fields, port_key);
    match (host, port) {
        (None, None) => None,
        (Some(host), port) => {
            let host = if host.contains(':') {
                format!("[{host}]")
            } else {
                host.clone()
            };
            Some(match port {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        }
        (None, Some(port)) => Some(format!("*:{port}")),
    }
}

/// Parse an `AUDIT_LANDLOCK_DOMAIN` record that announces a domain's creator (`None` for the
/// `status=deallocated` records).
pub fn parse_domain(text: &str) -> Option<DomainRecord> {
    let fields = fields(text);
    if field(&fields, "status").map(String::as_str) != Some("allocated") {
        return None;
    }
    Some(DomainRecord {
        domain: u64::from_str_radix(field(&fields, "domain")?, 16).ok()?,
        pid: field(&fields, "pid")?.parse().ok()?,
        parent_and_session: field(&fields, "comm").and_then(|c| parse_creator_tag(c)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creator_tags_fit_a_command_name_and_round_trip() {
        // PID_MAX_LIMIT: no Linux pid is larger.
        let tag = creator_tag(4_194_304, 4_194_304);
        assert!(tag.len() <= 15, "{tag}");
        assert_eq!(parse_creator_tag(&tag), Some((4_194_304, 4_194_304)));
        assert_eq!(parse_creator_tag(&creator_tag(0, 1)), Some((0, 1)));
        assert_eq!(parse_creator_tag("bash"), None);
    }

    #[test]
    fn parses_file_access_records() {
        let record = parse_access(
            r#"audit(1729738800.268:30): domain=1a6fdc66f blockers=fs.write_file,fs.truncate path="/etc/x y" dev="vda2" ino=351"#,
        )
        .unwrap();
        assert_eq!(record.domain, 0x1a6f_dc66f);
        assert_eq!(record.blockers, ["fs.write_file", "fs.truncate"]);
        assert_eq!(record.path.as_deref(), Some("/etc/x y"));
        assert_eq!(record.address, None);
    }

    #[test]
    fn decodes_hex_paths() {
        // "/tmp/a b" is printed as hex because of the space.
        let record =
            parse_access("audit(1.2:3): domain=a blockers=fs.make_reg path=2F746D702F612062 dev=\"x\" ino=1")
                .unwrap();
        assert_eq!(record.path.as_deref(), Some("/tmp/a b"));
    }

    #[test]
    fn parses_network_records() {
        let connect =
            parse_access("audit(1.2:3): domain=b blockers=net.connect_tcp daddr=127.0.0.1 dest=8080")
                .unwrap();
        assert_eq!(connect.address.as_deref(), Some("127.0.0.1:8080"));
        assert_eq!(connect.path, None);
        let bind = parse_access("audit(1.2:3): domain=b blockers=net.bind_tcp src=9000").unwrap();
        assert_eq!(bind.address.as_deref(), Some("*:9000"));
        let v6 = parse_access("audit(1.2:3): domain=b blockers=net.connect_tcp daddr=::1 dest=22").unwrap();
        assert_eq!(v6.address.as_deref(), Some("[::1]:22"));
    }

    #[test]
    fn parses_domain_creation_only() {
        let created = parse_domain(
            r#"audit(1.2:3): domain=1a6fdc66f status=allocated mode=enforcing pid=286 uid=0 exe="/bin/x" comm="x""#,
        )
        .unwrap();
        assert_eq!(
            created,
            DomainRecord {
                domain: 0x1a6f_dc66f,
                pid: 286,
                parent_and_session: None,
            }
        );
        let tagged = parse_domain(&format!(
            "audit(1.2:3): domain=1 status=allocated mode=enforcing pid=5 uid=0 exe=\"/h\" comm=\"{}\"",
            creator_tag(4_194_304, 77)
        ))
        .unwrap();
        assert_eq!(tagged.parent_and_session, Some((4_194_304, 77)));
        assert_eq!(
            parse_domain("audit(1.2:3): domain=1a6fdc66f status=deallocated denials=2"),
            None
        );
        assert_eq!(parse_access("audit(1.2:3): garbage"), None);
    }
}
