//! A foreground run (SPEC J-1): the command runs into the output window and the live feed, polled on
//! the calling task. The call waits for it — or, once it has run for the auto-yield time, moves it onto
//! a task of its own, hands it to the job registry and answers `running` with a job id; the command
//! goes on as that job (its later output through `process poll/log`, its end as an exit event, its
//! full output as the window's artifact). A session command handed over keeps its session busy, so
//! later calls in that session run in a fresh shell started from the session's state (SPEC E-10).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use shellgate_executor::{
    DynExecutor, LaunchSpec, RunStatus, SessionCommand, SessionKey, SessionManager, StateFile,
};
use shellgate_sink::{Flow, LineLimit, OutputWindow, Redact, Sink, Tee};
use tokio_util::sync::CancellationToken;

use crate::jobs::{Job, JobRegistry};
use crate::shape::{StreamFacts, shape};
use crate::{ToolResult, ToolStatus};
use shellgate_sink::LiveSink;

/// What runs the command.
pub(crate) enum Runner {
    /// A process through one of the tool's executors (pipes or a terminal).
    Process(Arc<dyn DynExecutor>, LaunchSpec),
    /// A persistent session.
    Session {
        sessions: SessionManager,
        key: SessionKey,
        text: String,
        cwd: Option<PathBuf>,
        env: BTreeMap<String, String>,
        report_status: bool,
        /// Where the pid of the shell that ran the command goes (a sandboxed run's denials are
        /// found by it: a busy session's command runs in a fresh shell of its own).
        shell_pids: Option<Arc<Mutex<Vec<u32>>>>,
    },
    /// A persistent session on a remote host.
    Remote {
        sessions: shellgate_hosts::RemoteSessions,
        host: shellgate_hosts::RemoteHost,
        name: String,
        text: String,
        cwd: Option<PathBuf>,
        env: BTreeMap<String, String>,
    },
}

/// Everything one foreground run needs, owned, so it can outlive the call.
pub(crate) struct Foreground {
    pub runner: Runner,
    /// Kept until the run ends (the shell reads the session state from it).
    pub state_file: Option<StateFile>,
    pub facts: StreamFacts,
    /// The head limit came from the command's own `| head`: the output is closed once it is full.
    pub head_stops: bool,
    pub head_grace: Duration,
    pub live: Option<LiveSink>,
    pub cwd: PathBuf,
    pub timeout: Duration,
    pub notices: Vec<String>,
    /// The command as given (the job's name once it is handed over).
    pub command: String,
    /// Secret values replaced by `[REDACTED:NAME]` before the output reaches anything.
    pub redactions: Arc<Vec<(String, String)>>,
    /// Why the artifact store is missing, for a truncated result.
    pub artifacts_error: Option<String>,
}

/// State shared by the run's task and the waiting call.
struct Shared {
    window: OutputWindow,
    /// The job the run became, once handed over: later output goes to it too.
    job: Option<Arc<Job>>,
    /// The run has ended; it can no longer be handed over.
    finished: bool,
}

type SharedState = Arc<Mutex<Shared>>;

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes into the shared window, and into the job once the run became one.
struct SharedSink(SharedState);

impl Sink for SharedSink {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        let mut shared = lock(&self.0);
        let flow = shared.window.write(chunk);
        if let Some(job) = &shared.job {
            job.push_output(chunk);
        }
        flow
    }

    fn finish(&mut self) {
        lock(&self.0).window.finish();
    }
}

impl Foreground {
    /// Run to the end, or hand over to `jobs` after `auto_yield`. `cancel` stops the run while the
    /// call waits for it; a run handed over is stopped through `process kill` only (SPEC J-5).
    pub(crate) async fn run(
        self,
        window: OutputWindow,
        jobs: &JobRegistry,
        auto_yield: Option<Duration>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let shared = Arc::new(Mutex::new(Shared {
            window,
            job: None,
            finished: false,
        }));
        let Some(after) = auto_yield.filter(|d| !d.is_zero()) else {
            // Nothing to hand over: run on this task (no spawn).
            return Box::pin(self.execute(shared, cancel, None)).await;
        };
        let command = self.command.clone();
        let cwd = self.cwd.clone();
        let timeout = self.timeout;
        let session_pid = self.session_pid();
        let run_cancel = CancellationToken::new();
        // Polled here, on the caller's task: most runs end long before the auto-yield time, and a run
        // that ends here needs no task of its own (no spawn, no wake-up across threads). Boxed, so a
        // run handed over moves onto its own task as a pointer.
        let mut run = CatchPanic(Box::pin(self.execute(
            Arc::clone(&shared),
            run_cancel.clone(),
            Some(jobs.clone()),
        )));
        let yield_at = tokio::time::sleep(after);
        tokio::pin!(yield_at);
        loop {
            tokio::select! {
                done = &mut run => return done.unwrap_or_else(|e| panicked(&e, &cwd)),
                () = cancel.cancelled(), if !run_cancel.is_cancelled() => run_cancel.cancel(),
                () = &mut yield_at => break,
            }
        }
        // Hand over, unless the run ended in the meantime.
        let handed = {
            let mut state = lock(&shared);
            if state.finished {
                None
            } else {
                Some(
                    jobs.adopt(&command, &cwd, Some(timeout), run_cancel.clone(), session_pid)
                        .map(|job| {
                            state.job = Some(Arc::clone(&job));
                            (job, state.window.summary())
                        }),
                )
            }
        };
        let (job, summary) = match handed {
            Some(Ok(handed)) => handed,
            None => return run.await.unwrap_or_else(|e| panicked(&e, &cwd)),
            Some(Err(reason)) => {
                // No room for another job: keep waiting, as without auto-yield.
                let mut result = run.await.unwrap_or_else(|e| panicked(&e, &cwd));
                result.notices.push(format!(
                    "The command could not go on as a background job: {reason}"
                ));
                return result;
            }
        };
        // The run goes on as the job, on its own task; it records its end in the job itself.
        drop(tokio::spawn(run));
        let mut result = ToolResult::not_run(ToolStatus::Running, summary.text, cwd.display().to_string());
        result.is_error = false;
        result.job_id = Some(job.id.clone());
        result.pid = job.pid();
        result.duration_ms = job.started.elapsed().as_millis() as u64;
        result.timeout_secs = timeout.as_secs();
        result.notices.push(format!(
            "Still running after {} s, so it goes on as a background job; this reply shows its output so \
             far, later output comes through process poll/log, and its full output is kept for the end.",
            after.as_secs_f64()
        ));
        result
    }

