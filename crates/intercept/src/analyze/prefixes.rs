//! Wrappers that run the command after their options unchanged (`env`, `sudo`, `timeout`,
//! `nice`, `nohup`, `stdbuf`, `time`, `exec`, `xargs`), their options read from a table of each
//! as the program's own getopt reads them (see `options`). Options that cannot be read fail
//! closed: every command line that could follow them is judged as one the wrapper may run.

use super::options::{self, Order, Read, Unreadable};
use super::wrappers::{bare_wrapper, inner};
use super::{Invocation, Walker};
use crate::argv::Arg;
use crate::meaning::Table;

/// GNU coreutils `env` (9.x, `--argv0` from 9.5).
static ENV: Table = Table::new(
    "i|ignore-environment 0|null u|unset= C|chdir= S|split-string= block-signal? default-signal? \
     ignore-signal? list-signal-handling v|debug a|argv0= help version",
)
.abbreviations();

/// sudo 1.9 (`-E` is a flag, `--preserve-env[=list]`; `-h[host]` is help or a host).
static SUDO: Table = Table::new(
    "A|askpass a|auth-type= b|background B|bell C|close-from= c|login-class= D|chdir= E \
     preserve-env? e|edit g|group= H|set-home h? help host= i|login K|remove-timestamp \
     k|reset-timestamp l|list N|no-update n|non-interactive P|preserve-groups p|prompt= R|chroot= \
     r|role= S|stdin s|shell t|type= T|command-timeout= U|other-user= u|user= V|version v|validate",
)
.abbreviations();

/// OpenBSD's `doas` (and its Linux port).
static DOAS: Table = Table::new("a= C= L n s u=");

static TIMEOUT: Table =
    Table::new("k|kill-after= s|signal= v|verbose foreground preserve-status help version").abbreviations();
static NICE: Table = Table::new("n|adjustment= help version").abbreviations();
static NOHUP: Table = Table::new("help version").abbreviations();
static STDBUF: Table = Table::new("i|input= o|output= e|error= help version").abbreviations();
/// GNU `time`.
static TIME: Table =
    Table::new("a|append o|output= f|format= p|portability q|quiet v|verbose V|version help").abbreviations();
/// bash's `exec` builtin.
static EXEC: Table = Table::new("c l a=");
/// GNU findutils `xargs`: `-e`, `-i` and `-l` take a value only attached.
static XARGS: Table = Table::new(
    "0|null a|arg-file= d|delimiter= E= e|eof? I= i|replace? L= l|max-lines? n|max-args= \
     o|open-tty P|max-procs= p|interactive process-slot-var= r|no-run-if-empty s|max-chars= \
     show-limits t|verbose x|exit help version",
)
.abbreviations();

/// Judge `inv` as a wrapper whose options end where `table` says, then `operands` words (the
/// duration of `timeout`), then the command it runs.
fn prefix(
    w: &mut Walker<'_, '_>,
    text: &str,
    inv: Invocation,
    table: &Table,
    operands: usize,
) -> Option<Read> {
    let name = inv.argv[0].get().map_or("", crate::argv::basename).to_owned();
    let read = match options::read(&inv.argv, 1, table, Order::Posix, &name) {
        Ok(r) => r,
        Err(u) => {
            unreadable(w, text, &inv.argv, u);
            return None;
        }
    };
    let start = read.end + operands;
    if let Some(d) = inv
        .argv
        .get(read.end..start)
        .and_then(|o| o.iter().find(|a| a.is_dynamic()))
    {
        w.fail_running_one_of(
            text,
            format!("the `{name}` operand `{}` is only known when it runs", d.raw),
            options::tails(&inv.argv, read.end),
        );
        return None;
    }
    if start >= inv.argv.len() {
        bare_wrapper(w, text, inv);
    } else {
        w.invoke(text, inner(&inv, start), None);
    }
    Some(read)
}

/// A wrapper's options cannot be read from `u.at` on: what follows may be the command.
pub(super) fn unreadable(w: &mut Walker<'_, '_>, text: &str, argv: &[Arg], u: Unreadable) {
    w.fail_running_one_of(text, u.why, options::tails(argv, u.at));
}

pub(super) fn timeout(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    prefix(w, text, inv, &TIMEOUT, 1);
}

pub(super) fn nice(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    // `nice -5 cmd`: the adjustment written as an option.
    if let Some(v) = inv.argv.get(1).and_then(Arg::get)
        && v.len() > 1
        && v.starts_with('-')
        && v[1..].bytes().all(|b| b.is_ascii_digit())
    {
        let mut rest = inv;
        rest.argv.remove(1);
        return nice(w, text, rest);
    }
    prefix(w, text, inv, &NICE, 0);
}

