//! From a parse tree to the segments a policy judges.
//!
//! Every command that can run — in lists, pipelines, compound commands, function bodies, command
//! and process substitutions, `sh -c` strings, `eval` arguments, `find -exec` clauses — becomes
//! one [`Segment`]. Wrappers (`env`, `sudo`, `timeout`, `nice`, `nohup`, `command`, `builtin`,
//! `exec`, `stdbuf`, `time`, `xargs`) are looked through: the segment carries the command that
//! finally runs. What cannot be seen through (a dynamic command name, an unparsable `$( … )`, an
//! expansion that can execute, too deep a nesting) becomes an [`SegmentKind::Unjudgeable`]
//! segment, so the policy fails closed on it.

mod arith;
mod expansions;
mod git_runs;
mod inert;
mod names;
mod options;
mod parallel;
mod positional;
mod prefixes;
mod runners;
mod session;
mod switch_user;
mod tmux;
mod wrappers;

use std::path::{Path, PathBuf};

use shellgate_normalize::ast::{
    AndOr, AndOrOp, Command, CompoundCommand, CompoundKind, FunctionDef, List, Pipeline, Redirect,
    RedirectOp, Script, SimpleCommand, Terminator, Word,
};

use crate::argv::{Arg, basename};
pub(crate) use crate::segment::{Invocation, Segment, SegmentKind};
use crate::{control, danger};

/// How deeply wrappers, `sh -c` strings and `eval` may nest before the analysis gives up.
pub(crate) const MAX_DEPTH: usize = 12;

/// Facts the analysis may depend on.
pub(crate) struct Options<'a> {
    /// The directory the command starts in.
    pub cwd: Option<&'a Path>,
    /// Whether a name denotes a command (a function of that name would shadow it).
    pub is_command_name: &'a dyn Fn(&str) -> bool,
    /// The session the command runs in, if any.
    pub session: Option<&'a crate::SessionView>,
    /// The configured workspace, when it differs from where the command starts.
    pub workspace: Option<&'a Path>,
    /// The name a program word runs as in a directory, when it differs from the word's own file
    /// name (a link to another program); see `identity`.
    pub real_name: &'a dyn Fn(&str, Option<&Path>) -> Option<String>,
}

/// Analyse `script` (spans index `src`).
pub(crate) fn analyze(script: &Script, src: &str, opts: &Options<'_>) -> Vec<Segment> {
    let names = names::scan(script, opts.session);
    let mut w = Walker {
        opts,
        out: Vec::new(),
        depth: 0,
        here: opts.cwd.map(Path::to_path_buf),
        cd_seen: false,
        cdpath_may_be_set: src.contains("CDPATH") || std::env::var_os("CDPATH").is_some(),
        arith_poison: names.poison,
        names,
        elevated: false,
        expanding: Vec::new(),
        defining: 0,
        defined: Vec::new(),
        call_aliases: Vec::new(),
        engine_pids: Vec::new(),
    };
    if let Some(view) = opts.session {
        session::before_any_command(&mut w, view);
    }
    w.list(&script.list, src);
    w.out
}

/// Whether the analysis looks through the program `base` to the command it runs (a wrapper, a
/// shell, a runner): its segment is no command line of its own arguments.
pub(crate) fn looked_through(base: &str) -> bool {
    wrappers::dispatches(base)
}

/// Analyse a command string that failed to parse or is otherwise opaque.
pub(crate) fn unjudgeable(text: &str, reason: impl Into<String>) -> Segment {
    Segment {
        text: text.to_owned(),
        kind: SegmentKind::Unjudgeable(reason.into()),
        danger: None,
        control: None,
        uncertain: Vec::new(),
        in_definition: false,
    }
}

