//! [`BashTool`]: validate → normalize → intercept → execute into the sink → apply limits → shape.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{
    DynExecutor, LaunchSpec, PipeExecutor, SessionKey, SessionManager, StateFile, non_interactive,
    shell_spec, shell_spec_reporting_status,
};
use shellgate_intercept::{AllowAll, Context, Interceptor};
use shellgate_normalize::{Limits, NormalizeContext, Normalized, Normalizer, StandardNormalizer};
use shellgate_pty::pty_selected;
use shellgate_sink::{ArtifactSpill, OutputWindow};
use tokio_util::sync::CancellationToken;

use crate::foreground::{Foreground, Runner};
use crate::gate::EnvGate;
use crate::live::LiveFeed;
use crate::shape::StreamFacts;
use crate::{BashParams, ToolConfig, ToolResult, ToolStatus};

/// The `bash` tool: runs one command through every stage.
#[derive(Clone)]
pub struct BashTool {
    config: ToolConfig,
    normalizer: Arc<dyn Normalizer + Send + Sync>,
    interceptor: Arc<dyn Interceptor>,
    env_gate: Arc<EnvGate>,
    executor: Arc<dyn DynExecutor>,
    jobs: crate::JobRegistry,
    sessions: SessionManager,
    approvals: crate::approvals::ApprovalState,
    sandboxing: Arc<crate::sandboxing::Sandboxing>,
    hosts: crate::remote::Hosts,
}

