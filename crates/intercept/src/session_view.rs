//! What a persistent session holds that changes what a later command's words run: functions and
//! aliases (judged by their bodies where they are used), variables whose values run code when
//! evaluated as arithmetic, integer variables and name references (an assignment to them is
//! evaluated), and state the policy does not judge through (traps, `hash -p` paths, loaded or
//! disabled builtins, options such as `set -k`), which makes the session unjudgeable.
//!
//! Read from the state the session's shell saves after each command (`declare -p`, `declare -f`,
//! `alias -p`, `trap -p`, `hash -l`, `enable -a` and an end line; zsh: `typeset -p`, `typeset -f`,
//! `alias -L`, `trap`). That file is written by the shell the judged commands run in, in a
//! directory it can write: it is read as untrusted text. The part after the variables is parsed as
//! the shell script it is (a function's text may hold lines that look like other definitions); a
//! line or command this reader does not expect, a part that does not parse, or a missing end line
//! makes the whole view unjudgeable rather than partly read. What a forger can still do is write a
//! well-formed state that leaves something out — which needs a command allowed to write files, one
//! `@safe` never allows.

use std::collections::{BTreeMap, BTreeSet};

use shellgate_normalize::ast::Command;

/// A session's state as the policy judges against it (see [`crate::Context::session`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionView {
    /// Functions: name → definition as the shell prints it (`f () { …; }`).
    pub functions: BTreeMap<String, String>,
    /// Aliases: name → replacement text.
    pub aliases: BTreeMap<String, String>,
    /// Variables whose value holds an expansion in a subscript (or names such a variable):
    /// arithmetic over them runs code.
    pub arithmetic_unsafe: BTreeSet<String>,
    /// Variables with the integer attribute (and name references): what is assigned to them is
    /// evaluated as arithmetic.
    pub integers: BTreeSet<String>,
    /// Name references whose target is not a plain variable (`declare -n r='a[$(id)]'`), or
    /// refers to such a reference: expanding, assigning or testing them evaluates the target's
    /// subscript.
    pub references: BTreeSet<String>,
    /// Variables the session exports, with values other than the engine's own, that change where
    /// git reads its configuration (`GIT_CONFIG_PARAMETERS`, `HOME`, …): git's aliases there are
    /// only known when a command runs.
    pub git_config_env: BTreeSet<String>,
    /// A command is running in the session: its state may change before the judged one runs.
    pub busy: bool,
    /// Why the state cannot be judged against: it is unreadable, cut short, or holds state the
    /// policy does not judge through (a trap, a `hash -p` path, a loaded or disabled builtin, an
    /// option such as `set -k`). No command is then judged safe in the session.
    pub unjudgeable: Option<String>,
}

/// The line between a saved state's variables and the rest.
const STATE_SPLIT: &str = "#shellgate-state-functions";

/// The last line of a complete saved state.
const STATE_END: [&str; 2] = [":", "shellgate-state-end"];

