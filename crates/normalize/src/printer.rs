//! Canonical re-printing of a tree: structure from the nodes, words from their source text.
//!
//! Printing then parsing again yields a tree that prints identically (a property test holds this),
//! which shows the tree captures every operator, keyword, redirect and here-document.

use crate::ast::{
    AndOr, AndOrOp, CaseTerminator, Command, CompoundCommand, CompoundKind, Heredoc, List, Pipeline,
    Redirect, RedirectFd, RedirectOp, Script, SimpleCommand, Terminator, Word,
};

/// Print `script` (parsed from `source`) in canonical form. Comments are not kept.
pub fn print(script: &Script, source: &str) -> String {
    let mut p = Printer {
        src: source,
        out: String::new(),
        pending: Vec::new(),
    };
    p.list(&script.list);
    if !p.pending.is_empty() {
        p.newline();
    }
    p.out
}

struct Printer<'a> {
    src: &'a str,
    out: String,
    pending: Vec<&'a Heredoc>,
}

impl<'a> Printer<'a> {
    fn newline(&mut self) {
        self.out.push('\n');
        for doc in std::mem::take(&mut self.pending) {
            self.out.push_str(doc.body_span.slice(self.src));
            // A body that ran to the end of the input has no delimiter line (and cannot be
            // followed by anything), so none is invented.
            if doc.terminated {
                self.out.push_str(&doc.delimiter);
                self.out.push('\n');
            }
        }
    }

    fn list(&mut self, list: &'a List) {
        for (i, item) in list.items.iter().enumerate() {
            self.and_or(&item.and_or);
            match item.terminator {
                Some(Terminator::Semicolon) => self.out.push(';'),
                Some(Terminator::Background) => self.out.push_str(" &"),
                Some(Terminator::Newline) => self.newline(),
                None => {}
            }
            if i + 1 < list.items.len() && item.terminator != Some(Terminator::Newline) {
                self.out.push(' ');
            }
        }
    }

    /// A list followed by what separates it from a closing keyword.
    fn body(&mut self, list: &'a List) {
        self.list(list);
        match list.items.last().and_then(|i| i.terminator) {
            None => self.out.push_str("; "),
            Some(Terminator::Newline) => {}
            Some(_) => self.out.push(' '),
        }
    }

    fn and_or(&mut self, a: &'a AndOr) {
        self.pipeline(&a.first);
        for (op, p) in &a.rest {
            self.out.push_str(match op {
                AndOrOp::And => " && ",
                AndOrOp::Or => " || ",
            });
            self.pipeline(p);
        }
    }

    fn pipeline(&mut self, p: &'a Pipeline) {
        if p.timed {
            self.out.push_str(if p.time_posix { "time -p " } else { "time " });
        }
        if p.negated {
            self.out.push_str("! ");
        }
        for (i, c) in p.commands.iter().enumerate() {
            if i > 0 {
                self.out
                    .push_str(if p.pipes[i - 1].with_stderr { " |& " } else { " | " });
            }
            self.command(c);
        }
    }

