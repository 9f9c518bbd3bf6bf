//! Where each effective value came from: the files read, in the order they applied, with the lines
//! of the keys each set; and the effective values listed one per line with their source
//! (`shellgate config --sources`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::KeyLines;

/// The files a configuration was read from and the keys each set.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// The files read, in the order they applied.
    pub files: Vec<PathBuf>,
    /// The keys each file set, with their lines (same order as `files`).
    lines: Vec<KeyLines>,
}

impl Sources {
    /// Record that `path` applied, setting the keys of `lines`.
    pub fn push(&mut self, path: &Path, lines: KeyLines) {
        self.files.push(path.to_path_buf());
        self.lines.push(lines);
    }

    /// The last file read, if any.
    pub fn last(&self) -> Option<&Path> {
        self.files.last().map(PathBuf::as_path)
    }

    /// Where the value of `key` (a dotted path such as `policy.security`) came from: `file:line`
    /// of the last file that set it, or `default`.
    pub fn source_of(&self, key: &str) -> String {
        self.files
            .iter()
            .zip(&self.lines)
            .rev()
            .find_map(|(file, lines)| lines.get(key).map(|line| format!("{}:{line}", file.display())))
            .unwrap_or_else(|| "default".to_owned())
    }

    /// The values of `effective` in the order of `keys`, one `key = value  # source` line each,
    /// after a `# notice` line for each of `notices`.
    pub fn text(&self, effective: &toml::Table, keys: &[&str], notices: &[String]) -> String {
        let rows = rows(effective, keys);
        let width = rows.iter().map(|(k, v)| k.len() + v.len() + 3).max().unwrap_or(0);
        let mut out = String::new();
        for notice in notices {
            let _ = writeln!(out, "# {notice}");
        }
        for (key, value) in rows {
            let assignment = format!("{key} = {value}");
            let _ = writeln!(out, "{assignment:width$}  # {}", self.source_of(&key));
        }
        out
    }
}

/// The values of `table` as (dotted path, TOML text), in the order of `keys`: each value once, an
/// array of tables or a table of named tables whole.
fn rows(table: &toml::Table, keys: &[&str]) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for key in keys {
        let whole = key.split("[].").next().unwrap_or(key);
        let whole = whole.split(".*.").next().unwrap_or(whole);
        // A table of named tables is shown whole, its own values with it.
        let section = whole.split('.').next().unwrap_or(whole);
        let whole = if keys
            .iter()
            .any(|k| k.strip_prefix(section).is_some_and(|r| r.starts_with(".*.")))
        {
            section
        } else {
            whole
        };
        if rows.iter().any(|(k, _)| k == whole) {
            continue;
        }
        let mut parts = whole.split('.');
        let mut value = parts.next().and_then(|p| table.get(p));
        for part in parts {
            value = value.and_then(toml::Value::as_table).and_then(|t| t.get(part));
        }
        if let Some(value) = value {
            rows.push((whole.to_owned(), value.to_string()));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_names_the_last_file_that_set_it() {
        let keys = [
            "timeout",
            "policy.security",
            "policy.rules[].allow",
            "hosts.*.target",
        ];
        let effective: toml::Table = toml::from_str(
            "timeout = 5.0\n[policy]\nsecurity = \"full\"\nrules = [{ allow = \"x\" }]\n[hosts.a]\ntarget = \"ssh://a\"\n",
        )
        .unwrap();
        let mut sources = Sources::default();
        sources.push(
            Path::new("user.toml"),
            KeyLines::from([("timeout".to_owned(), 1)]),
        );
        sources.push(
            Path::new("project.toml"),
            KeyLines::from([("timeout".to_owned(), 3)]),
        );
        let text = sources.text(&effective, &keys, &["a notice".to_owned()]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# a notice");
        assert!(
            lines[1].starts_with("timeout = 5.0") && lines[1].ends_with("# project.toml:3"),
            "{text}"
        );
        assert!(lines[2].starts_with("policy.security = \"full\"") && lines[2].ends_with("# default"));
        assert!(lines[3].starts_with("policy.rules = "), "{text}");
        assert!(lines[4].starts_with("hosts = "), "{text}");
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(sources.last(), Some(Path::new("project.toml")));
    }
}
