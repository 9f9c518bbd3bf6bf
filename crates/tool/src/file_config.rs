//! Configuration files (SPEC T-10): `.shellgate.toml` in the project, then the user's config dir.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ToolConfig;

/// Why a configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid configuration.
    #[error("invalid configuration in {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its position.
        message: String,
    },
}

/// The contents of a configuration file; every field is optional and overrides the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Directory commands run in by default.
    pub cwd: Option<PathBuf>,
    /// Shell program.
    pub shell: Option<PathBuf>,
    /// Run the shell as a login shell.
    pub login: Option<bool>,
    /// Text put before every command.
    pub prefix: Option<String>,
    /// Default timeout in seconds.
    pub timeout: Option<f64>,
    /// Largest timeout allowed, in seconds.
    pub max_timeout: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_grace: Option<f64>,
    /// Bytes of output kept from the start.
    pub head_bytes: Option<usize>,
    /// Bytes of output kept from the end.
    pub tail_bytes: Option<usize>,
    /// Names of the agent's other tools.
    pub tool_names: Option<Vec<String>>,
    /// Session used when a call names none (`"none"`: a fresh shell per command).
    pub session: Option<String>,
    /// Seconds after which an unused session is closed.
    pub session_idle_timeout: Option<f64>,
    /// Most background jobs running at once.
    pub max_jobs: Option<usize>,
    /// Most finished jobs kept.
    pub max_finished_jobs: Option<usize>,
    /// Seconds a finished job is kept.
    pub finished_job_ttl: Option<f64>,
}

impl FileConfig {
    /// Parse TOML text; `path` names the source in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    }

    /// Read and parse a file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Apply the values that are set.
    pub fn apply(&self, config: &mut ToolConfig) {
        if let Some(cwd) = &self.cwd {
            config.cwd.clone_from(cwd);
        }
        if let Some(shell) = &self.shell {
            config.shell.shell = Some(shell.clone());
        }
        if let Some(login) = self.login {
            config.shell.login = login;
        }
        if let Some(prefix) = &self.prefix {
            config.shell.prefix = Some(prefix.clone());
        }
        let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.0, 1e9));
        if let Some(t) = self.timeout {
            config.default_timeout = secs(t);
        }
        if let Some(t) = self.max_timeout {
            config.max_timeout = secs(t);
        }
        if let Some(t) = self.kill_grace {
            config.kill_grace = secs(t);
        }
        if let Some(b) = self.head_bytes {
            config.window.head_bytes = b;
        }
        if let Some(b) = self.tail_bytes {
            config.window.tail_bytes = b;
        }
        if let Some(names) = &self.tool_names {
            config.tool_names.clone_from(names);
        }
        if let Some(session) = &self.session {
            config.default_session.clone_from(session);
        }
        if let Some(t) = self.session_idle_timeout {
            config.sessions.idle_timeout = secs(t);
        }
        if let Some(n) = self.max_jobs {
            config.jobs.max_running = n;
        }
        if let Some(n) = self.max_finished_jobs {
            config.jobs.max_finished = n;
        }
        if let Some(t) = self.finished_job_ttl {
            config.jobs.finished_ttl = secs(t);
        }
    }

    /// Every key, with the values in effect in `config` (what `shellgate config` prints).
    pub fn effective(config: &ToolConfig) -> Self {
        Self {
            cwd: Some(config.cwd.clone()),
            shell: Some(config.shell.resolve_shell()),
            login: Some(config.shell.login),
            prefix: config.shell.prefix.clone(),
            timeout: Some(config.default_timeout.as_secs_f64()),
            max_timeout: Some(config.max_timeout.as_secs_f64()),
            kill_grace: Some(config.kill_grace.as_secs_f64()),
            head_bytes: Some(config.window.head_bytes),
            tail_bytes: Some(config.window.tail_bytes),
            tool_names: Some(config.tool_names.clone()),
            session: Some(config.default_session.clone()),
            session_idle_timeout: Some(config.sessions.idle_timeout.as_secs_f64()),
            max_jobs: Some(config.jobs.max_running),
            max_finished_jobs: Some(config.jobs.max_finished),
            finished_job_ttl: Some(config.jobs.finished_ttl.as_secs_f64()),
        }
    }

    /// This configuration as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render the configuration: {e}\n"))
    }
}

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
    let mut config = ToolConfig::default();
    let file = match explicit {
        Some(path) => Some(FileConfig::read(path)?),
        None => default_config_paths()
            .into_iter()
            .find(|p| p.is_file())
            .map(|p| FileConfig::read(&p))
            .transpose()?,
    };
    if let Some(file) = file {
        file.apply(&mut config);
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_override_defaults() {
        let file =
            FileConfig::parse("timeout = 5\nhead_bytes = 10\nprefix = 'nice'", Path::new("x")).unwrap();
        let mut config = ToolConfig::default();
        file.apply(&mut config);
        assert_eq!(config.default_timeout, Duration::from_secs(5));
        assert_eq!(config.window.head_bytes, 10);
        assert_eq!(config.shell.prefix.as_deref(), Some("nice"));
    }

    #[test]
    fn effective_configuration_round_trips() {
        let mut config = ToolConfig {
            default_session: "work".into(),
            ..ToolConfig::default()
        };
        config.jobs.max_running = 7;
        let text = FileConfig::effective(&config).to_toml();
        let parsed = FileConfig::parse(&text, Path::new("effective")).unwrap();
        let mut again = ToolConfig::default();
        parsed.apply(&mut again);
        assert_eq!(again.default_session, "work");
        assert_eq!(again.jobs.max_running, 7);
        assert_eq!(again.default_timeout, config.default_timeout);
    }

    #[test]
    fn unknown_keys_and_bad_files_are_clear_errors() {
        let err = FileConfig::parse("timout = 5", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.toml") && err.contains("timout"), "{err}");
        let err = load_tool_config(Some(Path::new("/nonexistent/shellgate.toml")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read"), "{err}");
    }
}
