//! The keys a configuration file may hold, checked with their positions before the values are
//! deserialized: an unknown key is an error naming its full path and line, with the closest known
//! key when one is within two edits; the positions of the known keys say where each effective value
//! came from (`shellgate config --sources`).

use std::collections::BTreeMap;
use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// What a key holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// A value (string, number, array of values, …).
    Value,
    /// A table with these keys.
    Table(&'static [(&'static str, Shape)]),
    /// An array of tables with these keys (`[[policy.rules]]`).
    Tables(&'static [(&'static str, Shape)]),
    /// A table of these values and of tables with any names, each with the keys of `each`
    /// (`[hosts] allow_unnamed`, `[hosts.web] target = …`).
    Named {
        /// The keys that hold values.
        values: &'static [&'static str],
        /// The keys of each named table.
        each: &'static [(&'static str, Shape)],
    },
}

const RULE_ENTRY: &[(&str, Shape)] = &[
    ("allow", Shape::Value),
    ("deny", Shape::Value),
    ("match", Shape::Value),
    ("not_match", Shape::Value),
];

const POLICY: &[(&str, Shape)] = &[
    ("security", Shape::Value),
    ("ask", Shape::Value),
    ("allow", Shape::Value),
    ("deny", Shape::Value),
    ("rules", Shape::Tables(RULE_ENTRY)),
    ("elevated", Shape::Value),
];

const REDIRECT_RULE: &[(&str, Shape)] = &[
    ("pattern", Shape::Value),
    ("flags", Shape::Value),
    ("tool", Shape::Value),
    ("message", Shape::Value),
    ("quote_aware", Shape::Value),
];

const INTERCEPT: &[(&str, Shape)] = &[
    ("default_rules", Shape::Value),
    ("redirect_rules", Shape::Tables(REDIRECT_RULE)),
    ("available_tools", Shape::Value),
    ("preflight", Shape::Value),
];

const ENV: &[(&str, Shape)] = &[
    ("allow_secrets", Shape::Value),
    ("redact", Shape::Value),
    ("allow", Shape::Value),
];

const SANDBOX_PROXY: &[(&str, Shape)] = &[("hosts", Shape::Value), ("allow_local_addresses", Shape::Value)];

const SANDBOX: &[(&str, Shape)] = &[
    ("mode", Shape::Value),
    ("writable_roots", Shape::Value),
    ("protected_paths", Shape::Value),
    ("network", Shape::Value),
    ("allowed_domains", Shape::Value),
    ("denied_domains", Shape::Value),
    ("proxy", Shape::Table(SANDBOX_PROXY)),
    ("unix_sockets", Shape::Value),
    ("unix_socket_paths", Shape::Value),
    ("cpu_seconds", Shape::Value),
    ("address_space_bytes", Shape::Value),
    ("file_size_bytes", Shape::Value),
    ("open_files", Shape::Value),
    ("processes", Shape::Value),
    ("memory_bytes", Shape::Value),
    ("allow_degraded", Shape::Value),
    ("min_landlock_abi", Shape::Value),
];

/// Every key of a configuration file (SPEC T-10).
pub(crate) const FILE_KEYS: &[(&str, Shape)] = &[
    ("cwd", Shape::Value),
    ("shell", Shape::Value),
    ("login", Shape::Value),
    ("prefix", Shape::Value),
    ("timeout", Shape::Value),
    ("max_timeout", Shape::Value),
    ("kill_grace", Shape::Value),
    ("head_bytes", Shape::Value),
    ("tail_bytes", Shape::Value),
    ("tool_names", Shape::Value),
    ("session", Shape::Value),
    ("session_idle_timeout", Shape::Value),
    ("max_jobs", Shape::Value),
    ("max_finished_jobs", Shape::Value),
    ("finished_job_ttl", Shape::Value),
    ("auto_yield_ms", Shape::Value),
    ("head_grace_ms", Shape::Value),
    ("poll_settle_ms", Shape::Value),
    ("policy", Shape::Table(POLICY)),
    ("intercept", Shape::Table(INTERCEPT)),
    ("env", Shape::Table(ENV)),
    ("sandbox", Shape::Table(SANDBOX)),
    ("approvals", Shape::Table(APPROVALS)),
    ("ssh", Shape::Table(SSH)),
    ("docker", Shape::Table(CLIENT)),
    ("podman", Shape::Table(CLIENT)),
    ("kubectl", Shape::Table(CLIENT)),
    (
        "hosts",
        Shape::Named {
            values: &["allow_unnamed"],
            each: HOST,
        },
    ),
];

const SSH: &[(&str, Shape)] = &[
    ("program", Shape::Value),
    ("config_file", Shape::Value),
    ("options", Shape::Value),
    ("multiplex", Shape::Value),
];

const CLIENT: &[(&str, Shape)] = &[("command", Shape::Value)];

const HOST: &[(&str, Shape)] = &[
    ("target", Shape::Value),
    ("workspace", Shape::Value),
    ("workdir", Shape::Value),
    ("env", Shape::Value),
];

const APPROVALS: &[(&str, Shape)] = &[
    ("expiry_secs", Shape::Value),
    ("fallback", Shape::Value),
    ("file", Shape::Value),
    ("mcp_approve_tool", Shape::Value),
    ("elicitation_timeout_secs", Shape::Value),
    ("socket_approve", Shape::Value),
];

/// A key the schema does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnknownKey {
    /// Its full path (`policy.secuirty`, `policy.rules[0].matches`).
    pub key: String,
    /// Its line, counted from 1.
    pub line: usize,
    /// The known key of the same table closest to it, when within two edits.
    pub suggestion: Option<String>,
}

