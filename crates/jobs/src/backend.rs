//! The processes behind jobs: pipe jobs through the executor's job handles, PTY jobs through the pty
//! crate's interactive process. Both feed the job's output and record its end.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{ExecOutcome, LaunchSpec, PipeExecutor, RunStatus, Signal, StdinMode};
use shellgate_pty::{PtyOptions, PtyOutput, PtyProcess, TermSize};
use shellgate_sink::{Flow, LineLimit, Redact, Sink};
use tokio::sync::broadcast;

use super::JobIo;
use super::job::{Job, JobExit};

/// Feeds a pipe job's output into the job.
struct JobOutputSink(Arc<Job>);

impl Sink for JobOutputSink {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.0.push_output(chunk);
        Flow::Continue
    }
}

/// A job's sink: its output with secrets redacted, behind the head limit of a lifted `| head` (the
/// same [`LineLimit`] as a foreground run), with the whole stream's counts kept in the job for its
/// final result.
struct JobSink {
    limited: Redact<LineLimit<JobOutputSink>>,
    counted: bool,
}

impl Sink for JobSink {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        let flow = self.limited.write(chunk);
        if self.counted {
            let limit = self.limited.inner();
            limit.inner().0.state().stream = Some((limit.total_lines(), limit.total_bytes()));
        }
        flow
    }

    fn finish(&mut self) {
        self.limited.finish();
    }
}

/// What shapes a job's output on its way in: the head limit of a lifted `| head` (keep the first
/// `lines`, counting the rest for `grace`) and the secret values to redact.
#[derive(Debug, Clone, Default)]
pub struct OutputPlan {
    /// Lines to keep (`None`: all).
    pub lines: Option<u64>,
    /// How long the output is still read after the lines are in, counting the rest.
    pub grace: Duration,
    /// Secret values (name, value) replaced by `[REDACTED:NAME]`.
    pub redactions: Arc<Vec<(String, String)>>,
}

/// How long to keep reading a PTY after its program exited.
#[derive(Debug, Clone, Copy)]
pub struct Drain {
    pub idle: Duration,
    pub max: Duration,
}

/// Start `spec` with pipes for `job`; a task records the end.
pub fn start_pipe(
    job: &Arc<Job>,
    mut spec: LaunchSpec,
    executor: &PipeExecutor,
    head: &OutputPlan,
    exits: broadcast::Sender<JobExit>,
) -> Result<(), String> {
    spec.stdin = StdinMode::Piped;
    spec.pty = false;
    let sink = JobSink {
        limited: Redact::new(
            LineLimit::new(JobOutputSink(Arc::clone(job)), head.lines).with_grace(head.grace),
            head.redactions.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        ),
        counted: head.lines.is_some(),
    };
    let mut running = executor.spawn(spec, sink).map_err(|e| e.to_string())?;
    let stdin = running.take_stdin();
    let stdin_link = stdin
        .as_ref()
        .and_then(|s| shellgate_executor::tree::own_fd_link(s.as_raw_fd()));
    let handle = running.handle();
    job.attach(JobIo::Pipe {
        handle: handle.clone(),
        stdin: tokio::sync::Mutex::new(stdin),
        stdin_link,
    });
    let job = Arc::clone(job);
    tokio::spawn(async move {
        let outcome = handle.wait().await;
        let extra = job.end_notices().await;
        finish_with_outcome(&job, &outcome, &exits, extra);
    });
    Ok(())
}

fn finish_with_outcome(
    job: &Job,
    outcome: &ExecOutcome,
    exits: &broadcast::Sender<JobExit>,
    extra: Vec<String>,
) {
    let mut notices = outcome.notices.clone();
    if let Some(e) = &outcome.error {
        notices.push(e.clone());
    }
    notices.extend(extra);
    {
        let mut st = job.state();
        st.timed_out = outcome.status == RunStatus::TimedOut;
        st.output_stopped = outcome.output_stopped;
        st.pipeline_status.clone_from(&outcome.pipeline_status);
        st.pipefail = outcome.pipefail;
    }
    if let Some(event) = job.finish(outcome.exit_code, outcome.signal.clone(), notices) {
        let _ = exits.send(event);
    }
}

