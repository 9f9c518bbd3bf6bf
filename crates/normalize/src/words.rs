//! Scanning of words: quoting, escapes and expansions, exactly as bash splits them.

use crate::ansi_c;
use crate::ast::{Parts, Script, Span, Text, Word, WordPart};
use crate::error::ParseErrorKind;
use crate::lexer::{PResult, Parser, is_meta, is_name_byte, is_name_start};

/// Where flushed literal parts go: a word's [`Parts`] or the parts inside double quotes.
trait PartSink {
    fn push_part(&mut self, part: WordPart);
}

impl PartSink for Parts {
    fn push_part(&mut self, part: WordPart) {
        self.push(part);
    }
}

impl PartSink for Vec<WordPart> {
    fn push_part(&mut self, part: WordPart) {
        self.push(part);
    }
}

/// Unquoted literal text being accumulated, with where it started. While every piece pushed is
/// the source text right after the previous one (the common case: no escapes), only the range is
/// tracked and the value is copied once at the flush; an escape switches to an owned buffer.
struct LitBuf<'a> {
    src: &'a str,
    start: usize,
    /// End of the verbatim range `start..end` when `owned` is `None`.
    end: usize,
    empty: bool,
    owned: Option<String>,
}

impl<'a> LitBuf<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            start: 0,
            end: 0,
            empty: true,
            owned: None,
        }
    }

    fn begin(&mut self, at: usize) {
        if self.empty {
            self.start = at;
            self.end = at;
            self.empty = false;
        }
    }

    /// Append the source text `at..end` (kept as a range while it continues the previous piece).
    fn push_source(&mut self, at: usize, end: usize) {
        if at == end {
            return;
        }
        self.begin(at);
        match &mut self.owned {
            Some(owned) => owned.push_str(&self.src[at..end]),
            None if at == self.end => self.end = end,
            None => {
                let src = self.src;
                self.switch_to_owned(&src[at..end]);
            }
        }
    }

    /// Append text that differs from the source at `at` (an escape's result).
    fn push_decoded(&mut self, at: usize, s: &str) {
        self.begin(at);
        match &mut self.owned {
            Some(owned) => owned.push_str(s),
            None => self.switch_to_owned(s),
        }
    }

    /// Switch to an owned buffer holding the range so far followed by `s`.
    fn switch_to_owned(&mut self, s: &str) {
        let mut owned = String::with_capacity(self.end - self.start + s.len() + 8);
        owned.push_str(&self.src[self.start..self.end]);
        owned.push_str(s);
        self.owned = Some(owned);
    }

    fn flush(&mut self, end: usize, parts: &mut impl PartSink) {
        if self.empty {
            return;
        }
        let value = match self.owned.take() {
            Some(owned) => Text::from(owned),
            None => Text::from(&self.src[self.start..self.end]),
        };
        self.empty = true;
        parts.push_part(WordPart::Literal {
            value,
            span: Span::new(self.start, end),
        });
    }
}

/// Bytes that need attention inside an unquoted word.
fn is_word_special(b: u8) -> bool {
    WORD_SPECIAL[usize::from(b)]
}

/// [`is_word_special`] as a table: it runs once per byte of every unquoted word.
static WORD_SPECIAL: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 256 {
        #[allow(clippy::cast_possible_truncation)] // `i < 256`
        let b = i as u8;
        table[i] = is_meta(b)
            || matches!(
                b,
                b'\\' | b'\'' | b'"' | b'$' | b'`' | b'*' | b'?' | b'[' | b'~' | b'{' | b'}' | b','
            );
        i += 1;
    }
    table
};

/// If `raw` starts like an assignment (`NAME=`, `NAME+=`, `NAME[…]=`), the index of its `=`.
pub(crate) fn assignment_eq(raw: &str) -> Option<usize> {
    let b = raw.as_bytes();
    if b.is_empty() || !is_name_start(b[0]) {
        return None;
    }
    let mut i = 1;
    while i < b.len() && is_name_byte(b[i]) {
        i += 1;
    }
    if i < b.len() && b[i] == b'[' {
        let close = b[i..].iter().position(|&c| c == b']')?;
        i += close + 1;
    }
    if i < b.len() && b[i] == b'+' {
        i += 1;
    }
    (i < b.len() && b[i] == b'=').then_some(i)
}

