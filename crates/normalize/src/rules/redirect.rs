//! SPEC N-3: a trailing lone `2>&1` on a single simple command is dropped (the tool merges
//! stdout and stderr anyway).

use crate::Rewrite;
use crate::ast::{Pipeline, RedirectFd, RedirectOp, Span};

/// The range to delete and the notice, when the rule applies to the first `stages` commands of
/// `pipeline` (the stages left after the limiter rule).
pub(crate) fn find(pipeline: &Pipeline, stages: usize, src: &str) -> Option<(Span, Rewrite)> {
    if stages != 1 {
        return None;
    }
    let cmd = pipeline.commands.first()?.as_simple()?;
    let [redirect] = cmd.redirects.as_slice() else {
        return None;
    };
    if redirect.fd != Some(RedirectFd::Number(2))
        || redirect.op != RedirectOp::DupOutput
        || redirect.target.static_value().as_deref() != Some("1")
        || redirect.target.is_quoted(src)
        || redirect.span.end != cmd.span.end
    {
        return None;
    }
    // Delete from the end of the element before it, so no blank is left behind.
    let before = cmd
        .words
        .iter()
        .map(|w| w.span.end)
        .chain(cmd.assignments.iter().map(|a| a.span.end))
        .filter(|&end| end <= redirect.span.start)
        .max()?;
    if cmd.words.is_empty() || before == redirect.span.start {
        return None;
    }
    Some((
        Span::new(before, redirect.span.end),
        Rewrite {
            rule: "trailing_stderr_merge",
            message:
                "Trailing `2>&1` was dropped by the tool (stdout and stderr are already merged in the output)"
                    .to_owned(),
        },
    ))
}
