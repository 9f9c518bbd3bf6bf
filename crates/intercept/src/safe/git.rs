//! `git`: the read-only subcommands, without the options that run programs (`-c`, `--exec-path`,
//! `--ext-diff`, `--textconv`, pagers) or write files (`--output`).

use super::git_repo::Place;
use crate::argv::Arg;
use crate::getopt::{long_is, long_may_be};

/// Subcommands that only read, whatever their (non-refused) options.
const READ_ONLY: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "blame",
    "annotate",
    "shortlog",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "describe",
    "rev-list",
    "merge-base",
    "name-rev",
    "show-ref",
    "for-each-ref",
    "count-objects",
    "diff-tree",
    "diff-files",
    "diff-index",
    "whatchanged",
    "grep",
    "check-ignore",
    "check-attr",
    "version",
    "cat-file",
    "cherry",
    "range-diff",
    "show-branch",
    "verify-commit",
    "var",
];

/// Options (of any subcommand) that run a program or write a file.
const REFUSED_LONG: &[&str] = &[
    "output",
    "ext-diff",
    "textconv",
    "exec",
    "paginate",
    "open-files-in-pager",
    "filters",
    "upload-pack",
    "receive-pack",
];

/// `git branch`'s long options (git 2.47), for its unique abbreviations.
const BRANCH_LONG: &[&str] = &[
    "verbose",
    "quiet",
    "track",
    "no-track",
    "set-upstream",
    "set-upstream-to",
    "unset-upstream",
    "color",
    "no-color",
    "remotes",
    "contains",
    "no-contains",
    "with",
    "without",
    "abbrev",
    "no-abbrev",
    "all",
    "delete",
    "move",
    "copy",
    "list",
    "show-current",
    "create-reflog",
    "edit-description",
    "force",
    "merged",
    "no-merged",
    "column",
    "no-column",
    "sort",
    "points-at",
    "ignore-case",
    "recurse-submodules",
    "format",
    "omit-empty",
];

/// The long options of `sub` (beyond [`REFUSED_LONG`]) through which it changes something.
fn refused_long(sub: &str) -> &'static [&'static str] {
    match sub {
        "branch" => &[
            "delete",
            "move",
            "copy",
            "force",
            "set-upstream-to",
            "set-upstream",
            "unset-upstream",
            "edit-description",
            "track",
            "no-track",
            "create-reflog",
            "recurse-submodules",
        ],
        "tag" => &[
            "delete",
            "annotate",
            "sign",
            "local-user",
            "message",
            "file",
            "force",
            "create-reflog",
            "edit",
            "cleanup",
        ],
        _ => &[],
    }
}

/// Options of `sub` that begin a refused option's name and, written in full, are themselves
/// (`git diff --text` is `-a`, not `--textconv`; `git cat-file --text` is `--textconv`).
fn exact_safe(sub: &str, name: &str) -> bool {
    name == "text" && !matches!(sub, "cat-file" | "blame" | "annotate")
}

pub(super) fn check(args: &[Arg], place: Place<'_>) -> Result<(), String> {
    let mut chdirs: Vec<&str> = Vec::new();
    subcommand(args, &mut chdirs)?;
    let dir = super::git_repo::directory(place, &chdirs)?;
    super::git_repo::config_runs_nothing(&dir)
}

