//! The grammar: lists, and-or lists, pipelines, simple and compound commands, redirects.

use crate::ast::{
    AndOr, AndOrOp, Assignment, CaseArm, CaseTerminator, Command, CompoundCommand, CompoundKind, FunctionDef,
    Heredoc, List, ListItem, Pipe, Pipeline, Redirect, RedirectFd, RedirectOp, Script, SimpleCommand, Span,
    Terminator, Word, WordPart,
};
use crate::error::{ParseError, ParseErrorKind};
use crate::lexer::{PResult, Parser, PendingHeredoc, is_meta, is_name_byte, is_name_start};
use crate::words::assignment_eq;

/// Largest input the parser accepts (bounds memory and time on hostile input).
pub const MAX_INPUT: usize = 1 << 20;

/// Parse a complete script.
///
/// ```
/// let script = shellgate_normalize::parse("ls -la | head -n 5").unwrap();
/// assert_eq!(script.list.items[0].and_or.first.commands.len(), 2);
/// ```
pub fn parse(source: &str) -> Result<Script, ParseError> {
    if source.len() > MAX_INPUT {
        return Err(ParseError::new(0, ParseErrorKind::TooLong(MAX_INPUT)));
    }
    Parser::new(source, 0).parse_script()
}

/// Builtins whose `NAME=( … )` arguments are array assignments.
const DECLARATION_BUILTINS: &[&str] = &["declare", "typeset", "local", "export", "readonly"];

/// Reserved words that end a list (the caller decides whether they are expected).
const LIST_ENDERS: &[&str] = &["then", "elif", "else", "fi", "do", "done", "esac", "}"];