pub(super) fn nohup(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    prefix(w, text, inv, &NOHUP, 0);
}

pub(super) fn stdbuf(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    prefix(w, text, inv, &STDBUF, 0);
}

pub(super) fn time(w: &mut Walker<'_, '_>, text: &str, mut inv: Invocation) {
    if let Ok(read) = options::read(&inv.argv, 1, &TIME, Order::Posix, "time")
        && read.has("o")
    {
        inv.problem = Some("`time -o` writes to a file".into());
    }
    prefix(w, text, inv, &TIME, 0);
}

pub(super) fn exec(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    with_argv0(w, text, inv, &EXEC, "a");
}

/// A wrapper that may run its command under another name (`exec -a NAME`, `env --argv0 NAME`):
/// the command is judged as written and as invoked by that name (`git` run as `git-push`).
fn with_argv0(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, table: &Table, option: &str) {
    let name = inv.argv[0].get().map_or("", crate::argv::basename).to_owned();
    let argv0 = match options::read(&inv.argv, 1, table, Order::Posix, &name) {
        Ok(read) if read.end < inv.argv.len() => read.value(option).cloned().map(|a| (a, read.end)),
        _ => None,
    };
    let again = argv0.map(|(a, end)| {
        let mut renamed = inner(&inv, end);
        renamed.argv[0] = a;
        renamed
    });
    prefix(w, text, inv, table, 0);
    if let Some(renamed) = again {
        if renamed.argv[0].is_dynamic() {
            let raw = renamed.argv[0].raw.clone();
            w.fail_running_one_of(
                text,
                format!("the name `{raw}` the command runs as is only known when it runs"),
                vec![renamed.argv],
            );
        } else {
            w.invoke(text, renamed, None);
        }
    }
}

pub(super) fn env(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let mut argv = inv.argv.clone();
    let mut problem = inv.problem.clone();
    let mut assigned = inv.assigned.clone();
    let mut argv0 = None;
    let mut chdir = None;
    // `-S STRING`: its words are put in place of the option and read on, as env does.
    let mut from = if argv.get(1).is_some_and(|a| a.is("-")) {
        2
    } else {
        1
    };
    let mut splits = 0;
    let mut i = loop {
        let read = match options::read_until(&argv, from, &ENV, Order::Posix, "env", Some("S")) {
            Ok(r) => r,
            Err(u) => return unreadable(w, text, &argv, u),
        };
        argv0 = read.value("a").cloned().or(argv0);
        chdir = read.value("C").cloned().or(chdir);
        let Some(string) = read
            .options
            .last()
            .filter(|(n, _)| n == "S")
            .and_then(|(_, v)| v.clone())
        else {
            break read.end;
        };
        splits += 1;
        let words = match string.get().map(split_string) {
            Some(Ok(words)) if splits < 8 => words,
            Some(Err(why)) => return w.fail_running(text, why, &string.raw),
            _ => {
                return w.fail_running(
                    text,
                    format!("the `env -S` string `{}` is only known when it runs", string.raw),
                    &string.raw,
                );
            }
        };
        let at = read.end;
        let mut next = argv[..at].to_vec();
        next.extend(words);
        next.extend_from_slice(&argv[at..]);
        from = at;
        argv = next;
    };
    // `NAME=VALUE` words set the environment.
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            if a.raw.contains('=') {
                return w.fail_running_one_of(
                    text,
                    format!("the `env` argument `{}` is only known when it runs", a.raw),
                    options::tails(&argv, i + 1),
                );
            }
            break;
        };
        let Some((name, value)) = v.split_once('=') else {
            break;
        };
        assigned.push((name.to_owned(), Arg::literal(value)));
        if crate::env::is_injection_key(name) {
            problem = Some(format!(
                "`env` sets `{name}`, which changes what the command runs"
            ));
        }
        i += 1;
    }
    let mut next = inv;
    next.argv = argv;
    next.problem = problem;
    next.assigned = assigned;
    if i >= next.argv.len() {
        return bare_wrapper(w, text, next);
    }
    let command = inner(&next, i);
    if let Some(name) = argv0 {
        let mut renamed = command.clone();
        renamed.argv[0] = name;
        if renamed.argv[0].is_dynamic() {
            let raw = renamed.argv[0].raw.clone();
            w.fail_running_one_of(
                text,
                format!("the name `{raw}` the command runs as is only known when it runs"),
                vec![renamed.argv],
            );
        } else {
            w.invoke(text, renamed, None);
        }
    }
    // `env -C DIR` runs the command in DIR.
    match chdir {
        None => w.invoke(text, command, None),
        Some(dir) => {
            let here = w.here.clone();
            w.here = dir.get().and_then(|d| {
                let d = match &here {
                    _ if d.starts_with('/') => std::path::PathBuf::from(d),
                    Some(h) => h.join(d),
                    None => return None,
                };
                Some(crate::path_lookup::lexical_normalize(&d))
            });
            w.cd_seen = true;
            w.invoke(text, command, None);
            w.here = here;
        }
    }
}

