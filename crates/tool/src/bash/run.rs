//! Running a planned call: as a job (`background`, `yield_ms`), or in the foreground through the one
//! runner its plan selects (one-shot pipe, terminal, or session).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shellgate_executor::{LaunchSpec, StateFile};
use shellgate_normalize::Normalized;
use shellgate_sink::{ArtifactSpill, OutputWindow};
use tokio_util::sync::CancellationToken;

use super::BashTool;
use super::launch::session_text;
use super::plan::Plan;
use crate::shape::{StreamFacts, shape};
use crate::{BashParams, ToolResult, ToolStatus};
use shellgate_jobs::{Foreground, ProcessRun, Runner, SessionRun};
use shellgate_sandbox::DenialWatch;
use shellgate_sink::LiveFeed;

/// What a run needs besides its runner or spec, local or on a host.
pub(super) struct RunBasics<'a> {
    pub(super) params: &'a BashParams,
    pub(super) normalized: &'a Normalized,
    /// The directory the result shows until the run reports one.
    pub(super) cwd: PathBuf,
    pub(super) timeout: Duration,
    pub(super) notices: Vec<String>,
}

impl BashTool {
    /// `background` / `yield_ms`: run as a job (SPEC J-1).
    pub(super) async fn run_job(&self, mut plan: Plan, cancel: CancellationToken) -> ToolResult {
        let mut notices = std::mem::take(&mut plan.notices);
        let (spec, state_file) = self.launch(&plan, &mut notices);
        let watch = plan.watch.take();
        let basics = RunBasics {
            params: &plan.params,
            normalized: &plan.normalized,
            cwd: plan.cwd.clone(),
            timeout: plan.timeout,
            notices,
        };
        let record_pid = watch.as_ref().map(DenialWatch::pids);
        let mut result = self.start_job(spec, basics, state_file, record_pid, cancel).await;
        if let Some(watch) = watch {
            self.finish_sandboxed(watch, &mut result, &plan, Vec::new()).await;
        }
        result
    }

    /// After a sandboxed run: its denials (and those of `shells`) go into `result`, or, for a run
    /// that goes on as a job, into the job's final poll once it ends.
    async fn finish_sandboxed(
        &self,
        watch: DenialWatch,
        result: &mut ToolResult,
        plan: &Plan,
        shells: Vec<u32>,
    ) {
        let job = (result.status == ToolStatus::Running)
            .then(|| result.job_id.as_deref().and_then(|id| self.jobs.get(id)))
            .flatten();
        if let Some(job) = job {
            let offer = self.domain_offer(&plan.params, &plan.cwd);
            crate::sandboxing::finish_when_job_ends(watch, result, &job, shells, offer);
        } else {
            crate::sandboxing::finish(watch, result, &shells).await;
            self.offer_domain_approvals(result, &plan.params, &plan.cwd);
        }
    }

    /// Start `spec` as a job of the registry (local or on a host alike).
    pub(super) async fn start_job(
        &self,
        spec: LaunchSpec,
        basics: RunBasics<'_>,
        state_file: Option<StateFile>,
        record_pid: Option<Arc<Mutex<Vec<u32>>>>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let RunBasics {
            params,
            normalized,
            cwd,
            timeout,
            notices,
        } = basics;
        let head = crate::jobs::OutputPlan {
            lines: normalized.limits.head,
            grace: self.config.head_grace,
            redactions: self.env_gate.redactions(),
        };
        let request = crate::jobs::JobRequest {
            command: &params.command,
            background: params.background,
            yield_ms: params.yield_ms,
            pty: params.pty,
            head,
            state_file,
            record_pid,
        };
        let facts = StreamFacts::new(normalized, Self::limits(params, normalized));
        crate::job_start::run_as_job(&self.jobs, spec, request, facts, &cwd, timeout, notices, cancel).await
    }

