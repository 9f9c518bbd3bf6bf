//! Starting a call's command as a job: answer at once (`background`), or when it ends, or when the
//! yield window (`yield_ms`) closes — whichever comes first.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shellgate_executor::{ExecOutcome, LaunchSpec, RunStatus, StateFile};
use tokio_util::sync::CancellationToken;

use crate::{Job, JobRegistry, JobStatus, OutputPlan};

/// What the call asked for, beyond the launch spec.
pub struct JobRequest<'a> {
    /// The command as given (the job's name).
    pub command: &'a str,
    /// Answer at once.
    pub background: bool,
    /// Otherwise answer after this long at most (clamped to the registry's bounds).
    pub yield_ms: Option<u64>,
    /// Run under a terminal.
    pub pty: bool,
    /// The lifted `| head` that closes a pipe job's output once its lines are in.
    pub head: OutputPlan,
    /// The session state the job's shell reads first: kept until the job has ended.
    pub state_file: Option<StateFile>,
    /// Where the job's pid goes once it started.
    pub record_pid: Option<Arc<Mutex<Vec<u32>>>>,
}

/// How the call's wait ended.
#[derive(Debug)]
pub enum Started {
    /// The job could not start: why.
    Refused(String),
    /// It goes on as a job: its output so far (what the first poll will not show again).
    Running {
        /// The job.
        job: Arc<Job>,
        /// Its output so far.
        output: String,
    },
    /// It ended within the wait, and is forgotten by the registry: read its end from `job`.
    Ended {
        /// The ended job (its state holds the output window).
        job: Arc<Job>,
        /// Its outcome as the executor would report it.
        outcome: ExecOutcome,
    },
}

impl JobRegistry {
    /// Run `spec` as a job per `request`; notices (a clamped `yield_ms`, skipped output) go to
    /// `notices`.
    pub async fn start_call(
        &self,
        spec: LaunchSpec,
        mut request: JobRequest<'_>,
        notices: &mut Vec<String>,
        cancel: CancellationToken,
    ) -> Started {
        let config = self.config();
        let yield_after = if request.background {
            Duration::ZERO
        } else {
            let wanted = Duration::from_millis(request.yield_ms.unwrap_or(0));
            let clamped = wanted.clamp(config.min_yield, config.max_yield);
            if clamped != wanted {
                notices.push(format!(
                    "yield_ms {} is outside {}..={}; using {}",
                    wanted.as_millis(),
                    config.min_yield.as_millis(),
                    config.max_yield.as_millis(),
                    clamped.as_millis()
                ));
            }
            clamped
        };
        let job = match self.start(
            &spec,
            request.command,
            request.background,
            request.pty,
            &request.head,
            notices,
        ) {
            Ok(job) => job,
            Err(message) => return Started::Refused(message),
        };
        if let (Some(pids), Some(pid)) = (&request.record_pid, job.pid()) {
            pids.lock().unwrap_or_else(PoisonError::into_inner).push(pid);
        }
        if let Some(file) = request.state_file.take() {
            keep_until_end(&job, file);
        }
        if request.background {
            return running(job, notices, config.poll_max_bytes);
        }
        let mut changes = job.subscribe();
        let yield_at = tokio::time::Instant::now() + yield_after;
        loop {
            if !job.is_running() {
                return self.ended(job, false);
            }
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return self.ended(job, false);
                    }
                }
                () = tokio::time::sleep_until(yield_at) => {
                    let mut st = job.state();
                    if st.status == JobStatus::Running {
                        st.backgrounded = true;
                        drop(st);
                        return running(job, notices, config.poll_max_bytes);
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
                    return self.ended(job, true);
                }
            }
        }
    }

    /// A job that ended before it was yielded: forgotten, its outcome as a foreground run's.
    fn ended(&self, job: Arc<Job>, cancelled: bool) -> Started {
        self.forget(&job.id);
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
        drop(st);
        Started::Ended { job, outcome }
    }
}

/// Keep `file` until `job` has ended. Its shell removes the file as soon as it has read it; this
/// covers a shell stopped before that.
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

/// A job that runs on: its output so far, which the first poll does not show again.
fn running(job: Arc<Job>, notices: &mut Vec<String>, max_bytes: usize) -> Started {
    let mut st = job.state();
    let read = st.output.read_since(0, max_bytes, false);
    if let Some((from, to)) = read.skipped {
        notices.push(format!(
            "Output bytes {from}..{to} are not shown; use process log to read them"
        ));
    }
    st.cursor = read.end;
    drop(st);
    Started::Running {
        job,
        output: read.text,
    }
}
