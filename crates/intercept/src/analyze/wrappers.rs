//! Looking through wrappers to the command that finally runs.

use super::{Invocation, Walker};
use crate::argv::{Arg, basename};
use crate::getopt::long_is;

/// Shells whose `-c` string is parsed as a script.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "fish",
];

pub(super) fn dispatch(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, base: &str, stdin: Option<&str>) {
    match base {
        "env" => env(w, text, inv),
        "sudo" | "doas" => sudo(w, text, inv),
        "timeout" => skip_then(w, text, inv, timeout_options),
        "nice" => skip_then(w, text, inv, nice_options),
        "nohup" => skip_then(w, text, inv, |argv| {
            Ok(usize::from(argv.get(1).is_some_and(|a| a.is("--"))) + 1)
        }),
        "builtin" => skip_then(w, text, inv, |_| Ok(1)),
        "command" => command(w, text, inv),
        // `exec` without a command only applies its redirects to the shell.
        "exec" if inv.argv.len() == 1 && !inv.open_ended => match inv.problem {
            Some(p) => w.fail(text, p),
            None => {
                w.push(text, super::SegmentKind::Inert);
            }
        },
        "exec" => skip_then(w, text, inv, exec_options),
        "stdbuf" => skip_then(w, text, inv, stdbuf_options),
        "time" => time(w, text, inv),
        "xargs" => xargs(w, text, &inv),
        "eval" => eval(w, text, &inv),
        "trap" => trap(w, text, inv),
        "find" => find(w, text, &inv),
        "fd" | "fdfind" => fd(w, text, &inv),
        // A multi-call binary runs the program its first argument names.
        "busybox" | "toybox"
            if inv
                .argv
                .get(1)
                .and_then(Arg::get)
                .is_some_and(|v| !v.starts_with('-')) =>
        {
            let next = inner(&inv, 1);
            w.invoke(text, next, None);
        }
        b if SHELLS.contains(&b) => shell(w, text, inv, stdin),
        b if super::runners::is_runner(b) => super::runners::run(w, text, inv, b),
        _ => w.record(text, inv),
    }
}

/// Whether `base` is a program [`dispatch`] looks through (a wrapper, a shell, a runner).
pub(super) fn dispatches(base: &str) -> bool {
    matches!(
        base,
        "env"
            | "sudo"
            | "doas"
            | "timeout"
            | "nice"
            | "nohup"
            | "builtin"
            | "command"
            | "exec"
            | "stdbuf"
            | "time"
            | "xargs"
            | "eval"
            | "trap"
            | "find"
            | "fd"
            | "fdfind"
            | "busybox"
            | "toybox"
    ) || SHELLS.contains(&base)
        || super::runners::is_runner(base)
}

/// A wrapper with nothing after its options: it is the command itself, unless arguments are
/// appended when it runs (`xargs env`), which then become the command it runs.
fn bare_wrapper(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    if inv.open_ended {
        let name = inv.argv[0].raw.clone();
        w.fail(
            text,
            format!("`{name}` would run a command that is only known when it runs"),
        );
    } else {
        w.record(text, inv);
    }
}

/// Replace `inv.argv` by its tail starting at `from`, keeping everything else.
pub(super) fn inner(inv: &Invocation, from: usize) -> Invocation {
    Invocation {
        argv: inv.argv[from..].to_vec(),
        written: inv.written.clone(),
        open_ended: inv.open_ended,
        elevated: inv.elevated,
        problem: inv.problem.clone(),
        dir: inv.dir.clone(),
        assigned: inv.assigned.clone(),
    }
}

/// For a wrapper whose options end at an index `skip` returns: judge the wrapped command, or the
/// wrapper itself when nothing follows its options.
fn skip_then(
    w: &mut Walker<'_, '_>,
    text: &str,
    inv: Invocation,
    skip: impl Fn(&[Arg]) -> Result<usize, String>,
) {
    match skip(&inv.argv) {
        Err(why) => w.fail(text, why),
        Ok(i) if i >= inv.argv.len() => bare_wrapper(w, text, inv),
        Ok(i) => {
            let next = inner(&inv, i);
            w.invoke(text, next, None);
        }
    }
}

