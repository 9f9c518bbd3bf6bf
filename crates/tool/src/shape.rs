//! Shaping an execution outcome into a [`ToolResult`]: the limits applied to the full stream with exact
//! counts, and the status bash would have reported for the pipeline the user wrote (SPEC N-6, N-8, E-8).

use std::path::Path;
use std::time::Duration;

use shellgate_executor::{ExecOutcome, RunStatus, SIGPIPE_STATUS};
use shellgate_normalize::ast::Pipeline;
use shellgate_normalize::{Limits, Normalized, apply_limits};
use shellgate_sink::OutputWindow;

use crate::{ToolResult, ToolStatus};

/// What the tool knows about a run's output and pipeline beyond the window and the outcome.
#[derive(Debug, Clone, Default)]
pub(crate) struct StreamFacts {
    /// Head/tail limits (explicit, else lifted).
    pub limits: Limits,
    /// Lines and bytes of the whole stream, when a head limit kept only part of it in the window.
    pub stream: Option<(u64, u64)>,
    /// Trailing `| head`/`| tail` stages the normalizer lifted out of the script.
    pub lifted_stages: usize,
    /// The notice of that lift, which gets the counts appended.
    pub lifted_notice: Option<String>,
    /// Names of the stages of the pipeline as the user wrote it (lifted stages included).
    pub stage_names: Vec<String>,
}

impl StreamFacts {
    /// Facts of `normalized` run with `limits`.
    pub(crate) fn new(normalized: &Normalized, limits: Limits) -> Self {
        let lifted = &normalized.limits;
        let lifted_stages = usize::from(lifted.head.is_some()) + usize::from(lifted.tail.is_some());
        let mut stage_names = last_pipeline_names(normalized);
        if lifted.head.is_some() {
            stage_names.push("head".to_owned());
        }
        if lifted.tail.is_some() {
            stage_names.push("tail".to_owned());
        }
        Self {
            limits,
            stream: None,
            lifted_stages,
            lifted_notice: normalized
                .rewrites
                .iter()
                .find(|r| r.rule == "trailing_limiter")
                .map(|r| r.message.clone()),
            stage_names,
        }
    }
}

/// The script's last top-level pipeline, and whether it is the whole script.
pub(crate) fn last_pipeline(normalized: &Normalized) -> Option<(&Pipeline, bool)> {
    let tree = normalized.tree.as_ref().ok()?;
    let item = tree.list.items.last()?;
    let pipeline = item.and_or.pipelines().last()?;
    Some((
        pipeline,
        tree.list.items.len() == 1 && item.and_or.rest.is_empty(),
    ))
}

/// The first word of each stage of the script's last top-level pipeline (`…` where it is not static).
fn last_pipeline_names(normalized: &Normalized) -> Vec<String> {
    let Some((pipeline, _)) = last_pipeline(normalized) else {
        return Vec::new();
    };
    pipeline
        .commands
        .iter()
        .map(|c| {
            c.as_simple()
                .and_then(|s| s.words.first())
                .and_then(shellgate_normalize::ast::Word::static_value)
                .unwrap_or_else(|| "…".to_owned())
        })
        .collect()
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
    if outcome.status == RunStatus::Completed && facts.lifted_stages > 0 {
        restore_lifted_status(&mut outcome, facts.lifted_stages);
    }
    notices.extend(summary.notices);
    notices.extend(outcome.notices.iter().cloned());
    if !outcome.output_stopped {
        // When the output was closed early, upstream failures are what the closed pipe caused.
        notices.extend(upstream_failure_notice(
            &outcome.pipeline_status,
            &facts.stage_names,
            outcome.exit_code,
        ));
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
        notices_with_counts(&mut notices, facts, stream_lines, outcome.output_stopped);
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
        job_id: None,
        pid: None,
        pipeline_status: (!outcome.pipeline_status.is_empty()).then_some(outcome.pipeline_status),
        blocked: None,
        approval: None,
        is_error,
        timeout_secs: timeout.as_secs(),
        error: None,
        sandbox_denied: None,
        network: None,
        network_approvals: None,
        process_tracking: outcome.tracking,
    }
}

/// Put the lifted `| head`/`| tail` stages back into the statuses: each would have exited 0, so the
/// pipeline's status is 0 — or, under `pipefail`, that of the last stage that failed — and every stage
/// the user wrote is listed (`[141, 0]` for a producer the closed pipe stopped).
fn restore_lifted_status(outcome: &mut ExecOutcome, lifted: usize) {
    let mut stages = std::mem::take(&mut outcome.pipeline_status);
    if stages.is_empty() {
        // The script that ran was a single command: its status is the first stage's.
        let own = match (outcome.exit_code, &outcome.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal_number(signal),
            (None, None) => return,
        };
        stages.push(own);
    }
    let pipefail = outcome.pipefail;
    stages.extend(std::iter::repeat_n(0, lifted));
    outcome.exit_code = Some(if pipefail {
        stages.iter().rev().copied().find(|&s| s != 0).unwrap_or(0)
    } else {
        0
    });
    outcome.signal = None;
    outcome.pipeline_status = stages;
}