/// `env -S` splitting: shell-like words, judged as static words or not at all.
fn split_string(s: &str) -> Result<Vec<Arg>, String> {
    let script =
        shellgate_normalize::parse(s).map_err(|e| format!("the `env -S` string does not parse: {e}"))?;
    let items = &script.list.items;
    let simple = match items.as_slice() {
        [item] if item.and_or.rest.is_empty() && item.and_or.first.commands.len() == 1 => {
            item.and_or.first.commands[0].as_simple()
        }
        _ => None,
    };
    let Some(simple) = simple.filter(|c| c.redirects.is_empty()) else {
        return Err("the `env -S` string is not a plain list of words".into());
    };
    let mut words: Vec<Arg> = Vec::new();
    for a in &simple.assignments {
        words.push(Arg::literal(
            &a.word
                .static_value()
                .ok_or("the `env -S` string has expansions")?,
        ));
    }
    let argv = simple.static_argv().ok_or("the `env -S` string has expansions")?;
    words.extend(argv.iter().map(|s| Arg::literal(s)));
    Ok(words)
}

pub(super) fn sudo(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let read = match options::read(&inv.argv, 1, &SUDO, Order::Posix, "sudo") {
        Ok(r) => r,
        Err(u) => return unreadable(w, text, &inv.argv, u),
    };
    // An editor, a listing, a check: no command runs (`sudo -l CMD` only says whether it may).
    let runs_none = ["e", "l", "v", "K", "V", "help"].iter().any(|o| read.has(o))
        || read.options.iter().any(|(n, v)| n == "h" && v.is_none());
    if runs_none {
        return w.record(text, inv);
    }
    let mut i = read.end;
    while inv.argv.get(i).and_then(Arg::get).is_some_and(|v| {
        v.split_once('=')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    }) {
        i += 1;
    }
    if i >= inv.argv.len() {
        // A shell (`-s`, `-i`) or nothing.
        return bare_wrapper(w, text, inv);
    }
    // With `-s`/`-i` the words run through the shell, each quoted: the same command line.
    let mut next = inner(&inv, i);
    next.elevated = true;
    w.invoke(text, next, None);
}

pub(super) fn doas(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let read = match options::read(&inv.argv, 1, &DOAS, Order::Posix, "doas") {
        Ok(r) => r,
        Err(u) => return unreadable(w, text, &inv.argv, u),
    };
    // A configuration check, clearing the persisted login: nothing runs.
    if read.has("C") || read.has("L") || read.end >= inv.argv.len() {
        return bare_wrapper(w, text, inv);
    }
    let mut next = inner(&inv, read.end);
    next.elevated = true;
    w.invoke(text, next, None);
}

pub(super) fn xargs(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let argv = &inv.argv;
    let read = match options::read(argv, 1, &XARGS, Order::Posix, "xargs") {
        Ok(r) => r,
        Err(u) => return unreadable(w, text, argv, u),
    };
    let replace = read.options.iter().rev().find_map(|(n, v)| match n.as_str() {
        "I" => Some(v.clone()),
        "i" => Some(Some(v.clone().unwrap_or_else(|| Arg::literal("{}")))),
        _ => None,
    });
    let replace = match replace {
        Some(Some(r)) => match r.get() {
            Some(r) => Some(r.to_owned()),
            None => {
                return w.fail_running_one_of(
                    text,
                    "the `xargs -I` string is only known when it runs",
                    options::tails(argv, read.end),
                );
            }
        },
        _ => None,
    };
    let mut next = if read.end >= argv.len() {
        // `xargs` alone runs `echo`.
        let mut n = inner(inv, 0);
        n.argv = vec![Arg::literal("echo")];
        n
    } else {
        inner(inv, read.end)
    };
    match replace {
        Some(r) => {
            for a in &mut next.argv[1..] {
                if a.get().is_some_and(|v| v.contains(r.as_str())) {
                    *a = Arg::dynamic(&a.raw, true);
                }
            }
            if next.argv[0].get().is_some_and(|v| v.contains(r.as_str())) {
                return w.fail_running(
                    text,
                    "the command `xargs` runs is only known when it runs",
                    "(the input of xargs)",
                );
            }
        }
        None => next.open_ended = true,
    }
    w.invoke(text, next, None);
}