fn value_of(arg: &Arg, what: &str) -> Result<(), String> {
    if arg.is_dynamic() {
        Err(format!("the {what} `{}` is only known when it runs", arg.raw))
    } else {
        Ok(())
    }
}

/// Scan options of a wrapper: `with_value` short letters and long names take a value; the first
/// non-option word ends the scan (and its index is returned). Unknown options are errors, since
/// an option the analysis does not know might take the command as its value.
fn scan_options(
    argv: &[Arg],
    wrapper: &str,
    short_flags: &str,
    short_values: &str,
    long_flags: &[&str],
    long_values: &[&str],
) -> Result<usize, String> {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if a.is_dynamic() {
            if a.may_be_option {
                return Err(format!(
                    "`{wrapper}` option `{}` is only known when it runs",
                    a.raw
                ));
            }
            return Ok(i);
        }
        let v = a.get().unwrap_or_default();
        if v == "--" {
            return Ok(i + 1);
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if long_values
                .iter()
                .any(|l| long_is(name, l, long_values, long_flags))
            {
                i += if inline { 1 } else { 2 };
            } else if long_flags
                .iter()
                .any(|l| long_is(name, l, long_flags, long_values))
            {
                i += 1;
            } else {
                return Err(format!("`{wrapper}` option `{v}` is not known"));
            }
            continue;
        }
        if v.starts_with('-') && v.len() > 1 {
            let letters = &v[1..];
            let mut consumed_next = false;
            for (pos, c) in letters.char_indices() {
                if short_values.contains(c) {
                    consumed_next = pos + c.len_utf8() == letters.len();
                    break;
                }
                if !short_flags.contains(c) {
                    return Err(format!("`{wrapper}` option `-{c}` is not known"));
                }
            }
            i += if consumed_next { 2 } else { 1 };
            continue;
        }
        return Ok(i);
    }
    Ok(i)
}

fn env(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let argv = &inv.argv;
    let mut i = 1;
    let mut prefix: Vec<Arg> = Vec::new();
    let mut problem = inv.problem.clone();
    let mut assigned = inv.assigned.clone();
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            if a.may_be_option || a.raw.contains('=') {
                w.fail(
                    text,
                    format!("the `env` argument `{}` is only known when it runs", a.raw),
                );
                return;
            }
            break;
        };
        if v == "--" {
            i += 1;
            break;
        }
        if let Some(split) = v
            .strip_prefix("--split-string=")
            .or_else(|| v.strip_prefix("-S").filter(|s| !s.is_empty()))
        {
            match split_string(split) {
                Ok(words) => prefix = words,
                Err(why) => return w.fail(text, why),
            }
            i += 1;
            break;
        }
        if v == "-S" || v == "--split-string" {
            match argv.get(i + 1).and_then(Arg::get).map(split_string) {
                Some(Ok(words)) => prefix = words,
                Some(Err(why)) => return w.fail(text, why),
                None => return w.fail(text, "the `env -S` string is only known when it runs"),
            }
            i += 2;
            break;
        }
        if v.starts_with('-') && v.len() > 1 {
            match scan_options(
                &argv[i - 1..],
                "env",
                "i0v",
                "uCP",
                &["ignore-environment", "null", "debug"],
                &[
                    "unset",
                    "chdir",
                    "argv0",
                    "block-signal",
                    "default-signal",
                    "ignore-signal",
                ],
            ) {
                Ok(n) if n > 1 => i += n - 1,
                Ok(_) => break,
                Err(why) => return w.fail(text, why),
            }
            continue;
        }
        if let Some((name, _)) = v.split_once('=') {
            assigned.push(name.to_owned());
            if crate::env::is_injection_key(name) {
                problem = Some(format!(
                    "`env` sets `{name}`, which changes what the command runs"
                ));
            }
            i += 1;
            continue;
        }
        break;
    }
    if prefix.is_empty() && i >= argv.len() {
        let mut inv = inv;
        inv.problem = problem;
        inv.assigned = assigned;
        return bare_wrapper(w, text, inv);
    }
    let mut next = inner(&inv, i.min(argv.len()));
    next.problem = problem;
    next.assigned = assigned;
    if !prefix.is_empty() {
        prefix.extend(next.argv);
        next.argv = prefix;
    }
    // `env -C DIR` runs the command in DIR.
    match env_chdir(&argv[1..i.min(argv.len())]) {
        None => w.invoke(text, next, None),
        Some(dir) => {
            let here = w.here.clone();
            w.here = dir.ok().and_then(|d| {
                let d = match &here {
                    _ if d.starts_with('/') => std::path::PathBuf::from(d),
                    Some(h) => h.join(d),
                    None => return None,
                };
                Some(crate::path_lookup::lexical_normalize(&d))
            });
            w.cd_seen = true;
            w.invoke(text, next, None);
            w.here = here;
        }
    }
}

