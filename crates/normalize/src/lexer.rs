//! The cursor under the parser: bytes, blanks, comments, operators and reserved words.
//!
//! Bash tokenizes according to the grammar position (reserved words only count where a command
//! starts, `<(` starts a word, `#` starts a comment only at a token start), so the lexer is a set of
//! small look-ahead helpers that the parser calls rather than a separate token stream.

use crate::ast::Span;
use crate::error::{ParseError, ParseErrorKind};

/// Deepest nesting accepted; bounds stack use on hostile input.
pub(crate) const MAX_DEPTH: usize = 128;

/// Words bash treats as reserved where a command starts.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "select",
    "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// A pending here-document whose body starts after the next newline.
#[derive(Debug)]
pub(crate) struct PendingHeredoc {
    pub(crate) slot: usize,
    pub(crate) delimiter: String,
    pub(crate) strip_tabs: bool,
}

/// A here-document body read from the source.
#[derive(Debug, Default, Clone)]
pub(crate) struct HeredocBody {
    pub(crate) text: String,
    pub(crate) span: Span,
    pub(crate) terminated: bool,
}

/// Parser state: the source, the position and what is waiting for the next newline.
pub(crate) struct Parser<'a> {
    pub(crate) src: &'a str,
    pub(crate) b: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) depth: usize,
    pub(crate) pending: Vec<PendingHeredoc>,
    pub(crate) bodies: Vec<HeredocBody>,
    pub(crate) comments: Vec<Span>,
    pub(crate) next_slot: usize,
}

pub(crate) type PResult<T> = Result<T, ParseError>;

/// Bytes that end an unquoted word.
pub(crate) const fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// Bytes allowed in a variable name after the first.
pub(crate) fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Bytes allowed first in a variable name.
pub(crate) fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, pos: usize) -> Self {
        Self {
            src,
            b: src.as_bytes(),
            pos,
            depth: 0,
            pending: Vec::new(),
            bodies: Vec::new(),
            comments: Vec::new(),
            next_slot: 0,
        }
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    pub(crate) fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.pos + n).copied()
    }

    pub(crate) fn at_eof(&self) -> bool {
        self.pos >= self.b.len()
    }

    pub(crate) fn starts_with(&self, s: &str) -> bool {
        self.b[self.pos.min(self.b.len())..].starts_with(s.as_bytes())
    }

    pub(crate) fn err<T>(&self, kind: ParseErrorKind) -> PResult<T> {
        Err(ParseError::new(self.pos, kind))
    }

    /// An "unexpected token" error naming what is at the cursor.
    pub(crate) fn unexpected<T>(&self) -> PResult<T> {
        if self.at_eof() {
            return self.err(ParseErrorKind::UnexpectedEnd("a command"));
        }
        let tok = self
            .operator_at()
            .map_or_else(|| self.run_at().to_owned(), str::to_owned);
        let tok = if tok.is_empty() {
            self.src[self.pos..]
                .chars()
                .next()
                .map(String::from)
                .unwrap_or_default()
        } else {
            tok
        };
        self.err(ParseErrorKind::UnexpectedToken(tok))
    }

    /// Enter one nesting level; fails past [`MAX_DEPTH`].
    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(ParseErrorKind::TooDeep(MAX_DEPTH));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skip spaces, tabs, backslash-newline continuations and a comment (not the newline).
    pub(crate) fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                Some(b'#') => {
                    let start = self.pos;
                    let end = memchr_newline(self.b, self.pos);
                    self.comments.push(Span::new(start, end));
                    self.pos = end;
                }
                _ => return,
            }
        }
    }

    /// Consume one newline and then the bodies of the here-documents waiting for it.
    pub(crate) fn newline(&mut self) {
        debug_assert_eq!(self.peek(), Some(b'\n'));
        self.pos += 1;
        if !self.pending.is_empty() {
            self.read_heredoc_bodies();
        }
    }

    /// Skip blanks, comments and newlines (reading here-document bodies on the way).
    pub(crate) fn skip_linebreaks(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() == Some(b'\n') {
                self.newline();
            } else {
                return;
            }
        }
    }

    /// The maximal run of non-meta bytes at the cursor (how a reserved word is recognized).
    pub(crate) fn run_at(&self) -> &'a str {
        let mut end = self.pos;
        while end < self.b.len() && !is_meta(self.b[end]) {
            end += 1;
        }
        &self.src[self.pos.min(end)..end]
    }

    /// The reserved word at the cursor, if the next token is exactly one.
    pub(crate) fn reserved_at(&self) -> Option<&'static str> {
        // Fast exit: every reserved word starts with one of these bytes.
        if !matches!(
            self.peek(),
            Some(
                b'i' | b't'
                    | b'e'
                    | b'f'
                    | b'd'
                    | b'c'
                    | b'w'
                    | b'u'
                    | b's'
                    | b'{'
                    | b'}'
                    | b'!'
                    | b'['
                    | b']'
            )
        ) {
            return None;
        }
        let run = self.run_at();
        RESERVED.iter().copied().find(|r| *r == run)
    }

    /// Consume `word` (a reserved word known to be at the cursor).
    pub(crate) fn bump(&mut self, word: &str) {
        self.pos += word.len();
    }

    /// Expect the reserved word `word` next (after blanks and newlines).
    pub(crate) fn expect_reserved(&mut self, word: &'static str) -> PResult<()> {
        self.skip_linebreaks();
        if self.reserved_at() == Some(word) {
            self.bump(word);
            Ok(())
        } else if self.at_eof() {
            self.err(ParseErrorKind::UnexpectedEnd(word))
        } else {
            self.unexpected()
        }
    }

    /// The control operator at the cursor, longest match first.
    pub(crate) fn operator_at(&self) -> Option<&'static str> {
        const OPS: &[&str] = &[
            ";;&", "&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">|", "<>", "<&", ">&",
            "<<", ";", "&", "|", "(", ")", "<", ">", "\n",
        ];
        OPS.iter().copied().find(|op| self.starts_with(op))
    }

    /// Whether the cursor is at `;;`, `;&` or `;;&` (a case-arm terminator).
    pub(crate) fn at_case_terminator(&self) -> bool {
        self.starts_with(";;") || self.starts_with(";&")
    }
}

/// Offset of the next `\n` at or after `from`, or the end.
pub(crate) fn memchr_newline(b: &[u8], from: usize) -> usize {
    b[from..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |i| from + i)
}
