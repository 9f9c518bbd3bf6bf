//! What can be done to a job once it runs: read its output (waiting by the settle rule), page
//! through its lines, give it input, stop it, look at its terminal. Each answers with the data
//! and the one-line message a caller shows; failures are `Err` with the message.

use std::any::Any;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use shellgate_pty::KeySpec;
use shellgate_pty::keys::encode_keys_for_pipe;

use crate::{Job, JobConfig, JobIo, JobStatus, Settled, note_input, settle_wait, wait_until_ended};

/// Suggested pauses between polls that find nothing new.
const RETRY_STEPS_MS: [u64; 4] = [5_000, 10_000, 30_000, 60_000];

/// What a poll read.
#[derive(Debug)]
pub struct PollRead {
    /// The new output (clean text).
    pub text: String,
    /// The stream position to poll from next (also kept as the job's cursor).
    pub cursor: u64,
    /// What ended the wait, when the poll waited.
    pub settled: Option<Settled>,
    /// Whether the job waits for input, where that is known (running jobs only).
    pub waiting_for_input: Option<bool>,
    /// A suggested pause before polling a running job again (5 s, then 10, 30 and 60 s after
    /// polls without new output).
    pub retry_in_ms: Option<u64>,
    /// Skipped output, waiting for input, the job's own notices once it ended.
    pub notices: Vec<String>,
    /// Whether the job has ended (this poll then delivers its exit).
    pub done: bool,
    /// `Job still running.` or how it ended.
    pub message: String,
    /// What was attached to the job when it ended, once it has.
    pub attachment: Option<Arc<dyn Any + Send + Sync>>,
    /// The job's status as this poll read it (with the output, under one lock).
    pub status: JobStatus,
    /// Its exit code, once ended.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// Lines in its whole output so far.
    pub total_lines: u64,
    /// Where its whole output is kept once it outgrew memory.
    pub artifact: Option<String>,
}

/// A page of a job's lines.
#[derive(Debug, Default)]
pub struct LogPage {
    /// The lines.
    pub text: String,
    /// Index of the first line returned (0-based).
    pub first: u64,
    /// Lines in the whole output so far.
    pub total_lines: u64,
    /// `Lines A-B of N.`, empty when none were returned.
    pub message: String,
    /// What could not be returned, and how to page.
    pub notices: Vec<String>,
}

impl Job {
    /// The output since `since` (default: the job's cursor), after waiting up to `wait_ms` (at
    /// most `config.max_poll_wait`) by the settle rule.
    pub async fn poll(&self, config: &JobConfig, since: Option<u64>, wait_ms: Option<u64>) -> PollRead {
        let wait = Duration::from_millis(wait_ms.unwrap_or(0)).min(config.max_poll_wait);
        let deadline = tokio::time::Instant::now() + wait;
        let changes = self.subscribe();
        let waiting = !wait.is_zero();
        let from = {
            let mut st = self.state();
            if waiting {
                st.waiters += 1;
            }
            since.unwrap_or(st.cursor)
        };
        let settled = if waiting {
            Some(settle_wait(self, changes, from, deadline, config.poll_settle).await)
        } else {
            None
        };
        let mut st = self.state();
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
            self.io().and_then(JobIo::waiting_for_input)
        };
        if waiting_for_input == Some(true) {
            notices.push("The job is waiting for input: use write, send_keys, submit or paste.".to_owned());
        }
        if settled == Some(Settled::Timeout) && !done && st.pending_input.is_some() {
            notices.push(
                "wait_ms passed before the program answered its input: poll again for the rest.".to_owned(),
            );
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
        PollRead {
            text: read.text,
            cursor: read.end,
            settled,
            waiting_for_input,
            retry_in_ms,
            notices,
            done,
            message,
            attachment: if done { st.attachment.clone() } else { None },
            status: st.status,
            exit_code: st.exit_code,
            signal: st.signal.clone(),
            total_lines: st.output.total_lines(),
            artifact: st.output.artifact(),
        }
    }

