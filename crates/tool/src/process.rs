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

use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use shellgate_executor::{SessionInfo, SessionManager};
use shellgate_pty::KeySpec;

use crate::jobs::{Job, JobInfo, JobIo, JobRegistry, JobStatus, wait_until_ended};

/// What the `process` tool should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessAction {
    /// Jobs with id, status, pid, runtime and command, newest first.
    #[default]
    List,
    /// Output since the last poll (or `since`), waiting up to `wait_ms` for news.
    Poll,
    /// Lines by `offset`/`limit` (default: the last 200).
    Log,
    /// Write `data` to the job's stdin; `eof` closes it afterwards.
    Write,
    /// Send `keys` (named keys, `C-x`, `^X`), `hex` bytes and `literal` text.
    #[serde(alias = "send-keys")]
    SendKeys,
    /// Press Enter (after typing `data`, when given).
    Submit,
    /// Paste `text` (bracketed paste on a terminal).
    Paste,
    /// Stop the job's whole process tree: SIGINT, then SIGTERM, then SIGKILL; or send `signal`.
    Kill,
    /// Kill if running, then forget the job.
    Remove,
    /// Forget finished jobs (`job_id`, or all of them).
    Clear,
    /// The rendered terminal screen of a PTY job.
    Screen,
    /// Resize a PTY job's terminal to `cols`×`rows`.
    Resize,
    /// The persistent shell sessions.
    Sessions,
    /// Close the persistent shell session named `session`.
    CloseSession,
}

/// What an agent sends to the `process` tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessParams {
    /// The action.
    pub action: ProcessAction,
    /// The job (every action but `list` and `clear`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// `poll`: read from this stream position instead of the last poll's cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// `poll`: wait up to this many milliseconds (≤ 120000) for new output or the exit. `write`,
    /// `send_keys`, `submit`, `paste`: after sending, wait the same way and return the new output too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// `log`: first line, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// `log`: number of lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// `write`: text to send. `submit`: text to type before Enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// `write`: close stdin after writing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eof: bool,
    /// `send_keys`: key names (`enter`, `tab`, `C-c`, `^D`, …) or single characters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// `send_keys`: raw bytes as hex (`"1b5b41"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hex: Vec<String>,
    /// `send_keys`: literal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
    /// `paste`: the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `paste`: wrap in bracketed-paste markers (default: on for terminals, off for pipes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracketed: Option<bool>,
    /// `kill`: send this signal (`SIGTERM`, `TERM`, `15`) instead of the graceful sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// `resize`: columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// `resize`: rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// `close_session`: the session's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl ProcessParams {
    /// Parameters for `action` on `job_id`, everything else at its default.
    pub fn new(action: ProcessAction, job_id: impl Into<String>) -> Self {
        Self {
            action,
            job_id: Some(job_id.into()),
            ..Self::default()
        }
    }
}

/// The answer of the `process` tool. Failures (unknown job, closed stdin) are results with `is_error`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessResult {
    /// The action that ran.
    pub action: ProcessAction,
    /// Whether the action failed.
    pub is_error: bool,
    /// One-line summary of what happened (`Wrote 6 bytes to job calm-reef.`).
    pub message: String,
    /// The job acted on.
    pub job_id: Option<String>,
    /// The job's status after the action.
    pub status: Option<JobStatus>,
    /// Process id of the job's shell.
    pub pid: Option<u32>,
    /// Exit code, once it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, once killed by one.
    pub signal: Option<String>,
    /// `poll`: the new output; `log`: the lines; `screen`: the screen (clean text).
    pub output: Option<String>,
    /// `poll`: stream position to poll from next (also kept by the job as its cursor).
    pub cursor: Option<u64>,
    /// Whether the job is blocked waiting for input, where that is known.
    pub waiting_for_input: Option<bool>,
    /// `log`: index of the first line returned (0-based).
    pub first_line: Option<u64>,
    /// `log`/`poll`: lines in the job's whole output so far.
    pub total_lines: Option<u64>,
    /// `list`: the jobs, newest first.
    pub jobs: Option<Vec<JobInfo>>,
    /// `sessions`: the persistent shell sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<Vec<SessionSummary>>,
    /// `poll` of a running job: a suggested pause before polling again (5 s, then 10, 30 and 60 s after
    /// consecutive polls without new output; back to 5 s when output appears).
    pub retry_in_ms: Option<u64>,
    /// Where the job's whole output is kept once it outgrew memory (`artifact://<n>` or a file).
    pub artifact: Option<String>,
    /// Things the caller should know (skipped output, leftover processes stopped, retention).
    pub notices: Vec<String>,
}

