//! Shell syntax front-end and command normalizer for shellgate.
//!
//! A [`Normalizer`] turns the command an agent sent into a [`Normalized`] command: the script to run,
//! output limits lifted out of it, and a record of every rewrite, so later stages never re-parse.
//!
//! ```
//! use shellgate_normalize::{Normalizer, StandardNormalizer};
//!
//! let n = StandardNormalizer::default().normalize("  echo hi  ");
//! assert_eq!(n.script, "echo hi");
//! ```
#![forbid(unsafe_code)]

mod limits;

pub use limits::{Limited, Limits, apply_limits};

/// A rewrite the normalizer made, reported to the caller so the model is never silently misled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// Short machine name of the rule, e.g. `"trailing_limiter"`.
    pub rule: &'static str,
    /// One human sentence describing what changed.
    pub message: String,
}

/// The normalized form of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The command exactly as received.
    pub original: String,
    /// The command to execute.
    pub script: String,
    /// Output limits lifted out of the command (fallbacks for explicit ones).
    pub limits: Limits,
    /// Working directory lifted from a leading `cd DIR &&`, if any.
    pub cwd: Option<String>,
    /// Every rewrite made.
    pub rewrites: Vec<Rewrite>,
}

impl Normalized {
    /// A normalized command that is the input unchanged.
    pub fn unchanged(command: &str) -> Self {
        Self {
            original: command.to_owned(),
            script: command.to_owned(),
            limits: Limits::default(),
            cwd: None,
            rewrites: Vec::new(),
        }
    }
}

/// Turns a raw command into a [`Normalized`] one.
pub trait Normalizer {
    /// Normalize `command`. Never fails: what cannot be understood is left as it is.
    fn normalize(&self, command: &str) -> Normalized;
}

impl<N: Normalizer + ?Sized> Normalizer for &N {
    fn normalize(&self, command: &str) -> Normalized {
        (**self).normalize(command)
    }
}

impl<N: Normalizer + ?Sized> Normalizer for Box<N> {
    fn normalize(&self, command: &str) -> Normalized {
        (**self).normalize(command)
    }
}

impl<N: Normalizer + ?Sized> Normalizer for std::sync::Arc<N> {
    fn normalize(&self, command: &str) -> Normalized {
        (**self).normalize(command)
    }
}

/// The normalizer shellgate uses by default.
#[derive(Debug, Clone, Default)]
pub struct StandardNormalizer {
    _private: (),
}

impl Normalizer for StandardNormalizer {
    fn normalize(&self, command: &str) -> Normalized {
        let mut n = Normalized::unchanged(command);
        n.script = command.trim().to_owned();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_outer_whitespace_only() {
        let n = StandardNormalizer::default().normalize("\n  a  b \n");
        assert_eq!(n.script, "a  b");
        assert_eq!(n.original, "\n  a  b \n");
    }
}