    /// Lines `offset..offset+limit` of the output; without either, the last `default_lines`.
    pub fn log(&self, default_lines: u64, offset: Option<u64>, limit: Option<u64>) -> LogPage {
        let mut st = self.state();
        let total = st.output.total_lines();
        let (start, end) = match (offset, limit) {
            (None, None) => (total.saturating_sub(default_lines), total),
            (None, Some(limit)) => (total.saturating_sub(limit), total),
            (Some(offset), limit) => (offset, offset.saturating_add(limit.unwrap_or(u64::MAX))),
        };
        let read = st.output.lines(start, end);
        drop(st);
        let mut notices = Vec::new();
        if offset.is_none() && limit.is_none() && total > default_lines {
            notices.push(format!(
                "Showing the last {default_lines} of {total} lines; pass offset/limit to page"
            ));
        }
        notices.extend(read.notices);
        let message = if read.count == 0 {
            String::new()
        } else {
            format!(
                "Lines {}-{} of {}.",
                read.first + 1,
                read.first + read.count,
                read.total_lines
            )
        };
        LogPage {
            text: read.text,
            first: read.first,
            total_lines: read.total_lines,
            message,
            notices,
        }
    }

    /// Stop the job: with `signal`, send just it; otherwise SIGINT, then SIGTERM, each given
    /// `grace` to work, then SIGKILL to the whole tree. `Err` when it is not running.
    pub async fn stop(self: &Arc<Self>, signal: Option<Signal>, grace: Duration) -> Result<String, String> {
        {
            let mut st = self.state();
            if st.status != JobStatus::Running {
                return Err(format!("Job {} is not running.", self.id));
            }
            st.kill_requested = true;
            st.waiters += 1;
        }
        let io = self.io();
        let message = if let Some(sig) = signal {
            if let Some(io) = io {
                io.signal(sig);
            }
            if wait_until_ended(self, grace).await {
                format!("Job {} ended after {}.", self.id, sig.as_str())
            } else {
                // The job survived the signal: a later exit is its own, not a kill.
                self.state().kill_requested = false;
                format!("Sent {} to job {}; it is still running.", sig.as_str(), self.id)
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
                if wait_until_ended(self, grace).await {
                    ended_by = Some(name);
                    break;
                }
            }
            if ended_by.is_none() {
                let victim = Arc::clone(self);
                let _ = tokio::task::spawn_blocking(move || {
                    if let Some(io) = victim.io() {
                        io.kill_now();
                    }
                })
                .await;
                wait_until_ended(self, Duration::from_secs(3)).await;
            }
            format!("Killed job {} ({}).", self.id, ended_by.unwrap_or("SIGKILL"))
        };
        self.state().waiters -= 1;
        Ok(message)
    }

    /// Write `bytes` to the job's input (`eof`: then close it), waiting at most `timeout` for it
    /// to be taken; the count written.
    pub async fn write_input(&self, bytes: &[u8], eof: bool, timeout: Duration) -> Result<usize, String> {
        if !self.is_running() {
            return Err(format!("Job {} is not running.", self.id));
        }
        let Some(io) = self.io() else {
            return Err(format!("Job {} has no process.", self.id));
        };
        note_input(self, bytes);
        io.write(bytes, eof, timeout)
            .await
            .map_err(|e| format!("Job {}: {e}.", self.id))
    }

    /// Type `typed` and then Enter (CR on a terminal, LF on a pipe); the confirmation.
    pub async fn submit(&self, typed: &str, timeout: Duration) -> Result<String, String> {
        let (enter, name): (&[u8], &str) = if self.pty { (b"\r", "CR") } else { (b"\n", "LF") };
        let bytes = [typed.as_bytes(), enter].concat();
        self.write_input(&bytes, false, timeout).await?;
        Ok(if typed.is_empty() {
            format!("Submitted job {} (sent {name}).", self.id)
        } else {
            format!("Submitted job {} ({} bytes, then {name}).", self.id, typed.len())
        })
    }