    fn command(&mut self, c: &'a Command) {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(cc) => self.compound(cc),
            Command::Function(f) => {
                // The keyword form accepts any name (`f=x() …` would read as an assignment).
                self.out.push_str("function ");
                self.out.push_str(&f.name);
                self.out.push_str(" () ");
                self.compound(&f.body);
            }
        }
    }

    /// Elements in source order: a reserved word is only reserved in command position, so a
    /// `{` written after a redirect must stay after it.
    fn simple(&mut self, s: &'a SimpleCommand) {
        enum Element<'a> {
            Word(&'a Word),
            Redirect(&'a Redirect),
        }
        let mut elements: Vec<(usize, Element<'a>)> = s
            .assignments
            .iter()
            .map(|a| (a.span.start, Element::Word(&a.word)))
            .chain(s.words.iter().map(|w| (w.span.start, Element::Word(w))))
            .chain(s.redirects.iter().map(|r| (r.span.start, Element::Redirect(r))))
            .collect();
        elements.sort_by_key(|(start, _)| *start);
        for (i, (_, e)) in elements.into_iter().enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            match e {
                Element::Word(w) => self.word(w),
                Element::Redirect(r) => self.redirect(r),
            }
        }
    }

    fn redirect(&mut self, r: &'a Redirect) {
        match &r.fd {
            Some(RedirectFd::Number(n)) => self.out.push_str(&n.to_string()),
            Some(RedirectFd::Variable(v)) => {
                self.out.push('{');
                self.out.push_str(v);
                self.out.push('}');
            }
            None => {}
        }
        self.out.push_str(r.op.as_str());
        // Keep operator and target apart where joining them would lex differently:
        // `<<` + `-x` is `<<-x`, `<` + `<(ls)` is `<<(ls)`.
        let raw = r.target.span.slice(self.src);
        if (r.op == RedirectOp::Heredoc && raw.starts_with('-'))
            || raw.starts_with("<(")
            || raw.starts_with(">(")
        {
            self.out.push(' ');
        }
        self.word(&r.target);
        if let Some(doc) = &r.heredoc {
            self.pending.push(doc);
        }
    }

    fn compound(&mut self, c: &'a CompoundCommand) {
        match &c.kind {
            CompoundKind::Subshell(l) => {
                self.out.push_str("( ");
                self.body(l);
                self.out.push(')');
            }
            CompoundKind::Group(l) => {
                self.out.push_str("{ ");
                self.body(l);
                self.out.push('}');
            }
            CompoundKind::If { branches, else_body } => {
                for (i, (cond, body)) in branches.iter().enumerate() {
                    self.out.push_str(if i == 0 { "if " } else { "elif " });
                    self.body(cond);
                    self.out.push_str("then ");
                    self.body(body);
                }
                if let Some(e) = else_body {
                    self.out.push_str("else ");
                    self.body(e);
                }
                self.out.push_str("fi");
            }
            CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
                let kw = if matches!(c.kind, CompoundKind::While { .. }) {
                    "while "
                } else {
                    "until "
                };
                self.out.push_str(kw);
                self.body(condition);
                self.do_done(body);
            }
            CompoundKind::For {
                select,
                variable,
                words,
                body,
            } => {
                self.out.push_str(if *select { "select " } else { "for " });
                self.out.push_str(variable);
                if let Some(words) = words {
                    self.out.push_str(" in");
                    for w in words {
                        self.out.push(' ');
                        self.word(w);
                    }
                }
                self.out.push_str("; ");
                self.do_done(body);
            }
            CompoundKind::ArithmeticFor { header, body } => {
                self.out.push_str("for ");
                self.out.push_str(header.slice(self.src));
                self.out.push_str("; ");
                self.do_done(body);
            }
            CompoundKind::Case { subject, arms } => {
                self.out.push_str("case ");
                self.word(subject);
                self.out.push_str(" in ");
                for arm in arms {
                    self.out.push('(');
                    for (i, p) in arm.patterns.iter().enumerate() {
                        if i > 0 {
                            self.out.push_str(" | ");
                        }
                        self.word(p);
                    }
                    self.out.push_str(") ");
                    self.list(&arm.body);
                    if arm
                        .body
                        .items
                        .last()
                        .is_some_and(|i| i.terminator != Some(Terminator::Newline))
                    {
                        self.out.push(' ');
                    }
                    self.out.push_str(match arm.terminator {
                        Some(CaseTerminator::FallThrough) => ";&",
                        Some(CaseTerminator::Continue) => ";;&",
                        Some(CaseTerminator::Break) | None => ";;",
                    });
                    self.out.push(' ');
                }
                self.out.push_str("esac");
            }
            CompoundKind::Arithmetic { expression } => {
                self.out.push_str("((");
                self.out.push_str(expression.slice(self.src));
                self.out.push_str("))");
            }
            CompoundKind::Conditional { expression } => {
                self.out.push_str("[[");
                self.out.push_str(expression.slice(self.src));
                self.out.push_str("]]");
            }
        }
        for r in &c.redirects {
            self.out.push(' ');
            self.redirect(r);
        }
    }

    /// A word as written. A word can only end in a lone backslash at the end of the input (where
    /// it is a literal backslash); it is doubled so that a following newline does not turn it
    /// into a line continuation.
    fn word(&mut self, w: &Word) {
        let raw = w.span.slice(self.src);
        self.out.push_str(raw);
        if raw.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1 {
            self.out.push('\\');
        }
    }

    fn do_done(&mut self, body: &'a List) {
        self.out.push_str("do ");
        self.body(body);
        self.out.push_str("done");
    }
}
