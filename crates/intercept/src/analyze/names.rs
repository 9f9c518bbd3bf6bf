//! What a whole call does to variable names that arithmetic depends on, gathered before the walk
//! (flow-insensitively: a loop's second turn sees what its end declared, and a function body what
//! the code after its definition did).
//!
//! - *integers*: names that may carry the integer attribute (`declare -i`, `typeset -i`, `local
//!   -i`, `integer`) or be name references: bash evaluates what is assigned to them as arithmetic;
//! - *dynamic*: names whose value is only known when the call runs (`x=$(cat f)`, `read x`,
//!   `for x in *`, `printf -v x`): arithmetic over them evaluates that value, and arithmetic runs
//!   the substitutions in array subscripts (`a[$(id)]`);
//! - *poison*: some literal holds text that runs a command when evaluated as arithmetic;
//! - *code values*: names given a value holding `$`, a backquote or `[` (or the name of such a
//!   variable): arithmetic over them expands and evaluates that text, joined with what is around
//!   it (`x='a['; y='$(id)]'; echo $(($x$y))` runs `id`).
//!
//! `eval`, `source` and a `declare` with a word only known at run time can do anything to any
//! name: the sets then hold every name.

use std::collections::BTreeSet;

use shellgate_normalize::ast::{CompoundCommand, CompoundKind, Script, SimpleCommand, Word, WordPart};
use shellgate_normalize::visit::{self, Visitor};

use crate::SessionView;

/// Names that are always only known when the call runs: bash sets them itself.
const SET_BY_THE_SHELL: &[&str] = &["_", "REPLY", "OPTARG", "MAPFILE", "BASH_REMATCH"];

/// A set of variable names that may also be "every name".
#[derive(Debug, Clone, Default)]
pub(super) struct NameSet {
    names: BTreeSet<String>,
    any: bool,
}

impl NameSet {
    pub(super) fn contains(&self, name: &str) -> bool {
        self.any || self.names.contains(name)
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.any && self.names.is_empty()
    }

    fn insert(&mut self, name: &str) {
        let base = name
            .split(['[', '='])
            .next()
            .unwrap_or(name)
            .trim_end_matches('+');
        if !base.is_empty() {
            self.names.insert(base.to_owned());
        }
    }
}

/// The call-wide facts (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct Names {
    pub integers: NameSet,
    pub dynamic: NameSet,
    pub code_values: NameSet,
    /// `(name, other)`: `name` is given the value `other`, a variable name.
    name_values: Vec<(String, String)>,
    pub poison: bool,
    /// A variable that changes where git reads its configuration is set somewhere in the call.
    pub config_env: Option<String>,
    /// Static command names the call runs (to follow session functions and aliases).
    calls: BTreeSet<String>,
}

impl Names {
    /// Whether `name` is only known when the call runs.
    pub(super) fn is_dynamic(&self, name: &str) -> bool {
        self.dynamic.contains(name) || SET_BY_THE_SHELL.contains(&name)
    }

    /// Add what a nested script does.
    pub(super) fn merge(&mut self, other: Names) {
        self.integers.names.extend(other.integers.names);
        self.integers.any |= other.integers.any;
        self.dynamic.names.extend(other.dynamic.names);
        self.dynamic.any |= other.dynamic.any;
        self.code_values.names.extend(other.code_values.names);
        self.code_values.any |= other.code_values.any;
        self.name_values.extend(other.name_values);
        self.follow_name_values(None);
        self.poison |= other.poison;
        if self.config_env.is_none() {
            self.config_env = other.config_env;
        }
        self.calls.extend(other.calls);
    }

    /// A value given to `name`: note it when arithmetic over it could run code.
    fn value(&mut self, name: &str, value: &str) {
        if value_is_code_in_arithmetic(value) {
            self.code_values.insert(name);
        } else if identifier_len(value) == value.len() && !value.is_empty() {
            self.name_values.push((name.to_owned(), value.to_owned()));
        }
    }

