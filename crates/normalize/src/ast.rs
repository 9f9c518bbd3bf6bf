//! The syntax tree: every node carries the byte span of the source text it was parsed from.
//!
//! Spans are byte offsets into the string that was parsed (for [`crate::Normalized::tree`], the
//! normalized `script`). They always fall on UTF-8 character boundaries, because the parser only
//! ever stops on ASCII bytes.

pub use crate::parts::Parts;
pub use crate::text::Text;

/// A half-open byte range `start..end` of the parsed source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// A span from `start` to `end`.
    pub const fn new(start: usize, end: usize) -> Self {
        Self { start, end }
    }

    /// Length in bytes.
    pub const fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the span covers no bytes.
    pub const fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The text this span covers in `source`.
    pub fn slice<'s>(&self, source: &'s str) -> &'s str {
        &source[self.start..self.end]
    }
}

/// A whole parsed script (the top level, or the inside of `$(…)`, `<(…)` and backticks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    /// The commands.
    pub list: List,
    /// Spans of the comments (`# …` up to, not including, the newline) in this script, nested
    /// substitutions included.
    pub comments: Vec<Span>,
    /// The covered source.
    pub span: Span,
}

/// A sequence of and-or lists separated by `;`, `&` or newlines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    /// The items in source order.
    pub items: Vec<ListItem>,
    /// The covered source.
    pub span: Span,
}

/// One and-or list with the separator that ended it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListItem {
    /// The and-or list.
    pub and_or: AndOr,
    /// `;`, `&` or newline; `None` for the last item when nothing followed it.
    pub terminator: Option<Terminator>,
}

/// What ended a list item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminator {
    /// `;`
    Semicolon,
    /// `&` (the item runs in the background).
    Background,
    /// A newline.
    Newline,
}

/// Pipelines joined by `&&` and `||`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// The following pipelines with the operator before each.
    pub rest: Vec<(AndOrOp, Pipeline)>,
    /// The covered source.
    pub span: Span,
}

impl AndOr {
    /// All pipelines in source order.
    pub fn pipelines(&self) -> impl Iterator<Item = &Pipeline> {
        std::iter::once(&self.first).chain(self.rest.iter().map(|(_, p)| p))
    }
}

/// `&&` or `||`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AndOrOp {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// Commands joined by `|` or `|&`, optionally negated with `!` or timed with `time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    /// A leading `!` (an odd number of them).
    pub negated: bool,
    /// A leading `time` (`time -p` sets [`Pipeline::time_posix`] too).
    pub timed: bool,
    /// `time -p`.
    pub time_posix: bool,
    /// The stages.
    pub commands: Vec<Command>,
    /// The operators between stages (`commands.len() - 1` of them).
    pub pipes: Vec<Pipe>,
    /// The covered source.
    pub span: Span,
}

/// One pipe operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pipe {
    /// `|&` (stderr is piped as well).
    pub with_stderr: bool,
    /// The operator itself.
    pub span: Span,
}

/// One stage of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Assignments, words and redirects.
    Simple(SimpleCommand),
    /// A compound command with its redirects (boxed: it is much larger than a simple command).
    Compound(Box<CompoundCommand>),
    /// `name() body` or `function name body`.
    Function(FunctionDef),
}

impl Command {
    /// The covered source.
    pub fn span(&self) -> Span {
        match self {
            Command::Simple(c) => c.span,
            Command::Compound(c) => c.span,
            Command::Function(f) => f.span,
        }
    }
}

/// A simple command: `VAR=x cmd arg 2>&1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` words.
    pub assignments: Vec<Assignment>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Redirects, in source order (wherever they stood).
    pub redirects: Vec<Redirect>,
    /// The covered source.
    pub span: Span,
}

/// `NAME=value`, `NAME+=value`, `NAME[i]=value` or `NAME=(a b c)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable name (without any `[index]`).
    pub name: String,
    /// `+=`.
    pub append: bool,
    /// The whole assignment word, value included.
    pub word: Word,
    /// The covered source.
    pub span: Span,
}

/// A redirect such as `> f`, `2>&1`, `&>> log`, `<<< "$x"` or `<<-EOF`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// An explicit descriptor (`2>`) or `{var}>`; `None` means the operator's default.
    pub fd: Option<RedirectFd>,
    /// The operator.
    pub op: RedirectOp,
    /// The target word (for heredocs, the delimiter word).
    pub target: Word,
    /// The body, for `<<` and `<<-`.
    pub heredoc: Option<Heredoc>,
    /// The covered source (the heredoc body excluded).
    pub span: Span,
}