impl ProcessResult {
    fn error(action: ProcessAction, job_id: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            action,
            is_error: true,
            message: message.into(),
            job_id: job_id.map(str::to_owned),
            ..Self::default()
        }
    }

    /// The text shown to the model.
    pub fn model_text(&self) -> String {
        let mut text = String::new();
        match self.action {
            ProcessAction::List => {
                for job in self.jobs.iter().flatten() {
                    let _ = writeln!(
                        text,
                        "{} {:<9} {} :: {}",
                        job.job_id,
                        job.status.as_str(),
                        compact_duration(job.runtime_ms),
                        middle_truncate(&job.command, 120)
                    );
                }
                if text.is_empty() {
                    text.push_str("No running or recent jobs.\n");
                }
            }
            ProcessAction::Sessions if !self.is_error => {
                for s in self.sessions.iter().flatten() {
                    let state = if s.busy { "busy" } else { "idle" };
                    let _ = writeln!(text, "{} {state} {} commands, cwd {}", s.name, s.commands, s.cwd);
                }
                if text.is_empty() {
                    text.push_str("No persistent sessions.\n");
                }
            }
            ProcessAction::Poll | ProcessAction::Log | ProcessAction::Screen if !self.is_error => {
                push_output(&mut text, self.action, self.status, self.output.as_deref());
            }
            // An input action that waited for the answer (`wait_ms`).
            ProcessAction::Write | ProcessAction::SendKeys | ProcessAction::Submit | ProcessAction::Paste
                if !self.is_error && self.output.is_some() =>
            {
                push_output(
                    &mut text,
                    ProcessAction::Poll,
                    self.status,
                    self.output.as_deref(),
                );
            }
            _ => {}
        }
        for notice in &self.notices {
            let _ = writeln!(text, "[{notice}]");
        }
        if let Some(artifact) = self
            .artifact
            .as_ref()
            .filter(|_| self.action == ProcessAction::Log)
        {
            let _ = writeln!(text, "[Full output: {artifact}]");
        }
        if !self.message.is_empty() {
            text.push_str(&self.message);
        }
        while text.ends_with('\n') {
            text.pop();
        }
        text
    }
}

/// One persistent shell session, as the `sessions` action reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSummary {
    /// The session's name.
    pub name: String,
    /// Its shell program.
    pub shell: String,
    /// Pid of the live shell, if one is running.
    pub pid: Option<u32>,
    /// Working directory after its last command.
    pub cwd: String,
    /// Whether a command is running in it now.
    pub busy: bool,
    /// Seconds since it was last used.
    pub idle_secs: u64,
    /// Commands run in it so far.
    pub commands: u64,
    /// How often its shell was restarted from saved state.
    pub restarts: u64,
}

impl From<SessionInfo> for SessionSummary {
    fn from(info: SessionInfo) -> Self {
        Self {
            name: info.name,
            shell: info.shell.display().to_string(),
            pid: info.pid,
            cwd: info.cwd.display().to_string(),
            busy: info.busy,
            idle_secs: info.idle_for.as_secs(),
            commands: info.commands,
            restarts: info.restarts,
        }
    }
}

/// The `process` tool over one [`JobRegistry`] (and the persistent sessions, when given).
#[derive(Debug, Clone, Default)]
pub struct ProcessTool {
    registry: JobRegistry,
    sessions: Option<SessionManager>,
}

impl ProcessTool {
    /// A tool controlling the jobs of `registry` (share it with the [`BashTool`](crate::BashTool) that
    /// starts them: `ProcessTool::new(bash.jobs().clone())`).
    pub fn new(registry: JobRegistry) -> Self {
        Self {
            registry,
            sessions: None,
        }
    }

