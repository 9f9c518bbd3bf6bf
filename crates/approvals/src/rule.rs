//! The narrowest rules an "allow always" approval persists: the exact static argv of each
//! segment that missed, as a pattern that matches that argv and nothing longer.

use shellgate_intercept::{Basis, SegmentVerdict};

/// Why a command cannot be approved "always".
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleRefusal {
    /// A segment is dangerous, a control command, unjudgeable or denied: no rule may allow it.
    #[error("`{command}` cannot be allowed always ({why}); approve it with allow-once instead")]
    NotApprovable {
        /// The segment.
        command: String,
        /// What decided it.
        why: &'static str,
    },
    /// A missing segment has words only known when it runs: an exact rule cannot be written.
    #[error(
        "`{command}` has words only known when it runs, so no exact rule covers it; approve it with allow-once instead"
    )]
    Incomplete {
        /// The segment.
        command: String,
    },
    /// A missing segment reads a heredoc or here-string: its input is part of what was approved,
    /// and an argv rule would allow any other input.
    #[error(
        "`{command}` reads a heredoc or here-string, which no argv rule covers; approve it with allow-once instead"
    )]
    HereInput {
        /// The segment.
        command: String,
    },
    /// A command named by a relative path cannot be matched by a rule.
    #[error(
        "`{command}` names its program by a relative path, which no rule matches; approve it with allow-once instead"
    )]
    RelativeProgram {
        /// The segment.
        command: String,
    },
    /// Nothing was missing (the ask came from somewhere else).
    #[error("no segment of this command misses a rule; approve it with allow-once instead")]
    NothingMissing,
}

fn why(basis: Basis) -> Option<&'static str> {
    Some(match basis {
        Basis::AllowRule | Basis::SafeProfile | Basis::Inert | Basis::Full | Basis::Miss => return None,
        Basis::Dangerous => "it is a dangerous command",
        Basis::Control => "it administers the engine",
        Basis::Unjudgeable => "it cannot be judged without running it",
        Basis::DenyRule | Basis::SecurityDeny => "it is denied",
        Basis::Preflight => "its script failed the preflight check",
        Basis::Redirect => "another tool should be used",
        _ => "it is not an allowlist miss",
    })
}

/// The argv of every segment that missed (deduplicated, in order), or why none may be persisted.
pub fn rules_for(segments: &[SegmentVerdict]) -> Result<Vec<Vec<String>>, RuleRefusal> {
    let mut rules: Vec<Vec<String>> = Vec::new();
    for seg in segments {
        if let Some(why) = why(seg.basis) {
            return Err(RuleRefusal::NotApprovable {
                command: seg.command.clone(),
                why,
            });
        }
        if !seg.missing {
            continue;
        }
        let argv = match &seg.argv {
            Some(argv) if seg.argv_complete && !argv.is_empty() => argv,
            _ => {
                return Err(RuleRefusal::Incomplete {
                    command: seg.command.clone(),
                });
            }
        };
        if seg.command.contains("<<") {
            return Err(RuleRefusal::HereInput {
                command: seg.command.clone(),
            });
        }
        if argv[0].contains('/') && !argv[0].starts_with('/') {
            return Err(RuleRefusal::RelativeProgram {
                command: seg.command.clone(),
            });
        }
        if !rules.contains(argv) {
            rules.push(argv.clone());
        }
    }
    if rules.is_empty() {
        return Err(RuleRefusal::NothingMissing);
    }
    Ok(rules)
}

/// The rule pattern matching exactly `argv`: every word quoted (so `*`, `|` and `?` are literal),
/// except an absolute program path without glob characters, which stays a path (a quoted one
/// would be a name).
pub fn argv_pattern(argv: &[String]) -> String {
    argv.iter()
        .enumerate()
        .map(|(i, w)| {
            let plain_path =
                i == 0 && w.starts_with('/') && !w.contains(|c: char| "*?[]|() \t\n'\"\\".contains(c));
            if plain_path {
                w.clone()
            } else {
                let mut q = String::with_capacity(w.len() + 2);
                q.push('"');
                for c in w.chars() {
                    if c == '"' || c == '\\' {
                        q.push('\\');
                    }
                    q.push(c);
                }
                q.push('"');
                q
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|&w| w.to_owned()).collect()
    }

    #[test]
    fn words_are_quoted_literally() {
        assert_eq!(argv_pattern(&argv(&["ls", "-a"])), r#""ls" "-a""#);
        assert_eq!(
            argv_pattern(&argv(&["echo", "*", "a\"b"])),
            r#""echo" "*" "a\"b""#
        );
        assert_eq!(
            argv_pattern(&argv(&["/usr/bin/ls", "x y"])),
            r#"/usr/bin/ls "x y""#
        );
    }
}
