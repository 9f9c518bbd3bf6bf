//! [`BashTool`]: validate → normalize → intercept → execute into the sink → apply limits → shape.
//!
//! A call moves forward through `plan` (every stage's decision, made once), `launch` (the spec its
//! processes start from) and `run` (a job, or the one foreground runner the plan selects).

use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{DynExecutor, SessionManager};
use shellgate_intercept::{AllowAll, Interceptor};
use shellgate_normalize::{Limits, Normalized, Normalizer, StandardNormalizer};
use tokio_util::sync::CancellationToken;

use crate::gate::Redacting as _;
use crate::{BashParams, ToolConfig, ToolResult};
use shellgate_sink::LiveFeed;

/// The `bash` tool: runs one command through every stage.
#[derive(Clone)]
pub struct BashTool {
    config: ToolConfig,
    normalizer: Arc<dyn Normalizer + Send + Sync>,
    interceptor: Arc<dyn Interceptor>,
    env_gate: Arc<shellgate_intercept::EngineEnv>,
    executors: shellgate_jobs::Executors,
    jobs: crate::JobRegistry,
    sessions: SessionManager,
    approvals: crate::approvals::ApprovalState<BashParams>,
    sandboxing: Arc<shellgate_sandbox::Sandboxing>,
    hosts: shellgate_hosts::Hosts,
    /// Whether the configuration's own notices were given (with the first result).
    announced: Arc<std::sync::atomic::AtomicBool>,
}

mod approve;
pub(crate) mod domain_approvals;
mod launch;
mod plan;
mod remote;
mod run;

impl std::fmt::Debug for BashTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BashTool")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Default for BashTool {
    fn default() -> Self {
        Self::new(ToolConfig::default())
    }
}

impl BashTool {
    /// A tool with the standard stages and `config`.
    pub fn new(config: ToolConfig) -> Self {
        let mut session_options = config.sessions.clone();
        session_options.kill_grace = config.kill_grace;
        session_options.layers = config.layers.clone();
        let env_gate = shellgate_intercept::EngineEnv::new(&config.env);
        session_options
            .env_remove
            .extend(env_gate.removals.iter().cloned());
        let sessions = SessionManager::new(session_options);
        let mut sandbox = config.sandbox.clone();
        sandbox
            .engine_files
            .extend(crate::sandboxing::engine_files(&config));
        let sandboxing = shellgate_sandbox::Sandboxing::new(&sandbox, &config.cwd, sessions.runtime_dir());
        let remote_options = shellgate_hosts::RemoteSessionOptions::non_interactive(
            config.kill_grace,
            config.layers.clone(),
            config.sessions.idle_timeout,
        );
        Self {
            hosts: shellgate_hosts::Hosts::new(&config.hosts, sessions.runtime_dir(), remote_options),
            announced: Arc::default(),
            approvals: crate::approvals::ApprovalState::new(&config.approvals, config.policy.as_ref()),
            jobs: crate::JobRegistry::new(crate::config::job_config_for(&config)),
            sessions,
            sandboxing: Arc::new(sandboxing),
            config,
            normalizer: Arc::new(StandardNormalizer::default()),
            interceptor: Arc::new(AllowAll),
            env_gate: Arc::new(env_gate),
            executors: shellgate_jobs::Executors::default(),
        }
    }

    /// Replace the normalizer.
    #[must_use]
    pub fn with_normalizer(mut self, normalizer: impl Normalizer + Send + Sync + 'static) -> Self {
        self.normalizer = Arc::new(normalizer);
        self
    }

    /// Judge commands with `interceptor` too, after the configured policy ([`ToolConfig::policy`]):
    /// the first deny wins, otherwise the stricter verdict.
    #[must_use]
    pub fn with_interceptor(mut self, interceptor: impl Interceptor + 'static) -> Self {
        self.interceptor = Arc::new(interceptor);
        self
    }

    /// Replace the executor used for one-shot (`session: "none"`) commands.
    #[must_use]
    pub fn with_executor(mut self, executor: impl DynExecutor + 'static) -> Self {
        self.executors.pipe = Arc::new(executor);
        self
    }

    /// Replace the executor of foreground runs under a pseudo-terminal (`pty: true`).
    #[must_use]
    pub fn with_terminal_executor(mut self, executor: impl DynExecutor + 'static) -> Self {
        self.executors.terminal = Arc::new(executor);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.config
    }