/// The directory `env`'s options name with `-C DIR`, `-CDIR`, `--chdir=DIR` or `--chdir DIR`
/// (and unique abbreviations): `Some(Err(()))` when it is only known at run time.
fn env_chdir(options: &[Arg]) -> Option<Result<&str, ()>> {
    const LONG: &[&str] = &[
        "ignore-environment",
        "null",
        "debug",
        "unset",
        "chdir",
        "argv0",
        "block-signal",
        "default-signal",
        "ignore-signal",
        "split-string",
    ];
    let mut found = None;
    let mut i = 0;
    while let Some(a) = options.get(i) {
        i += 1;
        let Some(v) = a.get() else { continue };
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, x)| (n, Some(x)));
            if long_is(name, "chdir", LONG, &[]) {
                found = Some(match inline {
                    Some(d) => Ok(d),
                    None => options.get(i).and_then(Arg::get).ok_or(()),
                });
            }
            continue;
        }
        if let Some(letters) = v.strip_prefix('-')
            && !v.contains('=')
        {
            for (pos, c) in letters.char_indices() {
                if "uPS".contains(c) {
                    break;
                }
                if c == 'C' {
                    let attached = &letters[pos + 1..];
                    found = Some(if attached.is_empty() {
                        options.get(i).and_then(Arg::get).ok_or(())
                    } else {
                        Ok(attached)
                    });
                    break;
                }
            }
        }
    }
    found
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
    let Some(simple) = simple.filter(|c| c.assignments.is_empty() && c.redirects.is_empty()) else {
        return Err("the `env -S` string is not a plain list of words".into());
    };
    simple
        .static_argv()
        .map(|v| v.iter().map(|s| Arg::literal(s)).collect())
        .ok_or_else(|| "the `env -S` string has expansions".into())
}

fn sudo(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let argv = &inv.argv;
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else { break };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v.len() == 1 {
            break;
        }
        // A shell, an editor or a listing instead of a command.
        let letters = v.strip_prefix('-').filter(|l| !l.starts_with('-')).unwrap_or("");
        if letters.contains(['s', 'i', 'e', 'l', 'v', 'k', 'K'])
            || ["--shell", "--login", "--edit", "--list", "--validate"].contains(&v)
        {
            return w.record(text, inv);
        }
        match scan_options(
            &argv[i - 1..],
            "sudo",
            "AEHPSbBnN",
            "CDgphRTUtru",
            &[
                "askpass",
                "preserve-env",
                "non-interactive",
                "stdin",
                "background",
                "set-home",
                "bell",
                "preserve-groups",
                "reset-timestamp",
            ],
            &[
                "chdir",
                "close-from",
                "group",
                "host",
                "other-user",
                "prompt",
                "role",
                "type",
                "user",
                "command-timeout",
                "chroot",
            ],
        ) {
            Ok(n) if n > 1 => i += n - 1,
            Ok(_) => break,
            Err(why) => return w.fail(text, why),
        }
    }
    if i >= argv.len() {
        return bare_wrapper(w, text, inv);
    }
    let mut next = inner(&inv, i);
    next.elevated = true;
    w.invoke(text, next, None);
}

