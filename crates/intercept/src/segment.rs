//! What the analysis of a command produces and the dangerous-command checks read: its
//! judgeable pieces ([`Segment`]), each the command that finally runs after its wrappers
//! ([`Invocation`]), and the shells whose `-c` strings are read as scripts.

use std::path::PathBuf;

use crate::argv::Arg;

/// Shells whose `-c` string (or standard input) the analysis reads as a script.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish",
];

/// Whether `name` is a shell whose `-c` string the analysis reads as a script.
pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// One judgeable piece of a command.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    /// The source text of the piece.
    pub text: String,
    /// What it is.
    pub kind: SegmentKind,
    /// Why it is dangerous (SPEC I-4), if it is.
    pub danger: Option<String>,
    /// Why it drives the engine's own administration (SPEC I-5), if it does.
    pub control: Option<String>,
    /// For a segment that cannot be judged: command lines it may run (a command whose name is only
    /// known at run time, what follows a wrapper option that cannot be read, the text of `eval`),
    /// so deny rules can ask whether it could be one they name.
    pub uncertain: Vec<Vec<Arg>>,
    /// Part of a function's body seen where the function is defined: its arguments (`"$@"`) are
    /// only known where it is called, and it is judged again there with them.
    pub in_definition: bool,
}

/// What a segment is.
#[derive(Debug, Clone)]
pub(crate) enum SegmentKind {
    /// A program or builtin that a rule must allow.
    Run(Invocation),
    /// Nothing that a rule must allow runs (an assignment, `cd`, a test, arithmetic).
    Inert,
    /// It cannot be judged without running it.
    Unjudgeable(String),
}

/// A command after its wrappers were looked through.
#[derive(Debug, Clone)]
pub(crate) struct Invocation {
    /// The command that runs.
    pub argv: Vec<Arg>,
    /// The command as written, wrappers included.
    pub written: Vec<Arg>,
    /// More arguments are appended when it runs (`xargs`).
    pub open_ended: bool,
    /// Run through `sudo`/`doas`.
    pub elevated: bool,
    /// Something that fails the segment whatever the rules say (a file-writing redirect, an
    /// assignment to `PATH`).
    pub problem: Option<String>,
    /// The directory it runs in, when known.
    pub dir: Option<PathBuf>,
    /// Environment keys set for it alone (`KEY=v cmd`, `env KEY=v cmd`), with their values.
    pub assigned: Vec<(String, Arg)>,
    /// A variable that changes where git reads its configuration (`GIT_CONFIG_PARAMETERS`,
    /// `HOME`, …) is set for it, or anywhere in the call or the session: git's aliases are then
    /// only known when it runs.
    pub config_env: Option<String>,
}
