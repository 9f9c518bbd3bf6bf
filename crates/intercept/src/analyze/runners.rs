//! Programs that run a command given to them (`watch`, `script -c`, `flock`, `setsid`, `ionice`,
//! `chrt`, `unshare`, `parallel`, `systemd-run`, `chroot`): the command is judged, and so is the
//! runner itself, which a rule must allow (unlike `timeout` or `nice`, several of these change
//! where or as whom the command runs). Their options are skipped leniently: any word starting with
//! `-` is an option, and the listed ones take a value.

use super::wrappers::{inner, nested_as};
use super::{Invocation, Walker};
use crate::argv::Arg;

/// Whether `base` is a runner [`run`] handles.
pub(super) fn is_runner(base: &str) -> bool {
    options(base).is_some()
}

/// The options of a runner that take a value: (short letters, long names).
fn options(base: &str) -> Option<(&'static str, &'static [&'static str])> {
    Some(match base {
        "setsid" => ("", &[]),
        "ionice" => ("cnpPu", &["class", "classdata", "pid", "pgid", "uid"]),
        "chrt" => ("TPD", &["sched-runtime", "sched-period", "sched-deadline"]),
        "unshare" => (
            "RwSGl",
            &[
                "propagation",
                "setgroups",
                "root",
                "wd",
                "setuid",
                "setgid",
                "map-user",
                "map-group",
                "map-users",
                "map-groups",
            ],
        ),
        "systemd-run" => (
            "puEMH",
            &[
                "property",
                "unit",
                "description",
                "slice",
                "setenv",
                "uid",
                "gid",
                "nice",
                "working-directory",
                "machine",
                "host",
                "on-active",
                "on-boot",
                "on-startup",
                "on-unit-active",
                "on-unit-inactive",
                "on-calendar",
                "path-property",
                "socket-property",
                "timer-property",
                "service-type",
                "expand-environment",
            ],
        ),
        "chroot" => ("", &["userspec", "groups"]),
        "flock" => ("wE", &["timeout", "conflict-exit-code"]),
        "watch" => ("nq", &["interval", "equexit"]),
        "script" => (
            "TIOBmEo",
            &[
                "log-timing",
                "log-in",
                "log-out",
                "log-io",
                "logging-format",
                "echo",
                "output-limit",
            ],
        ),
        "parallel" => (
            "jSNnIPaC",
            &[
                "jobs",
                "sshlogin",
                "max-args",
                "delay",
                "timeout",
                "joblog",
                "results",
                "colsep",
                "arg-file",
                "tmpdir",
                "max-procs",
                "sshloginfile",
            ],
        ),
        _ => return None,
    })
}

/// Judge a runner and the command it runs.
pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, inv: Invocation, base: &str) {
    let Some((valued_short, valued_long)) = options(base) else {
        return w.record(text, inv);
    };
    // The runner itself needs a rule.
    w.record(text, inv.clone());
    let mut i = skip_options(&inv.argv, valued_short, valued_long);
    let argv = &inv.argv;
    match base {
        // A priority, a new root or a lock file comes before the command.
        "chrt" if argv.iter().any(|a| a.is("-p") || a.is("--pid")) => return,
        "chrt" | "chroot" => i += 1,
        "flock" => {
            if let Some(cmd) = command_option(&argv[(i + 1).min(argv.len())..], &["-c", "--command"]) {
                return run_string(w, text, cmd, &inv);
            }
            i += 1;
        }
        "script" => {
            if let Some(cmd) = command_option(&argv[1..], &["-c", "--command"]) {
                run_string(w, text, cmd, &inv);
            }
            return;
        }
        "watch" if !argv[1..i].iter().any(|a| a.is("-x") || a.is("--exec")) => {
            return run_words(w, text, &argv[i..], &inv);
        }
        "parallel" => return super::parallel::run(w, text, &inv, i),
        _ => {}
    }
    if i < argv.len() {
        w.invoke(text, inner(&inv, i), None);
    }
}

/// The index of the first word after the options.
fn skip_options(argv: &[Arg], valued_short: &str, valued_long: &[&str]) -> usize {
    let mut i = 1;
    while let Some(v) = argv.get(i).and_then(Arg::get) {
        if v == "--" {
            return i + 1;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        let takes_value = match v.strip_prefix("--") {
            Some(long) => !long.contains('=') && valued_long.contains(&long),
            None => v.chars().last().is_some_and(|c| valued_short.contains(c)),
        };
        i += if takes_value { 2 } else { 1 };
    }
    i
}

/// The value of `-c CMD` / `-qc CMD` / `--command=CMD` among `args`.
fn command_option<'a>(args: &'a [Arg], names: &[&str]) -> Option<&'a Arg> {
    for (k, a) in args.iter().enumerate() {
        let v = a.get()?;
        if v.starts_with("--command=") {
            return Some(a);
        }
        let short_cluster = v.starts_with('-') && !v.starts_with("--") && v.ends_with('c');
        if names.contains(&v) || short_cluster {
            return args.get(k + 1);
        }
        if !v.starts_with('-') {
            return None;
        }
    }
    None
}

/// A command string the runner gives to a shell.
fn run_string(w: &mut Walker<'_, '_>, text: &str, cmd: &Arg, inv: &Invocation) {
    match cmd.get() {
        Some(v) => {
            let body = v.strip_prefix("--command=").unwrap_or(v).to_owned();
            nested_as(w, &body, text, inv.elevated);
        }
        None => w.fail_running(
            text,
            format!("the command `{}` is only known when it runs", cmd.raw),
            &cmd.raw,
        ),
    }
}

/// Words the runner joins into one shell command (`watch git status`).
pub(super) fn run_words(w: &mut Walker<'_, '_>, text: &str, words: &[Arg], inv: &Invocation) {
    if words.is_empty() {
        return w.fail(text, "the commands it runs are read from its input");
    }
    // The words' values are joined and run by a shell; a word only known at run time keeps its
    // expansion.
    let body: Vec<&str> = words.iter().map(|a| a.get().unwrap_or(&a.raw)).collect();
    nested_as(w, &body.join(" "), text, inv.elevated);
}