    fn session_pid(&self) -> Option<u32> {
        match &self.runner {
            Runner::Session { sessions, key, .. } => sessions
                .list()
                .into_iter()
                .find(|s| s.name == key.name)
                .and_then(|s| s.pid),
            _ => None,
        }
    }

    /// Run the command into `shared`'s window; shape the result. When the run was handed over to a
    /// job meanwhile, record the end in that job (through `jobs`).
    async fn execute(
        self,
        shared: SharedState,
        cancel: CancellationToken,
        jobs: Option<JobRegistry>,
    ) -> ToolResult {
        let Self {
            runner,
            state_file,
            mut facts,
            head_stops,
            head_grace,
            mut live,
            cwd,
            timeout,
            notices,
            command: _,
            redactions,
            artifacts_error,
        } = self;
        let limited = LineLimit::new(
            Tee::new(SharedSink(Arc::clone(&shared)), live.as_mut()),
            facts.limits.head,
        )
        .with_grace(head_grace)
        .stopping(head_stops);
        // Secrets are replaced before anything downstream — window, artifact, live view — sees them.
        let mut sink = Redact::new(limited, redactions.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let outcome = match runner {
            Runner::Process(executor, spec) => executor.run_dyn(spec, &mut sink, cancel).await,
            Runner::Session {
                sessions,
                key,
                text,
                cwd,
                env,
                report_status,
                shell_pids,
            } => {
                let command = SessionCommand {
                    text: &text,
                    cwd: cwd.as_deref(),
                    env: &env,
                    timeout,
                    report_status,
                };
                let outcome = sessions.run_command(&key, &command, &mut sink, cancel).await;
                if let (Some(pids), Some(pid)) = (shell_pids, outcome.pid) {
                    pids.lock().unwrap_or_else(PoisonError::into_inner).push(pid);
                }
                outcome
            }
            Runner::Remote {
                sessions,
                host,
                name,
                text,
                cwd,
                env,
            } => {
                let command = SessionCommand {
                    text: &text,
                    cwd: cwd.as_deref(),
                    env: &env,
                    timeout,
                    report_status: false,
                };
                sessions
                    .run_command(&host, &name, &command, &mut sink, cancel)
                    .await
            }
        };
        drop(state_file);
        sink.finish();
        if facts.limits.head.is_some() {
            facts.stream = Some((sink.inner().total_lines(), sink.inner().total_bytes()));
        }
        let mut state = lock(&shared);
        state.finished = true;
        let job = state.job.take();
        let (exit_code, signal, status) = (outcome.exit_code, outcome.signal.clone(), outcome.status);
        let mut result = shape(outcome, &state.window, &facts, &cwd, timeout, notices);
        drop(state);
        if result.truncation.is_some()
            && result.artifact.is_none()
            && let Some(error) = &artifacts_error
        {
            result
                .notices
                .push(format!("Full output could not be saved: {error}"));
        }
        if let (Some(job), Some(jobs)) = (job, jobs) {
            record_end(&jobs, &job, &result, exit_code, signal, status);
        }
        result
    }
}

/// The end of a run that became a job: its status, and where its full output is.
fn record_end(
    jobs: &JobRegistry,
    job: &Job,
    result: &ToolResult,
    exit_code: Option<i32>,
    signal: Option<String>,
    status: RunStatus,
) {
    let mut notices = result.notices.clone();
    if let Some(artifact) = &result.artifact {
        notices.push(format!("Full output of the whole run: {artifact}"));
    }
    if status == RunStatus::TimedOut {
        job.state().timed_out = true;
    }
    jobs.finish_detached(job, exit_code, signal, notices);
}

fn panicked(error: &str, cwd: &std::path::Path) -> ToolResult {
    ToolResult::not_run(
        ToolStatus::FailedToStart,
        format!("The run failed inside the engine: {error}"),
        cwd.display().to_string(),
    )
}

/// A run polled on the caller's task: a panic inside it becomes an error (its message), as it would
/// for a task of its own, instead of unwinding through the caller.
struct CatchPanic<F>(std::pin::Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let run = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown cause".to_owned());
                std::task::Poll::Ready(Err(format!("the run panicked: {message}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run that panics while polled on the caller's task answers with the panic's message; the
    /// caller's task goes on.
    #[tokio::test]
    async fn a_panicking_run_becomes_an_error_not_an_unwind() {
        let boom = async {
            tokio::task::yield_now().await;
            assert!(std::hint::black_box(false), "boom in the run");
            7
        };
        let error = CatchPanic(Box::pin(boom)).await.unwrap_err();
        assert!(error.contains("boom in the run"), "{error}");
        assert_eq!(CatchPanic(Box::pin(async { 7 })).await, Ok(7));
    }
}
