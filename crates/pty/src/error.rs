//! Errors of the PTY layer. Failures of the command itself are data in the outcome, not errors.

use std::time::Duration;

use crate::keys::KeyError;

/// What went wrong operating a pseudo-terminal.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// No pseudo-terminal could be opened (no `/dev/ptmx`, descriptor limits, …).
    #[error("cannot open a pseudo-terminal: {0}")]
    Open(String),
    /// The terminal was opened but attaching the process to it failed (setsid, controlling tty).
    #[error("cannot attach the process to the terminal: {0}")]
    Setup(String),
    /// The program cannot be started (not found, not executable, bad working directory).
    #[error("cannot start {program}: {reason}")]
    Spawn {
        /// The program that was to run.
        program: String,
        /// Why it could not.
        reason: String,
    },
    /// The process has exited and its terminal is closed.
    #[error("the process has exited")]
    Exited,
    /// The program did not take its input within the write timeout.
    #[error("writing to the terminal timed out after {0:?}: the program is not reading its input")]
    WriteTimeout(Duration),
    /// A key request could not be encoded.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// Terminal I/O failed.
    #[error("terminal I/O failed: {0}")]
    Io(#[from] std::io::Error),
}

impl PtyError {
    /// Whether the failure is the terminal's rather than the program's, so running the same command
    /// with pipes may still work.
    pub fn is_pty_unavailable(&self) -> bool {
        matches!(self, Self::Open(_) | Self::Setup(_))
    }
}