struct Walker<'o, 'a> {
    opts: &'o Options<'a>,
    out: Vec<Segment>,
    depth: usize,
    /// The directory the next command runs in, while it is known (a `cd` to a dynamic place
    /// makes it unknown).
    here: Option<PathBuf>,
    /// A `cd` ran earlier: relative paths no longer name the starting directory.
    cd_seen: bool,
    /// `CDPATH` is set, or the call may set it: `cd NAME` may lead elsewhere than `./NAME`.
    cdpath_may_be_set: bool,
    /// Some word holds text that would run a command if evaluated as arithmetic (`a[$(id)]`).
    arith_poison: bool,
    /// What the whole call does to the names arithmetic reads and assigns.
    names: names::Names,
    /// Inside a script a privilege wrapper runs (`sudo bash -c '…'`): everything in it is elevated.
    elevated: bool,
    /// Session aliases and functions being expanded (bash does not expand an alias inside itself;
    /// a function calling itself is not followed).
    expanding: Vec<String>,
    /// How many function definitions the walk is inside.
    defining: usize,
    /// Functions this command defines, `(name, definition)`, judged again where called.
    defined: Vec<(String, String)>,
    /// Aliases this command defines, `(name, replacement)` (`None`: only known at run time).
    call_aliases: Vec<(String, Option<String>)>,
    /// Variables given the process ids of a lookup that finds the engine (`p=$(pgrep -f 'gate
    /// rpc')`, `for p in $(pgrep …)`).
    engine_pids: Vec<String>,
}

impl Walker<'_, '_> {
    fn push(&mut self, text: &str, kind: SegmentKind) -> usize {
        self.out.push(Segment {
            text: text.to_owned(),
            kind,
            danger: None,
            control: None,
            uncertain: Vec::new(),
            in_definition: self.defining > 0,
        });
        self.out.len() - 1
    }

    fn fail(&mut self, text: &str, reason: impl Into<String>) {
        self.push(text, SegmentKind::Unjudgeable(reason.into()));
    }

    /// A segment that cannot be judged and may run any command: the text `raw` given to a shell,
    /// `eval` or a runner is only known at run time. A deny rule asks about it.
    fn fail_running(&mut self, text: &str, reason: impl Into<String>, raw: &str) {
        self.fail_running_one_of(text, reason, vec![vec![any_command(raw)]]);
    }

    /// A segment that cannot be judged and may run one of `candidates`.
    fn fail_running_one_of(&mut self, text: &str, reason: impl Into<String>, candidates: Vec<Vec<Arg>>) {
        let idx = self.push(text, SegmentKind::Unjudgeable(reason.into()));
        self.out[idx].uncertain = candidates;
    }

    fn list(&mut self, list: &List, src: &str) {
        for item in &list.items {
            let background = item.terminator == Some(Terminator::Background);
            // A background item runs in a subshell: its `cd` does not move the shell.
            let here = background.then(|| self.here.clone());
            self.and_or(&item.and_or, src, background);
            if let Some(here) = here {
                self.here = here;
            }
        }
    }

    /// Pipelines joined by `&&` and `||`: a pipeline after `||` runs where an earlier `cd` of
    /// the list failed (or never ran), and after the list the directory is whichever `cd` last
    /// succeeded — neither known.
    fn and_or(&mut self, a: &AndOr, src: &str, background: bool) {
        let start = self.here.clone();
        self.pipeline(&a.first, src, background);
        for (op, p) in &a.rest {
            if *op == AndOrOp::Or && self.here != start {
                self.here = None;
            }
            self.pipeline(p, src, background);
        }
        if !a.rest.is_empty() && self.here != start {
            self.here = None;
        }
    }

    fn pipeline(&mut self, p: &Pipeline, src: &str, _background: bool) {
        let mut stage_starts = Vec::with_capacity(p.commands.len());
        // The stages of a pipeline run in subshells.
        let subshells = p.commands.len() > 1;
        for c in &p.commands {
            stage_starts.push(self.out.len());
            let here = subshells.then(|| self.here.clone());
            self.command(c, src);
            if let Some(here) = here {
                self.here = here;
            }
        }
        if p.commands.len() > 1 {
            crate::pipelines::check(&mut self.out, &stage_starts);
        }
        // `echo TEXT | sh` runs TEXT: judge it as a script too; text only known at run time may
        // be any command.
        for pair in p.commands.windows(2) {
            if let (Some(producer), Some(shell)) = (pair[0].as_simple(), pair[1].as_simple())
                && shell_reads_stdin(shell)
            {
                match echoed_text(producer, src) {
                    Some(Ok(text)) => self.in_subshell(|w| w.nested(&text, shell.span.slice(src))),
                    Some(Err(raw)) => self.fail_running(
                        shell.span.slice(src),
                        format!("the shell reads a program only known when it runs: `{raw}`"),
                        &raw,
                    ),
                    None => {}
                }
            }
        }
    }

