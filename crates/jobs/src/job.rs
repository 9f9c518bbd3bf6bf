//! One background job: its identity, its process handles and its shared, lock-protected state.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::JobIo;
use super::output::JobOutput;
use super::text::collapse_tail;

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Still running.
    Running,
    /// Exited by itself (whatever its exit code or signal).
    Completed,
    /// Stopped at its own timeout.
    TimedOut,
    /// Stopped by `kill`, `remove`, pruning or engine shutdown.
    Killed,
}

impl JobStatus {
    /// `running`, `completed`, `timed_out` or `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::TimedOut => "timed_out",
            Self::Killed => "killed",
        }
    }
}

/// The exit event of a backgrounded job (SPEC J-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobExit {
    /// The job.
    pub job_id: String,
    /// How it ended.
    pub status: JobStatus,
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal name, when killed by one.
    pub signal: Option<String>,
    /// `Job <id> completed|failed (code N|signal S) :: <last output, collapsed, ≤ 200 chars>`.
    pub message: String,
}

/// A row of `process list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JobInfo {
    /// The job id.
    pub job_id: String,
    /// Where it is in its life.
    pub status: JobStatus,
    /// Process id of the job's shell.
    pub pid: Option<u32>,
    /// Milliseconds from start to exit (or to now, while running).
    pub runtime_ms: u64,
    /// Start time, milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// The command as given.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// Exit code, once it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, once killed by one.
    pub signal: Option<String>,
    /// Whether it runs under a pseudo-terminal.
    pub pty: bool,
}

/// Mutable state of a job, behind [`Job::state`].
#[derive(Debug)]
pub struct JobState {
    /// Its output: recent bytes, the head/tail window, the spill.
    pub output: JobOutput,
    /// Running, or how it ended.
    pub status: JobStatus,
    /// Its exit code, once ended normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGKILL`), if one did.
    pub signal: Option<String>,
    /// When it ended.
    pub ended: Option<Instant>,
    /// Position up to which `poll` has delivered output.
    pub cursor: u64,
    /// Visible to `process` and notified on exit (false while a `yield_ms` run is still foreground).
    pub backgrounded: bool,
    /// Set when the engine decided to stop the job (kill, remove, pruning, shutdown).
    pub kill_requested: bool,
    /// Set when the job's own timeout fired.
    pub timed_out: bool,
    /// Calls currently waiting on this job that will report its exit to their caller.
    pub waiters: u32,
    /// Whether the exit has been delivered (by a response or a notification); it is delivered once.
    pub exit_claimed: bool,
    /// When a call last touched it (retention keeps the recently used).
    pub last_used: Instant,
    /// Notices for its final result.
    pub notices: Vec<String>,
    /// Consecutive polls that found no new output (for the `retry_in_ms` hint).
    pub empty_polls: u32,
    /// Input sent that the program has not answered yet (the next poll waits for its answer).
    pub pending_input: Option<super::PendingInput>,
    /// Lines and bytes of the command's whole stream, when a `head` limit keeps only part of it in
    /// `output`.
    pub stream: Option<(u64, u64)>,
    /// The head limit closed the output before the stream ended: `stream` is a lower bound.
    pub output_stopped: bool,
    /// The command's outcome as the executor reported it (pipe jobs), for the final result.
    pub pipeline_status: Vec<i32>,
    /// `pipefail` was on when its last pipeline ended.
    pub pipefail: bool,
    /// What the end hook's owner attached to the job when it ended (a sandbox's account of the
    /// run, say), for the final result; the job only carries it.
    pub attachment: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

/// Work that must be done when a job's process has ended, before its end is published; returns
/// notices for the job's final result (it may block briefly: it runs off the async threads).
pub type EndHook = Box<dyn FnOnce() -> Vec<String> + Send>;

/// A background job.
pub struct Job {
    /// Its id (a readable slug).
    pub id: String,
    /// The command as given.
    pub command: String,
    /// The directory it runs in.
    pub cwd: String,
    /// Whether it runs under a terminal.
    pub pty: bool,
    /// When it started (wall clock).
    pub started_at: SystemTime,
    /// When it started (monotonic).
    pub started: Instant,
    /// Its own timeout, if any.
    pub timeout: Option<Duration>,
    /// The running process, attached right after it started.
    io: OnceLock<JobIo>,
    state: Mutex<JobState>,
    changed: watch::Sender<u64>,
    end_hook: Mutex<Option<EndHook>>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("id", &self.id)
            .field("command", &self.command)
            .field("cwd", &self.cwd)
            .field("pty", &self.pty)
            .finish_non_exhaustive()
    }
}

impl Job {
    /// Run `hook` when the process has ended, before the end is published (once; a later hook
    /// replaces an earlier one).
    pub fn on_end(&self, hook: EndHook) {
        *self.end_hook.lock().unwrap_or_else(PoisonError::into_inner) = Some(hook);
    }