/// Start `spec` under a pseudo-terminal for `job`; a task feeds output, enforces the timeout and
/// records the end.
pub fn start_pty(
    job: &Arc<Job>,
    spec: &LaunchSpec,
    size: TermSize,
    kill_grace: Duration,
    drain: Drain,
    redactions: Arc<Vec<(String, String)>>,
    exits: broadcast::Sender<JobExit>,
) -> Result<(), String> {
    let options = PtyOptions {
        size,
        ..PtyOptions::default()
    };
    let mut process = PtyProcess::spawn(spec, &options).map_err(|e| e.to_string())?;
    let output = process
        .take_output()
        .ok_or_else(|| "the terminal's output stream is not available".to_owned())?;
    let process = Arc::new(process);
    job.attach(JobIo::Pty(Arc::clone(&process)));
    tokio::spawn(drive_pty(
        Arc::clone(job),
        process,
        output,
        (kill_grace, spec.remote_stop.clone()),
        drain,
        redactions,
        exits,
    ));
    Ok(())
}

async fn drive_pty(
    job: Arc<Job>,
    process: Arc<PtyProcess>,
    mut output: PtyOutput,
    (kill_grace, remote_stop): (Duration, Option<Box<LaunchSpec>>),
    drain: Drain,
    redactions: Arc<Vec<(String, String)>>,
    exits: broadcast::Sender<JobExit>,
) {
    let mut sink = Redact::new(
        JobOutputSink(Arc::clone(&job)),
        redactions.iter().map(|(n, v)| (n.as_str(), v.as_str())),
    );
    let deadline = job
        .timeout
        .map(|t| tokio::time::Instant::from_std(job.started + t));
    let mut timeout_fired = false;
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut closed = false;
    let exit = loop {
        tokio::select! {
            chunk = output.recv(), if !closed => match chunk {
                Some(bytes) => {
                    let _ = sink.write(&bytes);
                }
                None => closed = true,
            },
            info = process.wait() => break info,
            () = sleep_until_opt(deadline), if !timeout_fired && deadline.is_some() => {
                timeout_fired = true;
                job.state().timed_out = true;
                process.kill(Signal::SIGTERM);
                kill_at = Some(tokio::time::Instant::now() + kill_grace);
            }
            () = sleep_until_opt(kill_at), if kill_at.is_some() => {
                kill_at = None;
                process.kill(Signal::SIGKILL);
            }
        }
    };
    // What the program wrote before it exited is still delivered, within a bound.
    let drain_end = tokio::time::Instant::now() + drain.max;
    while !closed {
        let idle_end = (tokio::time::Instant::now() + drain.idle).min(drain_end);
        tokio::select! {
            chunk = output.recv() => match chunk {
                Some(bytes) => {
                    let _ = sink.write(&bytes);
                }
                None => closed = true,
            },
            () = tokio::time::sleep_until(idle_end) => break,
        }
    }
    sink.finish();
    // On another host the terminal holds only the client: a job stopped early (timed out or
    // killed) leaves what it started there to the host's own stop.
    if let Some(stop) = remote_stop.filter(|_| timeout_fired || exit.signal.is_some()) {
        shellgate_executor::run_remote_stop(&stop).await;
    }
    let mut notices = Vec::new();
    if process.session_alive() {
        process.kill(Signal::SIGKILL);
        notices.push("Processes left in the job's terminal session were stopped.".to_owned());
    }
    notices.extend(job.end_notices().await);
    if let Some(event) = job.finish(exit.code, exit.signal_name(), notices) {
        let _ = exits.send(event);
    }
}

/// Sleep until `at`, or forever without one (a `select!` arm that never fires).
pub async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
