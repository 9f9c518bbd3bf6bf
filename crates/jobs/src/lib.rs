//! shellgate-jobs: background jobs (SPEC J-1…J-7) — a registry of running and finished commands
//! whose output, input and lifetime a caller controls, without the rest of the engine.
//!
//! ```
//! use shellgate_executor::{LaunchSpec, StdinMode};
//! use shellgate_jobs::{JobConfig, JobRegistry, OutputPlan, Settled};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let jobs = JobRegistry::new(JobConfig::default());
//! let mut spec = LaunchSpec::new("sh", ["-c", "echo ready; read x; echo got $x"], ".");
//! spec.stdin = StdinMode::Piped;
//! let job = jobs.start(&spec, "echo ready", true, false, &OutputPlan::default(), &mut Vec::new()).unwrap();
//! job.write_input(b"hi\n", false, std::time::Duration::from_secs(5)).await.unwrap();
//! let mut seen = String::new();
//! while !seen.contains("got hi") {
//!     seen.push_str(&job.poll(jobs.config(), None, Some(5_000)).await.text);
//! }
//! jobs.shutdown().await;
//! # });
//! ```
//!
//! A job is started in the background (returns at once) or from a call that waits for it a while
//! ([`JobRegistry::start_call`], [`Foreground`]: a foreground run handed over after its
//! auto-yield time). Each job has its own process tree (own process group, found again through the
//! engine's subreaper and a run marker), its stdin kept open as a pipe (or a terminal), and its
//! merged output in a `JobOutput`: a bounded ring of recent bytes addressed by stream position, a
//! head/tail window, and a spill file holding the whole stream once the ring overflows — so a poll
//! cursor or a `log` range is always answered exactly, and anything no longer available is
//! disclosed with its exact range. A poll after input waits by the settle rule ([`Settled`]).
//!
//! Exit delivery rule (J-6): a backgrounded job's exit is delivered exactly once. If, when the job ends,
//! a `poll`/`kill`/`remove` call is waiting on it, that call's response carries the exit and no
//! notification is sent; otherwise a [`JobExit`] event is sent at once to [`JobRegistry::subscribe`]
//! listeners (the RPC server turns it into a `job_exited` notification). Later polls still report the
//! final status (idempotently) but never cause a second notification.
//!
//! What a job needs from elsewhere comes in through small seams: an end hook
//! ([`Job::on_end`]) that runs before its end is published and may attach its own account of the
//! run (a sandbox's denials), a [`Runner`] and a [`RunResult`] for foreground runs.

mod backend;
mod control;
mod executors;
mod foreground;
mod input_wait;
mod io;
mod io_counts;
mod job;
mod output;
mod pending_input;
mod process;
mod registry;
mod runners;
mod settle;
mod slug;
mod start;
mod text;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use shellgate_sink::{ArtifactStore, WindowConfig};

pub use backend::OutputPlan;
pub use backend::sleep_until_opt;
pub use control::{LogPage, PollRead, parse_signal};
pub use executors::Executors;
pub use foreground::{Foreground, RunFuture, RunResult, Runner, Shape};
pub use io::JobIo;
pub use io_counts::TreeIo;
pub use job::{EndHook, Job, JobExit, JobInfo, JobState, JobStatus};
pub use pending_input::PendingInput;
pub use process::{JobActions, NoAttachment, ProcessAction, ProcessParams, ProcessResult, SessionSummary};
pub use registry::JobRegistry;
pub use registry::wait_until_ended;
pub use runners::{ProcessRun, SessionRun};
pub use settle::{QUIET_FACTOR, Settled, note_input, wait as settle_wait};
pub use slug::new_job_id;
pub use start::{JobRequest, Started};
pub use text::collapse_tail;

/// Limits and defaults of background jobs.
#[derive(Debug, Clone)]
pub struct JobConfig {
    /// Most jobs running at once (J-7). Starting one more stops the least recently used running job
    /// outside the `protected_recent` most recently used; if all are protected, the start is refused.
    pub max_running: usize,
    /// Running jobs never stopped to make room: this many most recently used.
    pub protected_recent: usize,
    /// Most finished jobs kept; the oldest are forgotten first.
    pub max_finished: usize,
    /// Most output bytes kept in memory by finished jobs together; the oldest are forgotten first (the
    /// newest finished job is always kept).
    pub max_retained_bytes: usize,
    /// Finished jobs are forgotten this long after they ended.
    pub finished_ttl: Duration,
    /// Recent output kept in memory per job (the rest is in the spill file).
    pub ring_bytes: usize,
    /// Head/tail window of a job's final summary.
    pub window: WindowConfig,
    /// Directory for spill files (one per job, removed when the job is forgotten); `None` disables.
    /// Not used when `artifacts` is set.
    pub spill_dir: Option<PathBuf>,
    /// Most bytes of one job's output kept on disk; beyond it only the ring is kept (with a notice).
    pub max_spill_bytes: u64,
    /// Keep each job's whole output, once it outgrows the ring, as an artifact of this store
    /// (`artifact://<n>`, readable by the `artifact` action) instead of a private spill file. A
    /// `BashTool` uses its own `ToolConfig::artifacts` when this is `None`.
    pub artifacts: Option<Arc<ArtifactStore>>,
    /// After a job's shell exits, stop reading once no output arrived for this long.
    pub drain_idle: Duration,
    /// After a job's shell exits, stop reading after this long in any case.
    pub drain_max: Duration,
    /// Smallest `yield_ms`.
    pub min_yield: Duration,
    /// Largest `yield_ms`.
    pub max_yield: Duration,
    /// Largest `wait_ms` of a poll.
    pub max_poll_wait: Duration,
    /// A waiting poll (or input action) that saw new output returns once a line ended or no new byte
    /// came for this long (at most ten times this after the first new byte); zero returns at the
    /// first byte. After input the wait is for the program's answer instead (the settle rule of
    /// [`Settled`]), where ten times this without output ends the wait when the
    /// kernel cannot tell whether the program waits for input.
    pub poll_settle: Duration,
    /// Most output bytes one poll returns (the newest part when more is pending).
    pub poll_max_bytes: usize,
    /// Lines `log` returns when neither `offset` nor `limit` is given.
    pub log_default_lines: u64,
    /// How long a `write` may wait for the job to read its input.
    pub write_timeout: Duration,
    /// Grace between the signals of a graceful `kill` (SIGINT → SIGTERM → SIGKILL).
    pub kill_grace: Duration,
    /// Grace between SIGTERM and SIGKILL when the engine shuts down.
    pub shutdown_grace: Duration,
}

impl Default for JobConfig {
    fn default() -> Self {
        Self {
            max_running: 64,
            protected_recent: 8,
            max_finished: 50,
            max_retained_bytes: 64 * 1024 * 1024,
            finished_ttl: Duration::from_secs(30 * 60),
            ring_bytes: 512 * 1024,
            window: WindowConfig::default(),
            spill_dir: Some(std::env::temp_dir().join(format!("shellgate-jobs-{}", std::process::id()))),
            max_spill_bytes: 1024 * 1024 * 1024,
            artifacts: None,
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_secs(2),
            min_yield: Duration::from_millis(10),
            max_yield: Duration::from_secs(120),
            max_poll_wait: Duration::from_secs(120),
            poll_settle: Duration::from_millis(25),
            poll_max_bytes: 64 * 1024,
            log_default_lines: 200,
            write_timeout: Duration::from_secs(5),
            kill_grace: Duration::from_secs(2),
            shutdown_grace: Duration::from_secs(1),
        }
    }
}
