//! The `kill` action: the graceful SIGINT, SIGTERM, SIGKILL sequence, or one named signal.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;

use super::{ProcessAction, ProcessResult, ProcessTool};
use crate::jobs::{Job, JobStatus, wait_until_ended};

impl ProcessTool {
    pub(super) async fn kill(&self, job: &Arc<Job>, signal: Option<&str>) -> ProcessResult {
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
