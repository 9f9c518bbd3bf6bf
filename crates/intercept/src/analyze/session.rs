//! Judging against the persistent session a command runs in: an alias is judged as its
//! replacement text, a function by its body, at the point of use; arithmetic over a variable
//! whose value runs code, and values given to integer variables, fail closed.

use shellgate_normalize::ast::{Command, SimpleCommand};

use super::Walker;
use crate::SessionView;
use crate::argv::Arg;

/// What runs before or around any command of the session: a `command_not_found_handle` runs for
/// every name that is not found, so its body is judged once for the whole command.
pub(super) fn before_any_command(w: &mut Walker<'_, '_>, view: &SessionView) {
    if view.busy {
        w.fail(
            "(the session)",
            "the session is running another command, which may change its functions and aliases before this one runs",
        );
    }
    if let Some(why) = &view.unjudgeable {
        w.fail(
            "(the session)",
            format!("the session's state cannot be judged against: {why}"),
        );
    }
    // bash's and zsh's names for it.
    for handler in ["command_not_found_handle", "command_not_found_handler"] {
        if let Some(definition) = view.functions.get(handler) {
            function_body(w, handler, definition, handler);
        }
    }
}

/// `alias NAME=VALUE …` run by the command: the aliases it defines are expanded where used
/// later in the call (bash expands an alias in the lines it reads after the one defining it;
/// judging every later use is the safe side). A definition only known at run time may be any
/// command: `Some(why)` then.
pub(super) fn define_aliases(w: &mut Walker<'_, '_>, argv: &[Arg]) -> Option<String> {
    for a in &argv[1..] {
        match a.get() {
            Some(v) if v.starts_with('-') => {}
            Some(v) => {
                if let Some((name, value)) = v.split_once('=') {
                    w.call_aliases.push((name.to_owned(), Some(value.to_owned())));
                }
            }
            None => match a.raw.split_once('=') {
                Some((name, _)) if super::names::identifier_len(name) == name.len() && !name.is_empty() => {
                    w.call_aliases.push((name.to_owned(), None));
                }
                _ => {
                    return Some(format!(
                        "`alias {}` defines an alias only known when it runs, which may run any command",
                        a.raw
                    ));
                }
            },
        }
    }
    None
}

/// A first word that names an alias (of the session, or defined earlier in the call): judge the
/// command with the alias replaced, as bash runs it. `true` when the command was handled here.
pub(super) fn expands_alias(w: &mut Walker<'_, '_>, s: &SimpleCommand, src: &str) -> bool {
    let Some(first) = s.words.first() else {
        return false;
    };
    // A quoted or escaped word is never an alias; its raw text is then no alias name.
    let word = first.span.slice(src);
    let defined = w
        .call_aliases
        .iter()
        .rev()
        .find(|(n, _)| n == word)
        .map(|(_, v)| v.clone());
    let replacement = match (defined, w.opts.session.and_then(|view| view.aliases.get(word))) {
        (Some(Some(v)), _) => v,
        (Some(None), _) => {
            if w.expanding.iter().any(|n| n == word) {
                return false;
            }
            let text = s.span.slice(src);
            w.fail_running(
                text,
                format!("the alias `{word}` is only known when it runs"),
                &format!("({word})"),
            );
            return true;
        }
        (None, Some(v)) => v.clone(),
        (None, None) => return false,
    };
    let replacement = replacement.as_str();
    if w.expanding.iter().any(|n| n == word) {
        return false;
    }
    let text = s.span.slice(src);
    if replacement.ends_with([' ', '\t']) {
        w.fail(
            text,
            format!("the session alias `{word}` ends in a blank, so the word after it is expanded too"),
        );
        return true;
    }
    let expanded = format!(
        "{}{replacement}{}",
        &src[s.span.start..first.span.start],
        &src[first.span.end..s.span.end]
    );
    w.expanding.push(word.to_owned());
    w.nested(&expanded, text);
    w.expanding.pop();
    true
}

/// A command name that is a session function: its body runs (with the arguments as `$1`, …), so
/// the body is judged instead of the name. `true` when the command was handled here.
pub(super) fn runs_function(w: &mut Walker<'_, '_>, text: &str, argv: &[Arg], problem: Option<&str>) -> bool {
    let Some(name) = argv.first().and_then(Arg::get) else {
        return false;
    };
    // Every definition this command made (which one runs may depend on a condition), and the
    // session's.
    let mut definitions: Vec<String> = w
        .defined
        .iter()
        .filter(|(n, _)| n == name)
        .map(|(_, d)| d.clone())
        .collect();
    definitions.extend(w.opts.session.and_then(|view| view.functions.get(name)).cloned());
    if definitions.is_empty() {
        return false;
    }
    if let Some(p) = problem {
        w.fail(text, p);
    }
    // A function calling itself: its body is being judged already.
    if !w.expanding.iter().any(|n| n == name) {
        for definition in &definitions {
            // Judged with this call's arguments in place where that is exact.
            let with_arguments = super::positional::substitute(definition, &argv[1..]);
            function_body(w, name, with_arguments.as_deref().unwrap_or(definition), text);
        }
    }
    true
}

fn function_body(w: &mut Walker<'_, '_>, name: &str, definition: &str, text: &str) {
    if w.depth >= super::MAX_DEPTH {
        return w.fail(text, "session functions nested too deeply to judge");
    }
    let parsed = shellgate_normalize::parse(definition).ok();
    let function = parsed
        .as_ref()
        .and_then(|script| match script.list.items.as_slice() {
            [item] if item.and_or.rest.is_empty() => match item.and_or.first.commands.as_slice() {
                [Command::Function(f)] => Some(f),
                _ => None,
            },
            _ => None,
        });
    let Some(f) = function else {
        return w.fail(
            text,
            format!("the session function `{name}` cannot be read to judge it"),
        );
    };
    w.expanding.push(name.to_owned());
    w.depth += 1;
    w.compound(&f.body, definition);
    w.depth -= 1;
    w.expanding.pop();
}

/// A session variable read by arithmetic text whose value would run code there.
pub(super) fn unsafe_in_arithmetic<'v>(w: &Walker<'_, 'v>, expr: &str) -> Option<&'v str> {
    let view = w.opts.session?;
    identifiers(expr).find_map(|name| view.arithmetic_unsafe.get(name).map(String::as_str))
}

/// A session name reference whose target's subscript runs code, named anywhere in `text`.
pub(super) fn named_reference<'v>(w: &Walker<'_, 'v>, text: &str) -> Option<&'v str> {
    let view = w.opts.session?;
    if view.references.is_empty() {
        return None;
    }
    identifiers(text).find_map(|n| view.references.get(n).map(String::as_str))
}

/// Why naming the session reference `name` runs code.
pub(super) fn reference_reason(name: &str) -> String {
    format!(
        "`{name}` is a name reference of the session whose target's subscript runs a command when it is used"
    )
}

/// The names in arithmetic or test text.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}