/// Whether `s` (the text between braces) is a bash sequence expression like `1..5` or `a..e..2`.
fn is_sequence(s: &str) -> bool {
    let parts: Vec<&str> = s.split("..").collect();
    let int = |p: &str| {
        let d = p.strip_prefix('-').unwrap_or(p);
        !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())
    };
    let letter = |p: &str| p.len() == 1 && p.as_bytes()[0].is_ascii_alphabetic();
    match parts.as_slice() {
        [a, b] => (int(a) && int(b)) || (letter(a) && letter(b)),
        [a, b, c] => ((int(a) && int(b)) || (letter(a) && letter(b))) && int(c),
        _ => false,
    }
}

impl Parser<'_> {
    /// Scan one word at the cursor. `allow_array` permits `NAME=( … )`.
    pub(crate) fn scan_word(&mut self, allow_array: bool) -> PResult<Word> {
        let start = self.pos;
        // Most words are one part, which `Parts` keeps inline.
        let mut parts = Parts::new();
        let mut lit = LitBuf::new(self.src);
        let mut braces: Vec<(usize, bool)> = Vec::new();
        let mut brace_expansion = false;
        let mut bracket_scan = None;
        while let Some(c) = self.peek() {
            match c {
                b'<' | b'>' if self.pos == start && self.peek_at(1) == Some(b'(') => {
                    let part = self.process_substitution()?;
                    parts.push(part);
                }
                b'(' if allow_array
                    && assignment_eq(&self.src[start..self.pos])
                        .is_some_and(|eq| start + eq + 1 == self.pos) =>
                {
                    lit.flush(self.pos, &mut parts);
                    let part = self.array_elements()?;
                    parts.push(part);
                }
                c if is_meta(c) => break,
                b'\\' => match self.peek_at(1) {
                    None => {
                        lit.push_source(self.pos, self.pos + 1);
                        self.pos += 1;
                    }
                    Some(b'\n') => self.pos += 2,
                    Some(_) => {
                        let ch = self.src[self.pos + 1..].chars().next().unwrap_or('\\');
                        let at = self.pos;
                        lit.push_decoded(at, ch.encode_utf8(&mut [0u8; 4]));
                        self.pos += 1 + ch.len_utf8();
                    }
                },
                b'\'' => {
                    lit.flush(self.pos, &mut parts);
                    let part = self.single_quoted()?;
                    parts.push(part);
                }
                b'"' => {
                    lit.flush(self.pos, &mut parts);
                    let part = self.double_quoted(self.pos, false)?;
                    parts.push(part);
                }
                b'$' => {
                    let at = self.pos;
                    if let Some(part) = self.dollar(false)? {
                        lit.flush(at, &mut parts);
                        parts.push(part);
                    } else {
                        lit.push_source(at, at + 1);
                        self.pos += 1;
                    }
                }
                b'`' => {
                    lit.flush(self.pos, &mut parts);
                    let part = self.backtick()?;
                    parts.push(part);
                }
                b'*' | b'?' => {
                    lit.flush(self.pos, &mut parts);
                    parts.push(WordPart::Glob {
                        span: Span::new(self.pos, self.pos + 1),
                    });
                    self.pos += 1;
                }
                b'[' if self.has_closing_bracket(&mut bracket_scan) => {
                    lit.flush(self.pos, &mut parts);
                    parts.push(WordPart::Glob {
                        span: Span::new(self.pos, self.pos + 1),
                    });
                    self.pos += 1;
                }
                b'~' if self.tilde_expands(start) => {
                    lit.flush(self.pos, &mut parts);
                    let part = self.tilde();
                    parts.push(part);
                }
                b'{' => {
                    braces.push((self.pos, false));
                    lit.push_source(self.pos, self.pos + 1);
                    self.pos += 1;
                }
                b',' => {
                    if let Some(top) = braces.last_mut() {
                        top.1 = true;
                    }
                    lit.push_source(self.pos, self.pos + 1);
                    self.pos += 1;
                }
                b'}' => {
                    if let Some((open, comma)) = braces.pop()
                        && (comma || is_sequence(&self.src[open + 1..self.pos]))
                    {
                        brace_expansion = true;
                    }
                    lit.push_source(self.pos, self.pos + 1);
                    self.pos += 1;
                }
                _ => {
                    let from = self.pos;
                    while self.pos < self.b.len() && !is_word_special(self.b[self.pos]) {
                        self.pos += 1;
                    }
                    if self.pos == from {
                        // `[` without `]` or a `~` that does not expand: plain text.
                        self.pos += 1;
                    }
                    lit.push_source(from, self.pos);
                }
            }
        }
        lit.flush(self.pos, &mut parts);
        Ok(Word {
            parts,
            brace_expansion,
            span: Span::new(start, self.pos),
        })
    }

    /// `[` opens a glob bracket expression only when a `]` follows within the word. `scan`
    /// caches (end of the scanned run, last `]` in it) so a word full of `[` stays linear.
    fn has_closing_bracket(&self, scan: &mut Option<(usize, Option<usize>)>) -> bool {
        let fresh = match *scan {
            Some((end, _)) => self.pos >= end,
            None => true,
        };
        if fresh {
            let from = self.pos + 1;
            let end = self.b[from..]
                .iter()
                .position(|&c| is_meta(c))
                .map_or(self.b.len(), |i| from + i);
            let last = self.b[from..end]
                .iter()
                .rposition(|&c| c == b']')
                .map(|i| from + i);
            *scan = Some((end, last));
        }
        scan.and_then(|(_, last)| last)
            .is_some_and(|last| last > self.pos)
    }

    /// A tilde expands at the start of a word, and after `=` or `:` in an assignment-like word.
    fn tilde_expands(&self, start: usize) -> bool {
        if self.pos == start {
            return true;
        }
        let prev = self.b[self.pos - 1];
        (prev == b'=' || prev == b':')
            && assignment_eq(&self.src[start..self.pos]).is_some_and(|eq| start + eq < self.pos)
    }

    fn tilde(&mut self) -> WordPart {
        let start = self.pos;
        self.pos += 1;
        let from = self.pos;
        while let Some(c) = self.peek() {
            if c == b'/' || c == b':' || is_word_special(c) {
                break;
            }
            self.pos += 1;
        }
        WordPart::Tilde {
            user: Text::from(&self.src[from..self.pos]),
            span: Span::new(start, self.pos),
        }
    }

    fn single_quoted(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let Some(len) = self.b[start + 1..].iter().position(|&c| c == b'\'') else {
            return self.err(ParseErrorKind::UnexpectedEnd("matching `'`"));
        };
        let end = start + 1 + len;
        self.pos = end + 1;
        Ok(WordPart::SingleQuoted {
            value: Text::from(&self.src[start + 1..end]),
            span: Span::new(start, self.pos),
        })
    }

    /// `"…"` starting at `start` (`$"…"` when `locale`).
    fn double_quoted(&mut self, start: usize, locale: bool) -> PResult<WordPart> {
        self.pos = start + if locale { 2 } else { 1 };
        let mut parts = Vec::new();
        let mut lit = LitBuf::new(self.src);
        loop {
            let Some(c) = self.peek() else {
                return self.err(ParseErrorKind::UnexpectedEnd("matching `\"`"));
            };
            match c {
                b'"' => {
                    lit.flush(self.pos, &mut parts);
                    self.pos += 1;
                    break;
                }
                b'\\' => match self.peek_at(1) {
                    Some(e @ (b'$' | b'`' | b'"' | b'\\')) => {
                        lit.push_decoded(
                            self.pos,
                            if e == b'$' {
                                "$"
                            } else if e == b'`' {
                                "`"
                            } else if e == b'"' {
                                "\""
                            } else {
                                "\\"
                            },
                        );
                        self.pos += 2;
                    }
                    Some(b'\n') => self.pos += 2,
                    _ => {
                        lit.push_source(self.pos, self.pos + 1);
                        self.pos += 1;
                    }
                },
                b'$' => {
                    let at = self.pos;
                    if let Some(part) = self.dollar(true)? {
                        lit.flush(at, &mut parts);
                        parts.push(part);
                    } else {
                        lit.push_source(at, at + 1);
                        self.pos += 1;
                    }
                }
                b'`' => {
                    lit.flush(self.pos, &mut parts);
                    let part = self.backtick()?;
                    parts.push(part);
                }
                _ => {
                    let from = self.pos;
                    while self.pos < self.b.len() && !matches!(self.b[self.pos], b'"' | b'\\' | b'$' | b'`') {
                        self.pos += 1;
                    }
                    lit.push_source(from, self.pos);
                }
            }
        }
        Ok(WordPart::DoubleQuoted {
            parts,
            locale,
            span: Span::new(start, self.pos),
        })
    }

    /// An expansion starting with `$` at the cursor; `None` when the `$` is literal.
    fn dollar(&mut self, in_dquote: bool) -> PResult<Option<WordPart>> {
        let start = self.pos;
        let Some(next) = self.peek_at(1) else {
            return Ok(None);
        };
        let part = match next {
            b'\'' if !in_dquote => self.ansi_c()?,
            b'"' if !in_dquote => self.double_quoted(start, true)?,
            b'{' => self.braced_parameter()?,
            b'(' if self.peek_at(2) == Some(b'(') => self.double_paren_expansion()?,
            b'(' => self.command_substitution()?,
            b'[' => {
                let Some(end) = self.bracket_arith_end(start + 2) else {
                    self.pos = self.b.len();
                    return self.err(ParseErrorKind::UnexpectedEnd("matching `]`"));
                };
                self.pos = end;
                WordPart::Arithmetic {
                    expression: Span::new(start + 2, end - 1),
                    span: Span::new(start, end),
                }
            }
            c if is_name_start(c) => {
                let mut end = start + 2;
                while end < self.b.len() && is_name_byte(self.b[end]) {
                    end += 1;
                }
                self.pos = end;
                WordPart::Parameter {
                    name: Text::from(&self.src[start + 1..end]),
                    braced: false,
                    span: Span::new(start, end),
                }
            }
            c if c.is_ascii_digit() || matches!(c, b'@' | b'*' | b'#' | b'?' | b'-' | b'$' | b'!') => {
                self.pos = start + 2;
                WordPart::Parameter {
                    name: Text::from(&self.src[start + 1..start + 2]),
                    braced: false,
                    span: Span::new(start, start + 2),
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(part))
    }

    fn ansi_c(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let mut i = start + 2;
        loop {
            match self.b.get(i) {
                None => {
                    self.pos = self.b.len();
                    return self.err(ParseErrorKind::UnexpectedEnd("matching `'`"));
                }
                Some(b'\\') => i += 2,
                Some(b'\'') => break,
                Some(_) => i += 1,
            }
        }
        let raw = &self.src[start + 2..i];
        let bytes = ansi_c::decode(raw);
        let (value, exact) = match String::from_utf8(bytes) {
            Ok(s) => (s, true),
            Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), false),
        };
        self.pos = i + 1;
        Ok(WordPart::AnsiC {
            value: Text::from(value),
            exact,
            span: Span::new(start, self.pos),
        })
    }

    /// `${…}`: ends at the first unquoted `}` (bash does not count inner braces: `${x:-{a}b}` is
    /// `${x:-{a}` followed by `b}`); quotes and inner expansions are skipped over.
    fn braced_parameter(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        self.pos += 2;
        self.enter()?;
        loop {
            let Some(c) = self.peek() else {
                return self.err(ParseErrorKind::UnexpectedEnd("matching `}`"));
            };
            match c {
                b'\\' => self.skip_escape(),
                b'\'' => {
                    self.single_quoted()?;
                }
                b'"' => {
                    self.double_quoted(self.pos, false)?;
                }
                b'`' => {
                    self.backtick()?;
                }
                b'$' => {
                    if self.dollar(false)?.is_none() {
                        self.pos += 1;
                    }
                }
                b'}' => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        self.leave();
        Ok(WordPart::Parameter {
            name: Text::from(&self.src[start + 2..self.pos - 1]),
            braced: true,
            span: Span::new(start, self.pos),
        })
    }

    /// Step over a backslash and the character it escapes (which may be multi-byte).
    fn skip_escape(&mut self) {
        self.pos += 1;
        if let Some(ch) = self.src[self.pos..].chars().next() {
            self.pos += ch.len_utf8();
        }
    }

    /// `$((`: arithmetic when the parentheses close as `))`; otherwise bash takes the text up to
    /// the matching `)` as a command substitution that it parses only when it runs.
    fn double_paren_expansion(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let Some((end, arithmetic)) = self.match_parens(start + 3) else {
            self.pos = self.b.len();
            return self.err(ParseErrorKind::UnexpectedEnd("matching `)`"));
        };
        self.pos = end;
        if arithmetic {
            return Ok(WordPart::Arithmetic {
                expression: Span::new(start + 3, end - 2),
                span: Span::new(start, end),
            });
        }
        let script = self.parse_in_place(start + 2, end - 1);
        Ok(WordPart::CommandSubstitution {
            script,
            backtick: false,
            span: Span::new(start, end),
        })
    }

    /// Scan from `from` (just after `$((`) to the `)` matching the `$(`, as bash's matched-pair
    /// scan does: quotes, escapes, backticks and nested `$( … )`/`${ … }` are skipped, comments
    /// are not recognized. Returns the offset after it, and whether it closed as `))` (arithmetic).
    fn match_parens(&self, from: usize) -> Option<(usize, bool)> {
        let mut depth = 2usize;
        let mut i = from;
        while i < self.b.len() {
            match self.b[i] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 1 && self.b.get(i + 1) == Some(&b')') {
                        return Some((i + 2, true));
                    }
                    if depth == 0 {
                        return Some((i + 1, false));
                    }
                }
                _ => {
                    i = self.skip_quoted(i, 0)?;
                    continue;
                }
            }
            i += 1;
        }
        None
    }

    /// If a quote, escape, backtick or nested expansion starts at `i`, the offset after it;
    /// otherwise `i + 1`. `None` when it is unterminated (or nests deeper than the parser allows).
    fn skip_quoted(&self, i: usize, level: usize) -> Option<usize> {
        if level > crate::lexer::MAX_DEPTH {
            return None;
        }
        let b = self.b;
        let find = |from: usize, c: u8| b[from..].iter().position(|&x| x == c).map(|p| from + p);
        Some(match b[i] {
            b'\\' => i + 2,
            b'\'' if i > 0 && b[i - 1] == b'$' => {
                let mut j = i + 1;
                while *b.get(j)? != b'\'' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                j + 1
            }
            b'\'' => find(i + 1, b'\'')? + 1,
            b'`' => {
                let mut j = i + 1;
                while *b.get(j)? != b'`' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                j + 1
            }
            b'"' => {
                let mut j = i + 1;
                loop {
                    match *b.get(j)? {
                        b'"' => break j + 1,
                        b'\\' => j += 2,
                        b'$' | b'`' => j = self.skip_quoted(j, level + 1)?,
                        _ => j += 1,
                    }
                }
            }
            b'$' if b.get(i + 1) == Some(&b'(') => {
                let mut depth = 1usize;
                let mut j = i + 2;
                loop {
                    match *b.get(j)? {
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break j + 1;
                            }
                        }
                        _ => {
                            j = self.skip_quoted(j, level + 1)?;
                            continue;
                        }
                    }
                    j += 1;
                }
            }
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let mut j = i + 2;
                loop {
                    if *b.get(j)? == b'}' {
                        break j + 1;
                    }
                    j = self.skip_quoted(j, level + 1)?;
                }
            }
            _ => i + 1,
        })
    }

    /// Parse `start..end` of the source on its own (content bash parses only when it runs):
    /// `None` when it does not parse.
    fn parse_in_place(&self, start: usize, end: usize) -> Option<Box<Script>> {
        if self.depth >= crate::lexer::MAX_DEPTH {
            return None;
        }
        let mut inner = Parser::new(&self.src[..end], start);
        inner.depth = self.depth + 1;
        inner.parse_script().ok().map(Box::new)
    }

    /// Given the offset just after `$[`, the offset after the matching `]`.
    fn bracket_arith_end(&self, from: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, &c) in self.b.iter().enumerate().skip(from) {
            match c {
                b'[' => depth += 1,
                b']' if depth == 0 => return Some(i + 1),
                b']' => depth -= 1,
                _ => {}
            }
        }
        None
    }

    /// `$( … )`: the inside is parsed as a script, as bash 5.2 does.
    fn command_substitution(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let script = self.nested_script(start + 2)?;
        Ok(WordPart::CommandSubstitution {
            script: Some(Box::new(script)),
            backtick: false,
            span: Span::new(start, self.pos),
        })
    }

    /// `<( … )` or `>( … )`.
    fn process_substitution(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let input = self.b[start] == b'<';
        let script = self.nested_script(start + 2)?;
        Ok(WordPart::ProcessSubstitution {
            script: Box::new(script),
            input,
            span: Span::new(start, self.pos),
        })
    }

    /// Parse a script from `from` up to a closing `)`, which is consumed.
    fn nested_script(&mut self, from: usize) -> PResult<Script> {
        self.pos = from;
        let first_comment = self.comments.len();
        self.enter()?;
        // Here-documents of the enclosing line wait for a newline outside the parentheses.
        let outer = std::mem::take(&mut self.pending);
        let list = self.parse_list()?;
        self.skip_linebreaks();
        match self.peek() {
            Some(b')') => {}
            None => return self.err(ParseErrorKind::UnexpectedEnd("matching `)`")),
            Some(_) => return self.unexpected(),
        }
        self.pending = outer;
        let mut list = list;
        if self.next_slot > 0 {
            crate::heredoc::fill_bodies(&mut list, &self.bodies);
        }
        let span = Span::new(from, self.pos);
        self.pos += 1;
        self.leave();
        // Comments are recorded in source order: the ones met since `from` are inside.
        let comments = self.comments[first_comment..].to_vec();
        Ok(Script { list, comments, span })
    }

    /// `` `…` ``: parsed in place when it holds no backslash (bash only parses it when it runs,
    /// so a failed parse is not an error: the part is opaque).
    fn backtick(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        let mut i = start + 1;
        let mut escaped = false;
        loop {
            match self.b.get(i) {
                None => {
                    self.pos = self.b.len();
                    return self.err(ParseErrorKind::UnexpectedEnd("matching backquote"));
                }
                Some(b'\\') => {
                    escaped = true;
                    i += 2;
                }
                Some(b'`') => break,
                Some(_) => i += 1,
            }
        }
        let script = if escaped {
            None
        } else {
            self.parse_in_place(start + 1, i)
        };
        self.pos = i + 1;
        Ok(WordPart::CommandSubstitution {
            script,
            backtick: true,
            span: Span::new(start, self.pos),
        })
    }

    /// `NAME=( … )`: the element words, newlines and comments allowed between them.
    fn array_elements(&mut self) -> PResult<WordPart> {
        let start = self.pos;
        self.pos += 1;
        let mut elements = Vec::new();
        loop {
            self.skip_linebreaks();
            match self.peek() {
                None => return self.err(ParseErrorKind::UnexpectedEnd("matching `)`")),
                Some(b')') => {
                    self.pos += 1;
                    break;
                }
                Some(c) if is_meta(c) => return self.unexpected(),
                Some(_) => elements.push(self.scan_word(false)?),
            }
        }
        Ok(WordPart::Array {
            elements,
            span: Span::new(start, self.pos),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{assignment_eq, is_sequence};

    #[test]
    fn recognizes_assignment_prefixes() {
        assert_eq!(assignment_eq("a=1"), Some(1));
        assert_eq!(assignment_eq("a+=1"), Some(2));
        assert_eq!(assignment_eq("a[1]=x"), Some(4));
        assert_eq!(assignment_eq("1a=x"), None);
        assert_eq!(assignment_eq("--x=1"), None);
    }

    #[test]
    fn recognizes_sequences() {
        assert!(is_sequence("1..3"));
        assert!(is_sequence("a..e..2"));
        assert!(!is_sequence("1..b"));
        assert!(!is_sequence("x"));
    }
}
