//! Configuration files (SPEC T-10): `.shellgate.toml` in the project, then the user's config dir.
//!
//! Keys are checked before values: an unknown key is an error naming its path and line, with the
//! closest known key as a suggestion. The `[policy]`, `[intercept]` and `[env]` sections are those
//! of `shellgate-intercept`; the policy is built when the file is read, so a bad rule or a failing
//! `match`/`not_match` example is a load error naming the rule.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use shellgate_intercept::{Config as PolicyFile, EnvConfig, InterceptConfig, Policy, PolicyConfig, Security};

use crate::ToolConfig;
use crate::config_keys::{FILE_KEYS, KeyLines, Shape, check_keys, line_of};

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
    /// The file has a key no setting has.
    #[error("unknown key `{key}` at line {line} of {path}{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownKey {
        /// The key's full path (`policy.secuirty`).
        key: String,
        /// Its line, counted from 1.
        line: usize,
        /// The file.
        path: PathBuf,
        /// A known key of the same table within two edits, if any.
        suggestion: Option<String>,
    },
    /// The `[policy]`/`[intercept]` sections do not make a policy (a bad rule, a failing example).
    #[error("invalid policy in {path}: {source}")]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the rule.
        source: shellgate_intercept::ConfigError,
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
}

impl FileConfig {
    /// Parse TOML text; `path` names the source in errors. The policy sections are built to check
    /// their rules.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        Self::parse_with_lines(text, path).map(|(file, _)| file)
    }

    /// Like [`FileConfig::parse`], also giving the line of every key the text sets.
    fn parse_with_lines(text: &str, path: &Path) -> Result<(Self, KeyLines), ConfigError> {
        let lines = match check_keys(text, FILE_KEYS) {
            Ok(lines) => lines,
            Err(Some(unknown)) => {
                return Err(ConfigError::UnknownKey {
                    key: unknown.key,
                    line: unknown.line,
                    path: path.to_path_buf(),
                    suggestion: unknown.suggestion,
                });
            }
            // Not TOML: deserializing says where.
            Err(None) => KeyLines::new(),
        };
        let file: Self = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: match e.span() {
                Some(span) => format!("{} (line {})", e.message().trim_end(), line_of(text, &span)),
                None => e.message().trim_end().to_owned(),
            },
        })?;
        file.build_policy().map_err(|source| ConfigError::Policy {
            path: path.to_path_buf(),
            source,
        })?;
        Ok((file, lines))
    }

    /// The policy of the `[policy]` and `[intercept]` sections, when the file has either.
    pub fn build_policy(&self) -> Result<Option<Policy>, shellgate_intercept::ConfigError> {
        if self.policy.is_none() && self.intercept.is_none() {
            return Ok(None);
        }
        Policy::from_config(&PolicyFile {
            policy: self.policy.clone().unwrap_or_default(),
            intercept: self.intercept.clone().unwrap_or_default(),
            env: EnvConfig::default(),
        })
        .map(Some)
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
        if let Some(ms) = self.auto_yield_ms {
            config.auto_yield = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(ms) = self.head_grace_ms {
            config.head_grace = Duration::from_millis(ms);
        }
        if let Some(ms) = self.poll_settle_ms {
            config.jobs.poll_settle = Duration::from_millis(ms);
        }
        if let Some(approvals) = &self.approvals {
            approvals.apply(&mut config.approvals);
        }
        match self.build_policy() {
            Ok(Some(policy)) => config.policy = Some(policy),
            Ok(None) => {}
            // Only a hand-made value can get here (a parsed file was built once already): a policy
            // that cannot be built fails closed.
            Err(_) => {
                config.policy = Policy::builder().security(Security::Deny).build().ok();
            }
        }
        if let Some(env) = &self.env {
            config.env.clone_from(env);
        }
        if let Some(sandbox) = &self.sandbox {
            sandbox.apply(&mut config.sandbox);
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
            auto_yield_ms: Some(config.auto_yield.map_or(0, |d| d.as_millis() as u64)),
            head_grace_ms: Some(config.head_grace.as_millis() as u64),
            poll_settle_ms: Some(config.jobs.poll_settle.as_millis() as u64),
            policy: config.policy.as_ref().map(Policy::policy_config),
            intercept: config.policy.as_ref().map(|p| p.intercept_config().clone()),
            env: Some(config.env.clone()),
            approvals: Some(crate::approvals::ApprovalsFileConfig {
                expiry_secs: Some(config.approvals.expiry.as_secs_f64()),
                fallback: Some(config.approvals.fallback),
                file: config.approvals.file_path(),
                mcp_approve_tool: Some(config.approvals.mcp_approve_tool),
                elicitation_timeout_secs: Some(config.approvals.elicitation_timeout.as_secs_f64()),
            }),
            sandbox: Some(crate::SandboxFile::effective(&config.sandbox)),
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
    fn every_key_the_effective_configuration_writes_loads_again() {
        use shellgate_intercept::{RedirectRuleConfig, RuleEntry};
        let policy = Policy::builder()
            .security(Security::Allowlist)
            .allow("@safe")
            .deny("git push *")
            .rule(RuleEntry {
                allow: Some("npm run *".into()),
                matches: vec!["npm run build".into()],
                not_match: vec!["npm run build; rm -rf x".into()],
                ..RuleEntry::default()
            })
            .intercept_config(InterceptConfig {
                redirect_rules: vec![RedirectRuleConfig {
                    pattern: "^make\\b".into(),
                    flags: "i".into(),
                    tool: "build".into(),
                    message: "use the build tool".into(),
                    quote_aware: true,
                }],
                available_tools: vec!["build".into()],
                ..InterceptConfig::default()
            })
            .build()
            .unwrap();
        let config = ToolConfig {
            policy: Some(policy),
            env: EnvConfig {
                allow_secrets: vec!["GITHUB_TOKEN".into()],
                redact: vec!["MY_KEY".into()],
            },
            ..ToolConfig::default()
        };
        let text = FileConfig::effective(&config).to_toml();
        // Parsing checks every key against the schema: a field the schema lacks fails here.
        let parsed = FileConfig::parse(&text, Path::new("effective")).unwrap();
        let mut again = ToolConfig::default();
        parsed.apply(&mut again);
        let policy = again.policy.unwrap();
        assert_eq!(policy.security(), Security::Allowlist);
        assert_eq!(policy.policy_config().rules[0].matches, ["npm run build"]);
        assert_eq!(policy.intercept_config().redirect_rules[0].tool, "build");
        assert_eq!(again.env.redact, ["MY_KEY"]);
    }

    #[test]
    fn policy_sections_build_the_policy_and_bad_rules_name_the_rule() {
        let file = FileConfig::parse("[policy]\nask = \"off\"\n", Path::new("p.toml")).unwrap();
        let mut config = ToolConfig::default();
        file.apply(&mut config);
        assert_eq!(
            config.policy.as_ref().unwrap().ask(),
            shellgate_intercept::AskMode::Off
        );
        let err = FileConfig::parse(
            "[[policy.rules]]\nallow = \"npm run *\"\nnot_match = [\"npm run x\"]\n",
            Path::new("p.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("p.toml") && err.contains("`npm run *`") && err.contains("npm run x"),
            "{err}"
        );
        let err = FileConfig::parse("[env]\nredact = 3\n", Path::new("p.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("p.toml") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn unknown_keys_and_bad_files_are_clear_errors() {
        let err = FileConfig::parse("timout = 5", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.toml") && err.contains("timout"), "{err}");
        assert!(
            err.contains("line 1") && err.contains("did you mean `timeout`?"),
            "{err}"
        );
        let err = load_tool_config(Some(Path::new("/nonexistent/shellgate.toml")))
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot read"), "{err}");
    }
}
