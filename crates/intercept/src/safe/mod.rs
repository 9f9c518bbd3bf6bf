//! The built-in `@safe` profile (SPEC I-3): read-only commands, each with the options that would
//! make it write files or run other programs refused.

mod awk;
mod escapes;
mod git;
mod git_repo;
mod sed;

pub(crate) use git_repo::Place;

pub(crate) use escapes::escapes;

use crate::argv::{Arg, basename};
use crate::getopt::{Item, Spec, long_may_be, scan};

/// Commands with no option that writes files or runs programs: any arguments are read-only, and
/// arguments appended at run time (`xargs`) are harmless too.
const ANY_ARGS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "wc",
    "ls",
    "pwd",
    "echo",
    "true",
    "false",
    "test",
    "[",
    "which",
    "type",
    "whoami",
    "id",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "stat",
    "du",
    "df",
    "nl",
    "paste",
    "rev",
    "seq",
    "expr",
    "tac",
    "numfmt",
    "cut",
    "tr",
    "comm",
    "fold",
    "fmt",
    "column",
    "strings",
    "od",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "sum",
    "grep",
    "egrep",
    "fgrep",
    "printenv",
    "nproc",
    "arch",
    "uptime",
    "free",
    "groups",
    "locale",
    "tty",
    "getconf",
    "ps",
    "pgrep",
    "cmp",
    "diff",
    "jq",
    "sleep",
    "expand",
    "unexpand",
    "join",
    "look",
    "lsblk",
    "env",
    "whereis",
    "cal",
    "users",
    "who",
    "logname",
    "pathchk",
    "tsort",
    "factor",
];

