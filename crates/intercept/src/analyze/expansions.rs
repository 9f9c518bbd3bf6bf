//! Word expansions: which run code (and must be judged), which cannot be judged, and what an
//! argument looks like before it runs.

use shellgate_normalize::ast::{Script, Word, WordPart};

use super::Walker;
use crate::argv::Arg;

/// Walk the parts of a word: substitutions are analysed as segments; an expansion that can run
/// code the analysis cannot see is an error naming it.
pub(super) fn walk_parts(w: &mut Walker<'_, '_>, parts: &[WordPart], src: &str) -> Result<(), String> {
    let mut result = Ok(());
    for p in parts {
        let r = match p {
            WordPart::DoubleQuoted { parts, .. } => walk_parts(w, parts, src),
            WordPart::CommandSubstitution { script: Some(s), .. }
            | WordPart::ProcessSubstitution { script: s, .. } => {
                nested_script(w, s, src);
                Ok(())
            }
            WordPart::CommandSubstitution {
                script: None, span, ..
            } => Err(format!(
                "the command substitution `{}` cannot be parsed in place",
                span.slice(src)
            )),
            WordPart::Parameter { name, span, .. }
                if super::session::named_reference(w, name.as_str()).is_some() =>
            {
                Err(format!(
                    "`{}`: {}",
                    span.slice(src),
                    super::session::reference_reason(name.as_str())
                ))
            }
            WordPart::Arithmetic { expression, span } => match w.arithmetic_hazard(expression.slice(src)) {
                Some(why) => Err(format!("the arithmetic `{}` {why}", span.slice(src))),
                None => Ok(()),
            },
            WordPart::Parameter {
                name,
                braced: true,
                span,
            } => braced_parameter(name, w.arith_poison || unsafe_offset(w, name))
                .map_err(|why| format!("`{}` {why}", span.slice(src)).to_string())
                .and_then(|()| match parameter_hazard(w, name) {
                    Some(why) => Err(format!("`{}` {why}", span.slice(src))),
                    None => Ok(()),
                }),
            WordPart::Array { elements, .. } => {
                for e in elements {
                    w.word(e, src);
                }
                Ok(())
            }
            _ => Ok(()),
        };
        if result.is_ok() {
            result = r;
        }
    }
    result
}

fn nested_script(w: &mut Walker<'_, '_>, s: &Script, src: &str) {
    if w.depth >= super::MAX_DEPTH {
        w.fail(s.span.slice(src), "nested too deeply to judge");
        return;
    }
    w.depth += 1;
    // A substitution runs in a subshell.
    w.in_subshell(|w| w.list(&s.list, src));
    w.depth -= 1;
}

/// Whether a `${name:offset:length}` or `${name[i]}` reads a session variable that runs code as
/// arithmetic.
fn unsafe_offset(w: &Walker<'_, '_>, inner: &str) -> bool {
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    super::session::unsafe_in_arithmetic(w, &inner[name_len..]).is_some()
}

/// Why `${…}` with this inside evaluates, as arithmetic or as a variable name, a value only known
/// when the call runs: a subscript (`${a[x]}`), an offset or length (`${s:x:y}`), an indirection
/// (`${!x}`), or a default given to an integer variable (`${n:=v}`).
fn parameter_hazard(w: &Walker<'_, '_>, inner: &str) -> Option<String> {
    if let Some(target) = inner.strip_prefix('!') {
        let len = super::names::identifier_len(target);
        let listing = matches!(&target[len..], "*" | "@" | "[@]" | "[*]");
        if len > 0 && !listing && w.names.is_dynamic(&target[..len]) {
            return Some(format!(
                "names a variable through `{}`, whose value is only known when it runs",
                &target[..len]
            ));
        }
        return None;
    }
    let len = super::names::identifier_len(inner.strip_prefix('#').unwrap_or(inner));
    let name_end = len + usize::from(inner.starts_with('#'));
    let mut rest = &inner[name_end..];
    if let Some(after) = rest.strip_prefix('[') {
        let close = after.find(']').unwrap_or(after.len());
        if let Some(why) = w.subscript_hazard(&after[..close]) {
            return Some(why);
        }
        rest = after.get(close + 1..).unwrap_or("");
    }
    let name = &inner[usize::from(inner.starts_with('#'))..name_end];
    if let Some(default) = rest.strip_prefix(":=").or_else(|| rest.strip_prefix('=')) {
        return w.assignment_hazard(name, Some(default));
    }
    let offset = rest
        .strip_prefix(':')
        .filter(|r| !r.starts_with(['-', '=', '?', '+']))?;
    w.unsafe_names(offset)
        .map(|why| format!("takes an offset or length that {why}"))
}