/// The descriptor written before a redirect operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectFd {
    /// `2>`
    Number(u32),
    /// `{name}>` (bash allocates a descriptor into `name`).
    Variable(String),
}

/// Redirect operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Input,
    /// `>`
    Output,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupInput,
    /// `>&`
    DupOutput,
    /// `&>`
    OutputAll,
    /// `&>>`
    AppendAll,
    /// `<<`
    Heredoc,
    /// `<<-`
    HeredocStripTabs,
    /// `<<<`
    HereString,
}

impl RedirectOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectOp::Input => "<",
            RedirectOp::Output => ">",
            RedirectOp::Append => ">>",
            RedirectOp::Clobber => ">|",
            RedirectOp::ReadWrite => "<>",
            RedirectOp::DupInput => "<&",
            RedirectOp::DupOutput => ">&",
            RedirectOp::OutputAll => "&>",
            RedirectOp::AppendAll => "&>>",
            RedirectOp::Heredoc => "<<",
            RedirectOp::HeredocStripTabs => "<<-",
            RedirectOp::HereString => "<<<",
        }
    }

    /// Whether the redirect may write to a file (`>`, `>>`, `>|`, `<>`, `&>`, `&>>`, and `>&`
    /// with a non-numeric target).
    pub fn may_write(self) -> bool {
        matches!(
            self,
            RedirectOp::Output
                | RedirectOp::Append
                | RedirectOp::Clobber
                | RedirectOp::ReadWrite
                | RedirectOp::OutputAll
                | RedirectOp::AppendAll
                | RedirectOp::DupOutput
        )
    }
}

/// A here-document body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    /// The delimiter after quote removal.
    pub delimiter: String,
    /// Whether the delimiter was quoted (then the body is not expanded).
    pub quoted: bool,
    /// `<<-`: leading tabs are stripped from body lines and the delimiter line.
    pub strip_tabs: bool,
    /// The body text as the command receives it before expansion (tabs stripped for `<<-`).
    pub body: String,
    /// The raw body lines in the source (delimiter line excluded).
    pub body_span: Span,
    /// Whether the delimiter line was found (bash accepts end of input, with a warning).
    pub terminated: bool,
    pub(crate) slot: usize,
}

/// A compound command and the redirects that follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompoundCommand {
    /// What kind of compound.
    pub kind: CompoundKind,
    /// Redirects after the closing keyword.
    pub redirects: Vec<Redirect>,
    /// The covered source.
    pub span: Span,
}

/// The compound commands of bash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompoundKind {
    /// `( list )`
    Subshell(List),
    /// `{ list; }`
    Group(List),
    /// `if c; then b; elif c; then b; else b; fi`
    If {
        /// `(condition, body)` for `if` and each `elif`.
        branches: Vec<(List, List)>,
        /// The `else` body.
        else_body: Option<List>,
    },
    /// `while c; do b; done`
    While {
        /// The condition.
        condition: List,
        /// The body.
        body: List,
    },
    /// `until c; do b; done`
    Until {
        /// The condition.
        condition: List,
        /// The body.
        body: List,
    },
    /// `for x in w…; do b; done` (also `select`)
    For {
        /// `select` instead of `for`.
        select: bool,
        /// The loop variable.
        variable: String,
        /// The words after `in`; `None` when there was no `in` (iterates `"$@"`).
        words: Option<Vec<Word>>,
        /// The body.
        body: List,
    },
    /// `for (( init; cond; step )); do b; done` — the header is arithmetic, kept opaque.
    ArithmeticFor {
        /// The `(( … ))` header.
        header: Span,
        /// The body.
        body: List,
    },
    /// `case w in p|q) b;; esac`
    Case {
        /// The word matched.
        subject: Word,
        /// The arms.
        arms: Vec<CaseArm>,
    },
    /// `(( expression ))` — opaque.
    Arithmetic {
        /// The expression between the parentheses.
        expression: Span,
    },
    /// `[[ expression ]]` — opaque.
    Conditional {
        /// The expression between the brackets.
        expression: Span,
    },
}

impl CompoundKind {
    /// Whether the parser kept this node's inside as an unclassified span (`(( … ))`, `[[ … ]]`):
    /// later stages must not guess what it does.
    pub fn is_opaque(&self) -> bool {
        matches!(
            self,
            CompoundKind::Arithmetic { .. } | CompoundKind::Conditional { .. }
        )
    }
}

