//! Shell builtins that run nothing a rule must allow: `cd`, `true`, `set -e`, `export A=1`, ….

use crate::argv::Arg;

/// `Some(Ok)` for an inert builtin, `Some(Err(why))` for one whose use changes what later
/// commands run, `None` for anything else.
pub(super) fn check(argv: &[Arg]) -> Option<Result<(), String>> {
    let name = argv.first()?.get()?;
    let args = &argv[1..];
    match name {
        "cd" | "pushd" | "popd" | "true" | "false" | ":" | "shift" | "wait" | "exit" | "return" | "break"
        | "continue" | "test" | "[" | "unset" | "dirs" | "umask"
            if name != "umask" || args.is_empty() =>
        {
            Some(Ok(()))
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => Some(assignments(name, args)),
        "set" => Some(set(args)),
        _ => None,
    }
}

fn assignments(name: &str, args: &[Arg]) -> Result<(), String> {
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
        let var = v.split(['=', '[']).next().unwrap_or(v).trim_end_matches('+');
        if crate::env::is_injection_key(var) {
            return Err(format!("`{name} {var}` changes what later commands run"));
        }
    }
    Ok(())
}

fn set(args: &[Arg]) -> Result<(), String> {
    let mut expect_option_name = false;
    for a in args {
        let Some(v) = a.get() else {
            return Err(format!(
                "the `set` argument `{}` is only known when it runs",
                a.raw
            ));
        };
        if expect_option_name {
            expect_option_name = false;
            continue;
        }
        if v == "--" || v == "-" {
            return Ok(());
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            expect_option_name = v.ends_with('o');
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
