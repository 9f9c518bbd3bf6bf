//! Shaping an execution outcome into a [`ToolResult`]: the limits applied to the full stream with exact
//! counts, and the status bash would have reported for the pipeline the user wrote (SPEC N-6, N-8, E-8;
//! what was written against what ran is the normalizer's [`Written`]).

use std::path::Path;
use std::time::Duration;

use shellgate_executor::{ExecOutcome, RunStatus};
use shellgate_normalize::{Limits, Normalized, Written, apply_limits};
use shellgate_sink::OutputWindow;

use crate::{ToolResult, ToolStatus};

/// What the tool knows about a run's output and pipeline beyond the window and the outcome.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamFacts {
    /// Head/tail limits (explicit, else lifted).
    pub limits: Limits,
    /// Lines and bytes of the whole stream, when a head limit kept only part of it in the window.
    pub stream: Option<(u64, u64)>,
    /// The pipeline as written.
    pub written: Written,
}

impl StreamFacts {
    /// Facts of `normalized` run with `limits`.
    pub(crate) fn new(normalized: &Normalized, limits: Limits) -> Self {
        Self {
            limits,
            stream: None,
            written: Written::of(normalized),
        }
    }
}

/// The result of a run whose output went into `window`.
pub(crate) fn shape(
    mut outcome: ExecOutcome,
    window: &OutputWindow,
    facts: &StreamFacts,
    cwd: &Path,
    timeout: Duration,
    mut notices: Vec<String>,
) -> ToolResult {
    let summary = window.summary();
    let limits = facts.limits;
    let mut output = summary.text;
    if !limits.is_empty() {
        output = apply_limits(&output, limits).text;
    }
    if outcome.status == RunStatus::Completed {
        let own = match (outcome.exit_code, &outcome.signal) {
            (Some(code), _) => Some(code),
            (None, Some(signal)) => {
                Some(128 + signal.parse::<nix::sys::signal::Signal>().map_or(0, |s| s as i32))
            }
            (None, None) => None,
        };
        if let Some((exit, stages)) =
            facts
                .written
                .restore_statuses(&outcome.pipeline_status, own, outcome.pipefail)
        {
            outcome.exit_code = Some(exit);
            outcome.signal = None;
            outcome.pipeline_status = stages;
        }
    }
    notices.extend(summary.notices);
    notices.extend(outcome.notices.iter().cloned());
    if !outcome.output_stopped {
        // When the output was closed early, upstream failures are what the closed pipe caused.
        notices.extend(
            facts
                .written
                .upstream_failure(&outcome.pipeline_status, outcome.exit_code),
        );
    }
    let status = match outcome.status {
        RunStatus::Completed => ToolStatus::Completed,
        RunStatus::TimedOut => ToolStatus::TimedOut,
        RunStatus::Cancelled => ToolStatus::Cancelled,
        RunStatus::FailedToStart => ToolStatus::FailedToStart,
    };
    if let Some(error) = &outcome.error {
        if !output.is_empty() && !output.ends_with('\n') {
            output.push('\n');
        }
        output.push_str(error);
    }
    let mut truncation = summary.truncation;
    let (stream_lines, stream_bytes) = facts.stream.unwrap_or((summary.total_lines, summary.total_bytes));
    if let Some(t) = truncation.as_mut().filter(|_| facts.stream.is_some()) {
        // The window saw only the kept lines; the counts describe the whole stream.
        t.total_lines = stream_lines;
        t.total_bytes = stream_bytes;
    }
    if !limits.is_empty() {
        facts
            .written
            .count_notices(&mut notices, limits, stream_lines, outcome.output_stopped);
    }
    let is_error = status != ToolStatus::Completed || outcome.exit_code != Some(0);
    ToolResult {
        status,
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        output,
        truncation,
        artifact: summary.artifact,
        cwd: outcome.cwd_after.as_deref().unwrap_or(cwd).display().to_string(),
        duration_ms: outcome.duration.as_millis() as u64,
        notices,
        pipeline_status: (!outcome.pipeline_status.is_empty()).then_some(outcome.pipeline_status),
        is_error,
        timeout_secs: timeout.as_secs(),
        process_tracking: outcome.tracking,
        ..ToolResult::default()
    }
}
