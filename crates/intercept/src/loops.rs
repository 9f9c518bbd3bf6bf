//! Fork bombs by their structure: a loop that starts a process in the background on every turn —
//! in its body, a group, subshell, branch or inner loop, a function it calls, or a `sh -c` string
//! it runs — and whose condition is not seen to end it fills the process table. A condition ends
//! the loop when it reads input (`while read l`), never holds (`while false`, `until true`), or
//! counts a variable the body steps towards its bound (`while [ $i -lt 3 ]; … i=$((i+1))`).
//! Also `:(){ :|:& };:` and its renamings.

use shellgate_normalize::ast::{
    AndOrOp, Command, CompoundKind, FunctionDef, List, SimpleCommand, Terminator,
};
use shellgate_normalize::visit::{self, Visitor};

use crate::argv::basename;

/// How deeply functions and `sh -c` strings are followed.
const MAX_DEPTH: usize = 8;

/// The definition of a function by name (`f () { …; }`), as the call or the session has it.
pub(crate) type Functions<'f> = dyn Fn(&str) -> Option<String> + 'f;

/// Whether a `while` (`until`) loop with this condition and body may turn for ever.
pub(crate) fn may_not_end(condition: &List, body: &List, until: bool, src: &str) -> bool {
    let Some(last) = condition.items.last() else {
        return true;
    };
    let and_or = &last.and_or;
    // The status of the condition is its last and-or list's.
    let parts: Vec<&SimpleCommand> = and_or.pipelines().filter_map(|p| last_simple(p)).collect();
    let reads = !until
        && and_or.rest.iter().all(|(op, _)| *op == AndOrOp::And)
        && parts.iter().any(|c| {
            c.words
                .first()
                .and_then(shellgate_normalize::ast::Word::static_value)
                .is_some_and(|n| READERS.contains(&n.as_str()))
        });
    if reads {
        return false;
    }
    if let (true, [c]) = (and_or.rest.is_empty(), and_or.first.commands.as_slice()) {
        let never = if until {
            ["true", ":"].as_slice()
        } else {
            ["false"].as_slice()
        };
        if c.as_simple()
            .and_then(SimpleCommand::static_argv)
            .is_some_and(|argv| argv.len() == 1 && never.contains(&argv[0].as_str()))
            && !and_or.first.negated
        {
            return false;
        }
        if let Some((var, rising)) = counter(c, src) {
            // `until` runs while the test fails: its bound is the other way round.
            return !steps(body, src, &var, rising != until);
        }
    }
    true
}

/// Builtins that read input and fail at its end.
const READERS: &[&str] = &["read", "mapfile", "readarray", "getline"];

fn last_simple(p: &shellgate_normalize::ast::Pipeline) -> Option<&SimpleCommand> {
    p.commands.last()?.as_simple()
}

/// A condition comparing a variable with a bound: the variable, and whether it holds while the
/// variable stays below the bound (`-lt`, `-le`, `<`).
fn counter(c: &Command, src: &str) -> Option<(String, bool)> {
    let (left, op) = match c {
        Command::Simple(s) => {
            let argv = s.static_argv().or_else(|| {
                // `[ $i -lt 3 ]`: the variable's word is dynamic; its text names it.
                Some(s.words.iter().map(|w| w.span.slice(src).to_owned()).collect())
            })?;
            let words: Vec<&str> = argv.iter().map(String::as_str).collect();
            match words.as_slice() {
                ["[", l, op, _, "]"] | ["test", l, op, _] => ((*l).to_owned(), (*op).to_owned()),
                _ => return None,
            }
        }
        Command::Compound(cc) => {
            let text = match &cc.kind {
                CompoundKind::Arithmetic { expression } | CompoundKind::Conditional { expression } => {
                    expression.slice(src).to_owned()
                }
                _ => return None,
            };
            let words: Vec<&str> = text.split_whitespace().collect();
            match words.as_slice() {
                [l, op, _] => ((*l).to_owned(), (*op).to_owned()),
                _ => return None,
            }
        }
        Command::Function(_) => return None,
    };
    let var: String = left
        .trim_matches('"')
        .trim_start_matches('$')
        .trim_start_matches('{')
        .trim_end_matches('}')
        .to_owned();
    if var.is_empty() || !var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let rising = match op.as_str() {
        "-lt" | "-le" | "<" | "<=" => true,
        "-gt" | "-ge" | ">" | ">=" => false,
        _ => return None,
    };
    Some((var, rising))
}

/// Whether the body steps `var` up (`up`) or down by arithmetic: `i=$((i+1))`, `((i++))`, `let
/// i+=2`, `: $((i--))`.
fn steps(body: &List, src: &str, var: &str, up: bool) -> bool {
    let text = body.span.slice(src).replace(' ', "");
    let sign = if up { '+' } else { '-' };
    let forms = [
        format!("{var}{sign}{sign}"),
        format!("{sign}{sign}{var}"),
        format!("{var}{sign}="),
        format!("{var}=$(({var}{sign}"),
        format!("{var}=$((${var}{sign}"),
    ];
    forms.iter().any(|f| text.contains(f.as_str()))
}