    /// Send keys: named keys, hex bytes, literal text — encoded for the terminal's modes, or in
    /// their pipe form without one; the count of bytes sent.
    pub async fn send_keys(&self, specs: Vec<KeySpec>, timeout: Duration) -> Result<usize, String> {
        if !self.is_running() {
            return Err(format!("Job {} is not running.", self.id));
        }
        if specs.is_empty() {
            return Err("No key data provided.".to_owned());
        }
        if self.pty {
            // The keys' bytes depend on the terminal's modes; their pipe form tells the same about
            // line ends and signal characters.
            if let Ok(bytes) = encode_keys_for_pipe(&specs) {
                note_input(self, &bytes);
            }
            return match self.io() {
                Some(io) => match io.send_keys(specs).await {
                    Some(sent) => sent.map_err(|e| format!("Job {}: {e}.", self.id)),
                    None => Err(format!("Job {} has no terminal.", self.id)),
                },
                None => Err(format!("Job {} has no terminal.", self.id)),
            };
        }
        // A pipe has no terminal to encode keys: the pty crate's pipe encoding (Enter is a line feed).
        match encode_keys_for_pipe(&specs) {
            Ok(bytes) if bytes.is_empty() => Err("No key data provided.".to_owned()),
            Ok(bytes) => self.write_input(&bytes, false, timeout).await,
            Err(e) => Err(format!("Job {}: {e}.", self.id)),
        }
    }

    /// Paste `text`: on a terminal, bracketed when the program asked for it (or as `bracketed`
    /// says); on a pipe, bracketed only when asked. The confirmation.
    pub async fn paste(
        &self,
        text: String,
        bracketed: Option<bool>,
        timeout: Duration,
    ) -> Result<String, String> {
        let chars = text.chars().count();
        if text.is_empty() {
            return Err("No paste text provided.".to_owned());
        }
        let done = format!("Pasted {chars} chars to job {}.", self.id);
        if self.pty && bracketed.is_none() {
            // The terminal brackets the paste when the program asked for bracketed paste.
            if !self.is_running() {
                return Err(format!("Job {} is not running.", self.id));
            }
            note_input(self, text.as_bytes());
            return match self.io() {
                Some(io) => match io.paste(text).await {
                    Some(pasted) => pasted.map(|_| done).map_err(|e| format!("Job {}: {e}.", self.id)),
                    None => Err(format!("Job {} has no terminal.", self.id)),
                },
                None => Err(format!("Job {} has no terminal.", self.id)),
            };
        }
        let bytes = if bracketed == Some(true) {
            format!("\x1b[200~{text}\x1b[201~").into_bytes()
        } else {
            text.into_bytes()
        };
        self.write_input(&bytes, false, timeout).await.map(|_| done)
    }

    /// The terminal's screen as a person would see it: a one-line description and the text.
    pub fn screen_view(&self) -> Result<(String, String), String> {
        if !self.pty {
            return Err(no_terminal(&self.id));
        }
        let snap = self
            .io()
            .and_then(JobIo::screen)
            .ok_or_else(|| format!("Job {} keeps no screen.", self.id))?;
        let message = format!(
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
        Ok((message, snap.text))
    }

    /// Resize the job's terminal to `cols`×`rows` (clamped); the confirmation.
    pub fn resize_to(&self, cols: Option<u16>, rows: Option<u16>) -> Result<String, String> {
        let (Some(cols), Some(rows)) = (cols, rows) else {
            return Err("resize needs cols and rows.".to_owned());
        };
        match self.io().and_then(|io| io.resize(cols, rows)) {
            Some(Ok(size)) => Ok(format!("Resized job {} to {}x{}.", self.id, size.cols, size.rows)),
            Some(Err(e)) => Err(format!("Job {}: {e}.", self.id)),
            None => Err(no_terminal(&self.id)),
        }
    }
}

/// `SIGTERM`, `TERM`, `sigterm` or `15`.
pub fn parse_signal(text: &str) -> Result<Signal, String> {
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

fn no_terminal(id: &str) -> String {
    format!("Job {id} has no terminal; screen and resize need a PTY job (`pty: true`).")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_parse_in_every_spelling() {
        assert_eq!(parse_signal("SIGTERM").unwrap(), Signal::SIGTERM);
        assert_eq!(parse_signal("term").unwrap(), Signal::SIGTERM);
        assert_eq!(parse_signal("9").unwrap(), Signal::SIGKILL);
        assert!(parse_signal("SIGNOPE").is_err());
    }
}
