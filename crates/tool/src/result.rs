//! The result of a `bash` call (SPEC T-3) and its model text (SPEC T-4).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use shellgate_sink::Truncation;

pub use shellgate_approvals::Approval;

/// How a call ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// The command ran to its end.
    #[default]
    Completed,
    /// Stopped at its timeout.
    TimedOut,
    /// Cancelled by the caller.
    Cancelled,
    /// Refused by an interceptor.
    Blocked,
    /// Waiting for a person's approval.
    ApprovalPending,
    /// Still running as a background job.
    Running,
    /// Could not be started (bad working directory, missing shell, …).
    FailedToStart,
}

/// Why a command was blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    /// The rule that fired.
    pub rule: String,
    /// The message shown to the model.
    pub message: String,
    /// A tool to use instead, if any.
    pub suggested_tool: Option<String>,
}

/// Everything a caller learns from one call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// How the call ended.
    pub status: ToolStatus,
    /// Exit code of the command, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal name, when it was killed by one.
    pub signal: Option<String>,
    /// Clean model text of the output.
    pub output: String,
    /// What was elided from `output`, if anything.
    pub truncation: Option<Truncation>,
    /// `artifact://<id>` holding the full output, when it was spilled.
    pub artifact: Option<String>,
    /// Working directory of the command (after it, when known).
    pub cwd: String,
    /// Wall-clock duration in milliseconds.
    pub duration_ms: u64,
    /// Things the model should know: rewrites, clamps, fallbacks, killed descendants.
    pub notices: Vec<String>,
    /// Background job id, when the command runs on as a job.
    pub job_id: Option<String>,
    /// Process id of the job's shell, when the command runs on as a job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Exit statuses of a top-level pipeline's stages, when known.
    pub pipeline_status: Option<Vec<i32>>,
    /// Why it was blocked, when it was.
    pub blocked: Option<Blocked>,
    /// What awaits approval, when the status is `approval_pending`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<Approval>,
    /// Whether the model should treat this as a failure.
    pub is_error: bool,
    /// Timeout in seconds that applied.
    pub timeout_secs: u64,
    /// Why the call failed before its command ran, as data (`kind: "sandbox_unavailable"`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ResultError>,
    /// What the sandbox denied during the run, read from the kernel: present (possibly empty) only
    /// for a sandboxed run whose denials could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_denied: Option<Vec<shellgate_sandbox::Denial>>,
    /// Destinations a sandboxed run reached through the engine's proxy, with their bytes (only
    /// when it reached any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Vec<shellgate_sandbox::Traffic>>,
    /// Destinations the sandbox's proxy refused as not allowed, each pending a person's
    /// `allow-always` (only with asking on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_approvals: Option<Vec<crate::NetworkApproval>>,
    /// How the run's processes were found and stopped: `cgroup` (a cgroup of its own, which no
    /// process of it can leave from the sandbox) or `marker` (its marker, session and group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_tracking: Option<shellgate_executor::Tracking>,
}

/// A failure as data (`ToolResult::error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultError {
    /// What failed (`sandbox_unavailable`, `sandbox_error`).
    pub kind: String,
    /// Why.
    pub reason: String,
}

impl ToolResult {
    /// A result that did not run anything, with a status and a message as its output.
    pub fn not_run(status: ToolStatus, message: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self {
            status,
            output: message.into(),
            cwd: cwd.into(),
            is_error: true,
            ..Self::default()
        }
    }

    /// The text shown to the model (SPEC T-4).
    pub fn model_text(&self) -> String {
        let mut text = if self.output.is_empty() {
            "(no output)".to_owned()
        } else {
            self.output.clone()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&self.trailer_text());
        while text.ends_with('\n') {
            text.pop();
        }
        text
    }

    /// The lines the model text puts after the output: notices, truncation, exit status, guidance.
    pub fn trailer_text(&self) -> String {
        let mut text = String::new();
        for notice in &self.notices {
            let _ = writeln!(text, "[{notice}]");
        }
        if let Some(t) = &self.truncation {
            let _ = writeln!(text, "{}", truncation_notice(t));
        }
        match self.status {
            ToolStatus::Completed => {
                if let Some(code) = self.exit_code.filter(|&c| c != 0) {
                    let _ = writeln!(text, "Command exited with code {code}");
                } else if let Some(sig) = &self.signal {
                    let _ = writeln!(text, "Command was killed by {sig}");
                }
            }
            ToolStatus::TimedOut => {
                let _ = writeln!(text, "[Command timed out after {} seconds]", self.timeout_secs);
                text.push_str(
                    "Raise `timeout` if it needs longer, or run long-lived work with `background: true` or `yield_ms`.\n",
                );
            }
            ToolStatus::Cancelled => text.push_str("[Command cancelled]\n"),
            ToolStatus::Running => {
                if let Some(id) = &self.job_id {
                    let pid = self.pid.map_or_else(|| "n/a".to_owned(), |p| p.to_string());
                    let _ = writeln!(
                        text,
                        "Command still running (job {id}, pid {pid}). Use process ({}) for follow-up.",
                        crate::job_start::FOLLOW_UP
                    );
                }
            }
            _ => {}
        }
        text
    }
}

/// The one-line truncation notice (SPEC S-6).
pub fn truncation_notice(t: &Truncation) -> String {
    let ranges: Vec<String> = t.shown_ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
    let shown = if ranges.is_empty() {
        "no complete lines".to_owned()
    } else {
        ranges.join(" and ")
    };
    match &t.artifact {
        Some(a) => format!("[Showing lines {shown} of {}. Full output: {a}]", t.total_lines),
        None => format!(
            "[Showing lines {shown} of {}. {} bytes elided]",
            t.total_lines, t.elided_bytes
        ),
    }
}
