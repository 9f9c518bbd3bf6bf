//! The keys a configuration file may hold, checked with their positions before the values are
//! deserialized: an unknown key is an error naming its full path and line, with the closest known
//! key when one is within two edits; the positions of the known keys say where each effective value
//! came from (`shellgate config --sources`).

use std::collections::BTreeMap;
use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// The tool's own keys: the top level of the file.
const TOOL_KEYS: &[&str] = &[
    "cwd",
    "shell",
    "login",
    "prefix",
    "timeout",
    "max_timeout",
    "kill_grace",
    "head_bytes",
    "tail_bytes",
    "tool_names",
    "session",
    "session_idle_timeout",
    "max_jobs",
    "max_finished_jobs",
    "finished_job_ttl",
    "auto_yield_ms",
    "head_grace_ms",
    "poll_settle_ms",
];

/// Each stage's section and the keys its owner declares.
const SECTIONS: &[(&str, &[&str])] = &[
    ("policy", shellgate_intercept::POLICY_KEYS),
    ("intercept", shellgate_intercept::INTERCEPT_KEYS),
    ("env", shellgate_intercept::ENV_KEYS),
    ("sandbox", shellgate_sandbox::SANDBOX_KEYS),
    ("approvals", shellgate_approvals::APPROVALS_KEYS),
    ("ssh", shellgate_hosts::SSH_KEYS),
    ("docker", shellgate_hosts::CLIENT_KEYS),
    ("podman", shellgate_hosts::CLIENT_KEYS),
    ("kubectl", shellgate_hosts::CLIENT_KEYS),
    ("hosts", shellgate_hosts::HOSTS_KEYS),
];

/// Every key of a configuration file (SPEC T-10), in the order `shellgate config` shows them: a
/// value's name, `table.key` inside a table, `array[].key` in an array of tables, `*.key` in tables
/// of any name.
pub(crate) fn file_keys() -> &'static [&'static str] {
    static KEYS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        let mut keys: Vec<&'static str> = TOOL_KEYS.to_vec();
        for (section, owned) in SECTIONS {
            keys.extend(
                owned
                    .iter()
                    .map(|k| &*Box::leak(format!("{section}.{k}").into_boxed_str())),
            );
        }
        keys
    });
    &KEYS
}

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

/// Check every key of `text` against `keys` (see [`file_keys`]). `Ok` holds the lines of the keys
/// it sets; `Err(None)` means the text is not TOML (deserializing it reports that, with its position).
pub(crate) fn check_keys(text: &str, keys: &[&str]) -> Result<KeyLines, Option<UnknownKey>> {
    let doc = DeTable::parse(text).map_err(|_| None)?;
    let mut lines = KeyLines::new();
    walk(text, doc.get_ref(), keys, "", &mut lines).map_err(Some)?;
    Ok(lines)
}

/// The patterns of `keys` below `name` followed by `sep` (`.` a table, `[].` an array of tables).
fn below<'k>(keys: &[&'k str], name: &str, sep: &str) -> Vec<&'k str> {
    keys.iter()
        .filter_map(|k| k.strip_prefix(name)?.strip_prefix(sep))
        .collect()
}

fn walk(
    text: &str,
    table: &DeTable<'_>,
    keys: &[&str],
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
        if keys.contains(&name) {
            lines.entry(path).or_insert(line);
            continue;
        }
        let (inner_keys, item_keys) = (below(keys, name, "."), below(keys, name, "[]."));
        let named = below(keys, "*", ".");
        match value.get_ref() {
            DeValue::Table(inner) if !inner_keys.is_empty() => walk(text, inner, &inner_keys, &path, lines)?,
            DeValue::Array(items) if !item_keys.is_empty() => {
                lines.entry(path.clone()).or_insert(line);
                for (i, item) in items.iter().enumerate() {
                    if let DeValue::Table(inner) = item.get_ref() {
                        let mut nested = KeyLines::new();
                        walk(text, inner, &item_keys, &format!("{path}[{i}]"), &mut nested)?;
                    }
                }
            }
            DeValue::Table(inner) if !named.is_empty() => walk(text, inner, &named, &path, lines)?,
            // A value of the wrong type is reported when the value is deserialized.
            _ if !inner_keys.is_empty() || !item_keys.is_empty() => {
                lines.entry(path).or_insert(line);
            }
            _ => {
                let here = keys
                    .iter()
                    .filter(|k| !k.starts_with('*'))
                    .map(|k| k.split(['.', '[']).next().unwrap_or(k));
                return Err(UnknownKey {
                    key: path,
                    line,
                    suggestion: closest(name, here),
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
        let err = check_keys("[policy]\nsecuirty = \"deny\"\n", file_keys())
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
            file_keys(),
        )
        .unwrap_err()
        .unwrap();
        assert_eq!(err.key, "policy.rules[0].matches");
        assert_eq!(err.line, 5);
        assert_eq!(err.suggestion.as_deref(), Some("match"));
        let err = check_keys("colour = 1\n", file_keys()).unwrap_err().unwrap();
        assert_eq!((err.key.as_str(), err.suggestion), ("colour", None));
        assert!(check_keys("not toml = = 1", file_keys()).unwrap_err().is_none());
    }

    #[test]
    fn known_keys_report_their_lines() {
        let lines = check_keys(
            "timeout = 5\n[policy]\nsecurity = \"allowlist\"\n[[policy.rules]]\nallow = \"x\"\n[env]\nredact = [\"K\"]\n",
            file_keys(),
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
