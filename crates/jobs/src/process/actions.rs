//! The actions on one job — `poll`, `log`, `kill`, input, `screen`, `resize` — as the job carries
//! them out (`control.rs`), as the `process` tool's result.

use std::sync::Arc;

use shellgate_pty::KeySpec;

use super::{JobActions, ProcessAction, ProcessParams, ProcessResult};
use crate::{Job, JobIo, parse_signal};

impl<E: Clone + Default + Send + Sync + 'static> JobActions<E> {
    pub(super) async fn poll(&self, job: &Job, since: Option<u64>, wait_ms: Option<u64>) -> ProcessResult<E> {
        let read = job.poll(self.registry.config(), since, wait_ms).await;
        let ended = read
            .attachment
            .as_ref()
            .and_then(|a| a.downcast_ref::<E>())
            .cloned()
            .unwrap_or_default();
        ProcessResult {
            action: ProcessAction::Poll,
            message: read.message,
            job_id: Some(job.id.clone()),
            status: Some(read.status),
            pid: job.pid(),
            exit_code: read.exit_code,
            signal: read.signal,
            output: Some(read.text),
            cursor: Some(read.cursor),
            waiting_for_input: read.waiting_for_input,
            settled: read.settled,
            total_lines: Some(read.total_lines),
            retry_in_ms: read.retry_in_ms,
            artifact: read.artifact,
            notices: read.notices,
            ended,
            ..ProcessResult::default()
        }
    }

    pub(super) fn log(&self, job: &Job, offset: Option<u64>, limit: Option<u64>) -> ProcessResult<E> {
        let page = job.log(self.registry.config().log_default_lines, offset, limit);
        let mut result = Self::status_result(job, ProcessAction::Log);
        result.notices.extend(page.notices);
        result.message = page.message;
        result.output = Some(page.text);
        result.first_line = Some(page.first);
        result.total_lines = Some(page.total_lines);
        result
    }

    pub(super) async fn kill(&self, job: &Arc<Job>, signal: Option<&str>) -> ProcessResult<E> {
        let action = ProcessAction::Kill;
        let explicit = match signal.map(parse_signal).transpose() {
            Ok(sig) => sig,
            Err(e) => return ProcessResult::error(action, Some(&job.id), e),
        };
        // Stopping a job that already ended is no error: the result tells how it ended.
        let message = job
            .stop(explicit, self.registry.config().kill_grace)
            .await
            .unwrap_or_else(|not_running| not_running);
        let mut result = Self::status_result(job, action);
        result.message = message;
        result
    }

    /// The input actions: `write`, `send_keys`, `submit`, `paste`.
    pub(super) async fn input(&self, job: &Job, params: ProcessParams) -> ProcessResult<E> {
        let action = params.action;
        let timeout = self.registry.config().write_timeout;
        let sent = match action {
            ProcessAction::Write => {
                let data = params.data.unwrap_or_default();
                job.write_input(data.as_bytes(), params.eof, timeout)
                    .await
                    .map(|n| {
                        let closed = if params.eof { " (stdin closed)" } else { "" };
                        format!("Wrote {n} bytes to job {}{closed}.", job.id)
                    })
            }
            ProcessAction::SendKeys => {
                let mut specs: Vec<KeySpec> = params.keys.iter().cloned().map(KeySpec::Key).collect();
                specs.extend(params.hex.iter().cloned().map(KeySpec::Hex));
                specs.extend(params.literal.iter().cloned().map(KeySpec::Text));
                job.send_keys(specs, timeout)
                    .await
                    .map(|n| format!("Sent {n} bytes to job {}.", job.id))
            }
            ProcessAction::Submit => job.submit(params.data.as_deref().unwrap_or(""), timeout).await,
            _ => {
                job.paste(params.text.unwrap_or_default(), params.bracketed, timeout)
                    .await
            }
        };
        match sent {
            Ok(message) => {
                let mut result = Self::status_result(job, action);
                result.message = message;
                result
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), e),
        }
    }

    /// After an input action: wait up to `wait_ms` for the job's answer, as `poll` would, and return
    /// it with the input's confirmation — one call instead of input plus poll.
    pub(super) async fn answer(&self, job: &Job, sent: ProcessResult<E>, wait_ms: u64) -> ProcessResult<E> {
        let mut polled = self.poll(job, None, Some(wait_ms)).await;
        polled.action = sent.action;
        polled.message = format!("{} {}", sent.message, polled.message);
        polled
    }

    pub(super) fn screen(job: &Job) -> ProcessResult<E> {
        let action = ProcessAction::Screen;
        match job.screen_view() {
            Ok((message, text)) => {
                let mut result = Self::status_result(job, action);
                result.message = message;
                result.output = Some(text);
                result.waiting_for_input = job.io().and_then(JobIo::waiting_for_input);
                result
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), e),
        }
    }

    pub(super) fn resize(job: &Job, cols: Option<u16>, rows: Option<u16>) -> ProcessResult<E> {
        let action = ProcessAction::Resize;
        match job.resize_to(cols, rows) {
            Ok(message) => {
                let mut result = Self::status_result(job, action);
                result.message = message;
                result
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), e),
        }
    }
}
