//! Walking a tree: a [`Visitor`] with default no-op hooks, called for every node in source order,
//! including commands nested in substitutions, compound commands and function bodies.
//!
//! ```
//! use shellgate_normalize::{parse, visit::{self, Visitor}, ast::SimpleCommand};
//!
//! struct Names(Vec<String>);
//! impl Visitor<'_> for Names {
//!     fn simple_command(&mut self, cmd: &SimpleCommand) {
//!         self.0.extend(cmd.name());
//!     }
//! }
//! let script = parse("if test -f x; then echo $(whoami) | wc -l; fi").unwrap();
//! let mut names = Names(Vec::new());
//! visit::walk_script(&mut names, &script);
//! assert_eq!(names.0, ["test", "echo", "whoami", "wc"]);
//! ```

use crate::ast::{
    Command, CompoundCommand, CompoundKind, List, Pipeline, Redirect, Script, SimpleCommand, Word, WordPart,
};

/// Hooks called by the `walk_*` functions. Every hook defaults to doing nothing.
pub trait Visitor<'ast> {
    /// A script: the top level or the inside of a substitution (`nested` is true then).
    fn script(&mut self, _script: &'ast Script, _nested: bool) {}
    /// A pipeline.
    fn pipeline(&mut self, _pipeline: &'ast Pipeline) {}
    /// Any command, before its parts are visited.
    fn command(&mut self, _command: &'ast Command) {}
    /// A simple command, before its words are visited.
    fn simple_command(&mut self, _command: &'ast SimpleCommand) {}
    /// A compound command (or a function body), before its parts are visited.
    fn compound(&mut self, _command: &'ast CompoundCommand) {}
    /// A redirect, before its target word is visited.
    fn redirect(&mut self, _redirect: &'ast Redirect) {}
    /// A word (command words, assignment words, redirect targets, `for` lists, case subjects and
    /// patterns, array elements).
    fn word(&mut self, _word: &'ast Word) {}
    /// A word part, including parts nested in double quotes.
    fn word_part(&mut self, _part: &'ast WordPart) {}
}

/// Visit `script` and everything in it.
pub fn walk_script<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, script: &'ast Script) {
    v.script(script, false);
    walk_list(v, &script.list);
}

/// Visit a list.
pub fn walk_list<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, list: &'ast List) {
    for item in &list.items {
        for p in item.and_or.pipelines() {
            v.pipeline(p);
            for c in &p.commands {
                walk_command(v, c);
            }
        }
    }
}

/// Visit a command.
pub fn walk_command<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, c: &'ast Command) {
    v.command(c);
    match c {
        Command::Simple(s) => {
            v.simple_command(s);
            for a in &s.assignments {
                walk_word(v, &a.word);
            }
            for w in &s.words {
                walk_word(v, w);
            }
            for r in &s.redirects {
                walk_redirect(v, r);
            }
        }
        Command::Compound(cc) => walk_compound(v, cc),
        Command::Function(f) => walk_compound(v, &f.body),
    }
}

fn walk_redirect<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, r: &'ast Redirect) {
    v.redirect(r);
    walk_word(v, &r.target);
}

fn walk_compound<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, c: &'ast CompoundCommand) {
    v.compound(c);
    match &c.kind {
        CompoundKind::Subshell(l) | CompoundKind::Group(l) => walk_list(v, l),
        CompoundKind::If { branches, else_body } => {
            for (cond, body) in branches {
                walk_list(v, cond);
                walk_list(v, body);
            }
            if let Some(e) = else_body {
                walk_list(v, e);
            }
        }
        CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
            walk_list(v, condition);
            walk_list(v, body);
        }
        CompoundKind::For { words, body, .. } => {
            for w in words.iter().flatten() {
                walk_word(v, w);
            }
            walk_list(v, body);
        }
        CompoundKind::ArithmeticFor { body, .. } => walk_list(v, body),
        CompoundKind::Case { subject, arms } => {
            walk_word(v, subject);
            for arm in arms {
                for p in &arm.patterns {
                    walk_word(v, p);
                }
                walk_list(v, &arm.body);
            }
        }
        CompoundKind::Arithmetic { .. } | CompoundKind::Conditional { .. } => {}
    }
    for r in &c.redirects {
        walk_redirect(v, r);
    }
}

/// Visit a word and its parts, entering substitutions.
pub fn walk_word<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, w: &'ast Word) {
    v.word(w);
    walk_parts(v, &w.parts);
}

fn walk_parts<'ast, V: Visitor<'ast> + ?Sized>(v: &mut V, parts: &'ast [WordPart]) {
    for p in parts {
        v.word_part(p);
        match p {
            WordPart::DoubleQuoted { parts, .. } => walk_parts(v, parts),
            WordPart::CommandSubstitution { script: Some(s), .. }
            | WordPart::ProcessSubstitution { script: s, .. } => {
                v.script(s, true);
                walk_list(v, &s.list);
            }
            WordPart::Array { elements, .. } => {
                for e in elements {
                    walk_word(v, e);
                }
            }
            _ => {}
        }
    }
}

impl Script {
    /// Every simple command in the script, nested ones included, in source order.
    pub fn simple_commands(&self) -> Vec<&SimpleCommand> {
        struct Collect<'a>(Vec<&'a SimpleCommand>);
        impl<'a> Visitor<'a> for Collect<'a> {
            fn simple_command(&mut self, command: &'a SimpleCommand) {
                self.0.push(command);
            }
        }
        let mut c = Collect(Vec::new());
        walk_script(&mut c, self);
        c.0
    }
}