    /// A name holding the name of a variable whose value is code is code too (arithmetic
    /// evaluates it in turn), the session's variables included.
    fn follow_name_values(&mut self, session: Option<&SessionView>) {
        loop {
            let more: Vec<String> = self
                .name_values
                .iter()
                .filter(|(n, other)| {
                    !self.code_values.contains(n)
                        && (self.code_values.contains(other)
                            || session.is_some_and(|v| v.arithmetic_unsafe.contains(other)))
                })
                .map(|(n, _)| n.clone())
                .collect();
            if more.is_empty() {
                return;
            }
            for n in more {
                self.code_values.insert(&n);
            }
        }
    }

    /// Everything can be anything.
    fn give_up(&mut self) {
        self.integers.any = true;
        self.dynamic.any = true;
    }
}

/// The facts of `script`, following the session functions and aliases it calls (their bodies run
/// in the same shell) and the session's `command_not_found_handle`.
pub(super) fn scan(script: &Script, session: Option<&SessionView>) -> Names {
    let mut names = Names::default();
    visit::walk_script(&mut Scan(&mut names, session.is_some()), script);
    names.follow_name_values(session);
    let Some(view) = session else { return names };
    let mut followed: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = names.calls.iter().cloned().collect();
    for handler in ["command_not_found_handle", "command_not_found_handler"] {
        if view.functions.contains_key(handler) {
            pending.push(handler.to_owned());
        }
    }
    while let Some(name) = pending.pop() {
        if !followed.insert(name.clone()) {
            continue;
        }
        let text = view.functions.get(&name).or_else(|| view.aliases.get(&name));
        let Some(text) = text else { continue };
        let Ok(body) = shellgate_normalize::parse(text) else {
            names.give_up();
            continue;
        };
        let before: BTreeSet<String> = names.calls.clone();
        visit::walk_script(&mut Scan(&mut names, true), &body);
        pending.extend(names.calls.difference(&before).cloned());
    }
    names.follow_name_values(session);
    names
}

/// Whether a value holds what arithmetic expands or evaluates as code once joined with other
/// text: `$`, a backquote, `[`.
pub(crate) fn value_is_code_in_arithmetic(value: &str) -> bool {
    value.contains(['$', '`', '['])
}

/// The names `builtin` cares about.
const INTERESTING: &[&str] = &[
    "eval",
    "source",
    ".",
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "integer",
    "printf",
    "read",
    "mapfile",
    "readarray",
    "getopts",
];

/// The facts being gathered, and whether command names are noted (to follow session functions).
struct Scan<'n>(&'n mut Names, bool);

impl Visitor<'_> for Scan<'_> {
    fn simple_command(&mut self, s: &SimpleCommand) {
        for a in &s.assignments {
            match a.word.static_value() {
                None => self.0.dynamic.insert(&a.name),
                Some(v) => {
                    let value = v.split_once('=').map_or("", |(_, v)| v);
                    self.0.value(&a.name, value);
                }
            }
            if crate::git_config::is_config_key(&a.name) && self.0.config_env.is_none() {
                self.0.config_env = Some(format!("`{}` is set", a.name));
            }
        }
        // `builtin declare`, `command -p read`.
        let mut k = 0;
        let name = loop {
            let Some(Some(w)) = s.words.get(k).map(Word::static_value) else {
                return;
            };
            let command_option = k > 0 && s.words[0].is_literal("command") && w.starts_with('-');
            if !command_option && !matches!(w.as_str(), "builtin" | "command") {
                break w;
            }
            k += 1;
        };
        if INTERESTING.contains(&name.as_str()) {
            let args: Vec<Option<String>> = s.words[k + 1..].iter().map(Word::static_value).collect();
            builtin(self.0, &name, &args);
        }
        if self.1 {
            self.0.calls.insert(name);
        }
    }

    fn compound(&mut self, cc: &CompoundCommand) {
        if let CompoundKind::For {
            select,
            variable,
            words,
            ..
        } = &cc.kind
        {
            let known = words
                .as_ref()
                .is_some_and(|ws| ws.iter().all(|w| w.static_value().is_some()));
            if *select || !known {
                self.0.dynamic.insert(variable);
            }
            for w in words.iter().flatten() {
                if let Some(v) = w.static_value() {
                    self.0.value(variable, &v);
                }
            }
        }
    }