fn timeout_options(argv: &[Arg]) -> Result<usize, String> {
    let i = scan_options(
        argv,
        "timeout",
        "v",
        "sk",
        &["preserve-status", "foreground", "verbose"],
        &["signal", "kill-after"],
    )?;
    match argv.get(i) {
        Some(d) => value_of(d, "duration").map(|()| i + 1),
        None => Ok(i),
    }
}

fn nice_options(argv: &[Arg]) -> Result<usize, String> {
    if let Some(v) = argv.get(1).and_then(Arg::get)
        && v.len() > 1
        && v.starts_with('-')
        && v[1..].bytes().all(|b| b.is_ascii_digit())
    {
        return Ok(2);
    }
    scan_options(argv, "nice", "", "n", &[], &["adjustment"])
}

fn exec_options(argv: &[Arg]) -> Result<usize, String> {
    scan_options(argv, "exec", "cl", "a", &[], &[])
}

fn stdbuf_options(argv: &[Arg]) -> Result<usize, String> {
    scan_options(argv, "stdbuf", "", "ioe", &[], &["input", "output", "error"])
}

fn time(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    match scan_options(
        &inv.argv,
        "time",
        "pvaq",
        "fo",
        &["portability", "verbose", "append", "quiet"],
        &["format", "output"],
    ) {
        Err(why) => w.fail(text, why),
        Ok(i) if i >= inv.argv.len() => bare_wrapper(w, text, inv),
        Ok(i) => {
            let writes = inv.argv[1..i].iter().any(|a| {
                a.get()
                    .is_some_and(|v| v.starts_with("-o") || v.starts_with("--o"))
            });
            let mut next = inner(&inv, i);
            if writes {
                next.problem = Some("`time -o` writes to a file".into());
            }
            w.invoke(text, next, None);
        }
    }
}

fn command(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    let mut i = 1;
    while let Some(v) = inv.argv.get(i).and_then(Arg::get) {
        match v {
            "-p" => i += 1,
            "--" => {
                i += 1;
                break;
            }
            // `command -v x` only prints how `x` would be found.
            _ if v.starts_with('-') && v.len() > 1 => return w.record(text, inv),
            _ => break,
        }
    }
    if i >= inv.argv.len() {
        return bare_wrapper(w, text, inv);
    }
    let next = inner(&inv, i);
    w.invoke(text, next, None);
}

