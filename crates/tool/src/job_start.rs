//! `bash` with `background` or `yield_ms`: start the command as a job and answer at once, or when it
//! ends, or when the yield window closes — whichever comes first.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{ExecOutcome, LaunchSpec, RunStatus, StateFile};
use tokio_util::sync::CancellationToken;

use crate::jobs::{Job, JobRegistry, JobStatus, OutputPlan};
use crate::shape::{StreamFacts, shape};
use crate::{ToolResult, ToolStatus};

/// The follow-up actions named in a running result.
pub const FOLLOW_UP: &str = "list/poll/log/write/send_keys/submit/paste/kill/clear/remove";

/// What the `bash` call asked for, beyond the launch spec.
pub(crate) struct JobRequest<'a> {
    pub command: &'a str,
    pub background: bool,
    pub yield_ms: Option<u64>,
    pub pty: bool,
    /// Limits, lifted stages and counts for the final result.
    pub facts: StreamFacts,
    /// The lifted `| head` that closes a pipe job's output once its lines are in.
    pub head: OutputPlan,
    pub cwd: &'a Path,
    pub timeout: Duration,
    pub notices: Vec<String>,
    /// The session state the job's shell reads first (see `BashTool`): kept until the job has ended.
    pub state_file: Option<StateFile>,
    /// Where the job's pid goes once it started (a sandboxed run's denials are looked up by it).
    pub record_pid: Option<std::sync::Arc<std::sync::Mutex<Vec<u32>>>>,
}

/// Run `spec` as a job per `request`.
pub(crate) async fn run_as_job(
    registry: &JobRegistry,
    spec: LaunchSpec,
    mut request: JobRequest<'_>,
    cancel: CancellationToken,
) -> ToolResult {
    let config = registry.config();
    let yield_after = if request.background {
        Duration::ZERO
    } else {
        let wanted = Duration::from_millis(request.yield_ms.unwrap_or(0));
        let clamped = wanted.clamp(config.min_yield, config.max_yield);
        if clamped != wanted {
            request.notices.push(format!(
                "yield_ms {} is outside {}..={}; using {}",
                wanted.as_millis(),
                config.min_yield.as_millis(),
                config.max_yield.as_millis(),
                clamped.as_millis()
            ));
        }
        clamped
    };
    let job = match registry.start(
        &spec,
        request.command,
        request.background,
        request.pty,
        &request.head,
        &mut request.notices,
    ) {
        Ok(job) => {
            if let (Some(pids), Some(pid)) = (&request.record_pid, job.pid()) {
                pids.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(pid);
            }
            if let Some(file) = request.state_file.take() {
                keep_until_end(&job, file);
            }
            job
        }
        Err(message) => {
            let mut result = ToolResult::not_run(
                ToolStatus::FailedToStart,
                message,
                request.cwd.display().to_string(),
            );
            result.notices = request.notices;
            return result;
        }
    };
    if request.background {
        return running_result(&job, request, config.poll_max_bytes);
    }

    let mut changes = job.subscribe();
    let yield_at = tokio::time::Instant::now() + yield_after;
    loop {
        if !job.is_running() {
            return finished_result(registry, &job, request, false);
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return finished_result(registry, &job, request, false);
                }
            }
            () = tokio::time::sleep_until(yield_at) => {
                let mut st = job.state();
                if st.status == JobStatus::Running {
                    st.backgrounded = true;
                    drop(st);
                    return running_result(&job, request, config.poll_max_bytes);
                }
            }
            () = cancel.cancelled() => {
                job.state().kill_requested = true;
                let victim = Arc::clone(&job);
                let _ = tokio::task::spawn_blocking(move || {
                    if let Some(io) = victim.io() {
                        io.kill_now();
                    }
                })
                .await;
                while job.is_running() {
                    if changes.changed().await.is_err() {
                        break;
                    }
                }
                return finished_result(registry, &job, request, true);
            }
        }
    }
}

/// Keep `file` until `job` has ended. Its shell removes the file as soon as it has read it; this covers a
/// shell stopped before that.
fn keep_until_end(job: &Arc<Job>, file: StateFile) {
    let job = Arc::clone(job);
    let mut changes = job.subscribe();
    tokio::spawn(async move {
        while job.is_running() {
            if changes.changed().await.is_err() {
                break;
            }
        }
        drop(file);
    });
}

/// The answer for a command that runs on as a job: its output so far, and how to follow up.
fn running_result(job: &Arc<Job>, mut request: JobRequest<'_>, max_bytes: usize) -> ToolResult {
    let mut st = job.state();
    let read = st.output.read_since(0, max_bytes, false);
    if let Some((from, to)) = read.skipped {
        request.notices.push(format!(
            "Output bytes {from}..{to} are not shown; use process log to read them"
        ));
    }
    // What this answer shows is not shown again by the first poll.
    st.cursor = read.end;
    drop(st);
    let mut result = ToolResult::not_run(ToolStatus::Running, read.text, job.cwd.clone());
    result.is_error = false;
    result.job_id = Some(job.id.clone());
    result.pid = job.pid();
    result.duration_ms = job.started.elapsed().as_millis() as u64;
    result.timeout_secs = request.timeout.as_secs();
    result.notices = request.notices;
    result
}

/// The answer for a command that ended before it was yielded: an ordinary foreground result.
fn finished_result(
    registry: &JobRegistry,
    job: &Arc<Job>,
    request: JobRequest<'_>,
    cancelled: bool,
) -> ToolResult {
    registry.forget(&job.id);
    let st = job.state();
    let status = if cancelled {
        RunStatus::Cancelled
    } else if st.status == JobStatus::TimedOut {
        RunStatus::TimedOut
    } else {
        RunStatus::Completed
    };
    let mut outcome = ExecOutcome::new(
        status,
        st.ended.unwrap_or_else(std::time::Instant::now) - job.started,
    );
    outcome.exit_code = st.exit_code;
    outcome.signal.clone_from(&st.signal);
    outcome.pid = job.pid();
    outcome.notices.clone_from(&st.notices);
    outcome.output_stopped = st.output_stopped;
    outcome.pipeline_status.clone_from(&st.pipeline_status);
    outcome.pipefail = st.pipefail;
    let mut facts = request.facts;
    facts.stream = st.stream;
    let mut result = shape(
        outcome,
        st.output.window(),
        &facts,
        request.cwd,
        request.timeout,
        request.notices,
    );
    if let Some(artifact) = st.output.artifact() {
        result.artifact = Some(artifact);
    }
    result
}