/// Judge the subcommand; the `-C` directories go to `chdirs`.
fn subcommand<'a>(args: &'a [Arg], chdirs: &mut Vec<&'a str>) -> Result<(), String> {
    let mut i = 0;
    // Global options.
    while let Some(a) = args.get(i) {
        let Some(v) = a.get() else {
            return Err(format!(
                "the `git` argument `{}` is only known when it runs",
                a.raw
            ));
        };
        match v {
            "-C" => {
                match args.get(i + 1).and_then(Arg::get) {
                    Some(d) => chdirs.push(d),
                    None => return Err("the `git -C` directory is only known when it runs".into()),
                }
                i += 2;
            }
            "--no-pager"
            | "-P"
            | "--no-optional-locks"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--no-replace-objects"
            | "--bare"
            | "--no-lazy-fetch"
            | "--no-advice" => i += 1,
            "--version" | "--help" if i + 1 == args.len() => return Ok(()),
            _ if v.starts_with('-') => {
                return Err(format!(
                    "the `git` option `{v}` can run programs or change which repository is read"
                ));
            }
            _ => break,
        }
    }
    let Some(sub) = args.get(i).and_then(Arg::get) else {
        return Err("`git` without a subcommand".into());
    };
    let rest = &args[i + 1..];
    let refused = refused_long(sub);
    for a in rest {
        match a.get() {
            None if a.may_be_option => {
                return Err(format!(
                    "the `git {sub}` argument `{}` may expand to an option",
                    a.raw
                ));
            }
            Some(v) if v.starts_with("--") && v.len() > 2 => {
                // git takes any unique prefix of a long option: one that begins a refused
                // option is that option, or refused by git as ambiguous.
                let name = v[2..].split('=').next().unwrap_or("");
                if REFUSED_LONG.iter().chain(refused).any(|l| long_may_be(name, l)) && !exact_safe(sub, name)
                {
                    return Err(format!(
                        "`git {sub} {v}` runs a program, writes a file or changes something"
                    ));
                }
            }
            Some("-p") if sub == "grep" => {}
            Some(v) if sub == "grep" && v.starts_with('-') && !v.starts_with("--") && v.contains('O') => {
                return Err("`git grep -O` opens a pager program".into());
            }
            _ => {}
        }
    }
    let positionals = || {
        rest.iter()
            .filter(|a| a.get().is_none_or(|v| !v.starts_with('-')))
            .count()
    };
    let has = |flags: &[&str]| {
        rest.iter().any(|a| {
            a.get()
                .is_some_and(|v| flags.iter().any(|f| v == *f || v.starts_with(&format!("{f}="))))
        })
    };
    match sub {
        s if READ_ONLY.contains(&s) => Ok(()),
        "branch" => {
            if rest.iter().any(|a| {
                a.get().is_some_and(|v| {
                    v.starts_with('-')
                        && !v.starts_with("--")
                        && v[1..].contains(['d', 'D', 'm', 'M', 'c', 'C', 'f', 'u', 't'])
                })
            }) {
                return Err("`git branch` with that option changes branches".into());
            }
            // Only these put `git branch` in list mode; `--sort`/`--format` do not (`git branch
            // --sort=x NAME` creates NAME).
            let list_mode = rest.iter().any(|a| {
                a.get().is_some_and(|v| match v.strip_prefix("--") {
                    Some(long) => {
                        let name = long.split('=').next().unwrap_or("");
                        [
                            "list",
                            "contains",
                            "no-contains",
                            "merged",
                            "no-merged",
                            "points-at",
                            "verbose",
                        ]
                        .iter()
                        .any(|f| long_is(name, f, BRANCH_LONG, &[]))
                    }
                    None => matches!(v, "-l" | "-v" | "-vv"),
                })
            });
            if positionals() > 0 && !list_mode {
                return Err("`git branch NAME` creates a branch".into());
            }
            Ok(())
        }
        "tag" => {
            if positionals() == 0
                && rest.iter().all(|a| {
                    a.get().is_some_and(|v| {
                        matches!(v, "-l" | "--list" | "-n")
                            || v.starts_with("--sort")
                            || v.starts_with("--format")
                            || v.starts_with("--contains")
                            || v.starts_with("--merged")
                            || v.starts_with("--points-at")
                    })
                })
                || (has(&["-l", "--list"]) && !has(&["-d", "--delete", "-a", "-s", "-m", "-f", "-F", "-u"]))
            {
                Ok(())
            } else {
                Err("`git tag` with arguments creates or deletes tags".into())
            }
        }
        "remote" => match rest.first().and_then(Arg::get) {
            None | Some("-v" | "--verbose") if rest.len() <= 1 => Ok(()),
            Some("get-url") => Ok(()),
            _ => Err("`git remote` with that subcommand changes or contacts remotes".into()),
        },
        "config" => config(rest),
        "stash" => match rest.first().and_then(Arg::get) {
            Some("list" | "show") => Ok(()),
            _ => Err("`git stash` changes the stash".into()),
        },
        "worktree" => match rest.first().and_then(Arg::get) {
            Some("list") => Ok(()),
            _ => Err("`git worktree` changes worktrees".into()),
        },
        "reflog" => match rest.first().and_then(Arg::get) {
            None | Some("show") => Ok(()),
            Some(v) if v.starts_with('-') => Ok(()),
            _ => Err("`git reflog` with that subcommand changes the reflog".into()),
        },
        _ => Err(format!("`git {sub}` is not in the read-only profile")),
    }
}

