//! GNU `parallel CMD ::: a b` runs `CMD a` and `CMD b`: each input is appended to the command, or
//! put where `{}` stands, and the line is run by a shell. Inputs written on the command line are
//! judged in place (at most [`MAX_LINES`] lines); inputs read when it runs (its stdin, `-a FILE`,
//! `:::: FILE`) are words only known then, which deny rules treat as possibly anything.

use super::{SegmentKind, Walker};
use crate::argv::Arg;

/// The most command lines judged one by one.
const MAX_LINES: usize = 16;

/// Stands for an input only known at run time in the judged command line.
const INPUT: &str = "__shellgate_parallel_input__";

/// Judge what `parallel` (options ending before `argv[start]`) runs.
pub(super) fn run(w: &mut Walker<'_, '_>, text: &str, inv: &super::Invocation, start: usize) {
    let argv = &inv.argv;
    let end = argv[start..]
        .iter()
        .position(|a| a.get().is_some_and(|v| v.starts_with(":::")))
        .map_or(argv.len(), |p| p + start);
    let command = &argv[start..end];
    let options = &argv[1..start];
    if options.iter().any(|a| a.is("--pipe") || a.is("--pipepart")) {
        // The input goes to the command's stdin, not its arguments.
        return super::runners::run_words(w, text, command, inv);
    }
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut read_at_run_time = end == argv.len()
        || options.iter().any(|a| {
            a.get()
                .is_some_and(|v| v.starts_with("-a") || v.starts_with("--arg-file") || v.starts_with("--a"))
        });
    for a in &argv[end..] {
        match a.get() {
            Some(":::" | ":::+") => groups.push(Vec::new()),
            Some(v) if v.starts_with("::::") => read_at_run_time = true,
            Some(v) => groups.last_mut().map_or((), |g| g.push(v)),
            None => read_at_run_time = true,
        }
    }
    let lines = groups.iter().map(Vec::len).product::<usize>();
    let fixed_places = command
        .iter()
        .all(|a| !replaced(a) || a.raw.contains("{}") && !has_other_replacement(&a.raw));
    if read_at_run_time || lines > MAX_LINES || !fixed_places {
        return judge_line(w, text, command, None, inv);
    }
    for line in combinations(&groups) {
        judge_line(w, text, command, Some(&line), inv);
    }
}

/// Whether a word holds a replacement string (`{}`, `{.}`, …).
fn replaced(word: &Arg) -> bool {
    word.raw.contains('{') && word.raw.contains('}')
}

/// Whether a word holds a replacement string other than `{}` (`{.}`, `{/}`, `{1}`, `{= … =}`).
fn has_other_replacement(raw: &str) -> bool {
    raw.replace("{}", "").contains('{')
}

/// Judge the line `parallel` runs for one input line (`None`: an input only known at run time).
fn judge_line(
    w: &mut Walker<'_, '_>,
    text: &str,
    command: &[Arg],
    input: Option<&[&str]>,
    inv: &super::Invocation,
) {
    let value = match input {
        Some(words) => words.iter().map(|v| quote(v)).collect::<Vec<_>>().join(" "),
        None => INPUT.to_owned(),
    };
    let mut placed = false;
    let mut words: Vec<String> = command
        .iter()
        .map(|a| {
            // The words' values are joined and run by a shell.
            let word = a.get().unwrap_or(&a.raw);
            if replaced(a) {
                placed = true;
                if input.is_some() {
                    word.replace("{}", &value)
                } else {
                    INPUT.to_owned()
                }
            } else {
                word.to_owned()
            }
        })
        .collect();
    if !placed {
        words.push(value);
    }
    if command.is_empty() {
        // The inputs are the commands.
        let Some(line) = input else {
            let idx = w.out.len();
            w.fail(text, "the commands `parallel` runs are read from its input");
            w.out[idx].uncertain = vec![vec![Arg::dynamic(INPUT_SHOWN, true)]];
            return;
        };
        let body = line.join(" ");
        return super::wrappers::nested_as(w, &body, text, inv.elevated);
    }
    let start = w.out.len();
    super::wrappers::nested_as(w, &words.join(" "), text, inv.elevated);
    for seg in &mut w.out[start..] {
        if let SegmentKind::Run(run) = &mut seg.kind {
            for a in run.argv.iter_mut().chain(run.written.iter_mut()) {
                if a.is(INPUT) {
                    *a = Arg::dynamic(INPUT_SHOWN, true);
                }
            }
        }
    }
}

/// How an input only known at run time is named.
const INPUT_SHOWN: &str = "(parallel's input)";

/// Every choice of one word per group.
fn combinations<'a>(groups: &[Vec<&'a str>]) -> Vec<Vec<&'a str>> {
    let mut out: Vec<Vec<&str>> = vec![Vec::new()];
    for g in groups {
        out = out
            .iter()
            .flat_map(|line| {
                g.iter().map(move |v| {
                    let mut l = line.clone();
                    l.push(*v);
                    l
                })
            })
            .collect();
    }
    out
}

/// `v` as one shell word.
fn quote(v: &str) -> String {
    format!("'{}'", v.replace('\'', r"'\''"))
}
