//! The commands git itself runs for a command line: settings that name a program (`-c
//! core.pager=…`, `pager.<cmd>`, `core.editor`, `core.sshCommand`, `diff.external`, a
//! `credential.helper` starting with `!`, …) and the variables that do (`GIT_PAGER`,
//! `GIT_EDITOR`, `GIT_SSH_COMMAND`, …), and the subcommands that run one (`rebase -x`,
//! `submodule foreach`, `bisect run`, `difftool -x`, `filter-branch --tree-filter`, …). Each is
//! judged as the command it is. Also: whether git's configuration may come from the environment,
//! which makes its aliases only known when it runs.

use super::runners::{run_string, run_words};
use super::wrappers::inner;
use super::{Invocation, Walker};
use crate::argv::Arg;
use crate::getopt::long_may_be;

/// git's global options that take the next word as their value.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--config-env",
    "--list-cmds",
    "--attr-source",
];

/// Environment variables whose value git runs as a shell command.
const COMMAND_VARIABLES: &[&str] = &[
    "GIT_PAGER",
    "PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
];

/// Whether git runs the value of the configuration key `key` (lower-cased) as a command; `!` for
/// a key whose value is a command only when it starts with `!` (a credential helper).
fn runs_value(key: &str) -> Option<bool> {
    let parts: Vec<&str> = key.split('.').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    let command = match (first, last, parts.len()) {
        ("core", "pager" | "editor" | "sshcommand" | "askpass" | "fsmonitor", 2)
        | ("sequence", "editor", 2)
        | ("diff", "external", 2)
        | ("gpg", "program", 2 | 3)
        | ("pager", _, 2)
        | ("diff", "command" | "textconv", 3)
        | ("filter", "clean" | "smudge" | "process", 3)
        | ("merge", "driver", 3)
        | ("mergetool" | "difftool", "cmd", 3)
        | ("remote", "uploadpack" | "receivepack", 3)
        | ("uploadpack", "packobjectshook", 2)
        | ("sendemail", "sendmailcmd", 2) => false,
        ("credential", "helper", 2 | 3) => true,
        _ => return None,
    };
    Some(command)
}

/// Judge a git command line: git itself, then what it runs.
pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, mut inv: Invocation) {
    inv.config_env = inv
        .assigned
        .iter()
        .find(|(k, _)| crate::git_config::is_config_key(k))
        .map(|(k, _)| format!("`{k}` is set for it"))
        .or_else(|| w.names.config_env.clone())
        .or_else(|| {
            let view = w.opts.session?;
            let key = view.git_config_env.first()?;
            Some(format!("the session exports `{key}`"))
        });
    // Most git commands run nothing else: no copy of them is kept then.
    if !runs_more(&inv) {
        return w.record(text, inv);
    }
    w.record(text, inv.clone());
    for (key, value) in &inv.assigned {
        if COMMAND_VARIABLES.contains(&key.as_str()) {
            run_string(w, text, value, &inv);
        }
    }
    let argv = &inv.argv;
    let mut i = 1;
    while let Some(v) = argv.get(i).and_then(Arg::get) {
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        if v == "-c" {
            if let Some(kv) = argv.get(i + 1) {
                setting(w, text, kv, &inv);
            }
            i += 2;
            continue;
        }
        i += if VALUED.contains(&v) { 2 } else { 1 };
    }
    let Some(sub) = argv.get(i).and_then(Arg::get) else {
        return;
    };
    let args = &argv[i + 1..];
    match sub {
        "rebase" => rebase(w, text, args, &inv),
        "submodule" => {
            let mut k = 0;
            while args.get(k).is_some_and(|a| a.is("--quiet") || a.is("-q")) {
                k += 1;
            }
            if args.get(k).is_some_and(|a| a.is("foreach")) {
                let mut rest = &args[k + 1..];
                while rest
                    .first()
                    .and_then(Arg::get)
                    .is_some_and(|v| matches!(v, "--recursive" | "-q" | "--quiet" | "--"))
                {
                    rest = &rest[1..];
                }
                if !rest.is_empty() {
                    run_words(w, text, rest, &inv);
                }
            }
        }
        "bisect" if args.first().is_some_and(|a| a.is("run")) && args.len() > 1 => {
            let from = argv.len() - args.len() + 1;
            w.invoke(text, inner(&inv, from), None);
        }
        "difftool" => option_commands(w, text, args, &inv, &[("x", "extcmd")]),
        "filter-branch" => option_commands(
            w,
            text,
            args,
            &inv,
            &[
                ("", "setup"),
                ("", "env-filter"),
                ("", "tree-filter"),
                ("", "index-filter"),
                ("", "parent-filter"),
                ("", "msg-filter"),
                ("", "commit-filter"),
                ("", "tag-name-filter"),
            ],
        ),
        _ => {}
    }
}