/// `git config` is read-only only in the read forms as git parses them: the `get`/`list`
/// subcommands in first position, or an action option (`--get*`, `--list`) with the operands that
/// action takes. Anything else (`git config NAME VALUE get` sets NAME) writes.
fn config(rest: &[Arg]) -> Result<(), String> {
    const VALUED: &[&str] = &[
        "-f",
        "--file",
        "--blob",
        "--type",
        "--default",
        "--url",
        "--value",
    ];
    const FLAGS: &[&str] = &[
        "--global",
        "--system",
        "--local",
        "--worktree",
        "--show-origin",
        "--show-scope",
        "--name-only",
        "-z",
        "--null",
        "--includes",
        "--no-includes",
        "--bool",
        "--int",
        "--bool-or-int",
        "--path",
        "--expiry-date",
        "--no-type",
        "--fixed-value",
        "--all",
        "--regexp",
        "--show-names",
        "--no-show-names",
    ];
    let mut action: Option<&str> = None;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        let Some(v) = a.get() else {
            return Err(format!(
                "the `git config` argument `{}` is only known when it runs",
                a.raw
            ));
        };
        let name = v.split('=').next().unwrap_or(v);
        if VALUED.contains(&name) {
            i += if v.contains('=') { 1 } else { 2 };
            continue;
        }
        if matches!(
            v,
            "--get"
                | "--get-all"
                | "--get-regexp"
                | "--get-urlmatch"
                | "--get-color"
                | "--get-colorbool"
                | "--list"
                | "-l"
        ) {
            if action.replace(v).is_some() {
                return Err("`git config` with two actions".into());
            }
        } else if v.starts_with('-') && !FLAGS.contains(&v) {
            return Err(format!("`git config {v}` is not known to be a read"));
        } else if !v.starts_with('-') {
            operands.push(v);
        }
        i += 1;
    }
    let read = matches!(
        (action, operands.as_slice()),
        (None, ["get", _] | ["list"])
            | (Some("--list" | "-l"), [])
            | (
                Some(
                    "--get"
                        | "--get-all"
                        | "--get-regexp"
                        | "--get-urlmatch"
                        | "--get-color"
                        | "--get-colorbool"
                ),
                [_] | [_, _]
            )
    );
    if read {
        Ok(())
    } else {
        Err("`git config` in that form changes configuration (only `get`, `list`, `--get*` and `--list` read)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use crate::argv::Arg;

    fn ok(s: &str) -> bool {
        let a: Vec<Arg> = s.split_whitespace().map(Arg::literal).collect();
        let dir = std::path::Path::new("/nonexistent/ws");
        let place = super::Place {
            dir: Some(dir),
            workspace: Some(dir),
        };
        check(&a, place).is_ok()
    }

    #[test]
    fn git_read_only() {
        for c in [
            "status",
            "log --oneline -5",
            "diff HEAD~1",
            "-C sub status",
            "show HEAD:x",
            "branch -a",
            "branch --list 'f*'",
            "rev-parse HEAD",
            "config --get user.name",
            "remote -v",
            "tag -l",
            "stash list",
            "--no-pager log",
        ] {
            assert!(ok(c), "{c}");
        }
        for c in [
            "-c core.pager=sh log",
            "--config-env=a=b log",
            "--exec-path=/x status",
            "diff --output=f",
            "diff --out=f",
            "log --ext-diff",
            "show --textconv",
            "-p log",
            "--paginate log",
            "branch -D x",
            "branch new",
            "push",
            "commit -m x",
            "tag v1",
            "config user.name x",
            "grep -O x",
            "--git-dir=/x log",
            "stash",
            "remote add x y",
        ] {
            assert!(!ok(c), "{c}");
        }
    }
}