/// Whether a `for ((init; cond; step))` header never ends: no condition, or a constant one.
pub(crate) fn endless_header(header: &str) -> bool {
    let inner = header.trim().trim_start_matches("((").trim_end_matches("))");
    match inner.split(';').collect::<Vec<_>>().as_slice() {
        [_, cond, _] => cond.trim().is_empty() || nonzero(cond),
        _ => false,
    }
}

/// Whether an arithmetic text is a constant that is not zero.
fn nonzero(expr: &str) -> bool {
    let e = expr.trim();
    !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) && e.bytes().any(|b| b != b'0')
}

/// Whether running `list` starts something in the background: in it, a group, subshell,
/// branch, inner loop or `case` arm, a function it calls (`functions` has their definitions), a
/// `sh -c` string or `eval` text it runs, or `setsid -f`.
pub(crate) fn backgrounds(list: &List, src: &str, functions: &Functions<'_>) -> bool {
    list_backgrounds(list, src, functions, 0)
}

fn list_backgrounds(list: &List, src: &str, functions: &Functions<'_>, depth: usize) -> bool {
    list.items.iter().any(|i| {
        i.terminator == Some(Terminator::Background)
            || i.and_or.pipelines().any(|p| {
                p.commands
                    .iter()
                    .any(|c| command_backgrounds(c, src, functions, depth))
            })
    })
}

fn command_backgrounds(c: &Command, src: &str, functions: &Functions<'_>, depth: usize) -> bool {
    let lists = |ls: &[&List]| ls.iter().any(|l| list_backgrounds(l, src, functions, depth));
    match c {
        Command::Compound(cc) => match &cc.kind {
            CompoundKind::Subshell(l) | CompoundKind::Group(l) => lists(&[l]),
            CompoundKind::If { branches, else_body } => {
                branches.iter().any(|(cond, b)| lists(&[cond, b]))
                    || else_body.as_ref().is_some_and(|e| lists(&[e]))
            }
            CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
                lists(&[condition, body])
            }
            CompoundKind::For { body, .. } | CompoundKind::ArithmeticFor { body, .. } => lists(&[body]),
            CompoundKind::Case { arms, .. } => arms.iter().any(|a| lists(&[&a.body])),
            _ => false,
        },
        Command::Function(_) => false,
        Command::Simple(s) => depth < MAX_DEPTH && simple_backgrounds(s, src, functions, depth + 1),
    }
}

/// A simple command that starts something in the background: a shell's `-c` string or `eval`
/// text that does, a function whose body does, `setsid -f`.
fn simple_backgrounds(s: &SimpleCommand, src: &str, functions: &Functions<'_>, depth: usize) -> bool {
    let Some(argv) = s.static_argv() else {
        return false;
    };
    let mut argv = argv.as_slice();
    // Wrappers that run the rest as it is.
    while let Some((first, rest)) = argv.split_first() {
        match basename(first) {
            "setsid" if rest.iter().any(|a| a == "-f" || a == "--fork") => return true,
            "nohup" | "command" | "builtin" | "exec" | "time" | "nice" | "stdbuf" | "setsid" => argv = rest,
            _ => break,
        }
        while argv.first().is_some_and(|a| a.starts_with('-')) {
            argv = &argv[1..];
        }
    }
    let Some((name, args)) = argv.split_first() else {
        return false;
    };
    let name = basename(name);
    let nested = |text: &str| {
        shellgate_normalize::parse(text)
            .is_ok_and(|script| list_backgrounds(&script.list, text, functions, depth))
    };
    if crate::segment::is_shell(name) {
        let c = args
            .iter()
            .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'));
        return c.and_then(|i| args.get(i + 1)).is_some_and(|body| nested(body));
    }
    if name == "eval" {
        return nested(&args.join(" "));
    }
    if let Some(definition) = functions(name) {
        let _ = src;
        return shellgate_normalize::parse(&definition).is_ok_and(|script| {
            script.list.items.iter().any(|i| {
                i.and_or.pipelines().any(|p| {
                    p.commands.iter().any(|c| match c {
                        Command::Function(f) => {
                            let body = Command::Compound(f.body.clone());
                            command_backgrounds(&body, &definition, functions, depth)
                        }
                        _ => false,
                    })
                })
            })
        });
    }
    false
}

/// `:(){ :|:& };:` and its renamed variants: a function that starts itself more than once at a
/// time.
pub(crate) fn is_fork_bomb(f: &FunctionDef) -> bool {
    struct Calls<'n> {
        name: &'n str,
        count: usize,
        piped_or_background: bool,
    }
    impl Visitor<'_> for Calls<'_> {
        fn pipeline(&mut self, p: &shellgate_normalize::ast::Pipeline) {
            let calls = p
                .commands
                .iter()
                .filter(|c| matches!(c, Command::Simple(s) if s.words.first().is_some_and(|w| w.is_literal(self.name))))
                .count();
            if calls >= 2 {
                self.piped_or_background = true;
            }
        }
        fn simple_command(&mut self, c: &SimpleCommand) {
            if c.words.first().is_some_and(|w| w.is_literal(self.name)) {
                self.count += 1;
            }
        }
    }
    let mut calls = Calls {
        name: &f.name,
        count: 0,
        piped_or_background: false,
    };
    let body = Command::Compound(f.body.clone());
    visit::walk_command(&mut calls, &body);
    calls.piped_or_background || calls.count >= 2
}