fn signal_number(name: &str) -> i32 {
    name.parse::<nix::sys::signal::Signal>().map_or(0, |s| s as i32)
}

/// One line naming the first upstream stage that failed (other than by SIGPIPE, which only means a
/// later stage stopped reading), so `make 2>&1 | tail -20` failing is never hidden by `tail`'s 0.
fn upstream_failure_notice(stages: &[i32], names: &[String], exit: Option<i32>) -> Option<String> {
    let last = stages.len().checked_sub(1)?;
    let (index, code) = stages[..last]
        .iter()
        .copied()
        .enumerate()
        .find(|&(_, code)| code != 0 && code != SIGPIPE_STATUS)?;
    let name = names
        .get(index)
        .filter(|_| names.len() == stages.len())
        .map_or_else(String::new, |n| format!(" (`{n}`)"));
    let exit = exit.map_or_else(String::new, |e| format!("; the pipeline's exit code is {e}"));
    Some(format!(
        "Pipeline stage {} of {}{name} exited with code {code}{exit}",
        index + 1,
        stages.len(),
    ))
}

/// Add the exact counts to the limit notice: `N of M lines shown`, or `N of at least M` when the
/// output was closed early, as a real `head` closes its pipe.
fn notices_with_counts(notices: &mut Vec<String>, facts: &StreamFacts, stream_lines: u64, stopped: bool) {
    let limits = facts.limits;
    let after_head = limits.head.map_or(stream_lines, |h| h.min(stream_lines));
    let kept = limits.tail.map_or(after_head, |t| t.min(after_head));
    let counts = if stopped {
        format!(
            "{kept} of at least {stream_lines} lines shown (the command's output was closed once the first {} lines were in, as `head` would)",
            limits.head.unwrap_or(kept)
        )
    } else {
        format!("{kept} of {stream_lines} lines shown")
    };
    match facts
        .lifted_notice
        .as_ref()
        .and_then(|message| notices.iter_mut().find(|n| *n == message))
    {
        Some(notice) => *notice = format!("{notice}: {counts}"),
        None if kept < stream_lines || stopped => notices.push(format!(
            "Output limited by the tool (head={}, tail={}): {counts}",
            limits.head.map_or("-".to_owned(), |h| h.to_string()),
            limits.tail.map_or("-".to_owned(), |t| t.to_string()),
        )),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completed(code: i32, stages: Vec<i32>, pipefail: bool) -> ExecOutcome {
        let mut o = ExecOutcome::new(RunStatus::Completed, Duration::ZERO);
        o.exit_code = Some(code);
        o.pipeline_status = stages;
        o.pipefail = pipefail;
        o
    }

    #[test]
    fn lifted_stages_get_their_status_back() {
        let mut o = completed(3, vec![], false);
        restore_lifted_status(&mut o, 1);
        assert_eq!(
            (o.exit_code, o.pipeline_status.as_slice()),
            (Some(0), &[3, 0][..])
        );
        let mut o = completed(141, vec![141, 141], false);
        restore_lifted_status(&mut o, 1);
        assert_eq!(
            (o.exit_code, o.pipeline_status.as_slice()),
            (Some(0), &[141, 141, 0][..])
        );
        let mut o = completed(3, vec![], true);
        restore_lifted_status(&mut o, 2);
        assert_eq!(
            (o.exit_code, o.pipeline_status.as_slice()),
            (Some(3), &[3, 0, 0][..])
        );
        let mut o = ExecOutcome::new(RunStatus::Completed, Duration::ZERO);
        o.signal = Some("SIGPIPE".into());
        restore_lifted_status(&mut o, 1);
        assert_eq!(
            (o.exit_code, o.pipeline_status.as_slice()),
            (Some(0), &[141, 0][..])
        );
        assert_eq!(o.signal, None);
    }

    #[test]
    fn a_failing_upstream_stage_is_named_unless_it_was_sigpipe() {
        let names = vec!["make".to_owned(), "tail".to_owned()];
        let notice = upstream_failure_notice(&[2, 0], &names, Some(0)).unwrap();
        assert_eq!(
            notice,
            "Pipeline stage 1 of 2 (`make`) exited with code 2; the pipeline's exit code is 0"
        );
        assert_eq!(upstream_failure_notice(&[141, 0], &names, Some(0)), None);
        assert_eq!(upstream_failure_notice(&[0, 1], &names, Some(1)), None);
        assert_eq!(upstream_failure_notice(&[], &names, None), None);
    }
}
