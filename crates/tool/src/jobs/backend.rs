//! The processes behind jobs: pipe jobs through the executor's job handles, PTY jobs through the pty
//! crate's interactive process. Both feed the job's output and record its end.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use shellgate_executor::{
    ExecOutcome, LaunchSpec, PipeExecutor, ProcessHandle, RunStatus, Signal, StdinMode,
};
use shellgate_pty::{KeySpec, PtyOptions, PtyOutput, PtyProcess, ScreenSnapshot, TermSize};
use shellgate_sink::{Flow, LineLimit, Redact, Sink};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::broadcast;

use super::job::{Job, JobExit};

/// The running process of a job.
pub(crate) enum JobIo {
    /// Pipes: stdin stays open for `write`; stdout and stderr merged.
    Pipe {
        handle: ProcessHandle,
        stdin: tokio::sync::Mutex<Option<ChildStdin>>,
        /// `/proc` link text of the stdin pipe (`pipe:[N]`), to recognise a blocked read of it.
        stdin_link: Option<String>,
    },
    /// A pseudo-terminal.
    Pty(Arc<PtyProcess>),
    /// A foreground run that outlived the auto-yield and went on as a job (SPEC J-1): its process is
    /// owned by the run's task; stopping it cancels the run, which stops the whole tree. Its stdin is
    /// `/dev/null`.
    Detached {
        /// Cancels the run.
        cancel: tokio_util::sync::CancellationToken,
        /// Process id of its shell, when known.
        pid: Option<u32>,
    },
}

impl std::fmt::Debug for JobIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pipe { handle, .. } => f.debug_tuple("Pipe").field(&handle.pid()).finish(),
            Self::Pty(p) => f.debug_tuple("Pty").field(&p.pid()).finish(),
            Self::Detached { pid, .. } => f.debug_tuple("Detached").field(pid).finish(),
        }
    }
}

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
pub(crate) struct OutputPlan {
    pub lines: Option<u64>,
    pub grace: Duration,
    pub redactions: Arc<Vec<(String, String)>>,
}

/// How long to keep reading a PTY after its program exited.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Drain {
    pub idle: Duration,
    pub max: Duration,
}

/// Start `spec` with pipes for `job`; a task records the end.
pub(crate) fn start_pipe(
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
        finish_with_outcome(&job, &outcome, &exits);
    });
    Ok(())
}