impl Parser<'_> {
    /// A whole script up to the end of the source.
    pub(crate) fn parse_script(&mut self) -> PResult<Script> {
        let start = self.pos;
        let mut list = self.parse_list()?;
        self.skip_linebreaks();
        if !self.at_eof() {
            return self.unexpected();
        }
        if !self.pending.is_empty() {
            // A here-document still open at the end of input is empty (bash warns, runs it).
            self.read_heredoc_bodies();
        }
        if self.next_slot > 0 {
            crate::heredoc::fill_bodies(&mut list, &self.bodies);
        }
        let span = Span::new(start, self.b.len());
        let comments = std::mem::take(&mut self.comments);
        Ok(Script { list, comments, span })
    }

    fn at_list_end(&self) -> bool {
        match self.peek() {
            None | Some(b')') => true,
            Some(b';') => self.at_case_terminator(),
            _ => self.reserved_at().is_some_and(|r| LIST_ENDERS.contains(&r)),
        }
    }

    /// Items separated by `;`, `&` or newlines, up to something that cannot start a command.
    pub(crate) fn parse_list(&mut self) -> PResult<List> {
        self.enter()?;
        let mut items = Vec::with_capacity(1);
        let mut span = Span::new(self.pos, self.pos);
        loop {
            self.skip_linebreaks();
            if self.at_list_end() {
                break;
            }
            let and_or = self.parse_and_or()?;
            if items.is_empty() {
                span.start = and_or.span.start;
            }
            span.end = and_or.span.end;
            self.skip_blanks();
            let terminator = match self.peek() {
                Some(b';') if !self.at_case_terminator() => {
                    self.pos += 1;
                    Some(Terminator::Semicolon)
                }
                Some(b'&') if !matches!(self.peek_at(1), Some(b'&' | b'>')) => {
                    self.pos += 1;
                    Some(Terminator::Background)
                }
                Some(b'\n') => {
                    self.newline();
                    Some(Terminator::Newline)
                }
                _ => None,
            };
            let done = terminator.is_none();
            items.push(ListItem { and_or, terminator });
            if done {
                break;
            }
        }
        self.leave();
        Ok(List { items, span })
    }

    /// A list that must hold at least one command (compound command bodies).
    fn parse_nonempty_list(&mut self) -> PResult<List> {
        let list = self.parse_list()?;
        if list.items.is_empty() {
            self.skip_linebreaks();
            return self.unexpected();
        }
        Ok(list)
    }

    fn parse_and_or(&mut self) -> PResult<AndOr> {
        let first = self.parse_pipeline()?;
        let mut rest = Vec::new();
        let start = first.span.start;
        let mut end = first.span.end;
        loop {
            self.skip_blanks();
            let op = if self.starts_with("&&") {
                AndOrOp::And
            } else if self.starts_with("||") {
                AndOrOp::Or
            } else {
                break;
            };
            self.pos += 2;
            self.skip_linebreaks();
            let p = self.parse_pipeline()?;
            end = p.span.end;
            rest.push((op, p));
        }
        Ok(AndOr {
            first,
            rest,
            span: Span::new(start, end),
        })
    }

    fn parse_pipeline(&mut self) -> PResult<Pipeline> {
        self.skip_blanks();
        let start = self.pos;
        let (mut negated, mut timed, mut time_posix) = (false, false, false);
        let mut keywords_end = start;
        loop {
            match self.reserved_at() {
                Some("!") => {
                    negated = !negated;
                    self.bump("!");
                    keywords_end = self.pos;
                }
                Some("time") if !timed => {
                    timed = true;
                    self.bump("time");
                    self.skip_blanks();
                    keywords_end = self.pos;
                    if self.run_at() == "-p" {
                        time_posix = true;
                        self.pos += 2;
                        keywords_end = self.pos;
                    }
                }
                _ => break,
            }
            self.skip_blanks();
        }
        if (negated || timed) && self.at_pipeline_end() {
            // `!` and `time` alone are valid (an empty pipeline).
            return Ok(Pipeline {
                negated,
                timed,
                time_posix,
                commands: Vec::new(),
                pipes: Vec::new(),
                span: Span::new(start, keywords_end),
            });
        }
        // Pipelines of up to eight stages never reallocate (a reallocation moves every command).
        let mut commands = Vec::with_capacity(8);
        commands.push(self.parse_command()?);
        let mut pipes = Vec::new();
        loop {
            self.skip_blanks();
            let with_stderr = if self.starts_with("|&") {
                true
            } else if self.peek() == Some(b'|') && !self.starts_with("||") {
                false
            } else {
                break;
            };
            let len = if with_stderr { 2 } else { 1 };
            if pipes.is_empty() {
                // Sized like `commands`: one allocation for pipelines of up to eight stages.
                pipes.reserve_exact(7);
            }
            pipes.push(Pipe {
                with_stderr,
                span: Span::new(self.pos, self.pos + len),
            });
            self.pos += len;
            self.skip_linebreaks();
            commands.push(self.parse_command()?);
        }
        let end = commands.last().map_or(self.pos, |c| c.span().end);
        Ok(Pipeline {
            negated,
            timed,
            time_posix,
            commands,
            pipes,
            span: Span::new(start, end),
        })
    }

    fn at_pipeline_end(&self) -> bool {
        match self.peek() {
            None | Some(b'\n' | b')' | b';') => true,
            Some(b'&') => !self.starts_with("&>"),
            Some(b'|') => self.starts_with("||"),
            _ => false,
        }
    }

    fn parse_command(&mut self) -> PResult<Command> {
        self.enter()?;
        self.skip_blanks();
        let start = self.pos;
        let kind = if self.starts_with("((") {
            Some(self.arithmetic_command()?)
        } else if self.peek() == Some(b'(') {
            self.pos += 1;
            let list = self.parse_nonempty_list()?;
            self.expect_close_paren()?;
            Some(CompoundKind::Subshell(list))
        } else {
            match self.reserved_at() {
                Some("{") => {
                    self.bump("{");
                    let list = self.parse_nonempty_list()?;
                    self.expect_reserved("}")?;
                    Some(CompoundKind::Group(list))
                }
                Some("if") => Some(self.if_command()?),
                Some(w @ ("while" | "until")) => {
                    self.bump(w);
                    let condition = self.parse_nonempty_list()?;
                    let body = self.do_group()?;
                    Some(if w == "while" {
                        CompoundKind::While { condition, body }
                    } else {
                        CompoundKind::Until { condition, body }
                    })
                }
                Some(w @ ("for" | "select")) => Some(self.for_command(w)?),
                Some("case") => Some(self.case_command()?),
                Some("[[") => Some(self.conditional_command()?),
                Some("function") => {
                    let f = self.function_keyword(start)?;
                    self.leave();
                    return Ok(f);
                }
                Some("then" | "elif" | "else" | "fi" | "do" | "done" | "esac" | "}" | "]]") => {
                    return self.unexpected();
                }
                _ => None,
            }
        };
        let command = match kind {
            Some(kind) => {
                let closed = self.pos;
                let redirects = self.trailing_redirects()?;
                let end = redirects.last().map_or(closed, |r| r.span.end);
                Command::Compound(Box::new(CompoundCommand {
                    kind,
                    redirects,
                    span: Span::new(start, end),
                }))
            }
            None => self.simple_command()?,
        };
        self.leave();
        Ok(command)
    }

    fn expect_close_paren(&mut self) -> PResult<()> {
        self.skip_linebreaks();
        match self.peek() {
            Some(b')') => {
                self.pos += 1;
                Ok(())
            }
            None => self.err(ParseErrorKind::UnexpectedEnd("`)`")),
            Some(_) => self.unexpected(),
        }
    }

    fn trailing_redirects(&mut self) -> PResult<Vec<Redirect>> {
        let mut redirects = Vec::new();
        loop {
            self.skip_blanks();
            match self.redirect()? {
                Some(r) => redirects.push(r),
                None => return Ok(redirects),
            }
        }
    }

    fn simple_command(&mut self) -> PResult<Command> {
        let start = self.pos;
        let mut assignments = Vec::new();
        let mut words: Vec<Word> = Vec::with_capacity(4);
        let mut redirects = Vec::new();
        let mut end = start;
        let mut declaration = false;
        loop {
            self.skip_blanks();
            if let Some(r) = self.redirect()? {
                end = r.span.end;
                redirects.push(r);
                continue;
            }
            match self.peek() {
                None | Some(b'\n' | b';' | b'&' | b'|' | b')') => break,
                Some(b'(') => {
                    if words.len() == 1 && assignments.is_empty() && redirects.is_empty() {
                        return self.function_parens(start, &words[0]);
                    }
                    return self.unexpected();
                }
                Some(_) => {}
            }
            let allow_array = words.is_empty() || declaration;
            let word = self.scan_word(allow_array)?;
            end = word.span.end;
            if words.is_empty()
                && let Some(a) = self.as_assignment(&word)
            {
                assignments.push(a);
            } else {
                if words.is_empty() {
                    // First-byte check before the string compares: this runs for every command.
                    declaration = matches!(self.b[word.span.start], b'd' | b't' | b'l' | b'e' | b'r')
                        && DECLARATION_BUILTINS.contains(&word.span.slice(self.src));
                }
                words.push(word);
            }
        }
        if assignments.is_empty() && words.is_empty() && redirects.is_empty() {
            return self.unexpected();
        }
        Ok(Command::Simple(SimpleCommand {
            assignments,
            words,
            redirects,
            span: Span::new(start, end),
        }))
    }

    fn as_assignment(&self, word: &Word) -> Option<Assignment> {
        let raw = word.span.slice(self.src);
        // `assignment_eq` only accepts plain name bytes before `[`, `+` and `=`.
        let eq = assignment_eq(raw)?;
        let name_len = raw.bytes().take_while(|&c| is_name_byte(c)).count();
        Some(Assignment {
            name: raw[..name_len].to_owned(),
            append: raw.as_bytes()[eq - 1] == b'+',
            word: word.clone(),
            span: word.span,
        })
    }

    /// A redirect at the cursor, or `None` (cursor unchanged).
    fn redirect(&mut self) -> PResult<Option<Redirect>> {
        let start = self.pos;
        // Fast exit for the common case: a word that cannot start a redirect.
        match self.peek() {
            Some(b'<' | b'>' | b'&' | b'{' | b'0'..=b'9') => {}
            _ => return Ok(None),
        }
        let mut p = start;
        let mut fd = None;
        while p < self.b.len() && self.b[p].is_ascii_digit() {
            p += 1;
        }
        if p > start && matches!(self.b.get(p), Some(b'<' | b'>')) {
            let n = self.src[start..p].parse::<u32>().unwrap_or(u32::MAX);
            fd = Some(RedirectFd::Number(n));
        } else {
            p = start;
            if self.b.get(p) == Some(&b'{') {
                let mut q = p + 1;
                while q < self.b.len() && is_name_byte(self.b[q]) {
                    q += 1;
                }
                if q > p + 1
                    && is_name_start(self.b[p + 1])
                    && self.b.get(q) == Some(&b'}')
                    && matches!(self.b.get(q + 1), Some(b'<' | b'>'))
                {
                    fd = Some(RedirectFd::Variable(self.src[p + 1..q].to_owned()));
                    p = q + 1;
                }
            }
        }
        let rest = &self.b[p..];
        let op = if fd.is_none() && rest.starts_with(b"&>>") {
            RedirectOp::AppendAll
        } else if fd.is_none() && rest.starts_with(b"&>") {
            RedirectOp::OutputAll
        } else if rest.starts_with(b"<<<") {
            RedirectOp::HereString
        } else if rest.starts_with(b"<<-") {
            RedirectOp::HeredocStripTabs
        } else if rest.starts_with(b"<<") {
            RedirectOp::Heredoc
        } else if rest.starts_with(b"<>") {
            RedirectOp::ReadWrite
        } else if rest.starts_with(b"<&") {
            RedirectOp::DupInput
        } else if rest.starts_with(b"<(") || rest.starts_with(b">(") {
            return Ok(None);
        } else if rest.starts_with(b"<") {
            RedirectOp::Input
        } else if rest.starts_with(b">>") {
            RedirectOp::Append
        } else if rest.starts_with(b">|") {
            RedirectOp::Clobber
        } else if rest.starts_with(b">&") {
            RedirectOp::DupOutput
        } else if rest.starts_with(b">") {
            RedirectOp::Output
        } else {
            return Ok(None);
        };
        self.pos = p + op.as_str().len();
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_meta(c) => {}
            Some(b'<' | b'>') if self.peek_at(1) == Some(b'(') => {}
            _ => return self.err(ParseErrorKind::MissingRedirectTarget(op.as_str())),
        }
        let target = self.scan_word(false)?;
        let heredoc = if matches!(op, RedirectOp::Heredoc | RedirectOp::HeredocStripTabs) {
            let delimiter = delimiter_text(&target, self.src);
            let quoted = target.span.slice(self.src).contains(['\'', '"', '\\']);
            let slot = self.next_slot;
            self.next_slot += 1;
            self.pending.push(PendingHeredoc {
                slot,
                delimiter: delimiter.clone(),
                strip_tabs: op == RedirectOp::HeredocStripTabs,
            });
            Some(Heredoc {
                delimiter,
                quoted,
                strip_tabs: op == RedirectOp::HeredocStripTabs,
                body: String::new(),
                body_span: Span::default(),
                terminated: false,
                slot,
            })
        } else {
            None
        };
        Ok(Some(Redirect {
            fd,
            op,
            span: Span::new(start, target.span.end),
            target,
            heredoc,
        }))
    }

    fn function_parens(&mut self, start: usize, name: &Word) -> PResult<Command> {
        self.pos += 1;
        self.skip_blanks();
        if self.peek() != Some(b')') {
            return self.unexpected();
        }
        self.pos += 1;
        let name = name.span.slice(self.src).to_owned();
        self.function_body(start, name)
    }

    fn function_keyword(&mut self, start: usize) -> PResult<Command> {
        self.bump("function");
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_meta(c) => {}
            _ => return self.unexpected(),
        }
        let name_word = self.scan_word(false)?;
        let name = name_word.span.slice(self.src).to_owned();
        self.skip_blanks();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            self.skip_blanks();
            if self.peek() != Some(b')') {
                return self.unexpected();
            }
            self.pos += 1;
        }
        self.function_body(start, name)
    }

    fn function_body(&mut self, start: usize, name: String) -> PResult<Command> {
        self.skip_linebreaks();
        let Command::Compound(body) = self.parse_command()? else {
            return Err(ParseError::new(start, ParseErrorKind::UnexpectedToken(name)));
        };
        let span = Span::new(start, body.span.end);
        Ok(Command::Function(FunctionDef { name, body, span }))
    }

    fn do_group(&mut self) -> PResult<List> {
        self.expect_reserved("do")?;
        let body = self.parse_nonempty_list()?;
        self.expect_reserved("done")?;
        Ok(body)
    }

    fn if_command(&mut self) -> PResult<CompoundKind> {
        self.bump("if");
        let mut branches = Vec::new();
        let mut else_body = None;
        loop {
            let condition = self.parse_nonempty_list()?;
            self.expect_reserved("then")?;
            let body = self.parse_nonempty_list()?;
            branches.push((condition, body));
            self.skip_linebreaks();
            match self.reserved_at() {
                Some("elif") => self.bump("elif"),
                Some("else") => {
                    self.bump("else");
                    else_body = Some(self.parse_nonempty_list()?);
                    self.expect_reserved("fi")?;
                    break;
                }
                Some("fi") => {
                    self.bump("fi");
                    break;
                }
                _ if self.at_eof() => return self.err(ParseErrorKind::UnexpectedEnd("`fi`")),
                _ => return self.unexpected(),
            }
        }
        Ok(CompoundKind::If { branches, else_body })
    }

    fn for_command(&mut self, keyword: &'static str) -> PResult<CompoundKind> {
        self.bump(keyword);
        self.skip_blanks();
        if keyword == "for" && self.starts_with("((") {
            let start = self.pos;
            let end = self.double_paren_end(start + 2)?;
            self.pos = end;
            let header = Span::new(start, end);
            self.skip_blanks();
            if self.peek() == Some(b';') {
                self.pos += 1;
            }
            let body = self.loop_body()?;
            return Ok(CompoundKind::ArithmeticFor { header, body });
        }
        // Bash checks the variable name only when the loop runs: any word parses.
        match self.peek() {
            Some(c) if !is_meta(c) => {}
            None => return self.err(ParseErrorKind::UnexpectedEnd("a name after `for`")),
            Some(_) => return self.unexpected(),
        }
        let variable = self.scan_word(false)?.span.slice(self.src).to_owned();
        // `for x in …` or `for x` followed by `;`/newline and `do`.
        self.skip_linebreaks();
        let mut words = None;
        if self.reserved_at().is_none() && self.run_at() == "in" {
            self.pos += 2;
            let mut list = Vec::new();
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(b';' | b'\n') => {
                        if self.peek() == Some(b'\n') {
                            self.newline();
                        } else {
                            self.pos += 1;
                        }
                        break;
                    }
                    None => return self.err(ParseErrorKind::UnexpectedEnd("`do`")),
                    Some(c) if is_meta(c) => return self.unexpected(),
                    Some(_) => list.push(self.scan_word(false)?),
                }
            }
            words = Some(list);
        } else if self.peek() == Some(b';') {
            self.pos += 1;
        }
        let body = self.loop_body()?;
        Ok(CompoundKind::For {
            select: keyword == "select",
            variable,
            words,
            body,
        })
    }

    /// `do … done`, or bash's alternative `{ … }` body.
    fn loop_body(&mut self) -> PResult<List> {
        self.skip_linebreaks();
        if self.reserved_at() == Some("{") {
            self.bump("{");
            let body = self.parse_nonempty_list()?;
            self.expect_reserved("}")?;
            return Ok(body);
        }
        self.do_group()
    }

    fn case_command(&mut self) -> PResult<CompoundKind> {
        self.bump("case");
        self.skip_blanks();
        match self.peek() {
            Some(c) if !is_meta(c) => {}
            None => return self.err(ParseErrorKind::UnexpectedEnd("a word after `case`")),
            _ => return self.unexpected(),
        }
        let subject = self.scan_word(false)?;
        self.skip_linebreaks();
        if self.run_at() != "in" {
            return if self.at_eof() {
                self.err(ParseErrorKind::UnexpectedEnd("`in`"))
            } else {
                self.unexpected()
            };
        }
        self.pos += 2;
        let mut arms = Vec::new();
        loop {
            self.skip_linebreaks();
            if self.reserved_at() == Some("esac") {
                self.bump("esac");
                break;
            }
            if self.at_eof() {
                return self.err(ParseErrorKind::UnexpectedEnd("`esac`"));
            }
            let arm_start = self.pos;
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            let mut patterns = Vec::new();
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(c) if !is_meta(c) => patterns.push(self.scan_word(false)?),
                    None => return self.err(ParseErrorKind::UnexpectedEnd("`)`")),
                    _ => return self.unexpected(),
                }
                self.skip_blanks();
                match self.peek() {
                    Some(b'|') => self.pos += 1,
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    None => return self.err(ParseErrorKind::UnexpectedEnd("`)`")),
                    _ => return self.unexpected(),
                }
            }
            let body = self.parse_list()?;
            self.skip_linebreaks();
            let terminator = if self.starts_with(";;&") {
                self.pos += 3;
                Some(CaseTerminator::Continue)
            } else if self.starts_with(";;") {
                self.pos += 2;
                Some(CaseTerminator::Break)
            } else if self.starts_with(";&") {
                self.pos += 2;
                Some(CaseTerminator::FallThrough)
            } else {
                None
            };
            arms.push(CaseArm {
                patterns,
                body,
                terminator,
                span: Span::new(arm_start, self.pos),
            });
            if terminator.is_none() {
                self.expect_reserved("esac")?;
                break;
            }
        }
        Ok(CompoundKind::Case { subject, arms })
    }

    /// `(( … ))` as a command.
    fn arithmetic_command(&mut self) -> PResult<CompoundKind> {
        let start = self.pos;
        let end = self.double_paren_end(start + 2)?;
        self.pos = end;
        Ok(CompoundKind::Arithmetic {
            expression: Span::new(start + 2, end - 2),
        })
    }

    /// The offset after the `))` closing a `((` whose inside starts at `from`.
    fn double_paren_end(&mut self, from: usize) -> PResult<usize> {
        let mut depth = 0usize;
        let mut i = from;
        while i < self.b.len() {
            match self.b[i] {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    if self.b.get(i + 1) == Some(&b')') {
                        return Ok(i + 2);
                    }
                    self.pos = i;
                    return self.unexpected();
                }
                b')' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        self.pos = self.b.len();
        self.err(ParseErrorKind::UnexpectedEnd("`))`"))
    }

    /// `[[ … ]]`: kept opaque, but scanned with quoting so that `]]` inside quotes does not end it.
    fn conditional_command(&mut self) -> PResult<CompoundKind> {
        self.bump("[[");
        let inner_start = self.pos;
        loop {
            self.skip_linebreaks();
            match self.peek() {
                None => return self.err(ParseErrorKind::UnexpectedEnd("`]]`")),
                Some(_) if self.run_at() == "]]" => {
                    let end = self.pos;
                    self.pos += 2;
                    return Ok(CompoundKind::Conditional {
                        expression: Span::new(inner_start, end),
                    });
                }
                Some(b'(' | b')' | b'<' | b'>' | b'|' | b'&' | b';') => {
                    if self.peek() == Some(b';') {
                        return self.unexpected();
                    }
                    self.pos += 1;
                }
                Some(_) => {
                    self.scan_word(false)?;
                }
            }
        }
    }
}

/// The delimiter of a here-document after quote removal.
fn delimiter_text(word: &Word, src: &str) -> String {
    fn parts_text(parts: &[WordPart], src: &str, out: &mut String) {
        for p in parts {
            match p {
                WordPart::Literal { value, .. }
                | WordPart::SingleQuoted { value, .. }
                | WordPart::AnsiC { value, .. } => out.push_str(value),
                WordPart::DoubleQuoted { parts, .. } => parts_text(parts, src, out),
                other => out.push_str(other.span().slice(src)),
            }
        }
    }
    let mut out = String::new();
    parts_text(&word.parts, src, &mut out);
    out
}