    /// A tool over everything `bash` started: its jobs and its persistent sessions.
    pub fn for_bash(bash: &crate::BashTool) -> Self {
        Self {
            registry: bash.jobs().clone(),
            sessions: Some(bash.sessions().clone()),
        }
    }

    fn sessions_action(&self, action: ProcessAction, name: Option<&str>) -> ProcessResult {
        let Some(sessions) = &self.sessions else {
            return ProcessResult::error(action, None, "This process tool has no persistent sessions.");
        };
        if action == ProcessAction::Sessions {
            let list: Vec<SessionSummary> = sessions.list().into_iter().map(Into::into).collect();
            return ProcessResult {
                action,
                message: format!("{} session(s).", list.len()),
                sessions: Some(list),
                ..ProcessResult::default()
            };
        }
        let Some(name) = name else {
            return ProcessResult::error(action, None, "session is required for close_session.");
        };
        if sessions.close(name) {
            ProcessResult {
                action,
                message: format!("Session {name:?} closed."),
                ..ProcessResult::default()
            }
        } else {
            ProcessResult::error(action, None, format!("No session named {name:?}."))
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
                self.sessions_action(action, params.session.as_deref())
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

    /// After an input action: wait up to `wait_ms` for the job's answer, as `poll` would, and return
    /// it with the input's confirmation — one call instead of input plus poll.
    async fn answer(&self, job: &Job, sent: ProcessResult, wait_ms: u64) -> ProcessResult {
        let mut polled = self.poll(job, None, Some(wait_ms)).await;
        polled.action = sent.action;
        polled.message = format!("{} {}", sent.message, polled.message);
        polled
    }

    /// The input actions: `write`, `send_keys`, `submit`, `paste`.
    async fn input(&self, job: &Job, params: ProcessParams) -> ProcessResult {
        let action = params.action;
        match action {
            ProcessAction::Write => {
                let data = params.data.unwrap_or_default();
                self.send(job, action, data.as_bytes(), params.eof, |n| {
                    format!(
                        "Wrote {n} bytes to job {}{}.",
                        job.id,
                        if params.eof { " (stdin closed)" } else { "" }
                    )
                })
                .await
            }
            ProcessAction::SendKeys => self.send_keys(job, &params).await,
            ProcessAction::Submit => {
                // A terminal's Enter is CR; a pipe reader wants a line feed.
                let (enter, name): (&[u8], &str) = if job.pty { (b"\r", "CR") } else { (b"\n", "LF") };
                let typed = params.data.unwrap_or_default();
                let bytes = [typed.as_bytes(), enter].concat();
                self.send(job, action, &bytes, false, |_| {
                    if typed.is_empty() {
                        format!("Submitted job {} (sent {name}).", job.id)
                    } else {
                        format!("Submitted job {} ({} bytes, then {name}).", job.id, typed.len())
                    }
                })
                .await
            }
            _ => {
                self.paste(job, params.text.unwrap_or_default(), params.bracketed)
                    .await
            }
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

    async fn poll(&self, job: &Job, since: Option<u64>, wait_ms: Option<u64>) -> ProcessResult {
        let config = self.registry.config();
        let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(config.max_poll_wait);
        let deadline = tokio::time::Instant::now() + wait;
        let mut changes = job.subscribe();
        let waiting = !wait.is_zero();
        let from = {
            let mut st = job.state();
            if waiting {
                st.waiters += 1;
            }
            since.unwrap_or(st.cursor)
        };
        // Once news arrived, the answer waits for it to settle: a line ended, or no new byte for the
        // quiet period (one `print` can arrive as several writes), within a bound.
        let settle = config.poll_settle;
        let mut settle_end: Option<tokio::time::Instant> = None;
        let mut quiet_end: Option<tokio::time::Instant> = None;
        loop {
            {
                let st = job.state();
                let done = st.status != JobStatus::Running;
                // Without a wait, never touch the timer (it would round up to its next tick).
                if done || !waiting {
                    break;
                }
                if st.output.read_since(from, 1, false).end > from {
                    let now = tokio::time::Instant::now();
                    if settle.is_zero() || st.output.ends_line() {
                        break;
                    }
                    let bound = *settle_end.get_or_insert(now + settle * 10);
                    if now >= bound {
                        break;
                    }
                    quiet_end = Some((now + settle).min(bound));
                }
            }
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { break },
                () = tokio::time::sleep_until(deadline) => break,
                () = crate::jobs::sleep_until_opt(quiet_end), if quiet_end.is_some() => break,
            }
        }
        let mut st = job.state();
        if waiting {
            st.waiters -= 1;
        }
        let done = st.status != JobStatus::Running;
        let read = st.output.read_since(from, config.poll_max_bytes, done);
        st.cursor = read.end;
        let mut notices = Vec::new();
        if let Some((a, b)) = read.skipped {
            notices.push(format!(
                "Output bytes {a}..{b} are not in this poll; use action=log with offset/limit to read them"
            ));
        }
        let retry_in_ms = if done {
            None
        } else if read.text.is_empty() {
            st.empty_polls = st.empty_polls.saturating_add(1);
            Some(RETRY_STEPS_MS[(st.empty_polls as usize - 1).min(RETRY_STEPS_MS.len() - 1)])
        } else {
            st.empty_polls = 0;
            Some(RETRY_STEPS_MS[0])
        };
        let waiting_for_input = if done {
            None
        } else {
            job.io().and_then(JobIo::waiting_for_input)
        };
        if waiting_for_input == Some(true) {
            notices.push("The job is waiting for input: use write, send_keys, submit or paste.".to_owned());
        }
        let message = if done {
            // This response reports the exit, so no notification is sent for it.
            st.exit_claimed = true;
            notices.extend(st.notices.iter().cloned());
            if let Some(e) = st.output.spill_error() {
                notices.push(format!("Full output could not be saved: {e}"));
            }
            exit_sentence(st.status, st.exit_code, st.signal.as_deref())
        } else {
            "Job still running.".to_owned()
        };
        ProcessResult {
            action: ProcessAction::Poll,
            is_error: false,
            message,
            job_id: Some(job.id.clone()),
            status: Some(st.status),
            pid: job.pid(),
            exit_code: st.exit_code,
            signal: st.signal.clone(),
            output: Some(read.text),
            cursor: Some(read.end),
            waiting_for_input,
            first_line: None,
            total_lines: Some(st.output.total_lines()),
            jobs: None,
            sessions: None,
            retry_in_ms,
            artifact: st.output.artifact(),
            notices,
        }
    }

    fn log(&self, job: &Job, offset: Option<u64>, limit: Option<u64>) -> ProcessResult {
        let default_lines = self.registry.config().log_default_lines;
        let mut result = Self::status_result(job, ProcessAction::Log);
        let mut st = job.state();
        let total = st.output.total_lines();
        let (start, end) = match (offset, limit) {
            (None, None) => (total.saturating_sub(default_lines), total),
            (None, Some(limit)) => (total.saturating_sub(limit), total),
            (Some(offset), limit) => (offset, offset.saturating_add(limit.unwrap_or(u64::MAX))),
        };
        let read = st.output.lines(start, end);
        drop(st);
        if offset.is_none() && limit.is_none() && total > default_lines {
            result.notices.push(format!(
                "Showing the last {default_lines} of {total} lines; pass offset/limit to page"
            ));
        }
        result.notices.extend(read.notices);
        result.message = if read.count == 0 {
            String::new()
        } else {
            format!(
                "Lines {}-{} of {}.",
                read.first + 1,
                read.first + read.count,
                read.total_lines
            )
        };
        result.output = Some(read.text);
        result.first_line = Some(read.first);
        result.total_lines = Some(read.total_lines);
        result
    }

    async fn send(
        &self,
        job: &Job,
        action: ProcessAction,
        bytes: &[u8],
        eof: bool,
        message: impl FnOnce(usize) -> String,
    ) -> ProcessResult {
        if !job.is_running() {
            return ProcessResult::error(action, Some(&job.id), format!("Job {} is not running.", job.id));
        }
        let Some(io) = job.io() else {
            return ProcessResult::error(action, Some(&job.id), format!("Job {} has no process.", job.id));
        };
        match io.write(bytes, eof, self.registry.config().write_timeout).await {
            Ok(n) => {
                let mut result = Self::status_result(job, action);
                result.message = message(n);
                result
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
        }
    }

    async fn send_keys(&self, job: &Job, params: &ProcessParams) -> ProcessResult {
        let action = ProcessAction::SendKeys;
        if !job.is_running() {
            return ProcessResult::error(action, Some(&job.id), format!("Job {} is not running.", job.id));
        }
        if job.pty {
            let mut specs: Vec<KeySpec> = params.keys.iter().cloned().map(KeySpec::Key).collect();
            specs.extend(params.hex.iter().cloned().map(KeySpec::Hex));
            specs.extend(params.literal.iter().cloned().map(KeySpec::Text));
            if specs.is_empty() {
                return ProcessResult::error(action, Some(&job.id), "No key data provided.");
            }
            let sent = match job.io() {
                Some(io) => io.send_keys(specs).await,
                None => None,
            };
            return match sent {
                Some(Ok(n)) => {
                    let mut result = Self::status_result(job, action);
                    result.message = format!("Sent {n} bytes to job {}.", job.id);
                    result
                }
                Some(Err(e)) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
                None => {
                    ProcessResult::error(action, Some(&job.id), format!("Job {} has no terminal.", job.id))
                }
            };
        }
        match encode_pipe_keys(&params.keys, &params.hex, params.literal.as_deref()) {
            Ok(bytes) if bytes.is_empty() => {
                ProcessResult::error(action, Some(&job.id), "No key data provided.")
            }
            Ok(bytes) => {
                self.send(job, action, &bytes, false, |n| {
                    format!("Sent {n} bytes to job {}.", job.id)
                })
                .await
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), e),
        }
    }

    async fn paste(&self, job: &Job, text: String, bracketed: Option<bool>) -> ProcessResult {
        let action = ProcessAction::Paste;
        let chars = text.chars().count();
        if text.is_empty() {
            return ProcessResult::error(action, Some(&job.id), "No paste text provided.");
        }
        if job.pty && bracketed.is_none() {
            // The terminal brackets the paste when the program asked for bracketed paste.
            if !job.is_running() {
                return ProcessResult::error(
                    action,
                    Some(&job.id),
                    format!("Job {} is not running.", job.id),
                );
            }
            let pasted = match job.io() {
                Some(io) => io.paste(text).await,
                None => None,
            };
            return match pasted {
                Some(Ok(_)) => {
                    let mut result = Self::status_result(job, action);
                    result.message = format!("Pasted {chars} chars to job {}.", job.id);
                    result
                }
                Some(Err(e)) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
                None => {
                    ProcessResult::error(action, Some(&job.id), format!("Job {} has no terminal.", job.id))
                }
            };
        }
        let bytes = if bracketed == Some(true) {
            format!("\x1b[200~{text}\x1b[201~").into_bytes()
        } else {
            text.into_bytes()
        };
        self.send(job, action, &bytes, false, |_| {
            format!("Pasted {chars} chars to job {}.", job.id)
        })
        .await
    }

    fn screen(job: &Job) -> ProcessResult {
        let action = ProcessAction::Screen;
        if !job.pty {
            return ProcessResult::error(action, Some(&job.id), no_terminal(&job.id));
        }
        match job.io().and_then(JobIo::screen) {
            Some(snap) => {
                let mut result = Self::status_result(job, action);
                result.message = format!(
                    "Screen {}x{}, cursor at row {}, column {}{}.",
                    snap.cols,
                    snap.rows,
                    snap.cursor_row + 1,
                    snap.cursor_col + 1,
                    if snap.alternate_screen {
                        " (alternate screen)"
                    } else {
                        ""
                    }
                );
                result.output = Some(snap.text);
                result.waiting_for_input = job.io().and_then(JobIo::waiting_for_input);
                result
            }
            None => ProcessResult::error(action, Some(&job.id), format!("Job {} keeps no screen.", job.id)),
        }
    }

    fn resize(job: &Job, cols: Option<u16>, rows: Option<u16>) -> ProcessResult {
        let action = ProcessAction::Resize;
        let (Some(cols), Some(rows)) = (cols, rows) else {
            return ProcessResult::error(action, Some(&job.id), "resize needs cols and rows.");
        };
        match job.io().and_then(|io| io.resize(cols, rows)) {
            Some(Ok(size)) => {
                let mut result = Self::status_result(job, action);
                result.message = format!("Resized job {} to {}x{}.", job.id, size.cols, size.rows);
                result
            }
            Some(Err(e)) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
            None => ProcessResult::error(action, Some(&job.id), no_terminal(&job.id)),
        }
    }

    async fn kill(&self, job: &Arc<Job>, signal: Option<&str>) -> ProcessResult {
        let action = ProcessAction::Kill;
        let explicit = match signal.map(parse_signal) {
            None => None,
            Some(Ok(sig)) => Some(sig),
            Some(Err(e)) => return ProcessResult::error(action, Some(&job.id), e),
        };
        let grace = self.registry.config().kill_grace;
        {
            let mut st = job.state();
            if st.status != JobStatus::Running {
                drop(st);
                let mut result = Self::status_result(job, action);
                result.message = format!("Job {} is not running.", job.id);
                return result;
            }
            st.kill_requested = true;
            st.waiters += 1;
        }
        let io = job.io();
        let message = if let Some(sig) = explicit {
            if let Some(io) = io {
                io.signal(sig);
            }
            if wait_until_ended(job, grace).await {
                format!("Job {} ended after {}.", job.id, sig.as_str())
            } else {
                // The job survived the signal: a later exit is its own, not a kill.
                job.state().kill_requested = false;
                format!("Sent {} to job {}; it is still running.", sig.as_str(), job.id)
            }
        } else {
            let mut ended_by = None;
            for (name, sig) in [("SIGINT", Signal::SIGINT), ("SIGTERM", Signal::SIGTERM)] {
                if let Some(io) = io {
                    if sig == Signal::SIGTERM {
                        io.terminate();
                    } else {
                        io.signal(sig);
                    }
                }
                if wait_until_ended(job, grace).await {
                    ended_by = Some(name);
                    break;
                }
            }
            if ended_by.is_none() {
                let victim = Arc::clone(job);
                let _ = tokio::task::spawn_blocking(move || {
                    if let Some(io) = victim.io() {
                        io.kill_now();
                    }
                })
                .await;
                wait_until_ended(job, Duration::from_secs(3)).await;
            }
            format!("Killed job {} ({}).", job.id, ended_by.unwrap_or("SIGKILL"))
        };
        job.state().waiters -= 1;
        let mut result = Self::status_result(job, action);
        result.message = message;
        result
    }
}

/// Suggested pauses between polls that find nothing new.
const RETRY_STEPS_MS: [u64; 4] = [5_000, 10_000, 30_000, 60_000];

fn no_terminal(id: &str) -> String {
    format!("Job {id} has no terminal; screen and resize need a PTY job (`pty: true`).")
}

fn exit_sentence(status: JobStatus, code: Option<i32>, signal: Option<&str>) -> String {
    let how = match (signal, code) {
        (Some(sig), _) => format!("signal {sig}"),
        (None, Some(code)) => format!("code {code}"),
        (None, None) => "an unknown exit code".to_owned(),
    };
    match status {
        JobStatus::TimedOut => format!("Job timed out and was stopped ({how})."),
        JobStatus::Killed => format!("Job was killed ({how})."),
        _ => format!("Job exited with {how}."),
    }
}

/// `SIGTERM`, `TERM`, `sigterm` or `15`.
fn parse_signal(text: &str) -> Result<Signal, String> {
    let trimmed = text.trim();
    if let Ok(n) = trimmed.parse::<i32>() {
        return Signal::try_from(n).map_err(|_| format!("Unknown signal {text:?}."));
    }
    let upper = trimmed.to_ascii_uppercase();
    let name = if upper.starts_with("SIG") {
        upper
    } else {
        format!("SIG{upper}")
    };
    Signal::from_str(&name).map_err(|_| format!("Unknown signal {text:?}."))
}

/// Key bytes for a pipe job: literal text, hex bytes, and the keys a line-oriented reader understands.
fn encode_pipe_keys(keys: &[String], hex: &[String], literal: Option<&str>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    for key in keys {
        let lower = key.to_ascii_lowercase();
        match lower.as_str() {
            "enter" | "return" | "kpenter" => out.push(b'\n'),
            "tab" => out.push(b'\t'),
            "space" => out.push(b' '),
            "escape" | "esc" => out.push(0x1b),
            "backspace" | "bspace" => out.push(0x7f),
            _ => {
                let control = lower
                    .strip_prefix("c-")
                    .or_else(|| lower.strip_prefix("ctrl-"))
                    .or_else(|| key.strip_prefix('^'))
                    .filter(|rest| rest.chars().count() == 1)
                    .and_then(|rest| rest.chars().next())
                    .and_then(control_byte);
                if let Some(byte) = control {
                    out.push(byte);
                } else if key.chars().count() == 1 {
                    out.extend_from_slice(key.as_bytes());
                } else {
                    return Err(format!("Unknown key {key:?} for a pipe job."));
                }
            }
        }
    }
    for h in hex {
        let digits: String = h.chars().filter(|c| !c.is_whitespace()).collect();
        let digits = digits.trim_start_matches("0x");
        if !digits.len().is_multiple_of(2) {
            return Err(format!("Invalid hex {h:?}."));
        }
        for pair in digits.as_bytes().chunks(2) {
            let s = std::str::from_utf8(pair).map_err(|_| format!("Invalid hex {h:?}."))?;
            out.push(u8::from_str_radix(s, 16).map_err(|_| format!("Invalid hex {h:?}."))?);
        }
    }
    if let Some(text) = literal {
        out.extend_from_slice(text.as_bytes());
    }
    Ok(out)
}

fn control_byte(c: char) -> Option<u8> {
    match c.to_ascii_uppercase() {
        c @ '@'..='_' => Some(c as u8 - b'@'),
        '?' => Some(0x7f),
        _ => None,
    }
}

fn compact_duration(ms: u64) -> String {
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{}s", s / 60, s % 60),
        3600..86400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        _ => format!("{}d{}h", s / 86400, (s % 86400) / 3600),
    }
}

fn middle_truncate(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let side = (max - 3) / 2;
    let head: String = text.chars().take(side).collect();
    let tail: String = text.chars().skip(count - side).collect();
    format!("{head}...{tail}")
}

/// Output for the model, or what its absence means for `action` in `status`.
fn push_output(text: &mut String, action: ProcessAction, status: Option<JobStatus>, output: Option<&str>) {
    let output = output.unwrap_or("");
    if output.is_empty() {
        text.push_str(match (action, status) {
            (ProcessAction::Poll, _) => "(no new output)",
            (_, Some(JobStatus::Running)) => "(no output yet)",
            _ => "(no output recorded)",
        });
    } else {
        text.push_str(output);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_with_aliases() {
        let p: ProcessParams =
            serde_json::from_str(r#"{"action":"send-keys","job_id":"calm-reef","keys":["C-c"]}"#).unwrap();
        assert_eq!(p.action, ProcessAction::SendKeys);
        assert!(serde_json::from_str::<ProcessParams>(r#"{"action":"explode"}"#).is_err());
    }

    #[test]
    fn signals_parse_in_every_spelling() {
        assert_eq!(parse_signal("SIGTERM").unwrap(), Signal::SIGTERM);
        assert_eq!(parse_signal("term").unwrap(), Signal::SIGTERM);
        assert_eq!(parse_signal("9").unwrap(), Signal::SIGKILL);
        assert!(parse_signal("SIGNOPE").is_err());
    }

    #[test]
    fn pipe_keys_encode() {
        let keys = vec![
            "h".to_owned(),
            "enter".to_owned(),
            "C-d".to_owned(),
            "^C".to_owned(),
        ];
        assert_eq!(
            encode_pipe_keys(&keys, &["1b41".into()], Some("x")).unwrap(),
            b"h\n\x04\x03\x1bAx"
        );
        assert!(encode_pipe_keys(&["F13x".into()], &[], None).is_err());
    }

    #[test]
    fn durations_and_labels_are_compact() {
        assert_eq!(compact_duration(999), "999ms");
        assert_eq!(compact_duration(200_000), "3m20s");
        assert_eq!(middle_truncate("abcdefghij", 7), "ab...ij");
    }
}