fn finish_with_outcome(job: &Job, outcome: &ExecOutcome, exits: &broadcast::Sender<JobExit>) {
    let mut notices = outcome.notices.clone();
    if let Some(e) = &outcome.error {
        notices.push(e.clone());
    }
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
pub(crate) fn start_pty(
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
        kill_grace,
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
    kill_grace: Duration,
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
    let mut notices = Vec::new();
    if process.session_alive() {
        process.kill(Signal::SIGKILL);
        notices.push("Processes left in the job's terminal session were stopped.".to_owned());
    }
    if let Some(event) = job.finish(exit.code, exit.signal_name(), notices) {
        let _ = exits.send(event);
    }
}

pub(crate) async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl JobIo {
    /// Process id of the job's leader, when known.
    pub fn pid(&self) -> Option<u32> {
        match self {
            Self::Pipe { handle, .. } => Some(handle.pid()),
            Self::Pty(p) => Some(p.pid()),
            Self::Detached { pid, .. } => *pid,
        }
    }

    /// Send `signal` to the whole tree; returns whether anything received it.
    pub fn signal(&self, signal: Signal) -> bool {
        match self {
            Self::Pipe { handle, .. } => handle.signal(signal).is_ok(),
            Self::Pty(p) => p.kill(signal),
            // Its tree is the run's: any stopping signal stops the run, as a timeout would.
            Self::Detached { cancel, .. } => {
                cancel.cancel();
                true
            }
        }
    }

    /// SIGTERM the whole tree now (for pipes the executor follows with SIGKILL after the grace).
    pub fn terminate(&self) {
        match self {
            Self::Pipe { handle, .. } => handle.cancel(),
            Self::Pty(p) => {
                p.kill(Signal::SIGTERM);
            }
            Self::Detached { cancel, .. } => cancel.cancel(),
        }
    }

    /// SIGKILL everything left of the tree. Blocks briefly (re-scans `/proc`); call off the runtime.
    pub fn kill_now(&self) {
        match self {
            Self::Pipe { handle, .. } => {
                handle.cancel();
                handle.tree().kill_all();
            }
            Self::Pty(p) => {
                p.kill(Signal::SIGKILL);
            }
            Self::Detached { cancel, .. } => cancel.cancel(),
        }
    }

    /// Drop our end of a pipe stdin (the process has ended).
    pub fn close_input(&self) {
        if let Self::Pipe { stdin, .. } = self
            && let Ok(mut guard) = stdin.try_lock()
        {
            *guard = None;
        }
    }

    /// Write raw bytes as input; `eof` closes a pipe's stdin afterwards, or sends ^D to a terminal.
    pub async fn write(&self, data: &[u8], eof: bool, limit: Duration) -> Result<usize, String> {
        match self {
            Self::Pipe { stdin, .. } => {
                let mut guard = stdin.lock().await;
                let Some(pipe) = guard.as_mut() else {
                    return Err("stdin is closed".to_owned());
                };
                let written = tokio::time::timeout(limit, async {
                    pipe.write_all(data).await?;
                    pipe.flush().await
                })
                .await;
                match written {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        *guard = None;
                        return Err(format!("stdin is not writable: {e}"));
                    }
                    Err(_) => {
                        return Err(format!(
                            "the job did not read its input: writing {} bytes did not finish within {} s",
                            data.len(),
                            limit.as_secs()
                        ));
                    }
                }
                if eof {
                    *guard = None;
                }
                Ok(data.len())
            }
            Self::Detached { .. } => {
                Err("it was started in the foreground, so its stdin is /dev/null".to_owned())
            }
            Self::Pty(p) => {
                let mut bytes = data.to_vec();
                if eof {
                    bytes.push(0x04);
                }
                let p = Arc::clone(p);
                tokio::task::spawn_blocking(move || p.write(&bytes).map(|()| bytes.len()))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())
            }
        }
    }

    /// Terminal only: encode keys for the terminal's current modes and send them.
    pub async fn send_keys(&self, keys: Vec<KeySpec>) -> Option<Result<usize, String>> {
        let Self::Pty(p) = self else { return None };
        let p = Arc::clone(p);
        Some(
            tokio::task::spawn_blocking(move || p.send_keys(&keys).map_err(|e| e.to_string()))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r),
        )
    }

    /// Terminal only: paste text (bracketed when the program enabled bracketed paste).
    pub async fn paste(&self, text: String) -> Option<Result<usize, String>> {
        let Self::Pty(p) = self else { return None };
        let p = Arc::clone(p);
        Some(
            tokio::task::spawn_blocking(move || p.paste(&text).map_err(|e| e.to_string()))
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r),
        )
    }

    /// Terminal only: what the screen shows.
    pub fn screen(&self) -> Option<ScreenSnapshot> {
        match self {
            Self::Pty(p) => p.screen(),
            Self::Pipe { .. } | Self::Detached { .. } => None,
        }
    }

    /// Terminal only: resize.
    pub fn resize(&self, cols: u16, rows: u16) -> Option<Result<TermSize, String>> {
        match self {
            Self::Pty(p) => Some(p.resize(cols, rows).map_err(|e| e.to_string())),
            Self::Pipe { .. } | Self::Detached { .. } => None,
        }
    }

    /// Whether the job is blocked reading its input (its terminal, or its stdin pipe while open).
    pub fn waiting_for_input(&self) -> Option<bool> {
        match self {
            Self::Pty(p) => p.waiting_for_input(),
            Self::Detached { .. } => Some(false),
            Self::Pipe {
                handle,
                stdin,
                stdin_link,
            } => {
                // A closed stdin cannot be waited on by anyone.
                let open = stdin.try_lock().map_or(true, |s| s.is_some());
                if !open {
                    return Some(false);
                }
                let link = stdin_link.as_deref()?;
                super::input_wait::reading_pipe(handle.tree().members().into_iter().map(|p| p.pid), link)
            }
        }
    }
}
