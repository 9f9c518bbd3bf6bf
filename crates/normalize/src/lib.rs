//! Shell syntax front-end and command normalizer for shellgate.
//! Parse a command once with bash's exact rules, lift output limiters and a leading `cd` out of it.
//!
//! A [`Normalizer`] turns the command an agent sent into a [`Normalized`] command: the script to run,
//! its syntax tree, output limits lifted out of it, and a record of every rewrite, so later stages
//! never re-parse and the model is never silently misled.
//!
//! ```
//! use shellgate_normalize::{Limits, Normalizer, StandardNormalizer};
//!
//! let n = StandardNormalizer::default().normalize("seq 1 100 | head -n 5");
//! assert_eq!(n.script, "seq 1 100");
//! assert_eq!(n.limits, Limits { head: Some(5), tail: None });
//! assert_eq!(n.rewrites[0].rule, "trailing_limiter");
//!
//! let n = StandardNormalizer::default().normalize(r#"echo "a | head -n 1""#);
//! assert_eq!(n.script, r#"echo "a | head -n 1""#);
//! assert!(n.rewrites.is_empty());
//! ```
//!
//! # The parser
//!
//! A purpose-built recursive-descent parser ([`parse`]) rather than a parser crate. The bar was:
//! byte spans on every node (a peer tool sliced with character positions and cut a closing quote
//! after `✓`), `$( … )` parsed recursively as bash 5.2 does, errors as values with a byte offset,
//! bounded nesting ([`ParseErrorKind::TooDeep`]) and input size ([`MAX_INPUT`]), no dependency, a
//! few microseconds per command, and agreement with real bash checked by a differential test.
//! The tree ([`ast`]) covers lists, pipelines (`|`, `|&`, `!`, `time`), simple commands with
//! assignments and every redirect form (`2>&1`, `&>`, `&>>`, `>|`, `<>`, `<<<`, `{var}>`),
//! here-documents (`<<`, `<<-`, quoted or not, several per line, bodies read after the line ends),
//! compound commands, functions, comments, and the parts of words: quotes (`'…'`, `"…"`, `$'…'`,
//! `$"…"`), backslashes and line continuations, parameters, `$( … )`, backticks, `$(( … ))`,
//! `<( … )`, `>( … )`, globs, tildes, brace expansion. [`Word::static_value`](ast::Word) gives a
//! word's literal value when it is fully static. `(( … ))`, `[[ … ]]`, arithmetic and backticks
//! containing backslashes are kept as opaque spans (`is_opaque()`), never guessed.
//! [`visit`] walks a tree; [`print()`] re-prints one canonically (it round-trips).
//!
//! Deliberate differences from bash (none occurs in the differential corpus):
//! - extended globs (`@( … )` …) are a syntax error, as in bash with `extglob` off (the default
//!   for `bash -c`); aliases are not expanded (the tree shows what was written);
//! - `coproc` is not a keyword: `coproc NAME { … }` is a syntax error here;
//! - `${ … }` is kept as text (its operators are not parsed) and is dynamic;
//! - an unquoted here-document's delimiter line is compared without first joining
//!   backslash-continued body lines;
//! - a here-document still open at the `)` of a `$( … )` gets an empty body (bash warns).
//!
//! # The rules
//!
//! [`StandardNormalizer`] trims the command (N-7), parses it once, and applies:
//! - N-4: a leading literal `cd DIR &&` becomes [`Normalized::cwd`];
//! - N-2: a trailing plain `head`/`tail` line limiter (also `| head -n A | tail -n B`) becomes
//!   [`Normalized::limits`] — only when that pipeline produces the whole output of the script
//!   (after a lifted `cd`), because only then is applying the limit to the output exact; never for
//!   `tail -f`, `tail -n +K`, `-c`, or a redirected or quoted limiter. A lifted `head` must still end
//!   its producer as the real one would: the caller closes the output once the lines are in (see
//!   `shellgate_sink::LineLimit`), or keeps the limiter with [`NormalizeContext::keep_limiters`];
//! - N-3: a trailing lone `2>&1` of a single simple command is dropped.
//!
//! Every rewrite is a [`Rewrite`] notice (N-8). The rewritten script gets its tree by moving the
//! spans of the first parse, not by parsing again. [`Limits::or`] merges explicit limits over
//! extracted ones (N-5) and [`apply_limits`] applies head then tail to the complete output (N-6).
#![forbid(unsafe_code)]