/// Whether `name` is a command the profile knows (a function of that name would shadow it).
pub(crate) fn knows(name: &str) -> bool {
    ANY_ARGS.contains(&name)
        || matches!(
            name,
            "printf"
                | "date"
                | "hostname"
                | "ptx"
                | "uniq"
                | "xxd"
                | "file"
                | "tree"
                | "base64"
                | "base32"
                | "sort"
                | "find"
                | "fd"
                | "fdfind"
                | "rg"
                | "ag"
                | "sed"
                | "gsed"
                | "git"
                | "command"
        )
        || awk::is_awk(name)
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
    if ANY_ARGS.contains(&name) {
        return Ok(());
    }
    if open_ended {
        return Err(format!(
            "`{name}` with arguments appended at run time is not known to be read-only"
        ));
    }
    match name {
        "printf" => printf(args),
        "date" => refuse(name, args, Spec::default(), &['s'], &["set"]),
        // `-F FILE`/`--file` and `-b` set the host name, as an operand does.
        "hostname" => {
            let spec = Spec {
                short_values: "F",
                long_values: &["file"],
            };
            refuse(name, args, spec, &['F', 'b'], &["file", "boot"])?;
            positional_count(name, args, spec, 0)
        }
        // `ptx -G IN OUT` (traditional mode) writes OUT.
        "ptx" => refuse(
            name,
            args,
            Spec {
                short_values: "bioFgSWw",
                long_values: &[
                    "break-file",
                    "ignore-file",
                    "only-file",
                    "flag-truncation",
                    "gap-size",
                    "sentence-regexp",
                    "word-regexp",
                    "width",
                    "macro-name",
                    "format",
                ],
            },
            &['G'],
            &["traditional"],
        ),
        "uniq" => {
            refuse(
                name,
                args,
                Spec {
                    short_values: "fsw",
                    long_values: &[
                        "skip-fields",
                        "skip-chars",
                        "check-chars",
                        "group",
                        "all-repeated",
                    ],
                },
                &[],
                &[],
            )?;
            positional_count(
                name,
                args,
                Spec {
                    short_values: "fsw",
                    long_values: &["skip-fields", "skip-chars", "check-chars"],
                },
                1,
            )
        }
        "xxd" => {
            let spec = Spec {
                short_values: "cglosn",
                long_values: &[],
            };
            refuse(name, args, spec, &[], &[])?;
            positional_count(name, args, spec, 1)
        }
        "file" => refuse(
            name,
            args,
            Spec {
                short_values: "emfFP",
                long_values: &["magic-file", "files-from", "separator", "exclude", "parameter"],
            },
            &['C'],
            &["compile"],
        ),
        "tree" => refuse(
            name,
            args,
            Spec {
                short_values: "LPIHToF",
                long_values: &["filelimit", "timefmt", "sort", "charset"],
            },
            &['o', 'R'],
            &["output"],
        ),
        "base64" | "base32" => refuse(
            name,
            args,
            Spec {
                short_values: "wio",
                long_values: &["wrap", "input", "output"],
            },
            &['o'],
            &["output"],
        ),
        "sort" => refuse(
            name,
            args,
            Spec {
                short_values: "kotTS",
                long_values: &[
                    "key",
                    "output",
                    "field-separator",
                    "temporary-directory",
                    "buffer-size",
                    "compress-program",
                    "files0-from",
                    "random-source",
                    "parallel",
                    "batch-size",
                    "sort",
                ],
            },
            &['o'],
            &["output", "compress-program"],
        ),
        "find" => find(args),
        "fd" | "fdfind" => refuse(
            name,
            args,
            Spec {
                short_values: "tEedjScxXo",
                long_values: &[
                    "type",
                    "exclude",
                    "extension",
                    "max-depth",
                    "min-depth",
                    "exact-depth",
                    "threads",
                    "size",
                    "changed-within",
                    "changed-before",
                    "owner",
                    "base-directory",
                    "search-path",
                    "color",
                    "max-results",
                    "format",
                    "ignore-file",
                    "path-separator",
                    "and",
                ],
            },
            &['x', 'X'],
            &["exec", "exec-batch"],
        ),
        "rg" => refuse(
            name,
            args,
            Spec {
                short_values: "ABCdEefgjMmrTt",
                long_values: &[
                    "after-context",
                    "before-context",
                    "context",
                    "max-depth",
                    "encoding",
                    "regexp",
                    "file",
                    "glob",
                    "iglob",
                    "threads",
                    "max-columns",
                    "max-count",
                    "replace",
                    "type-not",
                    "type",
                    "type-add",
                    "type-clear",
                    "pre",
                    "pre-glob",
                    "hostname-bin",
                    "colors",
                    "color",
                    "sort",
                    "sortr",
                    "path-separator",
                    "context-separator",
                    "field-context-separator",
                    "field-match-separator",
                    "ignore-file",
                    "max-filesize",
                    "dfa-size-limit",
                    "regex-size-limit",
                    "engine",
                ],
            },
            &['z'],
            &["pre", "hostname-bin", "search-zip"],
        ),
        "ag" => refuse(
            name,
            args,
            Spec {
                short_values: "ABCGgmp",
                long_values: &["pager", "ignore", "file-search-regex", "depth"],
            },
            &[],
            &["pager"],
        ),
        "sed" | "gsed" => sed::check(args),
        n if awk::is_awk(n) => awk::check(n, args),
        "git" => git::check(args, place),
        "command" if args.first().is_some_and(|a| a.is("-v") || a.is("-V")) => Ok(()),
        _ => Err(format!("`{name}` is not in the read-only profile")),
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

fn find(args: &[Arg]) -> Result<(), String> {
    for a in args {
        match a.get() {
            Some(
                v @ ("-exec" | "-execdir" | "-ok" | "-okdir" | "-delete" | "-fprint" | "-fprint0"
                | "-fprintf" | "-fls"),
            ) => {
                return Err(format!("`find {v}` writes files or runs programs"));
            }
            None if a.may_be_option => {
                return Err(format!("`find` argument `{}` may expand to an action", a.raw));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn safe(s: &str) -> bool {
        let argv: Vec<Arg> = s.split_whitespace().map(Arg::literal).collect();
        check(&argv, false, false, Place::default()).is_ok()
    }

    #[test]
    fn dangerous_flags_are_refused() {
        for c in [
            "sort -o out x",
            "sort --output=out",
            "sort --compress-prog=sh x",
            "sort -uo out",
            "rg --pre=sh x",
            "rg -z x",
            "rg --search-z x",
            "rg --hostname-bin=x y",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -fprint f",
            "fd -x rm",
            "fd --exec-b rm",
            "date -s 2020",
            "uniq a b",
            "tree -o f",
            "file -C",
            "ag --pager=x y",
            "hostname evil",
            "base64 -o f",
            "printf -v PATH x",
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