    /// Walk something that runs in a subshell or another process: a `cd` there does not move
    /// this shell.
    fn in_subshell(&mut self, walk: impl FnOnce(&mut Self)) {
        let here = self.here.clone();
        walk(self);
        self.here = here;
    }

    /// Walk a loop: when a turn may end elsewhere than it started, later turns run in a directory
    /// not known here, so the loop is judged again from an unknown directory.
    fn looped(&mut self, walk: impl Fn(&mut Self)) {
        let start = self.here.clone();
        let (out, defined) = (self.out.len(), self.defined.len());
        walk(self);
        if self.here != start && start.is_some() {
            self.out.truncate(out);
            self.defined.truncate(defined);
            self.here = None;
            walk(self);
        }
        self.here = if self.here == start { start } else { None };
    }

    fn command(&mut self, c: &Command, src: &str) {
        match c {
            Command::Simple(s) => self.simple(s, src),
            Command::Compound(cc) => self.compound(cc, src),
            Command::Function(f) => self.function(f, src),
        }
    }

    fn function(&mut self, f: &FunctionDef, src: &str) {
        let text = f.span.slice(src);
        let idx = if (self.opts.is_command_name)(&f.name) {
            self.push(
                text,
                SegmentKind::Unjudgeable(format!(
                    "the function `{}` would replace the command of that name",
                    f.name
                )),
            )
        } else {
            self.push(text, SegmentKind::Inert)
        };
        if crate::loops::is_fork_bomb(f) {
            self.out[idx].danger = Some(format!("`{}` is a fork bomb", f.name));
        }
        self.defined.push((f.name.clone(), text.to_owned()));
        self.defining += 1;
        // Defining runs nothing: a `cd` in the body moves the shell where it is called.
        let here = self.here.clone();
        self.compound(&f.body, src);
        self.here = here;
        self.defining -= 1;
    }

    fn compound(&mut self, cc: &CompoundCommand, src: &str) {
        match &cc.kind {
            CompoundKind::Subshell(l) => self.in_subshell(|w| w.list(l, src)),
            CompoundKind::Group(l) => self.list(l, src),
            CompoundKind::If { branches, else_body } => {
                // Each branch starts where its condition left; after the `if`, the directory is
                // known only if no part of it moved.
                let start = self.here.clone();
                let mut moved = false;
                for (cond, body) in branches {
                    self.list(cond, src);
                    let after_condition = self.here.clone();
                    self.list(body, src);
                    moved |= self.here != start;
                    self.here = after_condition;
                }
                if let Some(e) = else_body {
                    self.list(e, src);
                }
                moved |= self.here != start;
                self.here = if moved { None } else { start };
            }
            CompoundKind::While { condition, body } | CompoundKind::Until { condition, body } => {
                let start = self.out.len();
                self.looped(|w| {
                    w.list(condition, src);
                    w.list(body, src);
                });
                let until = matches!(cc.kind, CompoundKind::Until { .. });
                if crate::loops::may_not_end(condition, body, until, src) && self.backgrounds(body, src) {
                    self.endless_spawner(start, cc.span.slice(src));
                }
            }
            CompoundKind::For {
                words,
                body,
                variable,
                ..
            } => {
                if let Some(r) = session::named_reference(self, variable) {
                    self.fail(cc.span.slice(src), session::reference_reason(r));
                }
                for w in words.iter().flatten() {
                    if crate::engine_signal::lookup_finds_engine(w.span.slice(src)) {
                        self.engine_pids.push(variable.clone());
                    }
                    let arg = self.word(w, src);
                    if let Some(why) = self.assignment_hazard(variable, arg.get()) {
                        self.fail(cc.span.slice(src), format!("the loop assigns each word: {why}"));
                    }
                }
                self.looped(|w| w.list(body, src));
            }
            CompoundKind::ArithmeticFor { header, body } => {
                let start = self.out.len();
                self.arithmetic(header.slice(src), header.slice(src));
                self.looped(|w| w.list(body, src));
                if crate::loops::endless_header(header.slice(src)) && self.backgrounds(body, src) {
                    self.endless_spawner(start, cc.span.slice(src));
                }
            }
            CompoundKind::Case { subject, arms } => {
                self.word(subject, src);
                let start = self.here.clone();
                let mut moved = false;
                for arm in arms {
                    for p in &arm.patterns {
                        self.word(p, src);
                    }
                    self.list(&arm.body, src);
                    // `;&` and `;;&` run the next arm's body from where this one ended.
                    moved |= self.here != start;
                    self.here.clone_from(&start);
                }
                if moved {
                    self.here = None;
                }
            }
            CompoundKind::Arithmetic { expression } => {
                let text = cc.span.slice(src);
                if self.arithmetic(expression.slice(src), text) {
                    self.push(text, SegmentKind::Inert);
                }
            }
            CompoundKind::Conditional { expression } => {
                let text = cc.span.slice(src);
                let expr = expression.slice(src);
                if expansions::text_may_execute(expr) {
                    self.fail(
                        text,
                        "a `[[ … ]]` test containing a substitution cannot be judged",
                    );
                } else if self.arith_poison {
                    self.fail(text, "a `[[ … ]]` test may evaluate text that runs a command");
                } else if let Some(name) = session::unsafe_in_arithmetic(self, expr) {
                    self.fail(
                        text,
                        format!("the test reads the session variable `{name}`, whose value runs a command as arithmetic"),
                    );
                } else if let Some(why) = conditional_arithmetic(expr).and_then(|()| self.unsafe_names(expr))
                {
                    self.fail(text, format!("the test evaluates arithmetic that {why}"));
                } else {
                    self.push(text, SegmentKind::Inert);
                }
            }
        }
        let mut problem = None;
        for r in &cc.redirects {
            self.redirect(r, src, &mut problem);
        }
        if let Some(problem) = problem {
            let text = cc.span.slice(src);
            let idx = self.push(text, SegmentKind::Unjudgeable(problem.clone()));
            if let Some(d) = danger::device_write(&cc.redirects, src) {
                self.out[idx].danger = Some(d);
            }
        }
    }

