//! What the `process` tool answers, and its text for the model.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use shellgate_executor::SessionInfo;

use super::ProcessAction;
use crate::{JobInfo, JobStatus, Settled};

/// The answer of the `process` tool. Failures (unknown job, closed stdin) are results with `is_error`.
///
/// `E` is what a job's end hook attached ([`JobState::attachment`](crate::JobState::attachment)),
/// shown with the poll that sees the job ended, its fields beside these (the tool's sandbox account);
/// [`NoAttachment`] when nothing attaches one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessResult<E = NoAttachment> {
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
    /// `poll` (and an input action with `wait_ms`) that waited: what ended the wait — the program
    /// answered and waits for input again, it exited, its output went quiet where the kernel cannot
    /// tell whether it waits, or `wait_ms` passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<Settled>,
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
    /// `poll` of a job that ended: what its end hook attached, when it is an `E`.
    #[serde(flatten)]
    pub ended: E,
}

/// Nothing attached to a job's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoAttachment {}

impl<E: Default> ProcessResult<E> {
    /// A failed action.
    pub fn error(action: ProcessAction, job_id: Option<&str>, message: impl Into<String>) -> Self {
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
                    let on = s.host.as_deref().map(|h| format!(" on {h}")).unwrap_or_default();
                    let _ = writeln!(
                        text,
                        "{}{on} {state} {} commands, cwd {}",
                        s.name, s.commands, s.cwd
                    );
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
    /// The host it runs on, for a session on another machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
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
            host: None,
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
    fn durations_and_labels_are_compact() {
        assert_eq!(compact_duration(999), "999ms");
        assert_eq!(compact_duration(200_000), "3m20s");
        assert_eq!(middle_truncate("abcdefghij", 7), "ab...ij");
    }
}
