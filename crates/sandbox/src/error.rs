//! Errors of the sandbox helper and its collaborators.

use std::ffi::OsString;

/// Why a sandboxed launch did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The kernel cannot enforce the requested policy (and `allow_degraded` is off), or setting a
    /// restriction up failed. The caller reports `failed_to_start` with
    /// `error: {kind: "sandbox_unavailable", reason}`.
    #[error("{reason}")]
    Unavailable {
        /// What could not be enforced, and why.
        reason: String,
    },
    /// The policy JSON does not parse (names the bad key or value).
    #[error("invalid sandbox policy: {0}")]
    InvalidPolicy(String),
    /// The helper's command line is malformed.
    #[error("invalid arguments: {0}")]
    Usage(String),
    /// The command could not be executed after the sandbox was set up.
    #[error("cannot execute {program:?}: {source}")]
    Exec {
        /// The program that was looked up on `PATH`.
        program: OsString,
        /// The error from `execvp`.
        source: nix::Error,
    },
}

impl SandboxError {
    /// A [`SandboxError::Unavailable`] with this reason.
    pub(crate) fn unavailable(reason: impl Into<String>) -> Self {
        Self::Unavailable {
            reason: reason.into(),
        }
    }
}