    fn word_part(&mut self, part: &WordPart) {
        match part {
            WordPart::Literal { value, .. }
            | WordPart::SingleQuoted { value, .. }
            | WordPart::AnsiC { value, .. }
                if crate::argv::code_in_subscript(value) =>
            {
                self.0.poison = true;
            }
            // `${x:=…}` / `${x=…}` assign the default.
            WordPart::Parameter {
                name, braced: true, ..
            } => {
                let inner = name.as_str();
                let len = identifier_len(inner);
                if len > 0 && (inner[len..].starts_with(":=") || inner[len..].starts_with('=')) {
                    self.0.dynamic.insert(&inner[..len]);
                }
            }
            _ => {}
        }
    }
}

/// What the builtin `name` with `args` does to names.
fn builtin(names: &mut Names, name: &str, args: &[Option<String>]) {
    match name {
        "eval" | "source" | "." => {
            names
                .config_env
                .get_or_insert_with(|| format!("`{name}` may set any variable"));
            names.give_up();
        }
        "declare" | "typeset" | "local" | "export" | "readonly" | "integer" => {
            if args.iter().any(Option::is_none) {
                names
                    .config_env
                    .get_or_insert_with(|| format!("`{name}` sets a name only known at run time"));
                return names.give_up();
            }
            if let Some(key) = args
                .iter()
                .flatten()
                .map(|a| a.split('=').next().unwrap_or(a))
                .find(|n| crate::git_config::is_config_key(n))
            {
                names.config_env.get_or_insert_with(|| format!("`{key}` is set"));
            }
            let args = args.iter().flatten();
            for a in args.clone().filter(|a| !a.starts_with(['-', '+'])) {
                if let Some((target, value)) = a.split_once('=') {
                    names.value(target, value);
                }
            }
            let integer = name == "integer"
                || args
                    .clone()
                    .any(|a| a.starts_with(['-', '+']) && a.contains(['i', 'n']));
            if integer {
                for a in args.filter(|a| !a.starts_with(['-', '+'])) {
                    names.integers.insert(a);
                }
            }
        }
        "printf" => {
            for (i, a) in args.iter().enumerate() {
                match a.as_deref() {
                    Some("-v") => match args.get(i + 1) {
                        Some(Some(target)) => names.dynamic.insert(target),
                        _ => names.dynamic.any = true,
                    },
                    Some(v) if v.starts_with("-v") => names.dynamic.insert(&v[2..]),
                    _ => {}
                }
            }
        }
        "read" | "mapfile" | "readarray" | "getopts" => {
            for a in args {
                match a.as_deref() {
                    None => names.dynamic.any = true,
                    // `printf -vNAME`, `read -aNAME`.
                    Some(v) if v.starts_with('-') && v.len() > 2 => names.dynamic.insert(&v[2..]),
                    Some(v) if identifier_len(v) > 0 => names.dynamic.insert(v),
                    Some(_) => {}
                }
            }
        }
        _ => {}
    }
}

/// The length of the identifier at the start of `text`.
pub(super) fn identifier_len(text: &str) -> usize {
    if text.starts_with(|c: char| c.is_ascii_digit()) {
        return 0;
    }
    text.bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Names {
        scan(&shellgate_normalize::parse(src).unwrap(), None)
    }

    #[test]
    fn integers_and_dynamic_values_are_found() {
        let n = names(
            "declare -i n; f() { local -il m=1; }; x=$(cat f); for y in *; do :; done; read -r z; printf -v w %s 1",
        );
        assert!(n.integers.contains("n") && n.integers.contains("m") && !n.integers.contains("x"));
        for d in ["x", "y", "z", "w", "REPLY"] {
            assert!(n.is_dynamic(d), "{d}");
        }
        assert!(!n.is_dynamic("n"));
        assert!(names("eval \"$s\"").integers.contains("anything"));
        assert!(names("declare $o n").dynamic.contains("anything"));
        assert!(names("echo 'a[$(id)]'").poison);
        assert!(!names("for i in 1 2; do :; done").is_dynamic("i"));
    }
}
