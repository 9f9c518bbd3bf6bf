//! A foreground run (SPEC J-1): the command runs into the output window and the live feed, polled on
//! the calling task. The call waits for it — or, once it has run for the auto-yield time, moves it onto
//! a task of its own, hands it to the job registry and answers `running` with a job id; the command
//! goes on as that job (its later output through `process poll/log`, its end as an exit event, its
//! full output as the window's artifact). A session command handed over keeps its session busy, so
//! later calls in that session run in a fresh shell started from the session's state (SPEC E-10).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use shellgate_executor::{ExecOutcome, RunStatus, SendSink, StateFile};
use shellgate_sink::{Flow, LineLimit, LiveSink, OutputWindow, Redact, Sink, Tee};
use tokio_util::sync::CancellationToken;

use crate::{Job, JobRegistry};

/// The future of one run of a command into a sink.
pub type RunFuture<'a> = Pin<Box<dyn Future<Output = ExecOutcome> + Send + 'a>>;

/// What runs the command: a process through an executor, a command in a persistent session, one
/// on another host — whatever the caller has, run once into the sink it is given.
pub trait Runner: Send + 'static {
    /// Run into `sink` until the end or `cancel`.
    fn run<'a>(
        self: Box<Self>,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
        timeout: Duration,
    ) -> RunFuture<'a>;

    /// The pid of the session shell the command runs in, if it runs in one (the job it may become
    /// keeps that shell busy).
    fn session_pid(&self) -> Option<u32> {
        None
    }
}

/// What a caller makes of a foreground run: its own result type.
pub trait RunResult: Send + Sized + 'static {
    /// The answer when the run failed inside the engine (`error` says how).
    fn panicked(error: &str, cwd: &Path) -> Self;
    /// The answer when the run goes on as `job`: its output so far and a notice of the hand-over.
    fn running(job: &Job, output: String, notice: String, timeout: Duration) -> Self;
    /// Add a notice.
    fn push_notice(&mut self, notice: String);
    /// What the job's final result says when a run that became a job ends with this result.
    fn end_notices(&self) -> Vec<String>;
}

/// Shapes the end of a run into the caller's result: its outcome, the window it wrote into, and
/// with a head limit the whole stream's lines and bytes.
pub type Shape<R> = Box<dyn FnOnce(ExecOutcome, &OutputWindow, Option<(u64, u64)>) -> R + Send>;

/// Everything one foreground run needs, owned, so it can outlive the call.
pub struct Foreground<R> {
    /// What runs the command.
    pub runner: Box<dyn Runner>,
    /// Kept until the run ends (the shell reads the session state from it).
    pub state_file: Option<StateFile>,
    /// Lines a lifted `| head` keeps.
    pub head: Option<u64>,
    /// The head limit came from the command's own `| head`: the output is closed once it is full.
    pub head_stops: bool,
    /// How long the output is still counted once the head's lines are in.
    pub head_grace: Duration,
    /// The live feed of the run, if the caller follows it.
    pub live: Option<LiveSink>,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// Its timeout.
    pub timeout: Duration,
    /// The command as given (the job's name once it is handed over).
    pub command: String,
    /// Secret values replaced by `[REDACTED:NAME]` before the output reaches anything.
    pub redactions: Arc<Vec<(String, String)>>,
    /// Makes the result once the run has ended.
    pub shape: Shape<R>,
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

impl<R: RunResult> Foreground<R> {
    /// Run to the end, or hand over to `jobs` after `auto_yield`. `cancel` stops the run while the
    /// call waits for it; a run handed over is stopped through `process kill` only (SPEC J-5).
    pub async fn run(
        self,
        window: OutputWindow,
        jobs: &JobRegistry,
        auto_yield: Option<Duration>,
        cancel: CancellationToken,
    ) -> R {
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
                done = &mut run => return done.unwrap_or_else(|e| R::panicked(&e, &cwd)),
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
            None => return run.await.unwrap_or_else(|e| R::panicked(&e, &cwd)),
            Some(Err(reason)) => {
                // No room for another job: keep waiting, as without auto-yield.
                let mut result = run.await.unwrap_or_else(|e| R::panicked(&e, &cwd));
                result.push_notice(format!(
                    "The command could not go on as a background job: {reason}"
                ));
                return result;
            }
        };
        // The run goes on as the job, on its own task; it records its end in the job itself.
        drop(tokio::spawn(run));
        let notice = format!(
            "Still running after {} s, so it goes on as a background job; this reply shows its output so \
             far, later output comes through process poll/log, and its full output is kept for the end.",
            after.as_secs_f64()
        );
        R::running(&job, summary.text, notice, timeout)
    }

    fn session_pid(&self) -> Option<u32> {
        self.runner.session_pid()
    }

    /// Run the command into `shared`'s window; shape the result. When the run was handed over to a
    /// job meanwhile, record the end in that job (through `jobs`).
    async fn execute(self, shared: SharedState, cancel: CancellationToken, jobs: Option<JobRegistry>) -> R {
        let Self {
            runner,
            state_file,
            head,
            head_stops,
            head_grace,
            mut live,
            cwd: _,
            timeout,
            command: _,
            redactions,
            shape,
        } = self;
        let limited = LineLimit::new(Tee::new(SharedSink(Arc::clone(&shared)), live.as_mut()), head)
            .with_grace(head_grace)
            .stopping(head_stops);
        // Secrets are replaced before anything downstream — window, artifact, live view — sees them.
        let mut sink = Redact::new(limited, redactions.iter().map(|(n, v)| (n.as_str(), v.as_str())));
        let outcome = runner.run(&mut sink, cancel, timeout).await;
        drop(state_file);
        sink.finish();
        let stream = head.map(|_| (sink.inner().total_lines(), sink.inner().total_bytes()));
        let mut state = lock(&shared);
        state.finished = true;
        let job = state.job.take();
        let (exit_code, signal, status) = (outcome.exit_code, outcome.signal.clone(), outcome.status);
        let result = shape(outcome, &state.window, stream);
        drop(state);
        if let (Some(job), Some(jobs)) = (job, jobs) {
            if status == RunStatus::TimedOut {
                job.state().timed_out = true;
            }
            jobs.finish_detached(&job, exit_code, signal, result.end_notices());
        }
        result
    }
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
