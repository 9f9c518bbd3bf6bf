//! Why a configuration file could not be used.

use std::path::PathBuf;

/// Why a configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid configuration.
    #[error("invalid configuration in {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong, with its position.
        message: String,
    },
    /// The file has a key no setting has.
    #[error("unknown key `{key}` at line {line} of {path}{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownKey {
        /// The key's full path (`policy.secuirty`).
        key: String,
        /// Its line, counted from 1.
        line: usize,
        /// The file.
        path: PathBuf,
        /// A known key of the same table within two edits, if any.
        suggestion: Option<String>,
    },
    /// The `[policy]`/`[intercept]` sections do not make a policy (a bad rule, a failing example).
    #[error("invalid policy in {path}: {source}")]
    Policy {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the rule.
        source: shellgate_intercept::ConfigError,
    },
}
