//! What a persistent session holds that changes what a later command's words run: functions and
//! aliases (judged by their bodies where they are used), variables whose values run code when
//! evaluated as arithmetic, integer variables (an assignment to them is evaluated).
//!
//! Read from the state the session's shell saves after each command (`declare -p`, `declare -f`,
//! `alias -p`; zsh: `typeset -p`, `typeset -f`, `alias -L`). That file is written by the shell the
//! judged commands run in: a command able to write files could forge it. It shows what earlier
//! commands left through the shell itself, which is what a command judged read-only can change;
//! a command allowed to run anything could hide state there, as it could plant it anywhere else.

use std::collections::{BTreeMap, BTreeSet};

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
    /// A command is running in the session: its state may change before the judged one runs.
    pub busy: bool,
}

impl SessionView {
    /// Read a saved state (bash or zsh). Unreadable parts are skipped; a function whose definition
    /// cannot be parsed is still listed, and fails closed where it is used.
    pub fn from_saved_state(text: &str) -> Self {
        let mut view = SessionView::default();
        let mut values: BTreeMap<String, String> = BTreeMap::new();
        let mut references: BTreeMap<String, String> = BTreeMap::new();
        let mut lines = text.lines().peekable();
        while let Some(line) = lines.next() {
            if let Some((flags, name, value)) = declaration(line) {
                if flags.contains(['i', 'n']) {
                    view.integers.insert(name.to_owned());
                }
                if flags.contains('n') {
                    view.arithmetic_unsafe.insert(name.to_owned());
                    references.insert(name.to_owned(), value.to_owned());
                }
                values.insert(name.to_owned(), value.to_owned());
            } else if let Some((name, value)) = alias(line) {
                view.aliases.insert(name, value);
            } else if let Some(name) = function_header(line) {
                let mut definition = format!("{line}\n");
                for body in lines.by_ref() {
                    definition.push_str(body);
                    definition.push('\n');
                    if body == "}" {
                        break;
                    }
                }
                view.functions.insert(name.to_owned(), definition);
            }
        }
        view.arithmetic_unsafe.extend(unsafe_for_arithmetic(&values));
        view.references = unsafe_references(&references);
        view
    }

    /// Add what another session of the same name holds.
    pub fn merge(&mut self, other: SessionView) {
        self.functions.extend(other.functions);
        self.aliases.extend(other.aliases);
        self.arithmetic_unsafe.extend(other.arithmetic_unsafe);
        self.integers.extend(other.integers);
        self.references.extend(other.references);
        self.busy |= other.busy;
    }
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

/// `alias NAME='VALUE'` (single-quoted, `'\''` for a quote).
fn alias(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("alias ")?;
    let rest = rest.strip_prefix("-- ").unwrap_or(rest);
    let (name, value) = rest.split_once('=')?;
    let value = value
        .strip_prefix('\'')
        .and_then(|v| v.strip_suffix('\''))
        .map_or_else(|| value.to_owned(), |v| v.replace("'\\''", "'"));
    Some((name.to_owned(), value))
}

/// `NAME () ` (bash) or `NAME () {` (zsh).
fn function_header(line: &str) -> Option<&str> {
    let name = line.strip_suffix(" () ").or_else(|| line.strip_suffix(" () {"))?;
    (!name.is_empty() && !name.contains([' ', '\t'])).then_some(name)
}

/// The variables whose values make arithmetic run code: an expansion inside a subscript, or a
/// value naming such a variable (arithmetic evaluates names recursively).
fn unsafe_for_arithmetic(values: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = values
        .iter()
        .filter(|(_, v)| {
            let elements = strip_indexes(v);
            crate::argv::code_in_subscript(v) || (v.starts_with('(') && elements.contains(['$', '`', '[']))
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

    #[test]
    fn a_bash_state_is_read() {
        let state = "declare -a arr=([0]=\"1\" [1]=\"a[\\$(id)]\")\ndeclare -a ok=([0]=\"1\" [1]=\"2\")\n\
                     declare -i n=\"3\"\ndeclare -n r=\"x\"\ndeclare -- x=\"a[\\$(id)]\"\ndeclare -- y=\"x\"\n\
                     declare -x PATH=\"/usr/bin\"\n#shellgate-state-functions\nf () \n{ \n    ls -la \"$@\"\n}\n\
                     alias ll='ls -l'\nalias q='it'\\''s'\n";
        let v = SessionView::from_saved_state(state);
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
        let refs = SessionView::from_saved_state(
            "declare -n r=\"a[\\$(id)]\"\ndeclare -n s=\"r\"\ndeclare -n t=\"x\"\n",
        );
        assert_eq!(refs.references.iter().collect::<Vec<_>>(), ["r", "s"]);
    }

    #[test]
    fn a_zsh_state_is_read() {
        let state = "typeset -i n=3\ntypeset x='a[$(id)]'\n#shellgate-state-functions\nf () {\n\tls\n}\nalias ll='ls -l'\n";
        let v = SessionView::from_saved_state(state);
        assert!(v.functions.contains_key("f"));
        assert!(v.arithmetic_unsafe.contains("x"));
        assert!(v.integers.contains("n"));
        assert_eq!(v.aliases["ll"], "ls -l");
    }
}
