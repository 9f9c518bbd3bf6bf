//! Programs that run a command given to them (`watch`, `script -c`, `flock`, `setsid`, `ionice`,
//! `chrt`, `unshare`, `taskset`, `strace`, `parallel`, `systemd-run`, `chroot`): the command is
//! judged, and so is the runner itself, which a rule must allow (unlike `timeout` or `nice`,
//! several of these change where or as whom the command runs). Their options are read from a
//! table of each (see `options`), unique abbreviations and optional values included; options
//! that cannot be read fail closed.

use super::options::{self, Order, Read};
use super::wrappers::{inner, nested_as};
use super::{Invocation, Walker};
use crate::argv::Arg;
use crate::meaning::Table;

/// What a runner reads before the command: its options, then these operands.
struct Runner {
    table: Table,
    order: Order,
    /// Operands before the command (`flock FILE`, `chroot NEWROOT`, `taskset MASK`).
    operands: usize,
    /// Options with which no command runs (`taskset -p`, `strace -p`, `ionice -p`).
    no_command: &'static [&'static str],
}

const fn runner(spec: &'static str, operands: usize, no_command: &'static [&'static str]) -> Runner {
    Runner {
        table: Table::new(spec).abbreviations(),
        order: Order::Posix,
        operands,
        no_command,
    }
}

static SETSID: Runner = runner("c|ctty f|fork w|wait h|help V|version", 0, &["h", "V"]);
static IONICE: Runner = runner(
    "c|class= n|classdata= p|pid= P|pgid= t|ignore u|uid= h|help V|version",
    0,
    &["p", "P", "u", "h", "V"],
);
static CHRT: Runner = runner(
    "b|batch d|deadline f|fifo i|idle o|other r|rr R|reset-on-fork T|sched-runtime= \
     P|sched-period= D|sched-deadline= a|all-tasks m|max p|pid v|verbose h|help V|version",
    1,
    &["p", "m", "h", "V"],
);
static UNSHARE: Runner = runner(
    "m|mount? u|uts? i|ipc? n|net? p|pid? U|user? C|cgroup? T|time? f|fork map-user= map-group= \
     r|map-root-user c|map-current-user map-auto map-users= map-groups= kill-child? mount-proc? \
     propagation= setgroups= keep-caps R|root= w|wd= S|setuid= G|setgid= monotonic= boottime= \
     load-interp= h|help V|version",
    0,
    &["h", "V"],
);
static SYSTEMD_RUN: Runner = runner(
    "G|collect d|same-dir E|setenv= H|host= M|machine= p|property= P|pipe q|quiet \
     r|remain-after-exit S|shell t|pty u|unit= C|capsule= user system scope description= slice= \
     slice-inherit send-sighup service-type= uid= gid= nice= working-directory= wait on-active= \
     on-boot= on-startup= on-unit-active= on-unit-inactive= on-calendar= on-clock-change \
     on-timezone-change path-property= socket-property= timer-property= no-block \
     no-ask-password expand-environment= json= job-mode= ignore-failure background= h|help \
     version",
    0,
    &["h", "version"],
);
static CHROOT: Runner = runner(
    "userspec= groups= skip-chdir help version",
    1,
    &["help", "version"],
);
static FLOCK: Runner = runner(
    "s|shared x|exclusive|e u|unlock n|nonblock|nb w|timeout|wait= E|conflict-exit-code= o|close \
     F|no-fork c|command= verbose h|help V|version",
    1,
    &["h", "V"],
);
static WATCH: Runner = runner(
    "b|beep c|color C|no-color d|differences? e|errexit g|chgexit q|equexit= n|interval= \
     p|precise t|no-title w|no-wrap x|exec r|no-rerun s|shotgun h|help v|version",
    0,
    &["h", "v"],
);
static TASKSET: Runner = runner(
    "a|all-tasks p|pid c|cpu-list h|help V|version",
    1,
    &["p", "h", "V"],
);
static STRACE: Runner = runner(
    "e= E|env= p|attach= u|user= b|detach-on= I|interruptible= P|trace-path= a|columns= \
     o|output= s|string-limit= X|const-print-style= O|summary-syscall-overhead= \
     S|summary-sort-by= U|summary-columns= trace= signal= status= abbrev= verbose= raw= read= \
     write= quiet? kvm= decode-fds? inject= fault= D|daemonize? f|follow-forks F \
     output-separately z|successful-only Z|failed-only i|instruction-pointer k|stack-traces \
     n|syscall-number A|output-append-mode q r|relative-timestamps? t|absolute-timestamps? \
     T|syscall-times? v|no-abbrev strings-in-hex? x y Y decode-pids? c|summary-only C|summary \
     w|summary-wall-clock d|debug h|help seccomp-bpf tips? V|version",
    0,
    &["p", "h", "V"],
);
/// util-linux `script`: options and its file operand mix; the command is `-c`'s.
static SCRIPT: Runner = Runner {
    table: Table::new(
        "a|append c|command= E|echo= e|return f|flush force I|log-in= O|log-out= B|log-io= \
         T|log-timing= t|timing? m|logging-format= o|output-limit= q|quiet h|help V|version",
    )
    .abbreviations(),
    order: Order::Gnu,
    operands: 0,
    no_command: &["h", "V"],
};

fn table(base: &str) -> Option<&'static Runner> {
    Some(match base {
        "setsid" => &SETSID,
        "ionice" => &IONICE,
        "chrt" => &CHRT,
        "unshare" => &UNSHARE,
        "systemd-run" => &SYSTEMD_RUN,
        "chroot" => &CHROOT,
        "flock" => &FLOCK,
        "watch" => &WATCH,
        "taskset" => &TASKSET,
        "strace" => &STRACE,
        "script" => &SCRIPT,
        _ => return None,
    })
}

