//! Here-documents: bodies are read after the newline that ends the line of their `<<` operator,
//! possibly several per line, and filled into the tree once the parse is complete.

use crate::ast::{Command, CompoundKind, List, Redirect, Span, Word, WordPart};
use crate::lexer::{HeredocBody, Parser, memchr_newline};

impl Parser<'_> {
    /// Read the bodies of all pending here-documents, in order, starting at the cursor.
    pub(crate) fn read_heredoc_bodies(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for doc in pending {
            let start = self.pos;
            let mut body = HeredocBody::default();
            loop {
                if self.pos >= self.b.len() {
                    // Bash accepts end of input as the delimiter (with a warning).
                    body.span = Span::new(start, self.b.len());
                    break;
                }
                let line_end = memchr_newline(self.b, self.pos);
                let line = &self.src[self.pos..line_end];
                let check = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if check == doc.delimiter {
                    body.span = Span::new(start, self.pos);
                    body.terminated = true;
                    self.pos = (line_end + 1).min(self.b.len());
                    break;
                }
                let content = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                body.text.push_str(content);
                if line_end < self.b.len() {
                    body.text.push('\n');
                }
                self.pos = (line_end + 1).min(self.b.len());
            }
            if self.bodies.len() <= doc.slot {
                self.bodies.resize(doc.slot + 1, HeredocBody::default());
            }
            self.bodies[doc.slot] = body;
        }
    }
}

/// Copy the bodies read during the parse into the heredoc redirects of `list`.
pub(crate) fn fill_bodies(list: &mut List, bodies: &[HeredocBody]) {
    let mut f = |r: &mut Redirect| {
        if let Some(doc) = r.heredoc.as_mut()
            && let Some(body) = bodies.get(doc.slot)
        {
            doc.body.clone_from(&body.text);
            doc.body_span = body.span;
            doc.terminated = body.terminated;
        }
    };
    walk_list(list, &mut f);
}

fn walk_list(list: &mut List, f: &mut impl FnMut(&mut Redirect)) {
    for item in &mut list.items {
        walk_pipeline_commands(&mut item.and_or.first.commands, f);
        for (_, p) in &mut item.and_or.rest {
            walk_pipeline_commands(&mut p.commands, f);
        }
    }
}

fn walk_pipeline_commands(commands: &mut [Command], f: &mut impl FnMut(&mut Redirect)) {
    for c in commands {
        walk_command(c, f);
    }
}

fn walk_command(c: &mut Command, f: &mut impl FnMut(&mut Redirect)) {
    match c {
        Command::Simple(s) => {
            for a in &mut s.assignments {
                walk_word(&mut a.word, f);
            }
            for w in &mut s.words {
                walk_word(w, f);
            }
            walk_redirects(&mut s.redirects, f);
        }
        Command::Compound(cc) => {
            walk_compound(&mut cc.kind, f);
            walk_redirects(&mut cc.redirects, f);
        }
        Command::Function(fd) => {
            walk_compound(&mut fd.body.kind, f);
            walk_redirects(&mut fd.body.redirects, f);
        }
    }
}

fn walk_redirects(rs: &mut [Redirect], f: &mut impl FnMut(&mut Redirect)) {
    for r in rs {
        walk_word(&mut r.target, f);
        f(r);
    }
}

fn walk_compound(k: &mut CompoundKind, f: &mut impl FnMut(&mut Redirect)) {
    match k {
        CompoundKind::Subshell(l) | CompoundKind::Group(l) => walk_list(l, f),
        CompoundKind::If { branches, else_body } => {
            for (c, b) in branches {
                walk_list(c, f);
                walk_list(b, f);
            }
            if let Some(e) = else_body {
                walk_list(e, f);
            }
        }
        CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
            walk_list(condition, f);
            walk_list(body, f);
        }
        CompoundKind::For { words, body, .. } => {
            for w in words.iter_mut().flatten() {
                walk_word(w, f);
            }
            walk_list(body, f);
        }
        CompoundKind::ArithmeticFor { body, .. } => walk_list(body, f),
        CompoundKind::Case { subject, arms } => {
            walk_word(subject, f);
            for arm in arms {
                for p in &mut arm.patterns {
                    walk_word(p, f);
                }
                walk_list(&mut arm.body, f);
            }
        }
        CompoundKind::Arithmetic { .. } | CompoundKind::Conditional { .. } => {}
    }
}

fn walk_word(w: &mut Word, f: &mut impl FnMut(&mut Redirect)) {
    walk_parts(&mut w.parts, f);
}

fn walk_parts(parts: &mut [WordPart], f: &mut impl FnMut(&mut Redirect)) {
    for p in parts {
        match p {
            WordPart::DoubleQuoted { parts, .. } => walk_parts(parts, f),
            // Substitutions filled their own bodies when they were parsed (some by a parser of
            // their own, with its own slot numbers), so they are not entered here.
            WordPart::Array { elements, .. } => {
                for e in elements {
                    walk_word(e, f);
                }
            }
            _ => {}
        }
    }
}
