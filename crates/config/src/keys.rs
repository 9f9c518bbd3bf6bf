//! The keys a configuration file holds, checked with their positions before the values are
//! deserialized: an unknown key is an error naming its full path and line, with the closest known
//! key when one is within two edits; the positions of the known keys say where each effective value
//! came from.

use std::collections::BTreeMap;
use std::ops::Range;

use toml::de::{DeTable, DeValue};

use crate::closest;

/// A key the schema does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// Its full path (`policy.secuirty`, `policy.rules[0].matches`).
    pub key: String,
    /// Its line, counted from 1.
    pub line: usize,
    /// The known key of the same table closest to it, when within two edits.
    pub suggestion: Option<String>,
}

/// Where the keys a document sets are: full path → line. Tables are entered; a value or an array
/// of tables is one entry.
pub type KeyLines = BTreeMap<String, usize>;

/// Check every key of `text` against `keys` (see [`join_keys`](crate::join_keys)). `Ok` holds the lines of the keys
/// it sets; `Err(None)` means the text is not TOML (deserializing it reports that, with its position).
pub fn check_keys(text: &str, keys: &[&str]) -> Result<KeyLines, Option<UnknownKey>> {
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
pub fn line_of(text: &str, span: &Range<usize>) -> usize {
    let end = span.start.min(text.len());
    memchr::memchr_iter(b'\n', &text.as_bytes()[..end]).count() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of the shape a configuration has: values, tables, arrays of tables.
    const KEYS: &[&str] = &[
        "timeout",
        "policy.security",
        "policy.ask",
        "policy.rules[].allow",
        "policy.rules[].match",
        "env.redact",
    ];

    #[test]
    fn unknown_keys_have_their_path_line_and_a_suggestion() {
        let err = check_keys("[policy]\nsecuirty = \"deny\"\n", KEYS)
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
            KEYS,
        )
        .unwrap_err()
        .unwrap();
        assert_eq!(err.key, "policy.rules[0].matches");
        assert_eq!(err.line, 5);
        assert_eq!(err.suggestion.as_deref(), Some("match"));
        let err = check_keys("colour = 1\n", KEYS).unwrap_err().unwrap();
        assert_eq!((err.key.as_str(), err.suggestion), ("colour", None));
        assert!(check_keys("not toml = = 1", KEYS).unwrap_err().is_none());
    }

    #[test]
    fn known_keys_report_their_lines() {
        let lines = check_keys(
            "timeout = 5\n[policy]\nsecurity = \"allowlist\"\n[[policy.rules]]\nallow = \"x\"\n[env]\nredact = [\"K\"]\n",
            KEYS,
        )
        .unwrap();
        assert_eq!(lines["timeout"], 1);
        assert_eq!(lines["policy.security"], 3);
        assert_eq!(lines["env.redact"], 7);
        assert!(lines.contains_key("policy.rules"));
        assert!(!lines.contains_key("policy.ask"));
    }
}
