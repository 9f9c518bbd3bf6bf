//! Looking through wrappers to the command that finally runs.

use super::{Invocation, Walker};
use crate::argv::{Arg, basename};
use crate::segment::SHELLS;

pub(super) fn dispatch(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, base: &str, stdin: Option<&str>) {
    match base {
        "env" => super::prefixes::env(w, text, inv),
        "sudo" => super::prefixes::sudo(w, text, inv),
        "doas" => super::prefixes::doas(w, text, inv),
        "su" | "runuser" => super::switch_user::run(w, text, inv, base),
        "tmux" => super::tmux::run(w, text, &inv),
        "git" => super::git_runs::run(w, text, inv),
        "timeout" => super::prefixes::timeout(w, text, inv),
        "nice" => super::prefixes::nice(w, text, inv),
        "nohup" => super::prefixes::nohup(w, text, inv),
        "builtin" => {
            let next = inner(&inv, 1);
            if next.argv.is_empty() {
                return bare_wrapper(w, text, inv);
            }
            w.invoke(text, next, None);
        }
        "command" => command(w, text, inv),
        // `exec` without a command only applies its redirects to the shell.
        "exec" if inv.argv.len() == 1 && !inv.open_ended => match inv.problem {
            Some(p) => w.fail(text, p),
            None => {
                w.push(text, super::SegmentKind::Inert);
            }
        },
        "exec" => super::prefixes::exec(w, text, inv),
        "stdbuf" => super::prefixes::stdbuf(w, text, inv),
        "time" => super::prefixes::time(w, text, inv),
        "xargs" => super::prefixes::xargs(w, text, &inv),
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
        b if super::runners::is_runner(b) => super::runners::run(w, text, &inv, b),
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
            | "su"
            | "runuser"
            | "tmux"
            | "git"
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
pub(super) fn bare_wrapper(w: &mut Walker<'_, '_>, text: &str, inv: Invocation) {
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
        config_env: inv.config_env.clone(),
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

fn eval(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation) {
    let mut joined = String::new();
    for a in &inv.argv[1..] {
        let Some(v) = a.get() else {
            if let [only] = &inv.argv[1..]
                && let Some(program) = prints_shell_setup(only)
            {
                // Its output is the environment the program sets up (`eval "$(ssh-agent -s)"`).
                return w.fail(
                    text,
                    format!("the `eval` text is what `{program}` prints, only known when it runs"),
                );
            }
            let idx = w.out.len();
            w.fail_running_one_of(
                text,
                format!("the `eval` argument `{}` is only known when it runs", a.raw),
                vec![eval_words(&inv.argv[1..])],
            );
            if inv.argv[1..].iter().any(Arg::runs_downloader) {
                w.out[idx].danger = Some("runs a script it downloads".into());
            }
            return;
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

/// The program of a word `"$(PROGRAM …)"` when it is one that prints shell code setting up an
/// environment (`ssh-agent -s`, `pyenv init -`, `direnv hook bash`): `eval` of it runs that
/// setup, which no deny rule is about.
fn prints_shell_setup(a: &Arg) -> Option<&'static str> {
    const SETUP: &[&str] = &[
        "ssh-agent",
        "dircolors",
        "pyenv",
        "rbenv",
        "nodenv",
        "goenv",
        "direnv",
        "starship",
        "zoxide",
        "conda",
        "micromamba",
        "fnm",
        "mise",
        "rtx",
        "opam",
        "luarocks",
        "keychain",
        "brew",
        "thefuck",
        "atuin",
        "oh-my-posh",
        "rustup",
    ];
    let raw = a.raw.trim_matches('"');
    let inner = raw
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')))?;
    let script = shellgate_normalize::parse(inner).ok()?;
    let [item] = script.list.items.as_slice() else {
        return None;
    };
    if !item.and_or.rest.is_empty() {
        return None;
    }
    let [command] = item.and_or.first.commands.as_slice() else {
        return None;
    };
    let argv = command.as_simple()?.static_argv()?;
    let name = basename(argv.first()?);
    SETUP.iter().find(|s| **s == name).copied()
}

/// The command line `eval ARGS` may run when some argument is only known at run time: static
/// arguments as the words they hold, dynamic ones as text the shell reads again (so they may
/// split into several words); any command at all when a static part holds shell syntax.
fn eval_words(args: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::with_capacity(args.len());
    for a in args {
        match a.get() {
            Some(v) if v.contains([';', '&', '|', '<', '>', '(', ')', '`', '$', '\n', '"', '\'', '\\']) => {
                let dynamic = args
                    .iter()
                    .find(|a| a.is_dynamic())
                    .map_or("", |a| a.raw.as_str());
                return vec![super::any_command(dynamic)];
            }
            Some(v) => out.extend(v.split_whitespace().map(Arg::literal)),
            None => out.push(super::any_command(&a.raw)),
        }
    }
    out
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
            w.fail_running(text, why, &script.raw);
            if script.runs_downloader() {
                w.out[idx].danger = Some("runs a script it downloads".into());
            }
            return;
        };
        if let Some(p) = &inv.problem {
            w.fail(text, p.clone());
        }
        // The words after the string are `$0`, `$1`, …: put in place where that is exact.
        let body = match argv.get(i + 2..) {
            Some(args) if body.contains('$') => match super::positional::substitute(body, args) {
                Some(with) => with,
                None => {
                    return w.fail_running(
                        text,
                        format!("the `{shell_name} -c` string moves the arguments passed after it (`$1`, …), which cannot be judged"),
                        &script.raw,
                    );
                }
            },
            _ => body.to_owned(),
        };
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
