//! [`StandardNormalizer`]: trim, parse once, apply the rewrite rules, report every rewrite.

use crate::ast::{Command, Script};
use crate::rules::{self, cd, limiter, redirect};
use crate::shift::Deletions;
use crate::{Limits, NormalizeContext, Normalized, Normalizer, parse};

/// The normalizer shellgate uses by default (SPEC N-2…N-8). Every rule can be switched off.
#[derive(Debug, Clone)]
pub struct StandardNormalizer {
    strip_limiters: bool,
    drop_stderr_merge: bool,
    lift_cd: bool,
}

impl Default for StandardNormalizer {
    fn default() -> Self {
        Self {
            strip_limiters: true,
            drop_stderr_merge: true,
            lift_cd: true,
        }
    }
}

impl StandardNormalizer {
    /// Lift a trailing `| head`/`| tail` into [`Normalized::limits`] (N-2). On by default.
    #[must_use]
    pub fn strip_limiters(mut self, on: bool) -> Self {
        self.strip_limiters = on;
        self
    }

    /// Drop a trailing lone `2>&1` (N-3). On by default.
    #[must_use]
    pub fn drop_stderr_merge(mut self, on: bool) -> Self {
        self.drop_stderr_merge = on;
        self
    }

    /// Lift a leading `cd DIR &&` into [`Normalized::cwd`] (N-4). On by default; switch it off
    /// when the request names its working directory explicitly.
    #[must_use]
    pub fn lift_cd(mut self, on: bool) -> Self {
        self.lift_cd = on;
        self
    }
}

/// Shell blanks; other Unicode whitespace is command text and is kept (N-7).
fn is_shell_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Trim outer blanks, keeping a blank that a trailing backslash escapes (`echo a\ `).
pub(crate) fn trim_command(command: &str) -> &str {
    let start = command.len() - command.trim_start_matches(is_shell_blank).len();
    let mut end = command.trim_end_matches(is_shell_blank).len().max(start);
    let backslashes = command[start..end]
        .bytes()
        .rev()
        .take_while(|&b| b == b'\\')
        .count();
    if backslashes % 2 == 1 && end < command.len() {
        end += 1;
    }
    &command[start..end]
}

impl Normalizer for StandardNormalizer {
    fn normalize_with(&self, command: &str, ctx: &NormalizeContext) -> Normalized {
        let src = trim_command(command);
        let tree = parse(src);
        let Ok(script) = &tree else {
            // Unparseable: run as given (trimmed); bash reports the error itself.
            return Normalized {
                script: src.to_owned(),
                tree,
                ..Normalized::empty(command)
            };
        };
        let mut edit = Edit::default();
        let mut deletions = Vec::new();
        let mut rewrites = Vec::new();
        let mut cwd = None;
        let mut limits = Limits::default();

        if self.lift_cd
            && !ctx.explicit_cwd
            && let Some(lifted) = cd::find(script, src)
        {
            deletions.push(lifted.delete);
            rewrites.push(lifted.rewrite);
            cwd = Some(lifted.dir);
            edit.cd = true;
        }
        if let Some(pipeline) = rules::sole_pipeline(script, edit.cd) {
            let mut stages = pipeline.commands.len();
            if self.strip_limiters
                && !ctx.keep_limiters
                && let Some(stripped) = limiter::find(pipeline, src)
            {
                // Take the rule's lists over when nothing came before (no copy, no allocation).
                if deletions.is_empty() {
                    deletions = stripped.delete;
                } else {
                    deletions.extend(stripped.delete);
                }
                if rewrites.is_empty() {
                    rewrites = stripped.rewrites;
                } else {
                    rewrites.extend(stripped.rewrites);
                }
                limits = stripped.limits;
                stages = stripped.remaining_stages;
                edit.keep_stages = Some(stages);
            }
            if self.drop_stderr_merge
                && let Some((range, rewrite)) = redirect::find(pipeline, stages, src)
            {
                deletions.push(range);
                rewrites.push(rewrite);
                edit.drop_redirect = true;
            }
        }

        if deletions.is_empty() {
            return Normalized {
                script: src.to_owned(),
                tree,
                ..Normalized::empty(command)
            };
        }
        let deletions = Deletions::new(deletions);
        let script = deletions.apply(src);
        let tree = match tree {
            // Deleting whole nodes never leaves outer blanks; if it somehow did, parse afresh.
            Ok(mut tree) if trim_command(&script).len() == script.len() => {
                edit.apply(&mut tree);
                deletions.shift(&mut tree);
                Ok(tree)
            }
            _ => parse(trim_command(&script)),
        };
        let script = match trim_command(&script) {
            trimmed if trimmed.len() == script.len() => script,
            trimmed => trimmed.to_owned(),
        };
        Normalized {
            original: command.to_owned(),
            script,
            tree,
            limits,
            cwd,
            rewrites,
        }
    }
}

/// The tree edits matching the deletions, so the rewritten script's tree needs no second parse.
#[derive(Default)]
struct Edit {
    cd: bool,
    keep_stages: Option<usize>,
    drop_redirect: bool,
}

impl Edit {
    fn apply(&self, tree: &mut Script) {
        let Some(item) = tree.list.items.first_mut() else {
            return;
        };
        let and_or = &mut item.and_or;
        if self.cd && !and_or.rest.is_empty() {
            let (_, next) = and_or.rest.remove(0);
            and_or.first = next;
        }
        // Both rules act on the sole pipeline, which is now the first one.
        let pipeline = &mut and_or.first;
        if let Some(n) = self.keep_stages {
            pipeline.commands.truncate(n);
            pipeline.pipes.truncate(n.saturating_sub(1));
        }
        if self.drop_redirect
            && let Some(Command::Simple(cmd)) = pipeline.commands.first_mut()
        {
            cmd.redirects.pop();
        }
    }
}
