//! The helper's command line (`shellgate sandbox-exec --policy JSON -- argv…`) and its failure
//! contract.
//!
//! On success the helper *becomes* the command (same pid, same descriptors, same cwd and
//! environment), so the command's exit status is the run's. Before that, a failure prints exactly
//! one line on stderr and exits:
//!
//! | exit | stderr line                                   | meaning                                     |
//! |------|-----------------------------------------------|---------------------------------------------|
//! | 125  | `shellgate-sandbox: unavailable: <reason>`    | the sandbox cannot be enforced (or set up)  |
//! | 125  | `shellgate-sandbox: error: <message>`         | malformed helper arguments or policy        |
//! | 126  | `shellgate-sandbox: exec: <message>`          | the command exists but cannot be executed   |
//! | 127  | `shellgate-sandbox: exec: <message>`          | the command was not found                   |
//!
//! Read the line with [`HelperFailure::parse`]; an executor maps `Unavailable` to
//! `status: "failed_to_start"` with `error: {kind: "sandbox_unavailable", reason}`. 126 and 127
//! match what a shell reports for the same failures.

use std::ffi::OsString;
use std::io::Write as _;

use crate::{SandboxError, SandboxPolicy, exec_sandboxed};

/// Exit status of the helper when the sandbox is unavailable or its invocation is malformed
/// (the `env`/`nice` convention for "the wrapper itself failed").
pub const EXIT_SANDBOX_FAILED: i32 = 125;
/// Exit status when the command exists but cannot be executed.
pub const EXIT_CANNOT_EXECUTE: i32 = 126;
/// Exit status when the command is not found.
pub const EXIT_NOT_FOUND: i32 = 127;
/// Prefix of the helper's one failure line on stderr.
pub const STDERR_PREFIX: &str = "shellgate-sandbox: ";

/// A helper failure, as read back from its stderr line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HelperFailure {
    /// `unavailable: <reason>`: the sandbox could not be enforced.
    Unavailable {
        /// The reason, for `error.reason`.
        reason: String,
    },
    /// `error: <message>`: the helper was invoked wrongly (an engine fault).
    Invalid {
        /// What was wrong.
        message: String,
    },
    /// `exec: <message>`: the command could not be executed.
    Exec {
        /// The exec error.
        message: String,
    },
}

impl HelperFailure {
    /// Parse one stderr line written by the helper; `None` for any other line (the command's own).
    pub fn parse(line: &str) -> Option<Self> {
        let rest = line.trim_end_matches(['\r', '\n']).strip_prefix(STDERR_PREFIX)?;
        let (tag, text) = rest.split_once(": ")?;
        let text = text.to_owned();
        match tag {
            "unavailable" => Some(Self::Unavailable { reason: text }),
            "error" => Some(Self::Invalid { message: text }),
            "exec" => Some(Self::Exec { message: text }),
            _ => None,
        }
    }

    /// The line the helper prints for this failure (without the newline).
    pub fn to_line(&self) -> String {
        let (tag, text) = match self {
            Self::Unavailable { reason } => ("unavailable", reason),
            Self::Invalid { message } => ("error", message),
            Self::Exec { message } => ("exec", message),
        };
        // One line, whatever the text holds, so a reader can split on newlines.
        format!("{STDERR_PREFIX}{tag}: {}", text.replace(['\n', '\r'], " "))
    }

    /// The helper's exit status for this failure.
    pub fn exit_code(&self, error: Option<&SandboxError>) -> i32 {
        match (self, error) {
            (Self::Exec { .. }, Some(SandboxError::Exec { source, .. })) if *source == nix::Error::ENOENT => {
                EXIT_NOT_FOUND
            }
            (Self::Exec { .. }, _) => EXIT_CANNOT_EXECUTE,
            _ => EXIT_SANDBOX_FAILED,
        }
    }
}

impl From<&SandboxError> for HelperFailure {
    fn from(error: &SandboxError) -> Self {
        match error {
            SandboxError::Unavailable { reason } => Self::Unavailable {
                reason: reason.clone(),
            },
            SandboxError::Exec { .. } => Self::Exec {
                message: error.to_string(),
            },
            SandboxError::InvalidPolicy(_) | SandboxError::Usage(_) => Self::Invalid {
                message: error.to_string(),
            },
        }
    }
}

