//! The built-in `@safe` profile (SPEC I-3): read-only commands, each with the options that would
//! make it write files or run other programs refused.

mod awk;
mod escapes;
mod git;
mod git_cache;
mod git_repo;
mod profile;
mod sed;

pub(crate) use git_cache::new_judgement;
pub(crate) use git_repo::Place;

pub(crate) use escapes::escapes;

use crate::argv::{Arg, basename};
use crate::getopt::{Item, Spec, long_may_be, scan};
use profile::Judge;

/// Whether `name` is a command the profile knows (a function of that name would shadow it).
pub(crate) fn knows(name: &str) -> bool {
    profile::entry(name).is_some()
}

/// `Ok` when `argv` is read-only; otherwise why not.
pub(crate) fn check(argv: &[Arg], open_ended: bool, elevated: bool, place: Place<'_>) -> Result<(), String> {
    let Some(name) = argv.first().and_then(Arg::get).map(basename) else {
        return Err("the command name is dynamic".into());
    };
    if elevated {
        return Err(format!("`{name}` runs with raised privileges"));
    }
    let args = &argv[1..];
    let Some(entry) = profile::entry(name) else {
        return Err(format!("`{name}` is not in the read-only profile"));
    };
    if matches!(entry.judge, Judge::AnyArgs) {
        return Ok(());
    }
    if open_ended {
        return Err(format!(
            "`{name}` with arguments appended at run time is not known to be read-only"
        ));
    }
    let with_review = |why: String| format!("{why} ({})", entry.review);
    match &entry.judge {
        Judge::AnyArgs => Ok(()),
        Judge::Options {
            spec,
            short,
            long,
            max_operands,
        } => {
            refuse(name, args, *spec, short, long).map_err(with_review)?;
            match max_operands {
                Some(max) => positional_count(name, args, *spec, *max).map_err(with_review),
                None => Ok(()),
            }
        }
        Judge::Words(words) => refuse_words(name, args, words).map_err(with_review),
        Judge::Own => match name {
            "printf" => printf(args),
            "sed" | "gsed" => sed::check(args),
            "git" => git::check(args, place),
            "command" if args.first().is_some_and(|a| a.is("-v") || a.is("-V")) => Ok(()),
            "command" => Err("`command` runs a program".into()),
            _ => awk::check(name, args),
        },
    }
}

/// Refuse the listed short letters and long options (unique prefixes included); dynamic words
/// that may be options are refused too, since they could expand to a refused one.
fn refuse(name: &str, args: &[Arg], spec: Spec<'_>, short: &[char], long: &[&str]) -> Result<(), String> {
    for item in scan(args, spec) {
        match item {
            Item::Short(c, _) if short.contains(&c) => {
                return Err(format!("`{name} -{c}` writes files or runs programs"));
            }
            Item::Long(n, _) if long.iter().any(|l| long_may_be(n, l)) => {
                return Err(format!("`{name} --{n}` writes files or runs programs"));
            }
            Item::Unknown(a) if !short.is_empty() || !long.is_empty() => {
                return Err(format!("`{name}` argument `{}` may expand to an option", a.raw));
            }
            _ => {}
        }
    }
    Ok(())
}

/// At most `max` positional arguments (more would name an output file).
fn positional_count(name: &str, args: &[Arg], spec: Spec<'_>, max: usize) -> Result<(), String> {
    let items = scan(args, spec);
    if items.iter().any(|i| matches!(i, Item::Unknown(_))) {
        return Err(format!("`{name}` has arguments only known when it runs"));
    }
    let n = items.iter().filter(|i| matches!(i, Item::Positional(_))).count();
    if n > max {
        return Err(format!("`{name}` with {n} operands writes or changes something"));
    }
    Ok(())
}

/// Refuse the listed argument words (`find -delete`), and dynamic words that may be one.
fn refuse_words(name: &str, args: &[Arg], words: &[&str]) -> Result<(), String> {
    for a in args {
        match a.get() {
            Some(v) if words.contains(&v) => {
                return Err(format!("`{name} {v}` writes files or runs programs"));
            }
            None if a.may_be_option => {
                return Err(format!("`{name}` argument `{}` may expand to an action", a.raw));
            }
            _ => {}
        }
    }
    Ok(())
}

