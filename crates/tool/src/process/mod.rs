//! The `process` tool (SPEC J-3): inspect and control background jobs.
//!
//! ```
//! use shellgate::{BashParams, BashTool, ProcessAction, ProcessParams, ProcessTool, CancellationToken};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let bash = BashTool::default();
//! let mut params = BashParams::new("echo started; read line; echo got $line");
//! params.background = true;
//! let started = bash.call(params, CancellationToken::new()).await;
//! let job_id = started.job_id.clone().unwrap();
//!
//! let process = ProcessTool::new(bash.jobs().clone());
//! let mut write = ProcessParams::new(ProcessAction::Write, &job_id);
//! write.data = Some("hello\n".into());
//! assert!(!process.call(write).await.is_error);
//!
//! let mut poll = ProcessParams::new(ProcessAction::Poll, &job_id);
//! poll.wait_ms = Some(5000);
//! let mut seen = String::new();
//! for _ in 0..20 {
//!     seen.push_str(process.call(poll.clone()).await.output.as_deref().unwrap_or(""));
//!     if seen.contains("got hello") {
//!         break;
//!     }
//! }
//! assert!(seen.contains("got hello"), "{seen}");
//! # });
//! ```

mod job_actions;
mod params;
mod result;
mod sessions;

use std::sync::Arc;

use shellgate_executor::SessionManager;

use crate::jobs::{Job, JobRegistry, JobStatus};

pub use params::{ProcessAction, ProcessParams};
pub use result::{ProcessResult, SessionSummary};

/// The `process` tool over one [`JobRegistry`] (and the persistent sessions, when given).
#[derive(Debug, Clone, Default)]
pub struct ProcessTool {
    registry: JobRegistry,
    sessions: Option<SessionManager>,
    /// `bash`'s hosts, whose sessions the `sessions` actions cover too.
    hosts: Option<shellgate_hosts::Hosts>,
}

impl ProcessTool {
    /// A tool controlling the jobs of `registry` (share it with the [`BashTool`](crate::BashTool) that
    /// starts them: `ProcessTool::new(bash.jobs().clone())`).
    pub fn new(registry: JobRegistry) -> Self {
        Self {
            registry,
            sessions: None,
            hosts: None,
        }
    }

    /// A tool over everything `bash` started: its jobs and its persistent sessions.
    pub fn for_bash(bash: &crate::BashTool) -> Self {
        Self {
            registry: bash.jobs().clone(),
            sessions: Some(bash.sessions().clone()),
            hosts: Some(bash.hosts().clone()),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &JobRegistry {
        &self.registry
    }

    /// Run one action.
    pub async fn call(&self, params: ProcessParams) -> ProcessResult {
        let action = params.action;
        match action {
            ProcessAction::List => {
                let jobs = self.registry.list();
                ProcessResult {
                    action,
                    message: format!("{} job(s).", jobs.len()),
                    jobs: Some(jobs),
                    ..ProcessResult::default()
                }
            }
            ProcessAction::Sessions | ProcessAction::CloseSession => {
                self.sessions_action(action, params.session.as_deref(), params.host.as_deref())
                    .await
            }
            ProcessAction::Clear if params.job_id.is_none() => {
                let cleared = self.registry.clear_finished();
                ProcessResult {
                    action,
                    message: format!("Cleared {} finished job(s).", cleared.len()),
                    ..ProcessResult::default()
                }
            }
            _ => {
                let Some(id) = params.job_id.as_deref() else {
                    return ProcessResult::error(action, None, "job_id is required for this action.");
                };
                let Some(job) = self.registry.get(id) else {
                    return ProcessResult::error(action, Some(id), format!("No job found with id {id}."));
                };
                self.on_job(job, params).await
            }
        }
    }

    async fn on_job(&self, job: Arc<Job>, params: ProcessParams) -> ProcessResult {
        let action = params.action;
        let wait_ms = params.wait_ms;
        let sent = match action {
            ProcessAction::Write | ProcessAction::SendKeys | ProcessAction::Submit | ProcessAction::Paste => {
                self.input(&job, params).await
            }
            _ => return self.other(job, params).await,
        };
        match wait_ms {
            Some(ms) if ms > 0 && !sent.is_error => self.answer(&job, sent, ms).await,
            _ => sent,
        }
    }

    /// Every other action on one job.
    async fn other(&self, job: Arc<Job>, params: ProcessParams) -> ProcessResult {
        let action = params.action;
        match action {
            ProcessAction::Poll => self.poll(&job, params.since, params.wait_ms).await,
            ProcessAction::Log => self.log(&job, params.offset, params.limit),
            ProcessAction::Kill => self.kill(&job, params.signal.as_deref()).await,
            ProcessAction::Remove => {
                let mut result = if job.is_running() {
                    self.kill(&job, None).await
                } else {
                    Self::status_result(&job, action)
                };
                self.registry.forget(&job.id);
                result.action = action;
                result.is_error = false;
                result.message = format!("Removed job {}.", job.id);
                result
            }
            ProcessAction::Clear => {
                if job.is_running() {
                    return ProcessResult::error(
                        action,
                        Some(&job.id),
                        format!("Job {} is still running; kill or remove it instead.", job.id),
                    );
                }
                self.registry.forget(&job.id);
                let mut result = Self::status_result(&job, action);
                result.message = format!("Cleared job {}.", job.id);
                result
            }
            ProcessAction::Screen => Self::screen(&job),
            ProcessAction::Resize => Self::resize(&job, params.cols, params.rows),
            // `List`, `Sessions` and `CloseSession` take no job; input actions are handled by `input`.
            _ => Self::status_result(&job, action),
        }
    }

    /// Status fields of `job`; claims its exit (no notification follows) when it has ended.
    fn status_result(job: &Job, action: ProcessAction) -> ProcessResult {
        let mut st = job.state();
        if st.status != JobStatus::Running {
            st.exit_claimed = true;
        }
        ProcessResult {
            action,
            job_id: Some(job.id.clone()),
            status: Some(st.status),
            pid: job.pid(),
            exit_code: st.exit_code,
            signal: st.signal.clone(),
            total_lines: Some(st.output.total_lines()),
            artifact: st.output.artifact(),
            ..ProcessResult::default()
        }
    }
}