    /// Whether a word expands a variable given the engine's process ids.
    fn holds_engine_pids(&self, a: &Arg) -> bool {
        a.is_dynamic()
            && self.engine_pids.iter().any(|name| {
                a.raw.match_indices(name.as_str()).any(|(i, _)| {
                    let before = &a.raw[..i];
                    let after = a.raw[i + name.len()..].chars().next();
                    (before.ends_with('$') || before.ends_with("${"))
                        && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                })
            })
    }

    /// Whether running `body` starts something in the background, through the functions this
    /// call defines and the session's.
    fn backgrounds(&self, body: &List, src: &str) -> bool {
        let functions = |name: &str| {
            self.defined
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, d)| d.clone())
                .or_else(|| self.opts.session.and_then(|v| v.functions.get(name).cloned()))
        };
        crate::loops::backgrounds(body, src, &functions)
    }

    /// Mark the loop whose segments start at `start` as an endless spawner.
    fn endless_spawner(&mut self, start: usize, text: &str) {
        let why = "an endless loop starts a process in the background on every turn".to_owned();
        if let Some(seg) = self.out.get_mut(start) {
            seg.danger.get_or_insert(why);
        } else {
            let idx = self.push(text, SegmentKind::Inert);
            self.out[idx].danger = Some(why);
        }
    }

    /// Check an arithmetic expression; `false` (after recording a failure) when it may execute.
    fn arithmetic(&mut self, expr: &str, text: &str) -> bool {
        match self.arithmetic_hazard(expr) {
            Some(why) => {
                self.fail(text, format!("the arithmetic {why}"));
                false
            }
            None => true,
        }
    }

    /// Walk a word's expansions (nested commands become segments) and return it as an argument.
    fn word(&mut self, w: &Word, src: &str) -> Arg {
        let text = w.span.slice(src);
        if let Err(reason) = expansions::walk_parts(self, &w.parts, src) {
            self.fail(text, reason);
        }
        expansions::arg_of(w, src)
    }

    /// A nested script (substitution, `sh -c` string, `eval` text) with its own source.
    fn nested(&mut self, text: &str, outer_text: &str) {
        if self.depth >= MAX_DEPTH {
            self.fail(outer_text, "nested too deeply to judge");
            return;
        }
        match shellgate_normalize::parse(text) {
            Ok(script) => {
                self.depth += 1;
                let outer = self.names.clone();
                self.names.merge(names::scan(&script, self.opts.session));
                let poison = self.arith_poison;
                self.arith_poison |= self.names.poison;
                self.list(&script.list, text);
                self.arith_poison = poison;
                self.names = outer;
                self.depth -= 1;
            }
            Err(e) => self.fail(outer_text, format!("the inner command does not parse: {e}")),
        }
    }

    fn redirect(&mut self, r: &Redirect, src: &str, problem: &mut Option<String>) {
        let target = self.word(&r.target, src);
        if let Some(h) = &r.heredoc
            && !h.quoted
            && expansions::heredoc_may_execute(&h.body)
        {
            self.fail(
                r.span.slice(src),
                "a here-document with command substitutions cannot be judged",
            );
        }
        if !matches!(
            r.op,
            RedirectOp::Heredoc | RedirectOp::HeredocStripTabs | RedirectOp::HereString
        ) && problem.is_none()
            && let Some(why) = network_path(&target)
        {
            *problem = Some(format!("`{}` {why}", r.span.slice(src).trim()));
        }
        if !r.op.may_write() {
            return;
        }
        let harmless = match (r.op, target.get()) {
            (RedirectOp::DupOutput, Some(t)) => t == "-" || t.bytes().all(|b| b.is_ascii_digit()),
            (_, Some(t)) => matches!(
                t,
                "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/fd/1" | "/dev/fd/2" | "/dev/tty"
            ),
            (_, None) => false,
        };
        if !harmless && problem.is_none() {
            *problem = Some(format!("`{}` writes to a file", r.span.slice(src).trim()));
        }
    }

    fn simple(&mut self, s: &SimpleCommand, src: &str) {
        let text = s.span.slice(src);
        if session::expands_alias(self, s, src) {
            return;
        }
        let mut problem = session::named_reference(self, text).map(session::reference_reason);
        for a in &s.assignments {
            let word = self.word(&a.word, src);
            if crate::engine_signal::lookup_finds_engine(a.word.span.slice(src)) {
                self.engine_pids.push(a.name.clone());
            }
            let value = word.get().and_then(|v| v.split_once('=')).map(|(_, v)| v);
            if let Some(why) = self.assignment_hazard(&a.name, value) {
                problem = Some(why);
            }
            if let Some(why) = self.assignment_subscripts(a, src) {
                problem = Some(why);
            }
            if crate::argv::code_in_subscript(a.word.span.slice(src))
                || value.is_some_and(crate::argv::code_in_subscript)
            {
                // A variable with the integer attribute (set in this or an earlier call)
                // evaluates what it is given.
                problem = Some(format!(
                    "the value given to `{}` may be evaluated as arithmetic, which runs its subscript",
                    a.name
                ));
            }
            if crate::env::is_injection_key(&a.name) {
                problem = Some(format!("assigning `{}` changes what the command runs", a.name));
            }
        }
        let argv: Vec<Arg> = expand_braces(s.words.iter().map(|w| self.word(w, src)).collect());
        for r in &s.redirects {
            self.redirect(r, src, &mut problem);
        }
        let device = danger::device_write(&s.redirects, src);
        if argv.is_empty() {
            let kind = match problem {
                Some(p) => SegmentKind::Unjudgeable(p),
                None => SegmentKind::Inert,
            };
            let idx = self.push(text, kind);
            self.out[idx].danger = device;
            return;
        }
        if session::runs_function(self, text, &argv, problem.as_deref()) {
            return;
        }
        let heredoc = s.redirects.iter().find_map(|r| stdin_text(r, src));
        let start = self.out.len();
        self.invoke(
            text,
            Invocation {
                written: argv.clone(),
                argv,
                open_ended: false,
                elevated: false,
                problem,
                dir: None,
                assigned: s
                    .assignments
                    .iter()
                    .map(|a| {
                        let word = expansions::arg_of(&a.word, src);
                        let value = match word.get() {
                            Some(v) => Arg::literal(v.split_once('=').map_or("", |(_, v)| v)),
                            None => Arg::dynamic(word.raw.split_once('=').map_or("", |(_, v)| v), true),
                        };
                        (a.name.clone(), value)
                    })
                    .collect(),
                config_env: None,
            },
            heredoc.as_deref(),
        );
        if let Some(d) = device
            && let Some(seg) = self.out.get_mut(start)
        {
            seg.danger.get_or_insert(d);
        }
        // `bash <<< "$(curl …)"`, `bash < <(curl …)`: a shell reading its program from a download.
        if s.redirects.iter().any(|r| danger::stdin_downloads(r, src)) {
            for seg in &mut self.out[start..] {
                if let SegmentKind::Run(inv) = &seg.kind
                    && danger::reads_program_from_stdin(&inv.argv)
                {
                    seg.danger
                        .get_or_insert_with(|| "runs a script it downloads".into());
                }
            }
        }
    }

    /// Record `inv` (after looking through its wrappers).
    fn invoke(&mut self, text: &str, inv: Invocation, stdin: Option<&str>) {
        if self.depth >= MAX_DEPTH {
            self.fail(text, "wrappers nested too deeply to judge");
            return;
        }
        let Some(first) = inv.argv.first() else {
            self.push(text, SegmentKind::Inert);
            return;
        };
        let Some(name) = first.get() else {
            let idx = self.out.len();
            self.fail(
                text,
                format!("the command name `{}` is only known when it runs", first.raw),
            );
            self.out[idx].uncertain = vec![inv.argv.clone()];
            // `{rm,-rf,~}`: a brace list as the command expands to a command line.
            if let Some(mut expanded) = brace_list(&first.raw) {
                expanded.extend(inv.argv[1..].iter().cloned());
                self.out[idx].danger = danger::check(
                    &expanded,
                    (self.opts.cwd, self.opts.workspace),
                    self.here.as_deref(),
                    self.cd_seen,
                );
                self.out[idx].control = control::check(&expanded, inv.open_ended);
            }
            return;
        };
        // A link to a wrapper or a shell under another name is looked through as that program.
        let base = match (self.opts.real_name)(name, self.here.as_deref()) {
            Some(real) if !wrappers::dispatches(basename(name)) && wrappers::dispatches(&real) => real,
            _ => basename(name).to_owned(),
        };
        self.depth += 1;
        wrappers::dispatch(self, text, inv, &base, stdin);
        self.depth -= 1;
    }

    /// Record a command that is not a wrapper.
    fn record(&mut self, text: &str, mut inv: Invocation) {
        inv.elevated |= self.elevated;
        inv.dir.clone_from(&self.here);
        let base = inv.argv[0].get().map(basename).unwrap_or_default().to_owned();
        // The shell's own `cd`, not a program run through `env`, `nice`, … (which moves nothing).
        let in_shell = inv
            .written
            .first()
            .and_then(Arg::get)
            .is_some_and(|w| matches!(w, "cd" | "pushd" | "popd" | "builtin" | "command"));
        if matches!(base.as_str(), "cd" | "pushd" | "popd") && in_shell {
            self.cd_seen = true;
            self.here = changed_directory(
                self.here.as_deref(),
                &base,
                &inv.argv[1..],
                self.cdpath_may_be_set,
            );
        }
        let builtin = inv.argv[0].get().is_some_and(|n| !n.contains('/'));
        if builtin
            && base == "alias"
            && let Some(why) = session::define_aliases(self, &inv.argv)
        {
            return self.fail_running(text, why, "(an alias only known at run time)");
        }
        if builtin && let Some(why) = self.builtin_assignment_hazard(&inv.argv) {
            self.push(text, SegmentKind::Unjudgeable(why));
            return;
        }
        if !inv.elevated
            && !inv.open_ended
            && inv.problem.is_none()
            && builtin
            && let Some(result) = inert::check(&inv.argv)
        {
            let kind = match result {
                Ok(()) => SegmentKind::Inert,
                Err(why) => SegmentKind::Unjudgeable(why),
            };
            self.push(text, kind);
            return;
        }
        let places = (self.opts.cwd, self.opts.workspace);
        let mut danger = danger::check(&inv.argv, places, self.here.as_deref(), self.cd_seen);
        let mut control = control::check(&inv.argv, inv.open_ended);
        // Also checked as the program it runs, by the real file's name (`./del` linked to `rm`).
        if let Some(real) = inv.argv[0]
            .get()
            .and_then(|n| (self.opts.real_name)(n, self.here.as_deref()))
        {
            let mut argv = inv.argv.clone();
            argv[0] = Arg::literal(&real);
            danger = danger.or_else(|| danger::check(&argv, places, self.here.as_deref(), self.cd_seen));
            control = control.or_else(|| control::check(&argv, inv.open_ended));
        }
        if base == "kill"
            && danger.is_none()
            && let Some(a) = inv.argv[1..].iter().find(|a| self.holds_engine_pids(a))
        {
            danger = Some(format!(
                "`kill {}` would stop the engine itself, whose process ids it was given",
                a.raw
            ));
        }
        let idx = self.push(text, SegmentKind::Run(inv));
        self.out[idx].danger = danger;
        self.out[idx].control = control;
    }
}