    /// A foreground run; after `auto_yield_ms` it is handed to the job registry.
    pub(super) async fn run_foreground(
        &self,
        mut plan: Plan,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
    ) -> ToolResult {
        let mut notices = std::mem::take(&mut plan.notices);
        // A sandboxed session's shell before the run: if it stops responding, the command is run
        // again in a new one, and both may have been denied something. (The shell that ran it is
        // recorded by the runner.)
        let shell_before = plan
            .session
            .as_ref()
            .filter(|_| plan.watch.is_some())
            .and_then(|key| self.session_pid(&key.name));
        let (runner, state_file) = self.runner(&mut plan, &mut notices);
        let watch = plan.watch.take();
        let basics = RunBasics {
            params: &plan.params,
            normalized: &plan.normalized,
            cwd: plan.cwd.clone(),
            timeout: plan.timeout,
            notices,
        };
        let mut result = self.foreground(runner, state_file, basics, live, cancel).await;
        if let Some(watch) = watch {
            // A run that outlived `auto_yield_ms` (or `yield_ms`) goes on as a job: its account
            // is read when it ends.
            let shells = shell_before.into_iter().collect();
            self.finish_sandboxed(watch, &mut result, &plan, shells).await;
        }
        result
    }

    /// Run `runner` in the foreground (local or on a host alike); after `auto_yield_ms` it is handed
    /// to the job registry.
    pub(super) async fn foreground(
        &self,
        runner: Box<dyn Runner>,
        state_file: Option<StateFile>,
        basics: RunBasics<'_>,
        live: Option<&LiveFeed>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let spill = self.config.artifacts.clone().map(ArtifactSpill::new);
        let window = OutputWindow::with_optional_spill(self.config.window.clone(), spill);
        let RunBasics {
            params,
            normalized,
            cwd,
            timeout,
            notices,
        } = basics;
        let mut facts = StreamFacts::new(normalized, Self::limits(params, normalized));
        let head = facts.limits.head;
        let artifacts_error = self
            .config
            .artifacts
            .is_none()
            .then(|| self.config.artifacts_error.clone())
            .flatten();
        let shape_cwd = cwd.clone();
        let run = Foreground {
            runner,
            state_file,
            head,
            head_stops: normalized.limits.head.is_some(),
            head_grace: self.config.head_grace,
            live: live
                .map(|feed| feed.sink_redacting(self.config.window.max_column, self.env_gate.redactions())),
            cwd,
            timeout,
            command: params.command.clone(),
            redactions: self.env_gate.redactions(),
            shape: Box::new(move |outcome, window, stream| {
                facts.stream = stream;
                let mut result = shape(outcome, window, &facts, &shape_cwd, timeout, notices);
                if result.truncation.is_some()
                    && result.artifact.is_none()
                    && let Some(error) = &artifacts_error
                {
                    result
                        .notices
                        .push(format!("Full output could not be saved: {error}"));
                }
                result
            }),
        };
        Box::pin(run.run(window, &self.jobs, self.config.auto_yield, cancel)).await
    }

    /// The runner of a foreground call. A session command is text for the session's shell: only the
    /// other runs launch a process (and may keep a session's restored state in a file).
    fn runner(&self, plan: &mut Plan, notices: &mut Vec<String>) -> (Box<dyn Runner>, Option<StateFile>) {
        if plan.use_pty {
            let (spec, state_file) = self.launch(plan, notices);
            let runner = match &plan.watch {
                // The same terminal run, through an executor that records its pid.
                Some(watch) => ProcessRun(watch.recording(self.executors.for_run(true)), spec),
                None => ProcessRun(self.executors.for_run(true), spec),
            };
            return (Box::new(runner), state_file);
        }
        let Some(key) = plan.session.take() else {
            let executor = match &plan.watch {
                Some(watch) => watch.recording(self.executors.for_run(false)),
                None => self.executors.for_run(false),
            };
            return (Box::new(ProcessRun(executor, self.launch(plan, notices).0)), None);
        };
        let runner = SessionRun {
            sessions: self.sessions.clone(),
            text: session_text(&plan.normalized).into_owned(),
            // A new session starts in the tool's directory; a live one keeps its own.
            cwd: (plan.cwd_requested || plan.live_cwd.is_none()).then(|| plan.cwd.clone()),
            env: plan.params.env.clone(),
            report_status: !plan.normalized.limits.is_empty(),
            shell_pids: plan.watch.as_ref().map(DenialWatch::pids),
            key,
        };
        (Box::new(runner), None)
    }
}