/// Parse `--policy JSON -- argv…` (the arguments after the subcommand name).
pub fn parse_args(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(SandboxPolicy, Vec<OsString>), SandboxError> {
    let mut args = args.into_iter();
    let mut policy = None;
    loop {
        let Some(arg) = args.next() else {
            return Err(SandboxError::Usage(
                "expected `--policy JSON -- COMMAND [ARGS…]`".to_owned(),
            ));
        };
        match arg.to_str() {
            Some("--") => break,
            Some("--policy") => {
                let json = args
                    .next()
                    .ok_or_else(|| SandboxError::Usage("--policy needs a JSON value".to_owned()))?;
                let json = json
                    .into_string()
                    .map_err(|_| SandboxError::Usage("--policy is not UTF-8".to_owned()))?;
                policy = Some(SandboxPolicy::from_json(&json)?);
            }
            _ => {
                return Err(SandboxError::Usage(format!(
                    "unexpected argument {} (expected --policy or --)",
                    arg.display()
                )));
            }
        }
    }
    let policy = policy.ok_or_else(|| SandboxError::Usage("--policy is required".to_owned()))?;
    let argv: Vec<OsString> = args.collect();
    if argv.is_empty() {
        return Err(SandboxError::Usage("no command given after `--`".to_owned()));
    }
    Ok((policy, argv))
}

/// `main` of a stand-alone helper binary: `[sandbox-exec] --policy JSON -- argv…` from the process's
/// arguments (the subcommand word is accepted, so the binary stands in for `shellgate sandbox-exec`).
pub fn standalone_main() -> ! {
    let mut args = std::env::args_os().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "sandbox-exec") {
        args.next();
    }
    std::process::exit(helper_main(args));
}

/// The helper's entry point: parse `--policy JSON -- argv…`, sandbox, exec. Returns only on
/// failure, with the exit status to use after printing the failure line on stderr (see the
/// module table). Call it from `main` of a single-threaded process.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let error = match parse_args(args) {
        Ok((policy, argv)) => match exec_sandboxed(&policy, &argv) {
            Ok(never) => match never {},
            Err(error) => error,
        },
        Err(error) => error,
    };
    let failure = HelperFailure::from(&error);
    let _ = writeln!(std::io::stderr(), "{}", failure.to_line());
    failure.exit_code(Some(&error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxMode;

    fn os(items: &[&str]) -> Vec<OsString> {
        items.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_policy_and_command() {
        let policy = SandboxPolicy::new(SandboxMode::ReadOnly, "/w");
        let json = policy.to_json();
        let (parsed, argv) = parse_args(os(&["--policy", &json, "--", "ls", "--", "-l"])).unwrap();
        assert_eq!(parsed, policy);
        assert_eq!(argv, os(&["ls", "--", "-l"]));
    }

    #[test]
    fn malformed_invocations_are_usage_errors() {
        let json = SandboxPolicy::new(SandboxMode::ReadOnly, "/w").to_json();
        for args in [
            os(&[]),
            os(&["--", "ls"]),
            os(&["--policy", &json, "--"]),
            os(&["--policy"]),
            os(&["--frobnicate"]),
        ] {
            let err = parse_args(args.clone()).unwrap_err();
            assert!(matches!(err, SandboxError::Usage(_)), "{args:?}: {err}");
        }
        let err = parse_args(os(&["--policy", "{", "--", "ls"])).unwrap_err();
        assert!(matches!(err, SandboxError::InvalidPolicy(_)));
    }

    #[test]
    fn failure_lines_round_trip_and_stay_on_one_line() {
        let failure = HelperFailure::Unavailable {
            reason: "kernel offers ABI 2\nsecond line".to_owned(),
        };
        let line = failure.to_line();
        assert!(!line.contains('\n'));
        assert_eq!(
            HelperFailure::parse(&line),
            Some(HelperFailure::Unavailable {
                reason: "kernel offers ABI 2 second line".to_owned()
            })
        );
        assert_eq!(failure.exit_code(None), EXIT_SANDBOX_FAILED);
        assert_eq!(HelperFailure::parse("touch: cannot touch '/etc/x'"), None);
        assert_eq!(HelperFailure::parse("shellgate-sandbox: other: x"), None);
    }

    #[test]
    fn exec_failures_map_to_shell_codes() {
        let missing = SandboxError::Exec {
            program: "nope".into(),
            source: nix::Error::ENOENT,
        };
        let denied = SandboxError::Exec {
            program: "x".into(),
            source: nix::Error::EACCES,
        };
        assert_eq!(HelperFailure::from(&missing).exit_code(Some(&missing)), 127);
        assert_eq!(HelperFailure::from(&denied).exit_code(Some(&denied)), 126);
    }
}