/// `Some` when a `[[ … ]]` test evaluates some operand as arithmetic (`-eq` and the other
/// integer comparisons) or names a variable whose subscript is evaluated (`-v`, `-R`).
fn conditional_arithmetic(expr: &str) -> Option<()> {
    expr.split_whitespace()
        .any(|w| matches!(w, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" | "-R"))
        .then_some(())
}

/// Why a redirect target is (or may be) one of bash's network paths (`/dev/tcp/HOST/PORT`,
/// `/dev/udp/…`), which open a connection whether read or written.
fn network_path(target: &Arg) -> Option<&'static str> {
    const NETWORK: [&str; 2] = ["/dev/tcp/", "/dev/udp/"];
    // A tilde prefix is a variable's value: `~` is `$HOME`, `~+` `$PWD`, `~-` `$OLDPWD`, `~N`
    // the directory stack — any of which a call can point at `/dev/tcp/HOST`.
    if target.raw.starts_with('~') {
        return Some(
            "may open a network connection (`~` expands to a directory a variable names, which may be `/dev/tcp/…`)",
        );
    }
    let Some(known) = target.get() else {
        // The literal text before the first expansion or quote: only a prefix of the path.
        let end = target
            .raw
            .find(['$', '`', '"', '\'', '\\', '*', '?', '[', '{'])
            .unwrap_or(target.raw.len());
        let prefix = &target.raw[..end];
        return (prefix.is_empty()
            || NETWORK
                .iter()
                .any(|n| n.starts_with(prefix) || prefix.starts_with(n)))
        .then_some("may open a network connection (`/dev/tcp`, `/dev/udp`)");
    };
    let normal = crate::path_lookup::lexical_normalize(Path::new(&known));
    let normal = normal.to_string_lossy();
    NETWORK
        .iter()
        .any(|n| normal.starts_with(n) || known.starts_with(n))
        .then_some("opens a network connection")
}

/// Where `cd ARGS` (`pushd`, `popd`) leads from `here`, when that is known: an absolute or
/// relative directory that exists now. `cd` alone and `cd ~` go to `$HOME`, `cd -` to
/// `$OLDPWD`, `popd` and `pushd` without a directory to the directory stack — all values of the
/// shell, which a call or a session can set; a `cd` to a directory that does not exist fails and
/// stays; with `CDPATH` a relative name may lead elsewhere.
fn changed_directory(here: Option<&Path>, name: &str, args: &[Arg], cdpath: bool) -> Option<PathBuf> {
    let target = match (name, args) {
        ("popd", _) | (_, []) => return None,
        (_, [a]) => a,
        ("cd", [flag, a]) if flag.get().is_some_and(|f| matches!(f, "-L" | "-P" | "--")) => a,
        _ => return None,
    };
    let t = target.get()?;
    if name == "pushd" && (t.starts_with('+') || t.starts_with('-')) {
        return None;
    }
    let dir = if t.starts_with('/') {
        crate::path_lookup::lexical_normalize(Path::new(t))
    } else if t == "-" || t.starts_with('~') {
        return None;
    } else {
        let explicit = t == "." || t == ".." || t.starts_with("./") || t.starts_with("../");
        if cdpath && !explicit {
            return None;
        }
        crate::path_lookup::lexical_normalize(&here?.join(t))
    };
    dir.is_dir().then_some(dir)
}

/// A word standing for any command line: the text `raw` (without the quotes around it), which a
/// shell reads as words.
pub(crate) fn any_command(raw: &str) -> Arg {
    let inner = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|r| !r.is_empty())
        .unwrap_or(raw);
    let a = Arg::dynamic(inner, true);
    if crate::meaning::may_split(&a) {
        a
    } else {
        Arg::dynamic(&format!("({raw})"), true)
    }
}