fn xargs(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let argv = &inv.argv;
    let mut i = 1;
    let mut replace: Option<String> = None;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            if a.may_be_option {
                return w.fail(
                    text,
                    format!("the `xargs` option `{}` is only known when it runs", a.raw),
                );
            }
            break;
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v.len() == 1 {
            break;
        }
        if v == "-I" {
            replace = argv.get(i + 1).and_then(Arg::get).map(str::to_owned);
            if replace.is_none() {
                return w.fail(text, "the `xargs -I` string is only known when it runs");
            }
            i += 2;
            continue;
        }
        if let Some(r) = v.strip_prefix("-I").or_else(|| v.strip_prefix("--replace=")) {
            replace = Some(r.to_owned());
            i += 1;
            continue;
        }
        if v == "-i" || v == "--replace" {
            replace = Some("{}".into());
            i += 1;
            continue;
        }
        match scan_options(
            &argv[i - 1..],
            "xargs",
            "0ortpx",
            "adEeLlnPs",
            &[
                "null",
                "no-run-if-empty",
                "open-tty",
                "verbose",
                "interactive",
                "exit",
                "show-limits",
            ],
            &[
                "arg-file",
                "delimiter",
                "eof",
                "max-lines",
                "max-args",
                "max-procs",
                "max-chars",
                "process-slot-var",
            ],
        ) {
            Ok(n) if n > 1 => i += n - 1,
            Ok(_) => break,
            Err(why) => return w.fail(text, why),
        }
    }
    let mut next = if i >= argv.len() {
        // `xargs` alone runs `echo`.
        let mut n = inner(inv, 0);
        n.argv = vec![Arg::literal("echo")];
        n
    } else {
        inner(inv, i)
    };
    match replace {
        Some(r) => {
            for a in &mut next.argv[1..] {
                if a.get().is_some_and(|v| v.contains(r.as_str())) {
                    *a = Arg::dynamic(&a.raw, true);
                }
            }
            if next.argv[0].get().is_some_and(|v| v.contains(r.as_str())) {
                return w.fail(text, "the command `xargs` runs is only known when it runs");
            }
        }
        None => next.open_ended = true,
    }
    w.invoke(text, next, None);
}

fn eval(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let mut joined = String::new();
    for a in &inv.argv[1..] {
        let Some(v) = a.get() else {
            return w.fail(
                text,
                format!("the `eval` argument `{}` is only known when it runs", a.raw),
            );
        };
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(v);
    }
    if let Some(p) = &inv.problem {
        w.fail(text, p.clone());
    }
    w.nested(&joined, text);
}

fn trap(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
    match inv.argv.get(1).map(|a| a.get()) {
        None | Some(Some("-l" | "-p" | "-" | "--")) => w.record(text, inv),
        Some(Some(action)) if !action.starts_with('-') => {
            let action = action.to_owned();
            w.in_subshell(|w| w.nested(&action, text));
            w.push(text, super::SegmentKind::Inert);
        }
        _ => w.fail(text, "the `trap` action cannot be judged"),
    }
}

