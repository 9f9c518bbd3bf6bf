//! The input actions: `write`, `send_keys`, `submit`, `paste`, and the wait for their answer.

use shellgate_pty::KeySpec;
use shellgate_pty::keys::encode_keys_for_pipe;

use super::{ProcessAction, ProcessParams, ProcessResult, ProcessTool};
use crate::jobs::Job;

impl ProcessTool {
    /// After an input action: wait up to `wait_ms` for the job's answer, as `poll` would, and return
    /// it with the input's confirmation — one call instead of input plus poll.
    pub(super) async fn answer(&self, job: &Job, sent: ProcessResult, wait_ms: u64) -> ProcessResult {
        let mut polled = self.poll(job, None, Some(wait_ms)).await;
        polled.action = sent.action;
        polled.message = format!("{} {}", sent.message, polled.message);
        polled
    }

    /// The input actions: `write`, `send_keys`, `submit`, `paste`.
    pub(super) async fn input(&self, job: &Job, params: ProcessParams) -> ProcessResult {
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
        super::settle::note_input(job, bytes);
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
        let mut specs: Vec<KeySpec> = params.keys.iter().cloned().map(KeySpec::Key).collect();
        specs.extend(params.hex.iter().cloned().map(KeySpec::Hex));
        specs.extend(params.literal.iter().cloned().map(KeySpec::Text));
        if specs.is_empty() {
            return ProcessResult::error(action, Some(&job.id), "No key data provided.");
        }
        if job.pty {
            // The keys' bytes depend on the terminal's modes; their pipe form tells the same about
            // line ends and signal characters.
            if let Ok(bytes) = encode_keys_for_pipe(&specs) {
                super::settle::note_input(job, &bytes);
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
        // A pipe has no terminal to encode keys: the pty crate's pipe encoding (Enter is a line feed).
        match encode_keys_for_pipe(&specs) {
            Ok(bytes) if bytes.is_empty() => {
                ProcessResult::error(action, Some(&job.id), "No key data provided.")
            }
            Ok(bytes) => {
                self.send(job, action, &bytes, false, |n| {
                    format!("Sent {n} bytes to job {}.", job.id)
                })
                .await
            }
            Err(e) => ProcessResult::error(action, Some(&job.id), format!("Job {}: {e}.", job.id)),
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
            super::settle::note_input(job, text.as_bytes());
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
}