/// Where the keys a document sets are: full path → line. Tables are entered; a value or an array
/// of tables is one entry.
pub(crate) type KeyLines = BTreeMap<String, usize>;

/// Check every key of `text` against `schema`. `Ok` holds the lines of the keys it sets; `Err(None)`
/// means the text is not TOML (deserializing it reports that, with its position).
pub(crate) fn check_keys(
    text: &str,
    schema: &'static [(&'static str, Shape)],
) -> Result<KeyLines, Option<UnknownKey>> {
    let doc = DeTable::parse(text).map_err(|_| None)?;
    let mut lines = KeyLines::new();
    walk(text, doc.get_ref(), schema, "", &mut lines).map_err(Some)?;
    Ok(lines)
}

fn walk(
    text: &str,
    table: &DeTable<'_>,
    schema: &'static [(&'static str, Shape)],
    prefix: &str,
    lines: &mut KeyLines,
) -> Result<(), UnknownKey> {
    // Keys in source order, so the first unknown one is reported.
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    for (key, value) in entries {
        let name: &str = key.get_ref();
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}.{name}")
        };
        let line = line_of(text, &key.span());
        let Some((_, shape)) = schema.iter().find(|(k, _)| *k == name) else {
            return Err(UnknownKey {
                key: path,
                line,
                suggestion: closest(name, schema.iter().map(|(k, _)| *k)),
            });
        };
        match (shape, value.get_ref()) {
            (Shape::Table(keys), DeValue::Table(inner)) => walk(text, inner, keys, &path, lines)?,
            (Shape::Named { values, each }, DeValue::Table(inner)) => {
                walk_named(text, inner, values, each, &path, lines)?;
            }
            (Shape::Tables(keys), DeValue::Array(items)) => {
                lines.entry(path.clone()).or_insert(line);
                for (i, item) in items.iter().enumerate() {
                    if let DeValue::Table(inner) = item.get_ref() {
                        let mut nested = KeyLines::new();
                        walk(text, inner, keys, &format!("{path}[{i}]"), &mut nested)?;
                    }
                }
            }
            // A value of the wrong type is reported when the value is deserialized.
            _ => {
                lines.entry(path).or_insert(line);
            }
        }
    }
    Ok(())
}

/// A [`Shape::Named`] table: its values, and its named tables checked against `each`.
fn walk_named(
    text: &str,
    table: &DeTable<'_>,
    values: &'static [&'static str],
    each: &'static [(&'static str, Shape)],
    prefix: &str,
    lines: &mut KeyLines,
) -> Result<(), UnknownKey> {
    for (key, value) in table {
        let name: &str = key.get_ref();
        let path = format!("{prefix}.{name}");
        let line = line_of(text, &key.span());
        match value.get_ref() {
            DeValue::Table(inner) => walk(text, inner, each, &path, lines)?,
            _ if values.contains(&name) => {
                lines.entry(path).or_insert(line);
            }
            _ => {
                return Err(UnknownKey {
                    key: path,
                    line,
                    suggestion: closest(name, values.iter().copied()),
                });
            }
        }
    }
    Ok(())
}

/// The 1-based line of a byte range's start.
pub(crate) fn line_of(text: &str, span: &Range<usize>) -> usize {
    let end = span.start.min(text.len());
    memchr::memchr_iter(b'\n', &text.as_bytes()[..end]).count() + 1
}

/// The candidate closest to `name` by edit distance, when it is at most 2 edits away.
pub(crate) fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.to_owned())
}

/// Levenshtein distance, with a transposition of neighbours counted as one edit
/// (`secuirty` → `security`).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_have_their_path_line_and_a_suggestion() {
        let err = check_keys("[policy]\nsecuirty = \"deny\"\n", FILE_KEYS)
            .unwrap_err()
            .unwrap();
        assert_eq!(
            err,
            UnknownKey {
                key: "policy.secuirty".into(),
                line: 2,
                suggestion: Some("security".into()),
            }
        );
        let err = check_keys(
            "timeout = 1\n\n[[policy.rules]]\nallow = \"x\"\nmatches = []\n",
            FILE_KEYS,
        )
        .unwrap_err()
        .unwrap();
        assert_eq!(err.key, "policy.rules[0].matches");
        assert_eq!(err.line, 5);
        assert_eq!(err.suggestion.as_deref(), Some("match"));
        let err = check_keys("colour = 1\n", FILE_KEYS).unwrap_err().unwrap();
        assert_eq!((err.key.as_str(), err.suggestion), ("colour", None));
        assert!(check_keys("not toml = = 1", FILE_KEYS).unwrap_err().is_none());
    }

    #[test]
    fn known_keys_report_their_lines() {
        let lines = check_keys(
            "timeout = 5\n[policy]\nsecurity = \"allowlist\"\n[[policy.rules]]\nallow = \"x\"\n[env]\nredact = [\"K\"]\n",
            FILE_KEYS,
        )
        .unwrap();
        assert_eq!(lines["timeout"], 1);
        assert_eq!(lines["policy.security"], 3);
        assert_eq!(lines["env.redact"], 7);
        assert!(lines.contains_key("policy.rules"));
        assert!(!lines.contains_key("policy.ask"));
    }

    #[test]
    fn edit_distance_counts_transpositions_once() {
        assert_eq!(edit_distance("secuirty", "security"), 1);
        assert_eq!(edit_distance("timout", "timeout"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(
            closest("sesion", ["session", "shell"]).as_deref(),
            Some("session")
        );
    }
}
