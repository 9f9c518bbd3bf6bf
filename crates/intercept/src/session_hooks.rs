//! Session state that changes what any later command runs without being named by it: traps
//! (`DEBUG`, `RETURN`, `ERR`, `EXIT` run around or after commands), hashed paths (`hash -p`
//! makes a name run another file), builtins loaded or disabled (`enable -f`, `enable -n`), and the
//! options that change how words become commands (`set -k`, `set -a`, `extdebug`, compatibility
//! levels, `xtrace` with a `PS4` that expands). The policy does not judge commands through any of
//! these: a session holding one is not judged at all (every command asks), and the reason says
//! which.

use std::collections::BTreeMap;

/// The engine's own `EXIT` trap in a bash session (it saves the state when the shell exits).
const ENGINE_EXIT_TRAP: &str = r"{ \__shellgate_exit; } 2>/dev/null";

/// bash's builtins (5.0 – 5.3): any other enabled name was loaded with `enable -f`.
const BASH_BUILTINS: &[&str] = &[
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
];

/// Why a saved `trap -- ACTION SIGNAL…` line makes the session unjudgeable.
pub(crate) fn trap(args: &[String]) -> Option<String> {
    let args = args.strip_prefix(&["--".to_owned()]).unwrap_or(args);
    let (action, signals) = args.split_first()?;
    if action.is_empty() || (action == ENGINE_EXIT_TRAP && signals == ["EXIT"]) {
        return None;
    }
    Some(format!(
        "the session has a trap on {} that runs around later commands",
        signals.join(", ")
    ))
}

/// Why a saved `enable [-n] NAME` line makes the session unjudgeable.
pub(crate) fn enable(args: &[String]) -> Option<String> {
    match args {
        [name] if BASH_BUILTINS.contains(&name.as_str()) => None,
        [name] => Some(format!(
            "the session loaded the builtin `{name}` from a shared object"
        )),
        [flag, name] if flag == "-n" => Some(format!(
            "the session disabled the builtin `{name}`, so the name runs something else"
        )),
        _ => Some("the session's builtins cannot be read".into()),
    }
}

/// Why a saved `builtin hash -p PATH NAME` entry makes the session unjudgeable: it is not where
/// the session's PATH finds NAME (`hash -p /tmp/x ls` makes `ls` run `/tmp/x`).
pub(crate) fn hashed(path: &str, name: &str, session_path: Option<&str>) -> Option<String> {
    let (dir, file) = path.rsplit_once('/')?;
    let on_path =
        session_path.is_some_and(|p| p.split(':').any(|entry| entry.starts_with('/') && entry == dir));
    (file != name || !on_path)
        .then(|| format!("the session runs `{name}` from `{path}` (`hash -p`), not from its PATH"))
}

/// Why the shell options or variables saved with a bash state make it unjudgeable. `values` are
/// the raw values as `declare -p` prints them.
pub(crate) fn bash_options(values: &BTreeMap<String, String>) -> Option<String> {
    let (Some(set), Some(shopt)) = (
        values.get("__shellgate_so").map(|v| unquote(v)),
        values.get("__shellgate_bo").map(|v| unquote(v)),
    ) else {
        return Some("the saved state lacks the shell's options".into());
    };
    let set: Vec<&str> = set.split(':').collect();
    let shopt: Vec<&str> = shopt.split(':').collect();
    let expands = |name: &str| values.get(name).is_some_and(|v| v.contains(['$', '`']));
    let set_to = |name: &str| values.get(name).is_some_and(|v| !unquote(v).is_empty());
    let why = if set.contains(&"keyword") {
        "`set -k` puts every assignment word in the environment"
    } else if set.contains(&"allexport") {
        "`set -a` exports every assignment"
    } else if expands("PS4") {
        "`PS4` holds an expansion, which `set -x` (on now, or set by a command) runs before every command"
    } else if set.contains(&"history") && set.contains(&"histexpand") {
        "history expansion rewrites commands before they run"
    } else if shopt.contains(&"extdebug") {
        "`shopt -s extdebug` changes how functions and traps run"
    } else if shopt.iter().any(|o| o.starts_with("compat")) || old_compat(values.get("BASH_COMPAT")) {
        "a bash compatibility level changes how words are parsed and expanded"
    } else if set_to("CDPATH") {
        "`CDPATH` makes `cd` lead elsewhere than the path it is given"
    } else if set.contains(&"posix") {
        "POSIX mode changes how aliases and special builtins behave"
    } else if !shopt.contains(&"expand_aliases") {
        "aliases are not expanded, so a command runs as written where an alias would be judged"
    } else if shopt.contains(&"nullglob") {
        "`shopt -s nullglob` makes a word that matches nothing disappear, moving the words after it"
    } else if shopt.contains(&"cdable_vars") || shopt.contains(&"cdspell") {
        "`cd` may lead elsewhere than the path it is given (`cdable_vars`, `cdspell`)"
    } else {
        return None;
    };
    Some(format!("the session's shell options: {why}"))
}

/// zsh options (as `setopt` prints those that differ from the default) that change which command
/// a word runs or which words a command gets: a session holding one has no command judged safe.
const ZSH_OPTIONS_THAT_CHANGE_WORDS: &[&str] = &[
    "noaliases",
    "globsubst",
    "shwordsplit",
    "nullglob",
    "cshnullglob",
    "rcexpandparam",
    "posixaliases",
    "posixbuiltins",
    "cdablevars",
    "autocd",
    "correct",
    "correctall",
    "ignorebraces",
    "magicequalsubst",
    "aliasfuncdef",
];

