//! Errors of loading and building a policy.

use thiserror::Error;

/// Why a policy configuration could not be loaded or built.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The TOML text is malformed or has an unknown key (the message names the key and its line).
    #[error("invalid policy configuration: {0}")]
    Toml(String),
    /// A rule pattern cannot be parsed.
    #[error("rule `{rule}` is invalid: {reason}")]
    BadPattern {
        /// The rule as written.
        rule: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `[[policy.rules]]` entry names neither or both of `allow` and `deny`.
    #[error("policy.rules[{index}] must set exactly one of `allow` or `deny`")]
    RuleEntryShape {
        /// Position of the entry in `policy.rules`.
        index: usize,
    },
    /// A `match` example of a rule entry is not matched by its rule.
    #[error("rule `{rule}`: its match example `{example}` does not match it")]
    MatchExampleFailed {
        /// The rule as written.
        rule: String,
        /// The example command.
        example: String,
    },
    /// A `not_match` example of a rule entry is matched by its rule.
    #[error("rule `{rule}`: its not_match example `{example}` matches it")]
    NotMatchExampleFailed {
        /// The rule as written.
        rule: String,
        /// The example command.
        example: String,
    },
    /// A profile name such as `@safe` is unknown.
    #[error("unknown profile `{0}` (known: @safe)")]
    UnknownProfile(String),
}

/// A request asked for a looser policy than the configured one.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "the request asked for {setting} = \"{requested}\", which is looser than the configured \"{configured}\"; the configured value applies"
)]
pub struct LooserRefused {
    /// `security` or `ask`.
    pub setting: &'static str,
    /// The requested value.
    pub requested: String,
    /// The configured value, which stays in force.
    pub configured: String,
}