fn find(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let argv = inv.argv.clone();
    let mut i = 1;
    let mut clauses = Vec::new();
    while i < argv.len() {
        let is_exec = argv[i]
            .get()
            .is_some_and(|v| matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir"));
        if !is_exec {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        let mut terminated = false;
        while end < argv.len() {
            match argv[end].get() {
                Some(";") => {
                    terminated = true;
                    break;
                }
                Some("+") if end > start && argv[end - 1].is("{}") => {
                    terminated = true;
                    break;
                }
                _ => end += 1,
            }
        }
        if !terminated || end == start {
            return w.fail(
                text,
                "a `find -exec` clause without its `;` or `+` cannot be judged",
            );
        }
        clauses.push((start, end));
        i = end + 1;
    }
    w.record(text, inv.clone());
    for (start, end) in clauses {
        let mut next = inner(inv, 0);
        next.argv = placeholders(&argv[start..end], "{}");
        next.open_ended = false;
        if next.argv[0].is_dynamic() {
            w.fail(
                text,
                "the command of a `find -exec` clause is only known when it runs",
            );
            continue;
        }
        w.invoke(text, next, None);
    }
}

fn fd(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let argv = inv.argv.clone();
    let pos = argv.iter().position(|a| {
        a.get()
            .is_some_and(|v| matches!(v, "-x" | "-X" | "--exec" | "--exec-batch"))
    });
    w.record(text, inv.clone());
    if let Some(p) = pos {
        let rest = &argv[p + 1..];
        let end = rest.iter().position(|a| a.is(";")).unwrap_or(rest.len());
        if end == 0 {
            return w.fail(text, "an `fd --exec` without a command cannot be judged");
        }
        let mut next = inner(inv, 0);
        next.argv = placeholders(&rest[..end], "{");
        next.open_ended = argv[p].get().is_some_and(|v| v == "-X" || v == "--exec-batch");
        w.invoke(text, next, None);
    }
}

/// Arguments holding a placeholder (a found file name) become dynamic, never option-like: a
/// found name starts with the search root.
fn placeholders(args: &[Arg], marker: &str) -> Vec<Arg> {
    args.iter()
        .map(|a| match a.get() {
            Some(v) if v.contains(marker) => Arg::dynamic(&a.raw, false),
            _ => a.clone(),
        })
        .collect()
}

fn shell(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, stdin: Option<&str>) {
    let argv = &inv.argv;
    let mut i = 1;
    let mut command_string = false;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            // After `-c` the next word is the command string, whatever it expands to.
            if a.may_be_option && !command_string {
                return w.fail(
                    text,
                    format!("the shell option `{}` is only known when it runs", a.raw),
                );
            }
            break;
        };
        if v == "--" || v == "-" {
            i += 1;
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let long = long.split_once('=').map_or(long, |(n, _)| n);
            if ["rcfile", "init-file"]
                .iter()
                .any(|l| l.starts_with(long) && !long.is_empty())
            {
                return w.fail(text, "a shell reading a startup file cannot be judged");
            }
            i += 1;
            continue;
        }
        if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
            let letters = &v[1..];
            if letters.contains('c') && v.starts_with('-') {
                command_string = true;
            }
            // `-o name` / `-O name` take the next word.
            i += if letters.ends_with(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        break;
    }
    let shell_name = argv[0].get().map_or("sh", basename).to_owned();
    if command_string {
        let Some(script) = argv.get(i) else {
            return w.fail(text, format!("`{shell_name} -c` without a command string"));
        };
        let Some(body) = script.get() else {
            let why = format!(
                "the `{shell_name} -c` string `{}` is only known when it runs",
                script.raw
            );
            let idx = w.out.len();
            w.fail(text, why);
            if script.runs_downloader() {
                w.out[idx].danger = Some("runs a script it downloads".into());
            }
            return;
        };
        if argv.len() > i + 1 && body.contains('$') {
            return w.fail(
                text,
                format!("the `{shell_name} -c` string reads arguments passed after it (`$0`, `$1`, …), which cannot be judged"),
            );
        }
        if let Some(p) = &inv.problem {
            w.fail(text, p.clone());
        }
        let body = body.to_owned();
        return nested_as(w, &body, text, inv.elevated);
    }
    // A script file, or commands read from stdin: the shell itself must be allowed; static text
    // fed to it is judged too.
    let reads_stdin = i >= argv.len();
    let elevated = inv.elevated;
    let downloaded = argv[i.min(argv.len())..].iter().any(Arg::runs_downloader);
    let idx = w.out.len();
    bare_wrapper(w, text, inv);
    if downloaded && let Some(seg) = w.out.get_mut(idx) {
        seg.danger
            .get_or_insert_with(|| "runs a script it downloads".into());
    }
    if reads_stdin && let Some(body) = stdin {
        let body = body.to_owned();
        nested_as(w, &body, text, elevated);
    }
}

/// Judge a shell's script; under a privilege wrapper everything in it runs elevated (its login
/// profile too), so no read-only profile applies there.
pub(super) fn nested_as(w: &mut Walker<'_, '_>, body: &str, text: &str, elevated: bool) {
    let outer = w.elevated;
    w.elevated |= elevated;
    // Another shell: its `cd` does not move this one.
    w.in_subshell(|w| w.nested(body, text));
    w.elevated = outer;
}

impl Arg {
    /// Whether the word's source text runs `curl`/`wget` in a substitution.
    pub(crate) fn runs_downloader(&self) -> bool {
        let raw = self.raw.as_str();
        (raw.contains("$(") || raw.contains("<(") || raw.contains('`'))
            && crate::danger::DOWNLOADERS.iter().any(|d| raw.contains(d))
    }
}
