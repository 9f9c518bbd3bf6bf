//! Finding the configuration file, loading it over the defaults, and where each value came from.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{ConfigError, FileConfig};
use crate::ToolConfig;
use crate::config_keys::{FILE_KEYS, KeyLines, Shape};

/// The files searched when none is given: `./.shellgate.toml`, then the user's config file.
pub fn default_config_paths() -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from(".shellgate.toml")];
    let user_dir = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if let Some(dir) = user_dir {
        paths.push(dir.join("shellgate").join("config.toml"));
    }
    paths
}

/// The effective configuration: defaults, then the first existing default file (or `explicit`, which
/// must exist).
pub fn load_tool_config(explicit: Option<&Path>) -> Result<ToolConfig, ConfigError> {
    load_config_sources(explicit).map(|loaded| loaded.config)
}

/// The effective configuration and where its values came from.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The effective configuration.
    pub config: ToolConfig,
    /// The file read, if any.
    pub file: Option<PathBuf>,
    /// The keys the file sets, with their lines.
    lines: KeyLines,
}

impl LoadedConfig {
    /// Where the value of `key` (a dotted path such as `policy.security`) came from: `file:line`,
    /// or `default`.
    pub fn source_of(&self, key: &str) -> String {
        match (&self.file, self.lines.get(key)) {
            (Some(file), Some(line)) => format!("{}:{line}", file.display()),
            _ => "default".to_owned(),
        }
    }

    /// Every effective value, one `key = value  # source` line each (`shellgate config --sources`).
    pub fn sources_text(&self) -> String {
        let effective = FileConfig::effective(&self.config);
        let table = match toml::Table::try_from(&effective) {
            Ok(table) => table,
            Err(e) => return format!("# cannot render the configuration: {e}\n"),
        };
        let mut rows = Vec::new();
        flatten(&table, FILE_KEYS, "", &mut rows);
        let width = rows.iter().map(|(k, v)| k.len() + v.len() + 3).max().unwrap_or(0);
        let mut out = String::new();
        for (key, value) in rows {
            let assignment = format!("{key} = {value}");
            let _ = writeln!(out, "{assignment:width$}  # {}", self.source_of(&key));
        }
        out
    }
}

/// The leaf values of `table` as (dotted path, TOML text), in schema order.
fn flatten(table: &toml::Table, schema: &[(&str, Shape)], prefix: &str, rows: &mut Vec<(String, String)>) {
    for (name, shape) in schema {
        let Some(value) = table.get(*name) else {
            continue;
        };
        let path = if prefix.is_empty() {
            (*name).to_owned()
        } else {
            format!("{prefix}.{name}")
        };
        match (shape, value) {
            (Shape::Table(keys), toml::Value::Table(inner)) => flatten(inner, keys, &path, rows),
            _ => rows.push((path, value.to_string())),
        }
    }
}

/// Load the effective configuration, remembering which file set which key.
pub fn load_config_sources(explicit: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    let mut config = ToolConfig::default();
    let path = match explicit {
        Some(path) => Some(path.to_path_buf()),
        None => default_config_paths().into_iter().find(|p| p.is_file()),
    };
    let mut lines = KeyLines::new();
    if let Some(path) = &path {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let (file, file_lines) = FileConfig::parse_with_lines(&text, path)?;
        file.apply(&mut config);
        lines = file_lines;
    }
    Ok(LoadedConfig {
        config,
        file: path,
        lines,
    })
}