impl SessionView {
    /// Read a saved state (bash or zsh). The text is untrusted: anything this reader does not
    /// recognise, a part that does not parse as the shell prints it, or a state without its end
    /// line makes the whole view [`unjudgeable`](Self::unjudgeable), never a partial one (a
    /// definition's text can hold lines that look like other definitions).
    pub fn from_saved_state(text: &str) -> Self {
        let mut view = SessionView::default();
        let (vars, rest) = split_line(text, STATE_SPLIT).unwrap_or_else(|| {
            view.fail("the saved state has no functions part: it is cut short or was not written by the session's shell");
            (text, "")
        });
        let bash = vars.lines().any(|l| l.starts_with("declare "));
        let zsh = !bash && vars.lines().any(|l| l.starts_with("typeset "));
        if !bash && !zsh {
            view.fail("the saved state has no variables: it was not written by the session's shell");
        }
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let mut references: BTreeMap<String, String> = BTreeMap::new();
        for line in vars.lines() {
            if let Some((flags, name, value)) = declaration(line) {
                if flags.contains(['i', 'n']) {
                    view.integers.insert(name.to_owned());
                }
                if flags.contains('n') {
                    view.arithmetic_unsafe.insert(name.to_owned());
                    references.insert(name.to_owned(), value.to_owned());
                }
                // zsh's `typeset -p` marks exported variables `-x` as well.
                if (flags.contains('x') || line.starts_with("export "))
                    && crate::git_config::is_config_key(name)
                    && std::env::var(name).ok().as_deref()
                        != Some(crate::session_hooks::unquote(value).as_str())
                {
                    view.git_config_env.insert(name.to_owned());
                }
                values.insert(name.to_owned(), value.to_owned());
            } else if bash && !line.is_empty() {
                // `declare -p` prints one variable a line (newlines in values are quoted).
                view.fail("the saved state holds a line that is not a variable declaration");
            }
        }
        if bash && let Some(why) = crate::session_hooks::bash_options(&values) {
            view.fail(&why);
        }
        let path = values.get("PATH").map(|p| crate::session_hooks::unquote(p));
        let options_seen = view.read_definitions(rest, path.as_deref());
        if zsh && !options_seen {
            view.fail("the saved state lacks the shell's options");
        }
        view.arithmetic_unsafe.extend(unsafe_for_arithmetic(&values));
        view.references = unsafe_references(&references);
        view
    }

    /// Functions, aliases, traps, hashed paths and builtins: the part after the variables,
    /// parsed as the shell script it is. `true` when zsh's options were among them.
    fn read_definitions(&mut self, rest: &str, path: Option<&str>) -> bool {
        let Ok(script) = shellgate_normalize::parse(rest) else {
            self.fail("the session's functions and aliases cannot be parsed");
            return false;
        };
        let mut complete = false;
        let mut options = false;
        for item in &script.list.items {
            let (true, [command]) = (item.and_or.rest.is_empty(), item.and_or.first.commands.as_slice())
            else {
                self.fail("the saved state holds a command list");
                return false;
            };
            match command {
                Command::Function(f) => {
                    if f.name.starts_with("TRAP") {
                        self.fail(&format!("the session defines `{}`, a trap function", f.name));
                    }
                    self.functions
                        .insert(f.name.clone(), format!("{}\n", f.span.slice(rest)));
                }
                Command::Simple(s) => {
                    let Some(argv) = s
                        .static_argv()
                        .filter(|_| s.assignments.is_empty() && s.redirects.is_empty())
                    else {
                        self.fail("the saved state holds a command with expansions");
                        return false;
                    };
                    complete = argv == STATE_END;
                    options |= argv.len() > 1 && argv[0] == "builtin" && argv[1] == "setopt";
                    if let Err(why) = self.definition(&argv, path) {
                        self.fail(&why);
                    }
                }
                Command::Compound(_) => {
                    self.fail("the saved state holds a compound command");
                    return false;
                }
            }
        }
        if !complete {
            self.fail(
                "the saved state has no end line: it is cut short or was not written by the session's shell",
            );
        }
        options
    }

    /// One saved command: `alias …`, `trap -- …`, `builtin hash -p …`, `enable …`, `declare -fx
    /// NAME` (an exported function), zsh's `builtin setopt …`, the end line.
    fn definition(&mut self, argv: &[String], path: Option<&str>) -> Result<(), String> {
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        let unexpected = || {
            Err(format!(
                "the saved state holds an unexpected command `{}`",
                words.join(" ")
            ))
        };
        match words.as_slice() {
            ["alias", defs @ ..] => {
                for def in defs.iter().filter(|d| **d != "--") {
                    let Some((name, value)) = def.split_once('=') else {
                        return unexpected();
                    };
                    self.aliases.insert(name.to_owned(), value.to_owned());
                }
                Ok(())
            }
            ["trap", ..] => crate::session_hooks::trap(&argv[1..]).map_or(Ok(()), Err),
            ["enable", ..] => crate::session_hooks::enable(&argv[1..]).map_or(Ok(()), Err),
            ["builtin", "hash", "-p", file, name] => {
                crate::session_hooks::hashed(file, name, path).map_or(Ok(()), Err)
            }
            ["declare", flags, _] if flags.starts_with("-f") => Ok(()),
            ["builtin", command @ ("setopt" | "unsetopt"), ..] => {
                crate::session_hooks::zsh_options(command, &argv[2..]).map_or(Ok(()), Err)
            }
            [":", "shellgate-state-end"] => Ok(()),
            _ => unexpected(),
        }
    }

