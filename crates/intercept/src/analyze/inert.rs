//! Shell builtins that run nothing a rule must allow: `cd`, `true`, `set -e`, `export A=1`, ….

use crate::argv::Arg;

/// `Some(Ok)` for an inert builtin, `Some(Err(why))` for one whose use changes what later
/// commands run, `None` for anything else.
pub(super) fn check(argv: &[Arg]) -> Option<Result<(), String>> {
    let name = argv.first()?.get()?;
    let args = &argv[1..];
    match name {
        "test" | "[" => Some(test_names(name, args)),
        "unset" => Some(named_variables(name, args.iter().filter(|a| !a.is("-v")))),
        "cd" | "pushd" | "popd" | "true" | "false" | ":" | "shift" | "exit" | "return" | "break"
        | "continue" | "dirs" | "umask" | "wait" | "let"
            if (name != "umask" || args.is_empty())
                && (name != "wait" || !args.iter().any(|a| a.raw.starts_with("-p"))) =>
        {
            Some(Ok(()))
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => Some(assignments(name, args)),
        "set" => Some(set(args)),
        _ => None,
    }
}

/// `test -v NAME` / `-R NAME` evaluate NAME's subscript.
fn test_names(name: &str, args: &[Arg]) -> Result<(), String> {
    let named = args
        .windows(2)
        .filter(|w| w[0].is("-v") || w[0].is("-R"))
        .map(|w| &w[1]);
    named_variables(name, named)
}

fn named_variables<'a>(name: &str, mut names: impl Iterator<Item = &'a Arg>) -> Result<(), String> {
    match names.find(|a| !crate::argv::plain_variable_name(a) && !a.is("-f") && !a.is("-n")) {
        Some(a) => Err(format!(
            "`{name} {}` names a variable whose subscript may run code",
            a.raw
        )),
        None => Ok(()),
    }
}

fn assignments(name: &str, args: &[Arg]) -> Result<(), String> {
    let integer = args
        .iter()
        .filter_map(Arg::get)
        .any(|v| v.starts_with(['-', '+']) && v.contains('i'));
    for a in args {
        let Some(v) = a.get() else {
            return Err(format!(
                "the `{name}` argument `{}` is only known when it runs",
                a.raw
            ));
        };
        if v.starts_with('-') || v.starts_with('+') {
            if v.contains('f') || v.contains('n') {
                return Err(format!("`{name} {v}` changes functions or references"));
            }
            continue;
        }
        let (target, value) = v.split_once('=').unwrap_or((v, ""));
        if !crate::argv::plain_variable_name(&Arg::literal(target.trim_end_matches('+'))) {
            return Err(format!(
                "`{name} {target}` names a variable whose subscript may run code"
            ));
        }
        if crate::argv::code_in_subscript(value)
            || (integer && !value.bytes().all(|b| b.is_ascii_digit() || b == b'-'))
        {
            return Err(format!(
                "`{name} {v}` may evaluate its value as arithmetic, which can run code"
            ));
        }
        let var = v.split(['=', '[']).next().unwrap_or(v).trim_end_matches('+');
        if crate::env::is_injection_key(var) {
            return Err(format!("`{name} {var}` changes what later commands run"));
        }
    }
    Ok(())
}

/// `set` options that change what later words are or run: `-k` (assignment words anywhere on a
/// command line go to its environment), `-a` (every assignment is exported), `-H` (history
/// expansion rewrites lines), `-P` (`cd` follows links, so the directory is not where the path
/// leads), POSIX mode, and comments turned off (`#` no longer ends what is read).
const SET_ON: &[(char, &str)] = &[
    ('k', "keyword"),
    ('a', "allexport"),
    ('H', "histexpand"),
    ('P', "physical"),
];

fn set(args: &[Arg]) -> Result<(), String> {
    let refused = |what: &str| Err(format!("`set {what}` changes what later words are or run"));
    let mut option_name: Option<bool> = None;
    for a in args {
        let Some(v) = a.get() else {
            return Err(format!(
                "the `set` argument `{}` is only known when it runs",
                a.raw
            ));
        };
        if let Some(on) = option_name.take() {
            let changes = match v {
                "posix" => on,
                "interactive-comments" => !on,
                _ => on && SET_ON.iter().any(|(_, long)| *long == v),
            };
            if changes {
                return refused(&format!("{}o {v}", if on { '-' } else { '+' }));
            }
            continue;
        }
        if v == "--" || v == "-" {
            return Ok(());
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            let on = v.starts_with('-');
            if on && let Some((c, _)) = SET_ON.iter().find(|(c, _)| v[1..].contains(*c)) {
                return refused(&format!("-{c}"));
            }
            if v.ends_with('o') {
                option_name = Some(on);
            }
            continue;
        }
        return Err("`set` with operands replaces the positional parameters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::argv::Arg;

    fn c(s: &str) -> Option<bool> {
        let a: Vec<Arg> = s.split_whitespace().map(Arg::literal).collect();
        check(&a).map(|r| r.is_ok())
    }

    #[test]
    fn inert_builtins() {
        assert_eq!(c("cd src"), Some(true));
        assert_eq!(c("set -euo pipefail"), Some(true));
        assert_eq!(c("export RUST_LOG=debug"), Some(true));
        assert_eq!(c("export PATH=/tmp:/bin"), Some(false));
        assert_eq!(c("declare -f x"), Some(false));
        assert_eq!(c("export LD_PRELOAD=x"), Some(false));
        assert_eq!(c("ls"), None);
        assert_eq!(c("umask 000"), None);
    }
}
