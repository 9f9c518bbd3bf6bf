//! SPEC N-2: a trailing plain `head`/`tail` line limiter becomes a structured limit.

use crate::ast::{Pipeline, SimpleCommand, Span};
use crate::{Limits, Rewrite};

/// What stripping found: ranges to delete, the limits, notices, and how many stages remain.
pub(crate) struct Stripped {
    pub(crate) delete: Vec<Span>,
    pub(crate) limits: Limits,
    pub(crate) rewrites: Vec<Rewrite>,
    pub(crate) remaining_stages: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Head,
    Tail,
}

/// Strip trailing limiters from `pipeline`. A `| head -n A | tail -n B` pair is lifted together
/// (it is exactly "head, then tail", the order limits are applied in); anything else stops.
pub(crate) fn find(pipeline: &Pipeline, src: &str) -> Option<Stripped> {
    if pipeline.negated || pipeline.timed {
        return None;
    }
    let mut n = pipeline.commands.len();
    let mut out = Stripped {
        delete: Vec::new(),
        limits: Limits::default(),
        rewrites: Vec::new(),
        remaining_stages: n,
    };
    let mut last_kind = None;
    while n >= 2 {
        let Some(cmd) = pipeline.commands[n - 1].as_simple() else {
            break;
        };
        let Some((kind, count)) = limiter(cmd) else {
            break;
        };
        match (last_kind, kind) {
            (None, _) | (Some(Kind::Tail), Kind::Head) => {}
            _ => break,
        }
        last_kind = Some(kind);
        let fragment = Span::new(pipeline.pipes[n - 2].span.start, cmd.span.end);
        out.delete
            .push(Span::new(pipeline.commands[n - 2].span().end, cmd.span.end));
        let lines = if count == 1 { "line" } else { "lines" };
        let (which, slot) = match kind {
            Kind::Head => ("first", &mut out.limits.head),
            Kind::Tail => ("last", &mut out.limits.tail),
        };
        *slot = Some(count);
        out.rewrites.push(Rewrite {
            rule: "trailing_limiter",
            message: notice(fragment.slice(src), which, count, lines),
        });
        n -= 1;
    }
    if out.delete.is_empty() {
        return None;
    }
    // Notices in pipeline order: the head (applied first) before the tail.
    out.rewrites.reverse();
    out.remaining_stages = n;
    Some(out)
}

/// "Trailing `| head -n 5` was applied by the tool (output limited to the first 5 lines)",
/// assembled directly: `format!` machinery cost more than the rest of the rule.
fn notice(fragment: &str, which: &str, count: u64, lines: &str) -> String {
    const HEAD: &str = "Trailing `";
    const MIDDLE: &str = "` was applied by the tool (output limited to the ";
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = count;
    loop {
        at -= 1;
        // `rest % 10 < 10`: the cast cannot truncate.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (rest % 10) as u8;
        digits[at] = b'0' + digit;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let number = std::str::from_utf8(&digits[at..]).unwrap_or_default();
    let mut out = String::with_capacity(
        HEAD.len() + fragment.len() + MIDDLE.len() + which.len() + number.len() + lines.len() + 3,
    );
    for piece in [HEAD, fragment, MIDDLE, which, " ", number, " ", lines, ")"] {
        out.push_str(piece);
    }
    out
}

/// A plain `head`/`tail` with only line-count style arguments: its kind and line count.
fn limiter(cmd: &SimpleCommand) -> Option<(Kind, u64)> {
    if !cmd.assignments.is_empty() || !cmd.redirects.is_empty() {
        return None;
    }
    let name = cmd.words.first()?;
    let kind = if name.is_literal("head") {
        Kind::Head
    } else if name.is_literal("tail") {
        Kind::Tail
    } else {
        return None;
    };
    // Borrowed values, no list: a limiter's arguments are plain words, so this does not
    // allocate. Any dynamic argument refuses the whole command.
    let mut count = 10;
    let mut args = cmd.words[1..].iter();
    while let Some(word) = args.next() {
        let a = word.static_cow()?;
        let a = &*a;
        if a == "-n" || a == "--lines" {
            count = line_count(&args.next()?.static_cow()?)?;
            continue;
        }
        if let Some(v) = a.strip_prefix("--lines=") {
            count = line_count(v)?;
        } else if let Some(v) = a.strip_prefix("-n") {
            count = line_count(v.strip_prefix('=').unwrap_or(v))?;
        } else if let Some(v) = a.strip_prefix('-').filter(|v| !v.is_empty() && all_digits(v)) {
            count = line_count(v)?;
        } else if all_digits(a) && !a.is_empty() {
            count = line_count(a)?;
        } else if !matches!(a, "-q" | "--quiet" | "--silent") {
            return None;
        }
    }
    Some((kind, count))
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_digit())
}

/// A plain decimal count; `+K` (tail from line K), signs and size suffixes are refused.
fn line_count(s: &str) -> Option<u64> {
    if s.is_empty() || !all_digits(s) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn notice_matches_the_formatted_sentence() {
        for count in [0, 1, 7, 10, 20, 12_345, u64::MAX] {
            assert_eq!(
                super::notice("| head -n 5", "first", count, "lines"),
                format!(
                    "Trailing `| head -n 5` was applied by the tool (output limited to the first {count} lines)"
                )
            );
        }
    }
}