    /// Record why the view cannot be judged against (the first reason is kept).
    fn fail(&mut self, why: &str) {
        self.unjudgeable.get_or_insert_with(|| why.to_owned());
    }

    /// Add what another session of the same name holds.
    pub fn merge(&mut self, other: SessionView) {
        self.functions.extend(other.functions);
        self.aliases.extend(other.aliases);
        self.arithmetic_unsafe.extend(other.arithmetic_unsafe);
        self.integers.extend(other.integers);
        self.references.extend(other.references);
        self.git_config_env.extend(other.git_config_env);
        self.busy |= other.busy;
        if self.unjudgeable.is_none() {
            self.unjudgeable = other.unjudgeable;
        }
    }
}

/// `text` split at `marker` standing as a whole line: (before, after the marker line). A
/// variable's value may hold the same text inside a line.
fn split_line<'t>(text: &'t str, marker: &str) -> Option<(&'t str, &'t str)> {
    let whole = |i: usize| {
        (i == 0 || text[..i].ends_with('\n')) && text[i + marker.len()..].starts_with(['\n', '\r'])
    };
    let i = text.match_indices(marker).map(|(i, _)| i).find(|&i| whole(i))?;
    let after = text[i + marker.len()..].trim_start_matches('\r');
    Some((&text[..i], after.strip_prefix('\n').unwrap_or(after)))
}

/// `declare -FLAGS NAME=VALUE` / `typeset …` / `export …`: (flags, name, raw value).
fn declaration(line: &str) -> Option<(&str, &str, &str)> {
    let rest = ["declare ", "typeset ", "export "]
        .iter()
        .find_map(|p| line.strip_prefix(p))?;
    let mut flags = "";
    let mut rest = rest;
    while let Some(after) = rest.strip_prefix('-') {
        let (f, tail) = after.split_once(' ')?;
        flags = f;
        rest = tail;
    }
    let (name, value) = rest.split_once('=').unwrap_or((rest, ""));
    let identifier = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    identifier.then_some((flags, name, value))
}

/// The variables whose values make arithmetic run code: an expansion inside a subscript, or a
/// value naming such a variable (arithmetic evaluates names recursively).
fn unsafe_for_arithmetic(values: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = values
        .iter()
        .filter(|(_, v)| {
            // A scalar holding `$`, a backquote or `[` may join with other text into code; an
            // array's elements likewise.
            let text = if v.starts_with('(') {
                strip_indexes(v)
            } else {
                (*v).clone()
            };
            crate::argv::code_in_subscript(v) || text.contains(['$', '`', '['])
        })
        .map(|(k, _)| k.clone())
        .collect();
    loop {
        let more: Vec<String> = values
            .iter()
            .filter(|(k, v)| !out.contains(*k) && out.contains(v.trim_matches(['"', '\''])))
            .map(|(k, _)| k.clone())
            .collect();
        if more.is_empty() {
            return out;
        }
        out.extend(more);
    }
}

/// The name references whose target is not a plain variable name, or is such a reference.
fn unsafe_references(references: &BTreeMap<String, String>) -> BTreeSet<String> {
    let target = |v: &str| v.trim_matches(['"', '\'']).to_owned();
    let plain = |t: &str| {
        !t.is_empty()
            && !t.starts_with(|c: char| c.is_ascii_digit())
            && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    };
    let mut out: BTreeSet<String> = references
        .iter()
        .filter(|(_, v)| !plain(&target(v)))
        .map(|(k, _)| k.clone())
        .collect();
    loop {
        let more: Vec<String> = references
            .iter()
            .filter(|(k, v)| !out.contains(*k) && out.contains(&target(v)))
            .map(|(k, _)| k.clone())
            .collect();
        if more.is_empty() {
            return out;
        }
        out.extend(more);
    }
}