/// `word` with a plain brace list in it (`{a,b}`, `x{a,b}y`: no quotes, nesting, sequences or
/// expansions) expanded as bash does; `None` for any other word.
fn brace_words(a: &Arg) -> Option<Vec<Arg>> {
    // The parser keeps such a word's value unknown; its text is the value when nothing in it is
    // quoted or expanded.
    let v = a.raw.as_str();
    if a.get().is_some_and(|value| value != v)
        || v.contains(['$', '`', '\\', '\'', '"', '*', '?', '[', '~', '='])
    {
        return None;
    }
    let open = v.find('{')?;
    let close = open + v[open..].find('}')?;
    let (prefix, inner, suffix) = (&v[..open], &v[open + 1..close], &v[close + 1..]);
    if !inner.contains(',') || inner.contains('{') || suffix.contains(['{', '}']) || prefix.contains('}') {
        return None;
    }
    let words: Vec<Arg> = inner
        .split(',')
        .map(|alt| format!("{prefix}{alt}{suffix}"))
        .filter(|w| !w.is_empty())
        .map(|w| Arg::literal(&w))
        .collect();
    (!words.is_empty()).then_some(words)
}

/// `argv` with plain brace lists expanded (the words are then known exactly).
fn expand_braces(argv: Vec<Arg>) -> Vec<Arg> {
    if !argv.iter().any(|a| a.raw.contains('{')) {
        return argv;
    }
    let mut out = Vec::with_capacity(argv.len() + 2);
    for a in argv {
        match brace_words(&a) {
            Some(words) => out.extend(words),
            None => out.push(a),
        }
    }
    out
}

