//! Finding the configuration file, loading it over the defaults, and where each value came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{ConfigError, FileConfig};
use crate::ToolConfig;
use crate::config_keys::{KeyLines, file_keys};

/// The user's configuration file: `$XDG_CONFIG_HOME/shellgate/config.toml`, else
/// `~/.config/shellgate/config.toml`.
pub fn user_config_path() -> Option<PathBuf> {
    let user_dir = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    user_dir.map(|dir| dir.join("shellgate").join("config.toml"))
}

/// The project's configuration file, relative to the current directory.
pub const PROJECT_CONFIG: &str = ".shellgate.toml";

/// The files read when none is given, in the order they apply: the user's, then the project's.
pub fn default_config_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = user_config_path().into_iter().collect();
    paths.push(PathBuf::from(PROJECT_CONFIG));
    paths
}

/// The effective configuration: defaults, then the user's file, then the project's (what of it
/// applies without trust: see [`super::tightening()`]); or `explicit`, which must exist, alone.
pub fn load_tool_config(explicit: Option<&Path>) -> Result<ToolConfig, ConfigError> {
    load_config_sources(explicit).map(|loaded| loaded.config)
}

/// The effective configuration and where its values came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The effective configuration.
    pub config: ToolConfig,
    /// The files read, in the order they applied.
    pub files: Vec<PathBuf>,
    /// The keys each file set, with their lines (same order as `files`).
    lines: Vec<KeyLines>,
}

impl LoadedConfig {
    /// The last file read, if any.
    pub fn file(&self) -> Option<&Path> {
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

    /// Every effective value, one `key = value  # source` line each (`shellgate config --sources`).
    pub fn sources_text(&self) -> String {
        let effective = FileConfig::effective(&self.config);
        let table = match toml::Table::try_from(&effective) {
            Ok(table) => table,
            Err(e) => return format!("# cannot render the configuration: {e}\n"),
        };
        let mut rows = Vec::new();
        flatten(&table, file_keys(), &mut rows);
        let width = rows.iter().map(|(k, v)| k.len() + v.len() + 3).max().unwrap_or(0);
        let mut out = String::new();
        for notice in &self.config.config_notices {
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
fn flatten(table: &toml::Table, keys: &[&str], rows: &mut Vec<(String, String)>) {
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
}

/// Load the effective configuration, remembering which file set which key.
pub fn load_config_sources(explicit: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    let mut loaded = LoadedConfig {
        config: ToolConfig::default(),
        files: Vec::new(),
        lines: Vec::new(),
    };
    if let Some(path) = explicit {
        // Named on the command line: the user's own choice, whole.
        let (file, lines, _) = read(path)?;
        loaded.apply(path, &file, lines);
        return Ok(loaded);
    }
    if let Some(user) = user_config_path().filter(|p| p.is_file()) {
        let (file, lines, _) = read(&user)?;
        loaded.apply(&user, &file, lines);
    }
    let project = PathBuf::from(PROJECT_CONFIG);
    if project.is_file() {
        let (file, lines, text) = read(&project)?;
        if shellgate_approvals::is_trusted(&project, &text) {
            loaded.apply(&project, &file, lines);
        } else {
            let keys: Vec<String> = lines.keys().cloned().collect();
            let (tight, left_out) = super::tightening::tightening(&file, &keys, &loaded.config);
            let applied: KeyLines = lines.into_iter().filter(|(k, _)| !left_out.contains(k)).collect();
            loaded.apply(&project, &tight, applied);
            if !left_out.is_empty() {
                loaded.config.config_notices.push(format!(
                    "{} is not trusted: only what makes the configuration stricter applies; left out: {}. \
                     Review it and run `shellgate trust` to apply the rest.",
                    project.display(),
                    left_out.join(", ")
                ));
            }
        }
    }
    Ok(loaded)
}

impl LoadedConfig {
    fn apply(&mut self, path: &Path, file: &FileConfig, lines: KeyLines) {
        file.apply(&mut self.config);
        let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.config.config_files.push(absolute);
        self.files.push(path.to_path_buf());
        self.lines.push(lines);
    }
}

/// Read and parse the file at `path`; also its text (for its trust).
fn read(path: &Path) -> Result<(FileConfig, KeyLines, String), ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let (file, lines) = FileConfig::parse_with_lines(&text, path)?;
    Ok((file, lines, text))
}
