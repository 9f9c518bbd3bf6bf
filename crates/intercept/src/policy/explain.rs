//! `Policy::explain`: how deny rules see each command of a command line, for `shellgate check
//! --explain` — the canonical form a rule is matched against, and for a word only known at run
//! time, the deny rule it could make match.

use std::fmt::Write as _;
use std::path::Path;

use shellgate_normalize::Normalized;

use super::{Policy, RealName, Unknown};
use crate::Context;
use crate::analyze::{Segment, SegmentKind};
use crate::meaning::{APPENDED, CommandView};

impl Policy {
    /// One line per command of `cmd` (in `ctx`): the form deny rules match it in, and for a word
    /// only known when it runs, which deny rule it could make match (or that none could).
    pub fn explain(&self, cmd: &Normalized, ctx: &Context) -> Vec<String> {
        self.analyzed(cmd, ctx, |segments, cwd, real_name| {
            segments
                .iter()
                .filter_map(|seg| self.explain_segment(seg, cwd, real_name))
                .collect()
        })
    }

    fn explain_segment(&self, seg: &Segment, cwd: Option<&Path>, real_name: &RealName<'_>) -> Option<String> {
        let (argv, dir, open_ended) = if let SegmentKind::Run(inv) = &seg.kind {
            (&inv.argv, inv.dir.as_deref().or(cwd), inv.open_ended)
        } else {
            let first = seg.uncertain.first()?;
            let view = CommandView::new(first, None, cwd);
            let mut line = format!("`{}` matched as: {}", seg.text, form(&view));
            match self.could_run(seg, cwd, real_name) {
                Some((p, Unknown::Word(w))) => {
                    let _ = write!(
                        line,
                        "; `{w}` is only known at run time and could make it match the deny rule `{}`",
                        p.source
                    );
                }
                Some((p, Unknown::Reason(why))) => {
                    let _ = write!(
                        line,
                        "; {why}, which could make it match the deny rule `{}`",
                        p.source
                    );
                }
                None => {
                    let _ = write!(
                        line,
                        "; {} only known at run time, and no deny rule could match it",
                        match view.uncertain_word() {
                            Some(w) => format!("`{w}` is"),
                            None => "what it runs is".to_owned(),
                        }
                    );
                }
            }
            return Some(line);
        };
        let real = argv.first().and_then(|a| a.get()).and_then(|w| real_name(w, dir));
        let config_env = match &seg.kind {
            SegmentKind::Run(inv) => inv.config_env.as_deref(),
            _ => None,
        };
        let view = CommandView::configured(argv, real, dir, config_env);
        let mut line = format!("`{}` matched as: {}", seg.text, form(&view));
        if open_ended || view.uncertain_word().is_some() {
            let what = |word: &str| {
                if word == APPENDED {
                    "the words appended at run time are".to_owned()
                } else {
                    format!("`{word}` is")
                }
            };
            if let Some((p, word)) = self.could_meet(&view, open_ended, cwd) {
                let _ = write!(
                    line,
                    "; {} only known at run time and could make it match the deny rule `{}`",
                    what(&word),
                    p.source
                );
            } else {
                let word = match view.uncertain_word() {
                    Some(w) if !open_ended => w,
                    _ => APPENDED,
                };
                let _ = write!(
                    line,
                    "; {} only known at run time, and no deny rule could match it",
                    what(word)
                );
            }
        }
        Some(line)
    }
}

/// The canonical form of a command for people.
fn form(view: &CommandView) -> String {
    let runs_as = match view.names.as_slice() {
        [invoked, real, ..] => format!(" (`{invoked}` runs `{real}`)"),
        _ => String::new(),
    };
    match (&view.canonical, view.names.first()) {
        (Some((p, c)), _) => format!(
            "{} {}{runs_as} (option order and spelling free)",
            p.name,
            c.describe()
        ),
        (None, Some(name)) => {
            format!("`{name}` has no option table: rules match its words as written{runs_as}")
        }
        (None, None) => "a command whose name is only known at run time".to_owned(),
    }
}