fn printf(args: &[Arg]) -> Result<(), String> {
    if let Some(first) = args.first()
        && first.is("-v")
    {
        match args.get(1) {
            Some(var) if !crate::argv::plain_variable_name(var) => Err(format!(
                "`printf -v {}` names a variable whose subscript may run code",
                var.raw
            )),
            Some(var)
                if !crate::env::is_injection_key(
                    var.get().and_then(|v| v.split('[').next()).unwrap_or(""),
                ) =>
            {
                Ok(())
            }
            _ => Err("`printf -v` sets a variable that changes what runs".into()),
        }
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe(s: &str) -> bool {
        let argv: Vec<Arg> = s.split_whitespace().map(Arg::literal).collect();
        check(&argv, false, false, Place::default()).is_ok()
    }

    #[test]
    fn every_dangerous_option_in_the_table_is_refused() {
        let cases = profile::dangerous_cases();
        assert!(cases.len() > 40, "{cases:?}");
        for c in cases {
            assert!(!safe(&c), "{c}");
        }
        for e in profile::PROFILE {
            assert!(!e.review.is_empty(), "{:?} has no review", e.names);
        }
        for (name, why) in profile::LEFT_OUT {
            assert!(!knows(name), "{name} is in the profile, but {why}");
            assert!(!safe(&format!("{name} x")), "{name}");
        }
    }

    #[test]
    fn dangerous_flags_are_refused() {
        for c in [
            "sort -o out x",
            "sort --output=out",
            "sort --compress-prog=sh x",
            "sort -uo out",
            "sort x -o out",
            "rg --pre=sh x",
            "rg -z x",
            "rg --search-z x",
            "rg --hostname-bin=x y",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -execdir rm {} ;",
            "find . -ok rm {} ;",
            "find . -okdir rm {} ;",
            "find . -fprint f",
            "find . -fprint0 f",
            "find . -fprintf f %p",
            "find . -fls f",
            "fd -x rm",
            "fd -X rm",
            "fd --exec-b rm",
            "date -s 2020",
            "date --set=2020",
            "date --se 2020",
            "uniq a b",
            "xxd a b",
            "xxd -r a b",
            "tree -o f",
            "tree --output=f",
            "tree -F -o f",
            "tree -R",
            "file -C",
            "file --compile",
            "ag --pager=x y",
            "ag -C --pager=x y",
            "hostname evil",
            "hostname -b",
            "hostname --boot",
            "hostname -F f",
            "ptx -G in out",
            "ptx --traditional in out",
            "base64 -o f",
            "printf -v PATH x",
            "git diff --output=f",
            "git log --output f",
            "git show --outp=f",
            "git format-patch -o d",
            "git archive -o f HEAD",
            "split x",
            "tee x",
            "less x",
            "man ls",
            "command rm x",
        ] {
            assert!(!safe(c), "{c}");
        }
    }

    #[test]
    fn read_only_uses_pass() {
        for c in [
            "sort -k1 -t, x",
            "sort -to x",
            "rg -e z foo",
            "rg -n foo src",
            "find . -name x -type f",
            "fd -e rs",
            "uniq -c x",
            "date +%s",
            "cat a b",
            "grep -rn x .",
            "printf %s x",
            "hostname -f",
            "command -v git",
            "ptx in out",
            "xxd a",
            "tree -F -L 2",
            "file -m magic x",
            "date -d yesterday",
            "ag -C3 x",
        ] {
            assert!(safe(c), "{c}");
        }
    }

    #[test]
    fn open_ended_only_for_commands_without_dangerous_options() {
        let argv = |s: &str| s.split_whitespace().map(Arg::literal).collect::<Vec<_>>();
        assert!(check(&argv("grep -l x"), true, false, Place::default()).is_ok());
        assert!(check(&argv("sort"), true, false, Place::default()).is_err());
        assert!(check(&argv("cat x"), false, true, Place::default()).is_err());
    }
}