/// Whether `${…}` with this inside can run code or hides code the analysis cannot parse.
fn braced_parameter(inner: &str, arith_poison: bool) -> Result<(), &'static str> {
    if text_may_execute(inner) {
        return Err("hides a command substitution that cannot be judged");
    }
    if inner.ends_with("@P") {
        return Err("expands its value as a prompt, which runs command substitutions");
    }
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let simple = name_len == inner.len()
        || (inner.starts_with('#') && inner[1..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    if arith_poison && !simple {
        return Err("may evaluate text that runs a command");
    }
    Ok(())
}

/// Whether source text contains a command or process substitution.
pub(super) fn text_may_execute(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("<(") || text.contains(">(")
}

/// Whether an unquoted here-document body runs code when expanded (`\$(` is literal text).
pub(super) fn heredoc_may_execute(body: &str) -> bool {
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'`' => return true,
            b'$' if matches!(b.get(i + 1), Some(b'(' | b'[')) => return true,
            b'$' if b.get(i + 1) == Some(&b'{') => {
                let end = body[i..].find('}').map_or(body.len(), |e| i + e);
                let inner = &body[i + 2..end];
                if inner.ends_with("@P") || text_may_execute(inner) {
                    return true;
                }
                i = end;
            }
            _ => i += 1,
        }
    }
    false
}

/// The argument a word becomes.
pub(super) fn arg_of(w: &Word, src: &str) -> Arg {
    let raw = w.span.slice(src);
    match w.static_value() {
        Some(v) => Arg {
            value: Some(v),
            raw: raw.to_owned(),
            may_be_option: false,
        },
        None => Arg::dynamic(raw, may_start_with_dash(&w.parts) != Some(false)),
    }
}

/// Whether the expansion of `parts` starts with `-`: `Some(answer)` when known, `None` when it
/// depends on a value only known at run time.
fn may_start_with_dash(parts: &[WordPart]) -> Option<bool> {
    for p in parts {
        match p {
            WordPart::Literal { value, .. }
            | WordPart::SingleQuoted { value, .. }
            | WordPart::AnsiC { value, .. } => {
                if let Some(c) = value.chars().next() {
                    return Some(c == '-');
                }
            }
            WordPart::DoubleQuoted { parts, .. } => {
                if let Some(answer) = may_start_with_dash(parts) {
                    return Some(answer);
                }
                if !parts.is_empty() {
                    return None;
                }
            }
            // `~` expands to an absolute path; `<(…)` to `/dev/fd/N`.
            WordPart::Tilde { .. } | WordPart::ProcessSubstitution { .. } => return Some(false),
            _ => return None,
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shellgate_normalize::parse;

    fn first_word(src: &str) -> Arg {
        let t = parse(src).unwrap();
        let c = t.list.items[0].and_or.first.commands[0]
            .as_simple()
            .unwrap()
            .clone();
        arg_of(&c.words[1], src)
    }

    #[test]
    fn dash_prediction() {
        assert!(!first_word("x src/*.rs").option_like());
        assert!(first_word("x *.rs").option_like());
        assert!(first_word("x $a").option_like());
        assert!(!first_word("x ~/a").option_like());
        assert!(!first_word("x \"a$b\"").option_like());
        assert!(first_word("x \"-$b\"").option_like());
        assert!(first_word("x -*").option_like());
    }

    #[test]
    fn braced_parameters() {
        assert!(braced_parameter("x", false).is_ok());
        assert!(braced_parameter("x:-y", false).is_ok());
        assert!(braced_parameter("x@P", false).is_err());
        assert!(braced_parameter("x:-$(id)", false).is_err());
        assert!(braced_parameter("!x", true).is_err());
        assert!(braced_parameter("#x", true).is_ok());
    }
}