mod ansi_c;
pub mod ast;
mod error;
mod heredoc;
mod lexer;
mod limits;
mod normalizer;
mod parser;
mod parts;
mod printer;
mod rules;
pub mod shell_words;
mod shift;
mod text;
pub mod visit;
mod word;
mod words;
pub mod written;

pub use ast::Script;
pub use error::{ParseError, ParseErrorKind};
pub use limits::{Limited, Limits, apply_limits};
pub use normalizer::StandardNormalizer;
pub use parser::{MAX_INPUT, parse};
pub use printer::print;
pub use word::WordValue;
pub use written::Written;

/// A rewrite the normalizer made, reported to the caller so the model is never silently misled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    /// Short machine name of the rule: `"trailing_limiter"`, `"trailing_stderr_merge"` or
    /// `"leading_cd"`.
    pub rule: &'static str,
    /// One human sentence describing what changed, shown to the model as a notice.
    pub message: String,
}

/// The normalized form of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The command exactly as received.
    pub original: String,
    /// The command to execute.
    pub script: String,
    /// The parse of [`Normalized::script`] (spans are offsets into it), or why it failed.
    pub tree: Result<Script, ParseError>,
    /// Output limits lifted out of the command (fallbacks for explicit ones).
    pub limits: Limits,
    /// Working directory lifted from a leading `cd DIR &&`, if any.
    pub cwd: Option<String>,
    /// Every rewrite made.
    pub rewrites: Vec<Rewrite>,
}

impl Normalized {
    /// A normalized command that is the input unchanged (parsed as it is).
    pub fn unchanged(command: &str) -> Self {
        Self {
            script: command.to_owned(),
            tree: parse(command),
            ..Self::empty(command)
        }
    }

    /// Fields for `command` with an empty script and no tree yet.
    fn empty(command: &str) -> Self {
        Self {
            original: command.to_owned(),
            script: String::new(),
            tree: Ok(Script {
                list: ast::List {
                    items: Vec::new(),
                    span: ast::Span::default(),
                },
                comments: Vec::new(),
                span: ast::Span::default(),
            }),
            limits: Limits::default(),
            cwd: None,
            rewrites: Vec::new(),
        }
    }

    /// Whether the script parsed.
    pub fn parsed(&self) -> bool {
        self.tree.is_ok()
    }
}

/// What the caller already decided about a command, given to the normalizer up front so no later
/// stage has to undo a rewrite.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NormalizeContext {
    /// The request names its own working directory: a leading `cd DIR &&` stays in the script (N-4
    /// does not apply).
    pub explicit_cwd: bool,
    /// Keep trailing `| head`/`| tail` stages in the script (N-2 does not apply): for a terminal run,
    /// where the tool cannot close the command's output the way the real `head` closes its pipe.
    pub keep_limiters: bool,
}

impl NormalizeContext {
    /// Set [`NormalizeContext::explicit_cwd`].
    #[must_use]
    pub fn with_explicit_cwd(mut self, on: bool) -> Self {
        self.explicit_cwd = on;
        self
    }

    /// Set [`NormalizeContext::keep_limiters`].
    #[must_use]
    pub fn with_keep_limiters(mut self, on: bool) -> Self {
        self.keep_limiters = on;
        self
    }
}

/// Turns a raw command into a [`Normalized`] one.
pub trait Normalizer {
    /// Normalize `command` in `ctx`. Never fails: what cannot be understood is left as it is.
    fn normalize_with(&self, command: &str, ctx: &NormalizeContext) -> Normalized;

    /// Normalize `command` with the default context.
    fn normalize(&self, command: &str) -> Normalized {
        self.normalize_with(command, &NormalizeContext::default())
    }
}

impl<N: Normalizer + ?Sized> Normalizer for &N {
    fn normalize_with(&self, command: &str, ctx: &NormalizeContext) -> Normalized {
        (**self).normalize_with(command, ctx)
    }
}

impl<N: Normalizer + ?Sized> Normalizer for Box<N> {
    fn normalize_with(&self, command: &str, ctx: &NormalizeContext) -> Normalized {
        (**self).normalize_with(command, ctx)
    }
}

impl<N: Normalizer + ?Sized> Normalizer for std::sync::Arc<N> {
    fn normalize_with(&self, command: &str, ctx: &NormalizeContext) -> Normalized {
        (**self).normalize_with(command, ctx)
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
