//! Moving every span of a tree after text was deleted from its source, so a rewritten script
//! gets its tree without being parsed a second time.

use crate::ast::{Command, CompoundCommand, CompoundKind, List, Redirect, Script, Span, Word, WordPart};

/// Sorted, non-overlapping byte ranges deleted from a source.
pub(crate) struct Deletions(Vec<Span>);

impl Deletions {
    pub(crate) fn new(mut ranges: Vec<Span>) -> Self {
        ranges.sort_unstable_by_key(|r| r.start);
        // Merge in place: `kept` ranges are final, the rest are still to be looked at.
        let mut kept = 0;
        for i in 0..ranges.len() {
            let r = ranges[i];
            if kept > 0 && r.start <= ranges[kept - 1].end {
                ranges[kept - 1].end = ranges[kept - 1].end.max(r.end);
            } else {
                ranges[kept] = r;
                kept += 1;
            }
        }
        ranges.truncate(kept);
        Self(ranges)
    }

    /// The source with the ranges removed.
    pub(crate) fn apply(&self, src: &str) -> String {
        let mut out = String::with_capacity(src.len());
        let mut at = 0;
        for r in &self.0 {
            out.push_str(&src[at..r.start]);
            at = r.end;
        }
        out.push_str(&src[at..]);
        out
    }

    /// Where offset `pos` of the old source lands in the new one (inside a deleted range: at
    /// its start).
    fn map(&self, pos: usize) -> usize {
        let mut removed = 0;
        for d in &self.0 {
            if pos >= d.end {
                removed += d.len();
            } else {
                return pos.min(d.start) - removed;
            }
        }
        pos - removed
    }

    fn span(&self, s: &mut Span) {
        s.start = self.map(s.start);
        s.end = self.map(s.end);
    }

    /// Move every span of `script`.
    pub(crate) fn shift(&self, script: &mut Script) {
        self.span(&mut script.span);
        for c in &mut script.comments {
            self.span(c);
        }
        self.list(&mut script.list);
    }

    fn list(&self, list: &mut List) {
        self.span(&mut list.span);
        for item in &mut list.items {
            self.span(&mut item.and_or.span);
            let pipelines =
                std::iter::once(&mut item.and_or.first).chain(item.and_or.rest.iter_mut().map(|(_, p)| p));
            for p in pipelines {
                self.span(&mut p.span);
                for pipe in &mut p.pipes {
                    self.span(&mut pipe.span);
                }
                for c in &mut p.commands {
                    self.command(c);
                }
            }
        }
    }

    fn command(&self, c: &mut Command) {
        match c {
            Command::Simple(s) => {
                self.span(&mut s.span);
                for a in &mut s.assignments {
                    self.span(&mut a.span);
                    self.word(&mut a.word);
                }
                for w in &mut s.words {
                    self.word(w);
                }
                for r in &mut s.redirects {
                    self.redirect(r);
                }
            }
            Command::Compound(cc) => self.compound(cc),
            Command::Function(f) => {
                self.span(&mut f.span);
                self.compound(&mut f.body);
            }
        }
    }

    fn redirect(&self, r: &mut Redirect) {
        self.span(&mut r.span);
        self.word(&mut r.target);
        if let Some(doc) = &mut r.heredoc {
            self.span(&mut doc.body_span);
        }
    }

    fn compound(&self, c: &mut CompoundCommand) {
        self.span(&mut c.span);
        for r in &mut c.redirects {
            self.redirect(r);
        }
        match &mut c.kind {
            CompoundKind::Subshell(l) | CompoundKind::Group(l) => self.list(l),
            CompoundKind::If { branches, else_body } => {
                for (cond, body) in branches {
                    self.list(cond);
                    self.list(body);
                }
                if let Some(e) = else_body {
                    self.list(e);
                }
            }
            CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
                self.list(condition);
                self.list(body);
            }
            CompoundKind::For { words, body, .. } => {
                for w in words.iter_mut().flatten() {
                    self.word(w);
                }
                self.list(body);
            }
            CompoundKind::ArithmeticFor { header, body } => {
                self.span(header);
                self.list(body);
            }
            CompoundKind::Case { subject, arms } => {
                self.word(subject);
                for arm in arms {
                    self.span(&mut arm.span);
                    for p in &mut arm.patterns {
                        self.word(p);
                    }
                    self.list(&mut arm.body);
                }
            }
            CompoundKind::Arithmetic { expression } | CompoundKind::Conditional { expression } => {
                self.span(expression);
            }
        }
    }

    fn word(&self, w: &mut Word) {
        // Everything in a word (substitutions included) lies inside its span, so a word that
        // ends before the first deletion does not move.
        if self.0.first().is_none_or(|d| w.span.end <= d.start) {
            return;
        }
        self.span(&mut w.span);
        self.parts(&mut w.parts);
    }

    fn parts(&self, parts: &mut [WordPart]) {
        for p in parts {
            match p {
                WordPart::Literal { span, .. }
                | WordPart::SingleQuoted { span, .. }
                | WordPart::AnsiC { span, .. }
                | WordPart::Parameter { span, .. }
                | WordPart::Glob { span }
                | WordPart::Tilde { span, .. } => self.span(span),
                WordPart::DoubleQuoted { parts, span, .. } => {
                    self.span(span);
                    self.parts(parts);
                }
                WordPart::CommandSubstitution { script, span, .. } => {
                    self.span(span);
                    if let Some(s) = script {
                        self.shift(s);
                    }
                }
                WordPart::Arithmetic { expression, span } => {
                    self.span(expression);
                    self.span(span);
                }
                WordPart::ProcessSubstitution { script, span, .. } => {
                    self.span(span);
                    self.shift(script);
                }
                WordPart::Array { elements, span } => {
                    self.span(span);
                    for e in elements {
                        self.word(e);
                    }
                }
            }
        }
    }
}