/// Why zsh's `setopt` (or `unsetopt`) `options` make the session unjudgeable, if they do.
pub(crate) fn zsh_options(command: &str, options: &[String]) -> Option<String> {
    let changing = options.iter().find_map(|o| {
        let name: String = o.to_ascii_lowercase().chars().filter(|c| *c != '_').collect();
        // `unsetopt X` is `setopt noX`, and `unsetopt noX` is `setopt X`.
        let name = match (command, name.strip_prefix("no")) {
            ("unsetopt", Some(rest)) => rest.to_owned(),
            ("unsetopt", None) => format!("no{name}"),
            _ => name,
        };
        ZSH_OPTIONS_THAT_CHANGE_WORDS
            .contains(&name.as_str())
            .then_some(name)
    })?;
    Some(format!(
        "the session's shell options: zsh's `{changing}` changes which command a word runs or which words it gets"
    ))
}

/// Whether `BASH_COMPAT` asks for a level before bash 5.0 (the levels whose quoting and expansion
/// rules differ); sessions commonly carry their own level (`52`).
fn old_compat(value: Option<&String>) -> bool {
    let Some(value) = value.map(|v| unquote(v)) else {
        return false;
    };
    let digits: String = value.chars().filter(char::is_ascii_digit).collect();
    !value.is_empty() && digits.parse::<u32>().map_or(true, |level| level < 50)
}

/// A value as `declare -p` prints it (`"…"` with `\"`, `\\`, `\$`, `` \` `` escapes), unquoted.
pub(crate) fn unquote(raw: &str) -> String {
    let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) else {
        return raw.trim_matches('\'').to_owned();
    };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                if !matches!(next, '"' | '\\' | '$' | '`') {
                    out.push('\\');
                }
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn traps_builtins_and_hashes() {
        assert!(trap(&owned(&["--", ENGINE_EXIT_TRAP, "EXIT"])).is_none());
        assert!(trap(&owned(&["--", "", "SIGINT"])).is_none());
        assert!(trap(&owned(&["--", "touch /tmp/p", "DEBUG"])).is_some());
        assert!(trap(&owned(&["--", ENGINE_EXIT_TRAP, "DEBUG"])).is_some());
        assert!(enable(&owned(&["echo"])).is_none());
        assert!(enable(&owned(&["evil"])).is_some());
        assert!(enable(&owned(&["-n", "echo"])).is_some());
        let path = Some("/usr/local/bin:/usr/bin:bin");
        assert!(hashed("/usr/bin/ls", "ls", path).is_none());
        assert!(hashed("/tmp/x/ls", "ls", path).is_some());
        assert!(hashed("/usr/bin/rm", "ls", path).is_some());
        assert!(hashed("bin/ls", "ls", path).is_some());
        assert!(hashed("/usr/bin/ls", "ls", None).is_some());
    }

    #[test]
    fn options() {
        let values = |so: &str, bo: &str, extra: &[(&str, &str)]| {
            let mut m: BTreeMap<String, String> = extra
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect();
            m.insert("__shellgate_so".into(), format!("\"{so}\""));
            m.insert("__shellgate_bo".into(), format!("\"{bo}\""));
            m
        };
        assert!(bash_options(&values("braceexpand:hashall", "expand_aliases:extglob", &[])).is_none());
        assert!(bash_options(&values("braceexpand:keyword", "", &[])).is_some());
        assert!(bash_options(&values("xtrace", "", &[("PS4", "\"\\$(id)\"")])).is_some());
        assert!(bash_options(&values("xtrace", "expand_aliases", &[("PS4", "\"+ \"")])).is_none());
        assert!(bash_options(&values("", "extdebug", &[])).is_some());
        assert!(bash_options(&values("", "compat42", &[])).is_some());
        assert!(bash_options(&values("", "", &[("BASH_COMPAT", "\"42\"")])).is_some());
        let ea = "expand_aliases";
        assert!(bash_options(&values("", ea, &[("BASH_COMPAT", "\"5.2\"")])).is_none());
        assert!(bash_options(&values("", ea, &[("BASH_COMPAT", "\"52\"")])).is_none());
        // Aliases not expanded, POSIX mode, words that vanish, `cd` that leads elsewhere.
        assert!(bash_options(&values("", "extglob", &[])).is_some());
        assert!(bash_options(&values("posix", ea, &[])).is_some());
        assert!(bash_options(&values("", "expand_aliases:nullglob", &[])).is_some());
        assert!(bash_options(&values("", "expand_aliases:cdable_vars", &[])).is_some());
        assert!(bash_options(&values("", "", &[("CDPATH", "\"/tmp\"")])).is_some());
        assert!(bash_options(&BTreeMap::new()).is_some());
        assert_eq!(unquote(r#""a\"b\\c\$d""#), r#"a"b\c$d"#);
    }

    #[test]
    fn zsh_options_that_change_words() {
        assert!(zsh_options("setopt", &owned(&["extendedglob", "interactivecomments"])).is_none());
        assert!(zsh_options("setopt", &owned(&["no_aliases"])).is_some());
        assert!(zsh_options("setopt", &owned(&["GLOB_SUBST"])).is_some());
        assert!(zsh_options("unsetopt", &owned(&["aliases"])).is_some());
        assert!(zsh_options("unsetopt", &owned(&["nullglob"])).is_none());
    }
}
