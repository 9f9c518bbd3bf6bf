//! The `poll` and `log` actions: a job's output by stream position or by line.

use std::time::Duration;

use super::{ProcessAction, ProcessResult, ProcessTool, Settled};
use crate::jobs::{Job, JobIo, JobStatus};

impl ProcessTool {
    pub(super) async fn poll(&self, job: &Job, since: Option<u64>, wait_ms: Option<u64>) -> ProcessResult {
        let config = self.registry.config();
        let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(config.max_poll_wait);
        let deadline = tokio::time::Instant::now() + wait;
        let changes = job.subscribe();
        let waiting = !wait.is_zero();
        let from = {
            let mut st = job.state();
            if waiting {
                st.waiters += 1;
            }
            since.unwrap_or(st.cursor)
        };
        let settled = if waiting {
            Some(super::settle::wait(job, changes, from, deadline, config.poll_settle).await)
        } else {
            None
        };
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
        if settled == Some(Settled::Timeout) && !done && st.pending_input.is_some() {
            notices.push(
                "wait_ms passed before the program answered its input: poll again for the rest.".to_owned(),
            );
        }
        let sandbox = if done { st.sandbox.clone() } else { None };
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
            settled,
            first_line: None,
            total_lines: Some(st.output.total_lines()),
            jobs: None,
            sessions: None,
            retry_in_ms,
            artifact: st.output.artifact(),
            notices,
            network: sandbox
                .as_ref()
                .map(|end| end.network.clone())
                .filter(|traffic| !traffic.is_empty()),
            sandbox_denied: sandbox.as_ref().map(|end| end.denied.clone()),
            network_approvals: sandbox.and_then(|end| end.approvals),
        }
    }

    pub(super) fn log(&self, job: &Job, offset: Option<u64>, limit: Option<u64>) -> ProcessResult {
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
}

/// Suggested pauses between polls that find nothing new.
const RETRY_STEPS_MS: [u64; 4] = [5_000, 10_000, 30_000, 60_000];

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
