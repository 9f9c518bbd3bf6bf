//! The executor's own faults (a command's failure is data in [`crate::ExecOutcome`], not an error).

use std::io;

use crate::cwd::CwdError;

/// Why a process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The working directory is unusable.
    #[error(transparent)]
    Cwd(#[from] CwdError),
    /// A pipe could not be created or watched.
    #[error("cannot create {what}: {source}")]
    Pipe {
        /// Which pipe.
        what: &'static str,
        /// The system error.
        source: io::Error,
    },
    /// `fork`/`exec` failed (program not found, not executable, …).
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program that was to run.
        program: String,
        /// The system error.
        source: io::Error,
    },
}