/// Whether `base` is a runner [`run`] handles.
pub(super) fn is_runner(base: &str) -> bool {
    base == "parallel" || table(base).is_some()
}

/// Judge a runner and the command it runs.
pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, inv: &Invocation, base: &str) {
    // The runner itself needs a rule.
    w.record(text, inv.clone());
    if base == "parallel" {
        let i = parallel_options(&inv.argv);
        return super::parallel::run(w, text, inv, i);
    }
    let Some(r) = table(base) else { return };
    let argv = &inv.argv;
    let read = match options::read(argv, 1, &r.table, r.order, base) {
        Ok(read) => read,
        Err(u) => return super::prefixes::unreadable(w, text, argv, u),
    };
    if r.no_command.iter().any(|o| read.has(o)) {
        return;
    }
    match base {
        "script" => return script(w, text, &read, inv),
        "flock" if read.value("c").is_some() => {
            return run_string(w, text, read.value("c").unwrap_or(&argv[0]), inv);
        }
        _ => {}
    }
    let start = read.end + r.operands;
    if let Some(d) = argv
        .get(read.end..start)
        .and_then(|o| o.iter().find(|a| a.is_dynamic()))
    {
        return w.fail_running_one_of(
            text,
            format!("the `{base}` operand `{}` is only known when it runs", d.raw),
            options::tails(argv, read.end),
        );
    }
    let rest = argv.get(start..).unwrap_or_default();
    match base {
        // `flock FILE -c CMD`.
        "flock" if rest.first().is_some_and(|a| a.is("-c") || a.is("--command")) => {
            let cmd = rest.get(1).unwrap_or(&argv[0]);
            if rest.len() < 2 {
                return w.fail(text, "`flock -c` without a command string");
            }
            run_string(w, text, cmd, inv);
        }
        // Without `-x` the words are joined and run by `sh -c`.
        "watch" if !read.has("x") => run_words(w, text, rest, inv),
        _ if rest.is_empty() => {}
        _ => w.invoke(text, inner(inv, start), None),
    }
}

/// `script`: the command is `-c`'s string (the last one given), or what follows `--`.
fn script(w: &mut Walker<'_, '_>, text: &str, read: &Read, inv: &Invocation) {
    if let Some(cmd) = read.value("c") {
        return run_string(w, text, cmd, inv);
    }
    let dashdash = inv.argv.iter().position(|a| a.is("--"));
    if let Some(d) = dashdash
        && d + 1 < inv.argv.len()
    {
        w.invoke(text, inner(inv, d + 1), None);
    }
}

/// The index of the first word after `parallel`'s options: its options are too many to list, so
/// any word starting with `-` is one, and the listed ones take a value.
fn parallel_options(argv: &[Arg]) -> usize {
    const SHORT: &str = "jSNnIPaC";
    const LONG: &[&str] = &[
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
    ];
    let mut i = 1;
    while let Some(v) = argv.get(i).and_then(Arg::get) {
        if v == "--" {
            return i + 1;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        let takes_value = match v.strip_prefix("--") {
            Some(long) => !long.contains('=') && LONG.contains(&long),
            None => v.chars().last().is_some_and(|c| SHORT.contains(c)),
        };
        i += if takes_value { 2 } else { 1 };
    }
    i
}

/// A command string the runner gives to a shell.
pub(super) fn run_string(w: &mut Walker<'_, '_>, text: &str, cmd: &Arg, inv: &Invocation) {
    match cmd.get() {
        Some(v) => {
            let body = v.to_owned();
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
