//! Configuration of the tool.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{LayerStack, SessionOptions, ShellConfig};
use shellgate_intercept::{EnvConfig, Policy};
use shellgate_sink::{ArtifactStore, WindowConfig};

/// The session a call runs in when it names none.
pub const DEFAULT_SESSION: &str = "default";

/// The session name that asks for a fresh shell instead of a persistent session.
pub const NO_SESSION: &str = "none";

/// Defaults and limits for every call.
#[derive(Debug, Clone)]
pub struct ToolConfig {
    /// Directory commands run in when no `cwd` is given.
    pub cwd: PathBuf,
    /// Which shell runs commands.
    pub shell: ShellConfig,
    /// Timeout when none is given.
    pub default_timeout: Duration,
    /// Lower clamp of requested timeouts.
    pub min_timeout: Duration,
    /// Upper clamp of requested timeouts.
    pub max_timeout: Duration,
    /// Time between SIGTERM and SIGKILL.
    pub kill_grace: Duration,
    /// Size of the output window.
    pub window: WindowConfig,
    /// Where outputs that overflow the window are spilled (default: the user's store; `None`: no spill).
    pub artifacts: Option<Arc<ArtifactStore>>,
    /// Why the user's store could not be opened when `artifacts` is `None` because of it: a truncated
    /// result then says so instead of silently having no artifact.
    pub artifacts_error: Option<String>,
    /// Names of the other tools the agent has (for redirect-to-tool rules).
    pub tool_names: Vec<String>,
    /// Limits of background jobs.
    pub jobs: crate::JobConfig,
    /// Session used when a call names none (`"none"`: a fresh shell for every command).
    pub default_session: String,
    /// Settings of persistent shell sessions.
    pub sessions: SessionOptions,
    /// After a lifted `| head -n N` has its lines, keep counting the output this long before closing
    /// it (default 0: closed at once, exactly as `head` does).
    pub head_grace: Duration,
    /// A foreground call still running after this long returns `running` with a job id and goes on as
    /// that job (SPEC J-1; default 10 s; `None` waits to the end, as `shellgate run` does). A request's
    /// own `yield_ms` or `background` wins.
    pub auto_yield: Option<Duration>,
    /// Wrappers applied to every launch — one-shot, terminal and job runs, and session shells at their
    /// start and respawn (a sandbox helper, a prefix, …).
    pub layers: LayerStack,
    /// The command policy every call is judged by (default: `security = "full"`, `ask = "on-miss"`:
    /// ordinary commands run, dangerous ones await approval, control commands are blocked).
    /// `None` judges nothing (every command the custom interceptor, if any, allows runs): for
    /// embedders that judge commands elsewhere.
    pub policy: Option<Policy>,
    /// The environment policy: request variables that are refused, inherited secrets removed from
    /// children, values redacted from output. Applied whether or not `policy` is set.
    pub env: EnvConfig,
    /// Approvals: expiry of pending ones, the approvals file of "allow always" rules.
    pub approvals: crate::approvals::ApprovalsConfig,
    /// The sandbox every call runs in (`[sandbox]`; default off) and how it is built.
    pub sandbox: crate::SandboxConfig,
    /// Remote hosts: client settings and named hosts (`[ssh]`, `[docker]`, `[hosts.NAME]`, …).
    pub hosts: crate::HostsConfig,
    /// The configuration files this configuration was read from (absolute): kept read-only in
    /// every sandbox with the engine's other files.
    pub config_files: Vec<PathBuf>,
    /// What the loader has to say (a project file applied only in part, untrusted): given once,
    /// with the first result.
    pub config_notices: Vec<String>,
}

/// The policy of the default configuration.
pub fn default_policy() -> Policy {
    // No rules and no rule entries: building cannot fail.
    Policy::builder()
        .build()
        .expect("the default policy has no rules that could fail")
}

impl Default for ToolConfig {
    fn default() -> Self {
        let (artifacts, artifacts_error) = match ArtifactStore::open_default() {
            Ok(store) => (Some(Arc::new(store)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        Self {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            shell: ShellConfig::default(),
            default_timeout: Duration::from_secs(300),
            min_timeout: Duration::from_secs(1),
            max_timeout: Duration::from_secs(3600),
            kill_grace: Duration::from_secs(2),
            window: WindowConfig::default(),
            artifacts,
            artifacts_error,
            tool_names: Vec::new(),
            jobs: crate::JobConfig::default(),
            default_session: DEFAULT_SESSION.to_owned(),
            sessions: SessionOptions::default(),
            head_grace: Duration::ZERO,
            auto_yield: Some(Duration::from_secs(10)),
            layers: LayerStack::default(),
            policy: Some(default_policy()),
            env: EnvConfig::default(),
            approvals: crate::approvals::ApprovalsConfig::default(),
            sandbox: crate::SandboxConfig::default(),
            hosts: crate::HostsConfig::default(),
            config_files: Vec::new(),
            config_notices: Vec::new(),
        }
    }
}

/// The job limits of `config`, with the tool's artifact store when the jobs name none of their own.
pub(crate) fn job_config_for(config: &ToolConfig) -> crate::jobs::JobConfig {
    let mut jobs = config.jobs.clone();
    if jobs.artifacts.is_none() {
        jobs.artifacts.clone_from(&config.artifacts);
    }
    jobs
}