/// The words of a plain brace list `{a,b,c}` (no quotes, nesting or expansions inside).
fn brace_list(raw: &str) -> Option<Vec<Arg>> {
    let inner = raw.strip_prefix('{')?.strip_suffix('}')?;
    if !inner.contains(',') || inner.contains(['{', '}', '$', '`', '\'', '"', '\\', ' ']) {
        return None;
    }
    Some(inner.split(',').map(Arg::literal).collect())
}

/// The text `echo`/`printf` writes (approximately: words joined by blanks, `printf`'s `\n` and
/// `\t`): `Ok` when known, `Err` with the words as written when it is only known at run time (a
/// word that expands, a `printf` format with conversions or other escapes); `None` for another
/// command.
fn echoed_text(c: &SimpleCommand, src: &str) -> Option<Result<String, String>> {
    let name = c.words.first()?.static_value()?;
    let words = &c.words[1..];
    let written = || {
        words
            .iter()
            .map(|w| w.span.slice(src))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let values: Option<Vec<String>> = words.iter().map(Word::static_value).collect();
    match basename(&name) {
        "echo" => {
            let Some(values) = values else {
                return Some(Err(written()));
            };
            let args: Vec<&str> = values
                .iter()
                .map(String::as_str)
                .skip_while(|a| matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
                .collect();
            Some(Ok(args.join(" ")))
        }
        "printf" => {
            let Some(values) = values else {
                return Some(Err(written()));
            };
            let Some((format, args)) = values.split_first() else {
                return Some(Ok(String::new()));
            };
            let plain = format.replace("\\n", "\n").replace("\\t", "\t");
            if plain.contains(['%', '\\']) {
                return Some(Err(written()));
            }
            let mut text = plain;
            for a in args {
                text.push(' ');
                text.push_str(a);
            }
            Some(Ok(text))
        }
        _ => None,
    }
}

/// Whether a pipeline stage is a shell that reads its script from stdin.
fn shell_reads_stdin(c: &SimpleCommand) -> bool {
    let Some(argv) = c.static_argv() else { return false };
    let Some((name, args)) = argv.split_first() else {
        return false;
    };
    crate::segment::SHELLS.contains(&basename(name))
        && args
            .iter()
            .all(|a| (a.starts_with('-') || a.starts_with('+')) && !a[1..].contains('c'))
}

/// The text a shell would read on stdin from a here-document or here-string, when static.
fn stdin_text(r: &Redirect, src: &str) -> Option<String> {
    match r.op {
        RedirectOp::Heredoc | RedirectOp::HeredocStripTabs => {
            let h = r.heredoc.as_ref()?;
            (h.quoted || !expansions::heredoc_may_execute(&h.body)).then(|| h.body.clone())
        }
        RedirectOp::HereString => r.target.static_value(),
        _ => {
            let _ = src;
            None
        }
    }
}