    /// `text` with every configured secret value (`[env] redact`) replaced by `[REDACTED:NAME]`,
    /// also in its JSON-escaped spelling: for front-ends to apply to everything they send.
    pub fn redact_outgoing(&self, text: &str) -> String {
        shellgate_sink::redact_text(text, self.env_gate.outgoing_redactions())
    }

    /// Whether any secret value is configured for redaction.
    pub fn redacts(&self) -> bool {
        !self.env_gate.redactions().is_empty()
    }

    /// Use `jobs` for background jobs (share one registry between tools of one engine).
    #[must_use]
    pub fn with_jobs(mut self, jobs: crate::JobRegistry) -> Self {
        self.jobs = jobs;
        self
    }

    /// The persistent shell sessions of this tool (list, close, shut down).
    pub fn sessions(&self) -> &SessionManager {
        &self.sessions
    }

    /// The hosts this tool runs on, with their sessions.
    pub(crate) fn hosts(&self) -> &shellgate_hosts::Hosts {
        &self.hosts
    }

    /// The registry of background jobs this tool starts (give it to a [`ProcessTool`](crate::ProcessTool)).
    pub fn jobs(&self) -> &crate::JobRegistry {
        &self.jobs
    }

    /// Run one call to its end (or until `cancel` fires).
    pub async fn call(&self, params: BashParams, cancel: CancellationToken) -> ToolResult {
        self.call_live(params, cancel, None).await
    }

    /// Like [`BashTool::call`], also appending the clean output of a foreground run to `live` while it
    /// runs.
    pub async fn call_live(
        &self,
        params: BashParams,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
    ) -> ToolResult {
        let mut result = self.run_call(params, cancel, live, false).await;
        if !self.config.config_notices.is_empty()
            && !self.announced.swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            result.notices.extend(self.config.config_notices.iter().cloned());
        }
        result
    }

    /// A call; `approved` when a person approved this very request (its ask is answered).
    async fn run_call(
        &self,
        params: BashParams,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
        approved: bool,
    ) -> ToolResult {
        let base_cwd = || self.config.cwd.display().to_string();
        let remote = match self
            .hosts
            .select(params.host.as_deref(), self.config.sandbox.mode.is_some())
        {
            Ok(remote) => remote,
            Err(message) => {
                return ToolResult::not_run(crate::ToolStatus::FailedToStart, message, base_cwd());
            }
        };
        if params.command.trim().is_empty() {
            return ToolResult::not_run(
                crate::ToolStatus::FailedToStart,
                "The command is empty.",
                base_cwd(),
            );
        }
        if let Some(remote) = remote {
            return self.run_remote(params, remote, approved, cancel, live).await;
        }
        let plan = match self.plan(params, approved) {
            Ok(plan) => plan,
            Err(result) => return *result,
        };
        let result = if plan.params.background || plan.params.yield_ms.is_some() {
            self.run_job(plan, cancel).await
        } else {
            self.run_foreground(plan, cancel, live).await
        };
        self.env_gate.redacted(result)
    }

    /// The limits of a call: explicit ones, else those lifted out of the command (N-5).
    fn limits(params: &BashParams, normalized: &Normalized) -> Limits {
        Limits {
            head: params.head,
            tail: params.tail,
        }
        .or(normalized.limits)
    }

    /// The judging step: environment policy, per-request tightening, the configured policy chained
    /// with the custom interceptor. `Err` is the result of a call that must not run.
    fn judge(&self, call: &crate::gate::Call<'_>) -> Result<Vec<String>, Box<ToolResult>> {
        crate::gate::judge(
            self.approvals.policy().as_ref(),
            &*self.interceptor,
            &self.env_gate,
            call,
        )
    }

    /// The timeout of a call: the requested one within the configured bounds (a notice when clamped).
    fn clamp_timeout(&self, requested: Option<f64>) -> (Duration, Option<String>) {
        let Some(secs) = requested else {
            return (self.config.default_timeout, None);
        };
        let (min, max) = (self.config.min_timeout, self.config.max_timeout);
        let wanted = if secs.is_finite() && secs > 0.0 {
            Duration::from_secs_f64(secs.min(1e9))
        } else {
            Duration::ZERO
        };
        let clamped = wanted.clamp(min, max);
        if clamped == wanted {
            (clamped, None)
        } else {
            let notice = format!(
                "Timeout {secs} s is outside {}..={} s; using {} s",
                min.as_secs(),
                max.as_secs(),
                clamped.as_secs()
            );
            (clamped, Some(notice))
        }
    }
}