/// Whether a git command line may make git run another command: a variable git runs, a `-c`
/// setting, or a subcommand that runs one.
fn runs_more(inv: &Invocation) -> bool {
    inv.assigned
        .iter()
        .any(|(k, _)| COMMAND_VARIABLES.contains(&k.as_str()))
        || inv.argv[1..].iter().any(|a| {
            a.get().is_none_or(|v| {
                matches!(
                    v,
                    "-c" | "rebase" | "submodule" | "bisect" | "difftool" | "filter-branch"
                )
            })
        })
}

/// A `-c KEY=VALUE` setting: a command git runs is judged.
fn setting(w: &mut Walker<'_, '_>, text: &str, kv: &Arg, inv: &Invocation) {
    let Some(kv) = kv.get() else {
        // `user.name=$n`: the key may still be known, and be no program's.
        let raw = kv.raw.trim_start_matches(['"', '\'']);
        let key = raw.split_once('=').map(|(k, _)| k).filter(|k| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        });
        if key.is_some_and(|k| runs_value(&k.to_ascii_lowercase()).is_none()) {
            return;
        }
        return w.fail_running(
            text,
            format!("the git setting `{}` is only known when it runs", kv.raw),
            &kv.raw,
        );
    };
    let Some((key, value)) = kv.split_once('=') else {
        return;
    };
    let key = key.to_ascii_lowercase();
    match runs_value(&key) {
        Some(true) => {
            if let Some(command) = value.strip_prefix('!') {
                run_string(w, text, &Arg::literal(command), inv);
            }
        }
        Some(false) if !matches!(value, "" | "true" | "false") => {
            run_string(w, text, &Arg::literal(value), inv);
        }
        _ => {}
    }
}

/// `git rebase -x CMD` / `--exec CMD` / `--exec=CMD` (also in a cluster: `-ix CMD`).
fn rebase(w: &mut Walker<'_, '_>, text: &str, args: &[Arg], inv: &Invocation) {
    option_commands(w, text, args, inv, &[("x", "exec")]);
}

/// The values of options that give git a command (`short` letter, `long` name; abbreviations
/// of long ones count), each judged as one.
fn option_commands(
    w: &mut Walker<'_, '_>,
    text: &str,
    args: &[Arg],
    inv: &Invocation,
    options: &[(&str, &str)],
) {
    let mut k = 0;
    while let Some(a) = args.get(k) {
        k += 1;
        let Some(v) = a.get() else { continue };
        if v == "--" {
            break;
        }
        let value = if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, x)| (n, Some(x)));
            if !options
                .iter()
                .any(|(_, l)| name.len() >= 2 && long_may_be(name, l))
            {
                continue;
            }
            if let Some(x) = inline {
                Arg::literal(x)
            } else {
                k += 1;
                match args.get(k - 1) {
                    Some(next) => next.clone(),
                    None => continue,
                }
            }
        } else if let Some(letters) = v.strip_prefix('-')
            && let Some(at) =
                letters.find(|c: char| options.iter().any(|(s, _)| s.starts_with(c) && !s.is_empty()))
        {
            let rest = &letters[at + 1..];
            if rest.is_empty() {
                k += 1;
                match args.get(k - 1) {
                    Some(next) => next.clone(),
                    None => continue,
                }
            } else {
                Arg::literal(rest)
            }
        } else {
            continue;
        };
        run_string(w, text, &value, inv);
    }
}
