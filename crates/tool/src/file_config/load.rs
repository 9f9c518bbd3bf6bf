//! Finding the configuration file, loading it over the defaults, and where each value came from.

use std::path::{Path, PathBuf};

use shellgate_config::{KeyLines, PROJECT_CONFIG, Sources, user_config_path};

use super::keys::file_keys;
use super::{ConfigError, FileConfig};
use crate::ToolConfig;

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
    /// The files read, in the order they applied, and the keys each set.
    pub sources: Sources,
}

impl LoadedConfig {
    /// The last file read, if any.
    pub fn file(&self) -> Option<&Path> {
        self.sources.last()
    }

    /// Where the value of `key` (a dotted path such as `policy.security`) came from: `file:line`
    /// of the last file that set it, or `default`.
    pub fn source_of(&self, key: &str) -> String {
        self.sources.source_of(key)
    }

    /// Every effective value, one `key = value  # source` line each (`shellgate config --sources`).
    pub fn sources_text(&self) -> String {
        match toml::Table::try_from(FileConfig::effective(&self.config)) {
            Ok(table) => self
                .sources
                .text(&table, file_keys(), &self.config.config_notices),
            Err(e) => format!("# cannot render the configuration: {e}\n"),
        }
    }
}

/// Load the effective configuration, remembering which file set which key.
pub fn load_config_sources(explicit: Option<&Path>) -> Result<LoadedConfig, ConfigError> {
    let mut loaded = LoadedConfig {
        config: ToolConfig::default(),
        sources: Sources::default(),
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
        self.sources.push(path, lines);
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
