//! The outcome of one execution, as data.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The command ran to its end (whatever its exit code).
    Completed,
    /// The engine stopped it at its timeout.
    TimedOut,
    /// The caller cancelled it.
    Cancelled,
    /// It could not be started.
    FailedToStart,
}

/// Everything the executor knows about a finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// Exit code when the process exited normally.
    pub exit_code: Option<i32>,
    /// Name of the terminating signal (`"SIGKILL"`), when killed by one.
    pub signal: Option<String>,
    /// Exit statuses of the stages of a top-level pipeline, when known.
    pub pipeline_status: Vec<i32>,
    /// Working directory after the command, when known (sessions).
    pub cwd_after: Option<PathBuf>,
    /// Wall-clock duration.
    pub duration: Duration,
    /// Process id of the started process.
    pub pid: Option<u32>,
    /// Things the reader should know (descendants killed, clamps, fallbacks).
    pub notices: Vec<String>,
    /// Why the process could not be started.
    pub error: Option<String>,
    /// The sink said it had seen enough ([`shellgate_sink::Flow::Stop`]) and the output was closed
    /// before the stream ended, as a real `| head` closes its pipe: what the sink counted is a lower
    /// bound of the whole output.
    pub output_stopped: bool,
    /// The shell had `pipefail` on when its last pipeline ended (reported with the pipeline's statuses;
    /// `false` when not reported).
    pub pipefail: bool,
    /// How the run's processes were found and stopped (`None`: not reported by this executor).
    pub tracking: Option<crate::Tracking>,
}

impl ExecOutcome {
    /// An outcome with `status` and `duration` and everything else empty; set the rest field by field.
    pub fn new(status: RunStatus, duration: Duration) -> Self {
        Self {
            status,
            exit_code: None,
            signal: None,
            pipeline_status: Vec::new(),
            cwd_after: None,
            duration,
            pid: None,
            notices: Vec::new(),
            error: None,
            output_stopped: false,
            pipefail: false,
            tracking: None,
        }
    }

    /// An outcome for a process that could not be started.
    pub fn failed_to_start(error: impl Into<String>, duration: Duration) -> Self {
        Self {
            error: Some(error.into()),
            ..Self::new(RunStatus::FailedToStart, duration)
        }
    }

    /// Indices of the pipeline stages that failed. An upstream stage killed by SIGPIPE (status 141)
    /// does not count: it only means a later stage stopped reading, as `head` does.
    pub fn failed_stages(&self) -> Vec<usize> {
        let last = self.pipeline_status.len().saturating_sub(1);
        self.pipeline_status
            .iter()
            .enumerate()
            .filter(|&(i, &code)| code != 0 && !(code == SIGPIPE_STATUS && i < last))
            .map(|(i, _)| i)
            .collect()
    }

    /// The status a shell would report: the exit code, or 128 + signal number.
    pub fn shell_status(&self) -> Option<i32> {
        self.exit_code.or_else(|| {
            let name = self.signal.as_deref()?;
            (1..65).find(|&n| signal_name(n) == name).map(|n| 128 + n)
        })
    }
}

/// Shell status of a process killed by SIGPIPE (128 + 13).
pub const SIGPIPE_STATUS: i32 = 141;

/// The conventional name of signal `signo` (`"SIGTERM"`), or `"SIG<n>"` when unknown.
pub fn signal_name(signo: i32) -> String {
    nix::sys::signal::Signal::try_from(signo)
        .map_or_else(|_| format!("SIG{signo}"), |s| s.as_str().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        let mut o = ExecOutcome::failed_to_start("x", Duration::ZERO);
        o.signal = Some("SIGKILL".into());
        assert_eq!(o.shell_status(), Some(137));
        o.pipeline_status = vec![141, 1, 0, 141];
        assert_eq!(o.failed_stages(), vec![1, 3]);
    }
}