/// An array's printed value without its `[index]=` prefixes.
fn strip_indexes(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        match rest[open..].find("]=") {
            Some(close) if !rest[open..open + close].contains(['$', '`', '"', '\'']) => {
                rest = &rest[open + close + 2..];
            }
            _ => {
                out.push('[');
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPTIONS: &str = "declare -- __shellgate_so=\"braceexpand:hashall\"\ndeclare -- __shellgate_bo=\"expand_aliases:extglob\"\n";
    const END: &str = "#shellgate-state-hooks\ntrap -- '{ \\__shellgate_exit; } 2>/dev/null' EXIT\nenable echo\n: shellgate-state-end\n";

    #[test]
    fn a_bash_state_is_read() {
        let state = format!(
            "declare -a arr=([0]=\"1\" [1]=\"a[\\$(id)]\")\ndeclare -a ok=([0]=\"1\" [1]=\"2\")\n\
             declare -i n=\"3\"\ndeclare -n r=\"x\"\ndeclare -- x=\"a[\\$(id)]\"\ndeclare -- y=\"x\"\n\
             declare -x PATH=\"/usr/bin\"\n{OPTIONS}#shellgate-state-functions\nf () \n{{ \n    ls -la \"$@\"\n}}\n\
             declare -fx f\nalias ll='ls -l'\nalias q='it'\\''s'\n{END}builtin hash -p /usr/bin/ls ls\n: shellgate-state-end\n"
        );
        let v = SessionView::from_saved_state(&state);
        assert_eq!(v.unjudgeable, None);
        assert_eq!(v.functions.keys().collect::<Vec<_>>(), ["f"]);
        assert!(v.functions["f"].contains("ls -la"));
        assert_eq!(v.aliases["ll"], "ls -l");
        assert_eq!(v.aliases["q"], "it's");
        assert_eq!(
            v.arithmetic_unsafe.iter().collect::<Vec<_>>(),
            ["arr", "r", "x", "y"]
        );
        assert_eq!(v.integers.iter().collect::<Vec<_>>(), ["n", "r"]);
        assert!(v.references.is_empty());
        let refs = SessionView::from_saved_state(&format!(
            "declare -n r=\"a[\\$(id)]\"\ndeclare -n s=\"r\"\ndeclare -n t=\"x\"\n{OPTIONS}#shellgate-state-functions\n{END}"
        ));
        assert_eq!(refs.references.iter().collect::<Vec<_>>(), ["r", "s"]);
        assert_eq!(refs.unjudgeable, None);
    }

    #[test]
    fn a_zsh_state_is_read() {
        let state = "typeset -i n=3\ntypeset x='a[$(id)]'\n#shellgate-state-functions\nf () {\n\tls\n}\nalias ll='ls -l'\n\
                     \\builtin setopt extendedglob\n#shellgate-state-hooks\n: shellgate-state-end\n";
        let v = SessionView::from_saved_state(state);
        assert_eq!(v.unjudgeable, None);
        assert!(v.functions.contains_key("f"));
        assert!(v.arithmetic_unsafe.contains("x"));
        assert!(v.integers.contains("n"));
        assert_eq!(v.aliases["ll"], "ls -l");
    }

    #[test]
    fn text_inside_a_definition_is_not_read_as_definitions() {
        // As `declare -f` prints a function whose here-document holds a `}` line and an alias.
        let state = format!(
            "{OPTIONS}#shellgate-state-functions\nf () \n{{ \n    cat <<'E'\n}}\nalias rm='echo'\nE\n\n}}\n{END}"
        );
        let v = SessionView::from_saved_state(&state);
        assert_eq!(v.unjudgeable, None);
        assert!(v.aliases.is_empty(), "{:?}", v.aliases);
        assert!(v.functions["f"].contains("alias rm='echo'"));
    }
}
