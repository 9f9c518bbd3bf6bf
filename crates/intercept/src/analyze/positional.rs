//! A session function's body judged with the call's arguments in place of `"$@"`, `$1`, …: with
//! `git() { command git "$@"; }`, `git status` runs `command git status`, which no rule about
//! `git push` meets. Only whole words are put in place, only when the body does not move its
//! arguments (`shift`, `set`, `getopts`); an argument only known at run time goes in as written
//! (`git log $REV` → `command git 'log' $REV`) when the body sets no variable that could change
//! what it expands to. Anything else stays a word only known at run time.

use shellgate_normalize::ast::{SimpleCommand, Word};
use shellgate_normalize::visit::{self, Visitor};

use crate::argv::Arg;

/// `definition` (a function definition, or a `sh -c` string) with the arguments `args` put in
/// place, when that can be done exactly.
pub(super) fn substitute(definition: &str, args: &[Arg]) -> Option<String> {
    let script = shellgate_normalize::parse(definition).ok()?;
    let mut found = Found::default();
    visit::walk_script(&mut found, &script);
    let dynamic = args.iter().any(Arg::is_dynamic);
    if found.moves_arguments || (dynamic && found.sets_variables) {
        return None;
    }
    // Each argument as shell text: a known value quoted, an unknown one as written.
    let values: Vec<Value<'_>> = args
        .iter()
        .map(|a| match a.get() {
            Some(v) => Value::Known(v),
            None => Value::Written(&a.raw),
        })
        .collect();
    let mut out = definition.to_owned();
    // From the end, so earlier spans stay valid.
    for (start, end) in found.words.into_iter().rev() {
        let Some(text) = definition.get(start..end) else {
            continue;
        };
        if let Some(with) = replacement(text, &values) {
            out.replace_range(start..end, &with);
        }
    }
    // A word that is not one of the positional forms (`"x$1"`) keeps its expansion, a word only
    // known at run time.
    Some(out)
}

/// One argument of the call.
#[derive(Clone, Copy)]
enum Value<'a> {
    Known(&'a str),
    /// Only known at run time: its source text.
    Written(&'a str),
}

impl Value<'_> {
    fn text(self) -> String {
        match self {
            Value::Known(v) => quote(v),
            Value::Written(raw) => raw.to_owned(),
        }
    }
}

/// The text a whole word `text` becomes, when it is one of the positional forms.
fn replacement(text: &str, values: &[Value<'_>]) -> Option<String> {
    let quoted = text.starts_with('"') && text.ends_with('"') && text.len() >= 2;
    let inner = if quoted { &text[1..text.len() - 1] } else { text };
    let name = inner
        .strip_prefix("${")
        .and_then(|n| n.strip_suffix('}'))
        .or_else(|| inner.strip_prefix('$'))?;
    if name == "#" {
        return Some(values.len().to_string());
    }
    // Unquoted, bash splits and globs the values: put them in place only when that changes nothing.
    let plain = |v: &Value<'_>| match v {
        Value::Known(v) => !v.is_empty() && !v.contains(|c: char| c.is_whitespace() || "*?[]{}~".contains(c)),
        Value::Written(_) => true,
    };
    if !quoted && !values.iter().all(plain) {
        return None;
    }
    let words: Vec<Value<'_>> = match name {
        "*" if quoted => {
            let known: Option<Vec<&str>> = values
                .iter()
                .map(|v| match v {
                    Value::Known(k) => Some(*k),
                    Value::Written(_) => None,
                })
                .collect();
            return Some(quote(&known?.join(" ")));
        }
        "@" | "*" => values.to_vec(),
        n if n.len() == 1 && n.as_bytes()[0].is_ascii_digit() && n != "0" => {
            let i: usize = n.parse().ok()?;
            match values.get(i - 1) {
                Some(v) => vec![*v],
                None if quoted => return Some("''".into()),
                None => Vec::new(),
            }
        }
        _ => return None,
    };
    Some(words.iter().map(|v| v.text()).collect::<Vec<_>>().join(" "))
}

fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', r"'\''"))
}

#[derive(Default)]
struct Found {
    /// Spans of words.
    words: Vec<(usize, usize)>,
    /// The body changes its arguments.
    moves_arguments: bool,
    /// The body sets variables.
    sets_variables: bool,
}

impl Visitor<'_> for Found {
    fn simple_command(&mut self, c: &SimpleCommand) {
        let name = c.words.first().and_then(Word::static_value);
        let name = name.as_deref().unwrap_or_default();
        if matches!(name, "shift" | "set" | "getopts") {
            self.moves_arguments = true;
        }
        if !c.assignments.is_empty()
            || matches!(
                name,
                "local"
                    | "declare"
                    | "typeset"
                    | "export"
                    | "readonly"
                    | "read"
                    | "readarray"
                    | "mapfile"
                    | "printf"
                    | "unset"
                    | "eval"
                    | "source"
                    | "."
                    | "let"
            )
        {
            self.sets_variables = true;
        }
    }

    fn compound(&mut self, c: &shellgate_normalize::ast::CompoundCommand) {
        if matches!(
            c.kind,
            shellgate_normalize::ast::CompoundKind::For { .. }
                | shellgate_normalize::ast::CompoundKind::ArithmeticFor { .. }
                | shellgate_normalize::ast::CompoundKind::Arithmetic { .. }
        ) {
            self.sets_variables = true;
        }
    }

    fn word(&mut self, w: &Word) {
        self.words.push((w.span.start, w.span.end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(def: &str, args: &[&str]) -> Option<String> {
        let args: Vec<Arg> = args.iter().map(|a| Arg::literal(a)).collect();
        substitute(def, &args)
    }

    #[test]
    fn arguments_are_put_in_place() {
        assert_eq!(
            sub("git () { command git \"$@\"; }", &["status", "-s"]).unwrap(),
            "git () { command git 'status' '-s'; }"
        );
        // An unquoted word whose values would split stays as written.
        assert_eq!(
            sub("f () { echo \"$1\" $2; }", &["a b", "c"]).unwrap(),
            "f () { echo 'a b' $2; }"
        );
        assert_eq!(
            sub("f () { echo \"$1\" \"$3\" \"$*\" $#; }", &["a b", "c"]).unwrap(),
            "f () { echo 'a b' '' 'a b c' 2; }"
        );
        assert_eq!(sub("f () { shift; git \"$@\"; }", &["x", "push"]), None);
        assert_eq!(
            sub("f () { git \"x$1\"; }", &["push"]).unwrap(),
            "f () { git \"x$1\"; }"
        );
    }
}
