//! Configuration files (SPEC T-10): `.shellgate.toml` in the project, then the user's config dir.
//!
//! Keys are checked before values: an unknown key is an error naming its path and line, with the
//! closest known key as a suggestion. The `[policy]`, `[intercept]` and `[env]` sections are those
//! of `shellgate-intercept`; the policy is built when the file is read, so a bad rule or a failing
//! `match`/`not_match` example is a load error naming the rule.
//!
//! `error` names what can go wrong, `apply` maps a file onto a [`ToolConfig`] (and back, for
//! `shellgate config`), `load` finds the file and remembers which line set which key.

mod apply;
mod error;
mod keys;
mod load;
mod tightening;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use shellgate_intercept::{EnvConfig, InterceptConfig, Policy, PolicyConfig};

use shellgate_config::{KeyLines, ParseError};

use keys::file_keys;

pub use error::ConfigError;
pub use load::{LoadedConfig, load_config_sources, load_tool_config};
pub use shellgate_approvals::{is_trusted, trust, trust_store_path};
pub use shellgate_config::{PROJECT_CONFIG, default_config_paths, user_config_path};
pub use tightening::tightening;

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
    /// Milliseconds after which a foreground call still running answers `running` and goes on as a
    /// job (0: never; `shellgate run` always waits).
    pub auto_yield_ms: Option<u64>,
    /// Milliseconds a lifted `| head` keeps counting output once its lines are in (0: closed at once).
    pub head_grace_ms: Option<u64>,
    /// Milliseconds of quiet after which a waiting poll that saw new output returns.
    pub poll_settle_ms: Option<u64>,
    /// `[policy]`: security and ask modes, allow and deny rules, rule entries with examples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyConfig>,
    /// `[intercept]`: redirect-to-tool rules, available tools, script preflight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intercept: Option<InterceptConfig>,
    /// `[env]`: secrets children may see, values to redact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvConfig>,
    /// `[approvals]`: expiry of pending approvals, their fallback, the approvals file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<crate::approvals::ApprovalsFileConfig>,
    /// `[sandbox]`: mode, writable roots, protected paths, network, limits, degrading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::SandboxFile>,
    /// `[ssh]`: the OpenSSH client's program, `-F` file, `-o` options, connection sharing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<crate::SshFile>,
    /// `[docker]`: the docker client and its arguments before `exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker: Option<crate::ClientFile>,
    /// `[podman]`: the podman client and its arguments before `exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub podman: Option<crate::ClientFile>,
    /// `[kubectl]`: the kubectl client and its arguments before `exec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubectl: Option<crate::ClientFile>,
    /// `[hosts.NAME]`: named hosts (target, workspace ↔ workdir, env); `[hosts] allow_unnamed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<crate::HostsFile>,
}

impl FileConfig {
    /// Parse TOML text; `path` names the source in errors. The policy sections are built to check
    /// their rules.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        Self::parse_with_lines(text, path).map(|(file, _)| file)
    }

    /// Like [`FileConfig::parse`], also giving the line of every key the text sets.
    pub(super) fn parse_with_lines(text: &str, path: &Path) -> Result<(Self, KeyLines), ConfigError> {
        let (file, lines): (Self, KeyLines) =
            shellgate_config::parse(text, file_keys()).map_err(|e| match e {
                ParseError::UnknownKey(unknown) => ConfigError::UnknownKey {
                    key: unknown.key,
                    line: unknown.line,
                    path: path.to_path_buf(),
                    suggestion: unknown.suggestion,
                },
                ParseError::Invalid(message) => ConfigError::Parse {
                    path: path.to_path_buf(),
                    message,
                },
            })?;
        file.build_policy().map_err(|source| ConfigError::Policy {
            path: path.to_path_buf(),
            source,
        })?;
        if let Some(sandbox) = &file.sandbox {
            sandbox.check_domains().map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        }
        file.host_sections()
            .check()
            .map_err(|message| ConfigError::Parse {
                path: path.to_path_buf(),
                message,
            })?;
        Ok((file, lines))
    }

    /// The host sections, as one value.
    pub(crate) fn host_sections(&self) -> shellgate_hosts::HostSections<'_> {
        shellgate_hosts::HostSections {
            ssh: self.ssh.as_ref(),
            docker: self.docker.as_ref(),
            podman: self.podman.as_ref(),
            kubectl: self.kubectl.as_ref(),
            hosts: self.hosts.as_ref(),
        }
    }

    /// The policy of the `[policy]` and `[intercept]` sections, when the file has either.
    pub fn build_policy(&self) -> Result<Option<Policy>, shellgate_intercept::ConfigError> {
        Policy::from_sections(self.policy.as_ref(), self.intercept.as_ref())
    }

    /// Read and parse a file.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// This configuration as TOML text.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_else(|e| format!("# cannot render the configuration: {e}\n"))
    }
}
