//! Parse errors: a value with a byte position, never a panic.

/// Why a command could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("syntax error at byte {offset}: {kind}")]
pub struct ParseError {
    /// Byte offset in the parsed source where the problem was found.
    pub offset: usize,
    /// What went wrong.
    pub kind: ParseErrorKind,
}

/// The kinds of [`ParseError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A token that cannot appear here (e.g. `fi` without `if`, `;;` outside `case`, a stray `)`).
    #[error("unexpected token `{0}`")]
    UnexpectedToken(String),
    /// Input ended inside a construct.
    #[error("unexpected end of input while looking for {0}")]
    UnexpectedEnd(&'static str),
    /// A redirect operator without a target word.
    #[error("missing word after redirection `{0}`")]
    MissingRedirectTarget(&'static str),
    /// Nesting deeper than the parser allows (bounds stack use on hostile input).
    #[error("nesting deeper than {0} levels")]
    TooDeep(usize),
    /// The input is larger than the parser accepts.
    #[error("input longer than {0} bytes")]
    TooLong(usize),
}

impl ParseError {
    pub(crate) fn new(offset: usize, kind: ParseErrorKind) -> Self {
        Self { offset, kind }
    }
}
