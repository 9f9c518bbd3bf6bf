//! The words bash gives a meaning of its own in command position: its builtins and its reserved
//! words (bash 5.2: `compgen -b` and `compgen -k`, checked by the differential test).
//!
//! Stages that reason about what a command does (is it a program on `PATH`, can it change the shell's
//! state, does a function shadow something) share this one table.
//!
//! ```
//! use shellgate_normalize::shell_words::{is_builtin, is_reserved_word, is_shell_word};
//!
//! assert!(is_builtin("cd") && is_builtin("."));
//! assert!(is_reserved_word("[[") && !is_builtin("[["));
//! assert!(is_shell_word("export") && !is_shell_word("ls"));
//! ```

/// Every bash builtin command.
pub const BASH_BUILTINS: &[&str] = &[
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

/// Every bash reserved word.
pub const BASH_RESERVED_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done",
    "in", "function", "time", "{", "}", "!", "[[", "]]", "coproc",
];

/// Whether `word` names a bash builtin.
pub fn is_builtin(word: &str) -> bool {
    BASH_BUILTINS.contains(&word)
}

/// Whether `word` is a bash reserved word.
pub fn is_reserved_word(word: &str) -> bool {
    BASH_RESERVED_WORDS.contains(&word)
}

/// Whether `word` is a builtin or a reserved word: something bash does not look up on `PATH`.
pub fn is_shell_word(word: &str) -> bool {
    is_builtin(word) || is_reserved_word(word)
}
