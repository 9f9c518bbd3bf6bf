//! The `process` tool's actions on jobs (SPEC J-3): its parameters, its result and its text for
//! the model, over one [`JobRegistry`]. The `sessions` and `close_session` actions belong to
//! whoever holds the persistent sessions (the `shellgate` tool); here they answer that there are
//! none.
//!
//! ```
//! use shellgate_executor::{LaunchSpec, StdinMode};
//! use shellgate_jobs::{JobActions, JobConfig, JobRegistry, OutputPlan, ProcessAction, ProcessParams};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let jobs = JobRegistry::new(JobConfig::default());
//! let mut spec = LaunchSpec::new("sh", ["-c", "read line; echo got $line"], ".");
//! spec.stdin = StdinMode::Piped;
//! let job = jobs.start(&spec, "reader", true, false, &OutputPlan::default(), &mut Vec::new()).unwrap();
//!
//! let actions: JobActions = JobActions::new(jobs.clone());
//! let mut write = ProcessParams::new(ProcessAction::Write, &job.id);
//! write.data = Some("hello\n".into());
//! write.wait_ms = Some(5000);
//! let answered = actions.call(write).await;
//! assert!(answered.output.unwrap_or_default().contains("got hello"));
//! jobs.shutdown().await;
//! # });
//! ```

mod actions;
mod params;
mod result;

use std::marker::PhantomData;
use std::sync::Arc;

use crate::{Job, JobRegistry, JobStatus};

pub use params::{ProcessAction, ProcessParams};
pub use result::{NoAttachment, ProcessResult, SessionSummary};

/// The `process` tool's actions on the jobs of one [`JobRegistry`]; `E` is what the jobs' end
/// hooks attach (see [`ProcessResult`]).
#[derive(Debug)]
pub struct JobActions<E = NoAttachment> {
    registry: JobRegistry,
    attached: PhantomData<fn() -> E>,
}

impl<E> Clone for JobActions<E> {
    fn clone(&self) -> Self {
        Self::new(self.registry.clone())
    }
}

impl<E> Default for JobActions<E> {
    fn default() -> Self {
        Self::new(JobRegistry::default())
    }
}

impl<E> JobActions<E> {
    /// Actions on the jobs of `registry`.
    pub fn new(registry: JobRegistry) -> Self {
        Self {
            registry,
            attached: PhantomData,
        }
    }

    /// The registry.
    pub fn registry(&self) -> &JobRegistry {
        &self.registry
    }
}

impl<E: Clone + Default + Send + Sync + 'static> JobActions<E> {
    /// Run one action.
    pub async fn call(&self, params: ProcessParams) -> ProcessResult<E> {
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
                ProcessResult::error(action, None, "This process tool has no persistent sessions.")
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

    async fn on_job(&self, job: Arc<Job>, params: ProcessParams) -> ProcessResult<E> {
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
    async fn other(&self, job: Arc<Job>, params: ProcessParams) -> ProcessResult<E> {
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
    fn status_result(job: &Job, action: ProcessAction) -> ProcessResult<E> {
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