/// One arm of a `case`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseArm {
    /// The patterns separated by `|`.
    pub patterns: Vec<Word>,
    /// The body (may be empty).
    pub body: List,
    /// `;;`, `;&` or `;;&`; `None` for a last arm without one.
    pub terminator: Option<CaseTerminator>,
    /// The covered source.
    pub span: Span,
}

/// How a case arm ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseTerminator {
    /// `;;`
    Break,
    /// `;&`
    FallThrough,
    /// `;;&`
    Continue,
}

/// A function definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDef {
    /// The name.
    pub name: String,
    /// The body (a compound command).
    pub body: Box<CompoundCommand>,
    /// The covered source.
    pub span: Span,
}

/// A shell word: quoted and unquoted pieces and expansions, concatenated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The pieces in order.
    pub parts: Parts,
    /// Whether an unquoted brace expansion (`{a,b}`, `{1..3}`) occurs.
    pub brace_expansion: bool,
    /// The covered source.
    pub span: Span,
}

/// One piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordPart {
    /// Unquoted text, backslash escapes resolved.
    Literal {
        /// The text.
        value: Text,
        /// The covered source.
        span: Span,
    },
    /// `'…'`
    SingleQuoted {
        /// The text between the quotes.
        value: Text,
        /// The covered source.
        span: Span,
    },
    /// `$'…'` with its escapes decoded.
    AnsiC {
        /// The decoded text.
        value: Text,
        /// False when the decoded bytes were not valid UTF-8 (the value is then lossy).
        exact: bool,
        /// The covered source.
        span: Span,
    },
    /// `"…"` (or `$"…"`).
    DoubleQuoted {
        /// The pieces inside.
        parts: Vec<WordPart>,
        /// `$"…"` (locale translation).
        locale: bool,
        /// The covered source.
        span: Span,
    },
    /// `$name`, `$1`, `$@`, `${…}`.
    Parameter {
        /// The name for simple forms, otherwise the text between the braces.
        name: Text,
        /// Written with braces.
        braced: bool,
        /// The covered source.
        span: Span,
    },
    /// `$(…)` or `` `…` ``.
    CommandSubstitution {
        /// The parsed inside; `None` when it could not be parsed in place (backticks containing
        /// escapes, or content bash itself only parses when it runs) — treat as opaque.
        script: Option<Box<Script>>,
        /// Written with backticks.
        backtick: bool,
        /// The covered source.
        span: Span,
    },
    /// `$(( … ))` or `$[ … ]` — opaque.
    Arithmetic {
        /// The expression.
        expression: Span,
        /// The covered source.
        span: Span,
    },
    /// `<(…)` (`input == true`) or `>(…)`.
    ProcessSubstitution {
        /// The parsed inside.
        script: Box<Script>,
        /// `<(…)`.
        input: bool,
        /// The covered source.
        span: Span,
    },
    /// An unquoted glob character: `*`, `?` or a `[` that has a closing `]`.
    Glob {
        /// The covered source.
        span: Span,
    },
    /// An unquoted tilde prefix (`~`, `~user`) that bash expands.
    Tilde {
        /// The user name after `~` (empty for the current user).
        user: Text,
        /// The covered source.
        span: Span,
    },
    /// `NAME=( … )` array elements.
    Array {
        /// The element words.
        elements: Vec<Word>,
        /// The covered source, parentheses included.
        span: Span,
    },
}

impl WordPart {
    /// Whether this part is kept as an unclassified span: arithmetic, or a command substitution
    /// whose inside could not be parsed in place.
    pub fn is_opaque(&self) -> bool {
        matches!(
            self,
            WordPart::Arithmetic { .. } | WordPart::CommandSubstitution { script: None, .. }
        )
    }

    /// The covered source.
    pub fn span(&self) -> Span {
        match self {
            WordPart::Literal { span, .. }
            | WordPart::SingleQuoted { span, .. }
            | WordPart::AnsiC { span, .. }
            | WordPart::DoubleQuoted { span, .. }
            | WordPart::Parameter { span, .. }
            | WordPart::CommandSubstitution { span, .. }
            | WordPart::Arithmetic { span, .. }
            | WordPart::ProcessSubstitution { span, .. }
            | WordPart::Glob { span }
            | WordPart::Tilde { span, .. }
            | WordPart::Array { span, .. } => *span,
        }
    }
}
