//! SPEC N-4: a leading literal `cd DIR &&` becomes the working directory.

use crate::Rewrite;
use crate::ast::{AndOrOp, Script, Span, Terminator};

/// A lifted `cd`: the directory and the prefix to delete.
pub(crate) struct LiftedCd {
    pub(crate) dir: String,
    pub(crate) delete: Span,
    pub(crate) rewrite: Rewrite,
}

/// Find a leading `cd DIR && …` whose DIR is a literal (no `$`, backtick or `(`).
pub(crate) fn find(script: &Script, src: &str) -> Option<LiftedCd> {
    let item = script.list.items.first()?;
    // `cd x && a &` runs the cd in a background subshell: later commands stay where they were.
    if item.terminator == Some(Terminator::Background) {
        return None;
    }
    let (op, next) = item.and_or.rest.first()?;
    if *op != AndOrOp::And {
        return None;
    }
    let first = &item.and_or.first;
    if first.negated || first.timed {
        return None;
    }
    let [cmd] = first.commands.as_slice() else {
        return None;
    };
    let cmd = cmd.as_simple()?;
    if !cmd.assignments.is_empty() || !cmd.redirects.is_empty() {
        return None;
    }
    let [name, dir] = cmd.words.as_slice() else {
        return None;
    };
    if !name.is_literal("cd") {
        return None;
    }
    if dir.span.slice(src).contains(['$', '`', '(']) {
        return None;
    }
    let dir_value = dir.static_value()?;
    // `cd -` means $OLDPWD, `cd -P` is an option, `cd ''` is a no-op: none is a directory name.
    if dir_value.is_empty() || dir_value.starts_with('-') {
        return None;
    }
    let shown = first.span.slice(src);
    Some(LiftedCd {
        rewrite: Rewrite {
            rule: "leading_cd",
            message: format!(
                "Leading `{shown} &&` was lifted into the working directory ({dir_value}) by the tool"
            ),
        },
        dir: dir_value,
        delete: Span::new(first.span.start, next.span.start),
    })
}