mod approve;
mod remote;

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
        let env_gate = EnvGate::new(&config.env);
        session_options
            .env_remove
            .extend(env_gate.removals.iter().cloned());
        let sessions = SessionManager::new(session_options);
        let sandboxing =
            crate::sandboxing::Sandboxing::new(&config.sandbox, &config.cwd, sessions.runtime_dir());
        let remote_options = shellgate_hosts::RemoteSessionOptions {
            kill_grace: config.kill_grace,
            layers: config.layers.clone(),
            env: non_interactive(LaunchSpec::new("", Vec::<String>::new(), "")).env,
            ..shellgate_hosts::RemoteSessionOptions::default()
        };
        Self {
            hosts: crate::remote::Hosts::new(&config.hosts, sessions.runtime_dir(), remote_options),
            approvals: crate::approvals::ApprovalState::new(&config.approvals, config.policy.as_ref()),
            jobs: crate::JobRegistry::new(crate::jobs::job_config_for(&config)),
            sessions,
            sandboxing: Arc::new(sandboxing),
            config,
            normalizer: Arc::new(StandardNormalizer::default()),
            interceptor: Arc::new(AllowAll),
            env_gate: Arc::new(env_gate),
            executor: Arc::new(PipeExecutor::default()),
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
        self.executor = Arc::new(executor);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ToolConfig {
        &self.config
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
        self.run_call(params, cancel, live, false).await
    }

    /// A call; `approved` when a person approved this very request (its ask is answered).
    async fn run_call(
        &self,
        mut params: BashParams,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
        approved: bool,
    ) -> ToolResult {
        let base_cwd = self.config.cwd.display().to_string();
        if params.command.trim().is_empty() {
            return ToolResult::not_run(ToolStatus::FailedToStart, "The command is empty.", base_cwd);
        }
        // From here on `params.elevated` means granted: the sandbox layer must not apply then.
        let (approved, elevation_notice) =
            match crate::elevated::elevation(self.config.policy.as_ref(), params.elevated) {
                crate::elevated::Elevation::No => (approved, None),
                crate::elevated::Elevation::Refused(notice) => {
                    params.elevated = false;
                    (approved, Some(notice))
                }
                crate::elevated::Elevation::Granted {
                    bypass_approvals,
                    notice,
                } => (approved || bypass_approvals, Some(notice)),
            };
        let use_pty = pty_selected(params.pty);
        // A terminal cannot be closed the way `head` closes its pipe, so there the limiter stays in the
        // script; with pipes it is lifted and the output closed once its lines are in.
        let ctx = NormalizeContext::default()
            .with_explicit_cwd(params.cwd.is_some())
            .with_keep_limiters(use_pty);
        let normalized = self.normalizer.normalize_with(&params.command, &ctx);
        let mut notices: Vec<String> = normalized.rewrites.iter().map(|r| r.message.clone()).collect();
        notices.extend(elevation_notice);

        match self
            .hosts
            .select(params.host.as_deref(), self.config.sandbox.mode.is_some())
        {
            Ok(None) => {}
            Ok(Some(remote)) => {
                let call = remote::RemoteCall {
                    remote,
                    normalized,
                    notices,
                    approved,
                    live,
                };
                return Box::pin(self.run_remote(params, call, cancel)).await;
            }
            Err(message) => return ToolResult::not_run(ToolStatus::FailedToStart, message, base_cwd),
        }
        let requested_cwd = params.cwd.as_deref().or(normalized.cwd.as_deref());
        let sandbox = self
            .sandboxing
            .decide(params.sandbox, params.host.as_deref(), &mut notices)
            // An elevated run (granted above) runs outside the sandbox (SPEC X-4); the host check stays.
            .map(|run| run.filter(|_| !params.elevated));
        let session = self.session_for(&params, sandbox.as_ref().ok().and_then(Option::as_ref));
        // A session keeps its own directory: relative paths resolve against it.
        let live_cwd = session.as_ref().and_then(|key| self.live_session_cwd(key));
        let base = live_cwd.clone().unwrap_or_else(|| self.config.cwd.clone());
        let cwd = match resolve_cwd(&base, requested_cwd) {
            Ok(cwd) => cwd,
            // A session whose directory was deleted falls back to an existing ancestor itself.
            Err(_) if session.is_some() && requested_cwd.is_none() => base,
            Err(message) => return ToolResult::not_run(ToolStatus::FailedToStart, message, base_cwd),
        };

        let ctx = Context {
            tool_names: self.config.tool_names.clone(),
            cwd: Some(cwd.clone()),
        };
        let call = crate::gate::Call {
            params: &params,
            normalized: &normalized,
            ctx: &ctx,
            cwd: &cwd,
        };
        match self.judge(&call) {
            Ok(judged) => notices.extend(judged),
            Err(result) if approved && result.status == ToolStatus::ApprovalPending => {
                notices.extend(result.notices);
            }
            Err(result) if result.status == ToolStatus::ApprovalPending => {
                return self.env_gate.redacted(self.pending(*result, &params, &cwd));
            }
            Err(result) => return self.env_gate.redacted(*result),
        }
        let sandbox = match sandbox {
            Ok(sandbox) => sandbox,
            Err(result) => return self.env_gate.redacted(*result),
        };
        let watch = sandbox
            .as_ref()
            .map(|_| crate::sandboxing::DenialWatch::start(&mut notices));

        let (timeout, clamp_notice) = self.clamp_timeout(params.timeout);
        notices.extend(clamp_notice);

        if params.pty && !use_pty {
            notices.push(
                "A pseudo-terminal was requested but is not available here; the command ran with pipes."
                    .into(),
            );
        }
        let launch = |notices: &mut Vec<String>| {
            let (mut spec, state_file) =
                self.launch_spec(session.as_ref(), &params, &normalized, &cwd, use_pty, notices);
            spec.pty = use_pty;
            spec.env.extend(params.env.clone());
            spec.env_remove.extend(self.env_gate.removals.iter().cloned());
            spec.timeout = Some(timeout);
            spec.kill_grace = self.config.kill_grace;
            let spec = non_interactive(spec);
            let spec = match &sandbox {
                Some(sandbox) => sandbox.wrap(spec),
                None => spec,
            };
            (self.config.layers.apply(spec), state_file)
        };

        if params.background || params.yield_ms.is_some() {
            let (spec, state_file) = launch(&mut notices);
            let mut result = self
                .call_as_job(
                    spec,
                    state_file,
                    &params,
                    &normalized,
                    &cwd,
                    timeout,
                    notices,
                    cancel,
                    watch.as_ref().map(crate::sandboxing::DenialWatch::pids),
                )
                .await;
            if let Some(watch) = watch {
                watch.finish(&mut result, &[]);
            }
            return self.env_gate.redacted(result);
        }

        let window = match &self.config.artifacts {
            Some(store) => {
                OutputWindow::with_spill(self.config.window.clone(), ArtifactSpill::new(store.clone()))
            }
            None => OutputWindow::new(self.config.window.clone()),
        };
        // A session command is text for the session's shell: only the other runs launch a process.
        let mut state_file = None;
        let session_name = session.as_ref().map(|key| key.name.clone());
        let shell_before = session_name.as_deref().and_then(|name| self.session_pid(name));
        let runner = match session {
            _ if use_pty => {
                let (spec, file) = launch(&mut notices);
                state_file = file;
                match &watch {
                    // The same terminal run, through an executor that records its pid.
                    Some(watch) => Runner::Pipe(watch.recording(Arc::new(transcript_pty())), spec),
                    None => Runner::Pty(spec),
                }
            }
            None => {
                let executor = match &watch {
                    Some(watch) => watch.recording(Arc::clone(&self.executor)),
                    None => Arc::clone(&self.executor),
                };
                Runner::Pipe(executor, launch(&mut notices).0)
            }
            Some(key) => Runner::Session {
                sessions: self.sessions.clone(),
                text: session_text(&normalized).into_owned(),
                // A new session starts in the tool's directory; a live one keeps its own.
                cwd: (requested_cwd.is_some() || live_cwd.is_none()).then(|| cwd.clone()),
                env: params.env.clone(),
                report_status: !normalized.limits.is_empty(),
                key,
            },
        };
        let run = Foreground {
            runner,
            state_file,
            facts: StreamFacts::new(&normalized, Self::limits(&params, &normalized)),
            head_stops: normalized.limits.head.is_some(),
            head_grace: self.config.head_grace,
            live: live.map(|feed| feed.sink(self.config.window.max_column)),
            cwd,
            timeout,
            notices,
            command: params.command.clone(),
            redactions: self.env_gate.redactions(),
            artifacts_error: self
                .config
                .artifacts
                .is_none()
                .then(|| self.config.artifacts_error.clone())
                .flatten(),
        };
        let mut result = Box::pin(run.run(window, &self.jobs, self.config.auto_yield, cancel)).await;
        if let Some(watch) = watch {
            // A session's shell (the one before the run, or its restart) is the sandbox's creator.
            let shell_after = session_name.as_deref().and_then(|name| self.session_pid(name));
            let shells: Vec<u32> = shell_before.into_iter().chain(shell_after).collect();
            watch.finish(&mut result, &shells);
        }
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

    /// The launch spec of a command that runs outside the session's own shell (a pseudo-terminal run, a
    /// job). A call in a session that has run before starts from the session's state (variables,
    /// functions, aliases, options), which the shell reads from the returned file: keep it until the
    /// process has ended.
    fn launch_spec(
        &self,
        session: Option<&SessionKey>,
        params: &BashParams,
        normalized: &Normalized,
        cwd: &Path,
        use_pty: bool,
        notices: &mut Vec<String>,
    ) -> (LaunchSpec, Option<StateFile>) {
        // A command whose `| head` was lifted still reports its status, from which the status of the
        // pipeline as written follows.
        let plain = || {
            if normalized.limits.is_empty() {
                shell_spec(&self.config.shell, &normalized.script, cwd)
            } else {
                shell_spec_reporting_status(&self.config.shell, &normalized.script, cwd)
            }
        };
        let detached = use_pty || params.background || params.yield_ms.is_some();
        let Some(key) = session.filter(|_| detached) else {
            return (plain(), None);
        };
        let Some(state) = self.sessions.restorable_state(key) else {
            return (plain(), None);
        };
        match state.shell_spec(&self.config.shell, &normalized.script, cwd, &params.env) {
            Ok((spec, file)) => (spec, Some(file)),
            Err(e) => {
                notices.push(format!(
                    "The state of session '{}' could not be restored ({e}); the command started with \
                     the session's directory only.",
                    key.name
                ));
                (plain(), None)
            }
        }
    }

    /// The session a call runs in, or `None` for a fresh shell. A sandboxed call gets a session whose
    /// shell runs in its sandbox.
    fn session_for(
        &self,
        params: &BashParams,
        sandbox: Option<&crate::sandboxing::SandboxRun>,
    ) -> Option<SessionKey> {
        let name = params.session.as_deref().unwrap_or(&self.config.default_session);
        if name == crate::config::NO_SESSION || name.is_empty() {
            return None;
        }
        let mut key = SessionKey::new(name);
        key.shell = self.config.shell.clone();
        if let Some(sandbox) = sandbox {
            sandbox.session_key(&mut key);
        }
        Some(key)
    }

    /// The pid of session `name`'s live shell.
    fn session_pid(&self, name: &str) -> Option<u32> {
        self.sessions
            .list()
            .into_iter()
            .find(|s| s.name == name)
            .and_then(|s| s.pid)
    }

    /// The working directory of a session that has run before, `None` for a new one.
    fn live_session_cwd(&self, key: &SessionKey) -> Option<PathBuf> {
        self.sessions
            .list()
            .into_iter()
            .find(|s| s.name == key.name)
            .map(|s| s.cwd)
    }

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

impl BashTool {
    /// `background` / `yield_ms`: run as a job (SPEC J-1).
    #[allow(clippy::too_many_arguments)]
    async fn call_as_job(
        &self,
        spec: LaunchSpec,
        state_file: Option<StateFile>,
        params: &BashParams,
        normalized: &Normalized,
        cwd: &Path,
        timeout: Duration,
        notices: Vec<String>,
        cancel: CancellationToken,
        record_pid: Option<Arc<std::sync::Mutex<Vec<u32>>>>,
    ) -> ToolResult {
        let head = crate::jobs::OutputPlan {
            lines: normalized.limits.head,
            grace: self.config.head_grace,
            redactions: self.env_gate.redactions(),
        };
        let request = crate::jobs::start::JobRequest {
            command: &params.command,
            background: params.background,
            yield_ms: params.yield_ms,
            pty: params.pty,
            facts: StreamFacts::new(normalized, Self::limits(params, normalized)),
            head,
            cwd,
            timeout,
            notices,
            state_file,
            record_pid,
        };
        crate::jobs::start::run_as_job(&self.jobs, spec, request, cancel).await
    }
}

/// The text a session shell runs. A single stage left after a lifted `| head` runs in a subshell, as it
/// would in bash's pipeline: a builtin loop there (`while :; do echo; done`) then meets the closed
/// output, not the session's shell.
fn session_text(normalized: &Normalized) -> std::borrow::Cow<'_, str> {
    let single_stage = crate::shape::last_pipeline(normalized)
        .is_some_and(|(pipeline, whole)| whole && pipeline.commands.len() == 1);
    if normalized.limits.is_empty() || !single_stage {
        return normalized.script.as_str().into();
    }
    format!("(\n{}\n)", normalized.script).into()
}

/// The terminal executor of a foreground run (a transcript, no screen emulation), as the foreground
/// runner's own terminal branch builds it.
fn transcript_pty() -> shellgate_pty::PtyExecutor {
    shellgate_pty::PtyExecutor::with_options(shellgate_pty::PtyOptions {
        emulate_screen: false,
        ..shellgate_pty::PtyOptions::default()
    })
}

/// Resolve and validate the working directory (SPEC E-4); `~` means the home directory.
fn resolve_cwd(base: &Path, requested: Option<&str>) -> Result<PathBuf, String> {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let requested = requested.map(|r| match r.strip_prefix("~/").or((r == "~").then_some("")) {
        Some(rest) => home().map_or_else(|| PathBuf::from(r), |h| h.join(rest)),
        None => PathBuf::from(r),
    });
    shellgate_executor::resolve_cwd(base, requested.as_deref()).map_err(|e| e.to_string())
}