    /// Run the end hook, if any, and return its notices.
    pub async fn end_notices(&self) -> Vec<String> {
        let hook = self
            .end_hook
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match hook {
            Some(hook) => tokio::task::spawn_blocking(hook).await.unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// A running job `id` of `command` in `cwd`, capturing into `output`; `backgrounded` when it
    /// was started in the background (not a foreground run that may become a job).
    pub fn new(
        id: String,
        command: String,
        cwd: String,
        pty: bool,
        output: JobOutput,
        backgrounded: bool,
        timeout: Option<Duration>,
    ) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Self {
            id,
            command,
            cwd,
            pty,
            started_at: SystemTime::now(),
            started: now,
            timeout,
            io: OnceLock::new(),
            state: Mutex::new(JobState {
                output,
                status: JobStatus::Running,
                exit_code: None,
                signal: None,
                ended: None,
                cursor: 0,
                backgrounded,
                kill_requested: false,
                timed_out: false,
                waiters: 0,
                exit_claimed: false,
                last_used: now,
                notices: Vec::new(),
                empty_polls: 0,
                pending_input: None,
                stream: None,
                output_stopped: false,
                pipeline_status: Vec::new(),
                pipefail: false,
                attachment: None,
            }),
            changed: watch::channel(0).0,
            end_hook: Mutex::new(None),
        })
    }

    /// Attach the started process (once).
    pub fn attach(&self, io: JobIo) {
        let _ = self.io.set(io);
    }

    /// The started process, once attached.
    pub fn io(&self) -> Option<&JobIo> {
        self.io.get()
    }

    /// Process id of the job's leader.
    pub fn pid(&self) -> Option<u32> {
        self.io().and_then(JobIo::pid)
    }

    /// The state, even if a holder panicked (the state stays consistent field by field).
    pub fn state(&self) -> MutexGuard<'_, JobState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wake everyone waiting for news of this job.
    pub fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// A receiver that wakes on the next change after this call.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Append output and wake waiters.
    pub fn push_output(&self, chunk: &[u8]) {
        self.state().output.push(chunk);
        self.bump();
    }

    /// Whether it still runs.
    pub fn is_running(&self) -> bool {
        self.state().status == JobStatus::Running
    }

    /// Record the end of the job; returns the exit event when it must be sent as a notification.
    pub fn finish(
        &self,
        exit_code: Option<i32>,
        signal: Option<String>,
        notices: Vec<String>,
    ) -> Option<JobExit> {
        let event = {
            let mut st = self.state();
            st.output.finish();
            st.status = if st.kill_requested {
                JobStatus::Killed
            } else if st.timed_out {
                JobStatus::TimedOut
            } else {
                JobStatus::Completed
            };
            st.exit_code = exit_code;
            st.signal = signal;
            st.ended = Some(Instant::now());
            st.notices.extend(notices);
            // Delivered once: a caller already waiting for this job reports the exit in its response;
            // otherwise a backgrounded job's exit goes out as a notification now.
            let notify = st.backgrounded && st.waiters == 0 && !st.exit_claimed;
            if notify {
                st.exit_claimed = true;
            }
            notify.then(|| self.exit_event(&st))
        };
        if let Some(io) = self.io() {
            io.close_input();
        }
        self.bump();
        event
    }

    /// The exit event of the job in state `st`.
    pub fn exit_event(&self, st: &JobState) -> JobExit {
        let failed = st.status != JobStatus::Completed || st.exit_code != Some(0);
        let label = match (&st.signal, st.exit_code) {
            (Some(sig), _) => format!("signal {sig}"),
            (None, Some(code)) => format!("code {code}"),
            (None, None) => "unknown exit code".to_owned(),
        };
        let label = match st.status {
            JobStatus::TimedOut => format!(
                "timed out after {} s, {label}",
                self.timeout.map_or(0, |t| t.as_secs())
            ),
            JobStatus::Killed => format!("killed, {label}"),
            _ => label,
        };
        let tail = collapse_tail(&st.output.tail_text(2048), 200);
        let mut message = format!(
            "Job {} {} ({label})",
            self.id,
            if failed { "failed" } else { "completed" }
        );
        if !tail.is_empty() {
            message.push_str(" :: ");
            message.push_str(&tail);
        }
        JobExit {
            job_id: self.id.clone(),
            status: st.status,
            exit_code: st.exit_code,
            signal: st.signal.clone(),
            message,
        }
    }

    /// What `list` shows of it.
    pub fn info(&self) -> JobInfo {
        let st = self.state();
        let end = st.ended.unwrap_or_else(Instant::now);
        JobInfo {
            job_id: self.id.clone(),
            status: st.status,
            pid: self.pid(),
            runtime_ms: end.duration_since(self.started).as_millis() as u64,
            started_at_ms: self
                .started_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            exit_code: st.exit_code,
            signal: st.signal.clone(),
            pty: self.pty,
        }
    }
}
