//! Which commands cannot change the shell's state, so saving the state after them can be skipped.
//!
//! Saving costs a `declare -p`/`declare -f`/`alias -p` per command — more than all the rest of a round
//! trip together. Most commands only run programs (`cargo test`, `git status | head`), which cannot touch
//! the shell's variables, functions, aliases or options; after them the previously saved state is still
//! exact. The check is deliberately conservative: anything it does not fully understand (assignments,
//! compound commands, subshell syntax, arithmetic, `${x=…}`, back quotes, shell builtins other than a few
//! read-only ones, names of the session's functions or aliases) counts as state-changing.

use std::collections::HashSet;

use shellgate_normalize::shell_words::is_shell_word;

/// Builtins that cannot change the shell's state.
const READ_ONLY_BUILTINS: &[&str] = &[
    "echo", "true", "false", "test", "[", "pwd", "type", ":", "kill", "help", "times", "jobs", "wait",
];

/// Whether `command`, run by bash, certainly leaves the shell's state as it was. `names` are the session's
/// function and alias names.
#[allow(clippy::implicit_hasher)] // the sessions' name sets are plain `HashSet`s
pub fn cannot_change_state(command: &str, names: &HashSet<String>) -> bool {
    Scanner {
        chars: command.chars().collect(),
        pos: 0,
        names,
    }
    .run()
    .unwrap_or(false)
}

struct Scanner<'a> {
    chars: Vec<char>,
    pos: usize,
    names: &'a HashSet<String>,
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    /// `Some(true)` when every simple command is harmless; `None` for anything not understood.
    fn run(&mut self) -> Option<bool> {
        let mut command_position = true;
        let mut subst_depth = 0usize; // nesting of `$(` … `)` (subshells: their commands are harmless)
        let mut paren_depth: Vec<usize> = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\n' | ';' | '&' | '|' => {
                    self.pos += 1;
                    command_position = true;
                }
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '(' => {
                    // Only inside `$( … )`: track the nesting so the closing paren is found.
                    if subst_depth == 0 {
                        return None;
                    }
                    *paren_depth.last_mut()? += 1;
                    self.pos += 1;
                    command_position = true;
                }
                ')' => {
                    if subst_depth == 0 {
                        return None;
                    }
                    let depth = paren_depth.last_mut()?;
                    if *depth == 0 {
                        paren_depth.pop();
                        subst_depth -= 1;
                    } else {
                        *depth -= 1;
                    }
                    self.pos += 1;
                    command_position = false;
                }
                '<' | '>' => {
                    if command_position {
                        return None;
                    }
                    self.pos += 1;
                }
                _ => {
                    let (word, opened_subst) = self.word()?;
                    if command_position && subst_depth == 0 && !self.harmless_command_word(word.as_ref()) {
                        return Some(false);
                    }
                    if opened_subst {
                        subst_depth += 1;
                        paren_depth.push(0);
                        command_position = true;
                    } else {
                        command_position = false;
                    }
                }
            }
        }
        Some(subst_depth == 0)
    }

    /// Read one word. Returns its unquoted text (`None` inside when quotes or expansions make the text
    /// unknowable: then it is never harmless in command position) and whether it ended by opening `$(`.
    fn word(&mut self) -> Option<(Option<String>, bool)> {
        let mut text = Some(String::new());
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => {
                    self.pos += 2;
                    text = None;
                }
                '\'' => {
                    self.pos += 1;
                    while self.peek(0)? != '\'' {
                        self.pos += 1;
                    }
                    self.pos += 1;
                    text = None;
                }
                '"' => {
                    self.pos += 1;
                    loop {
                        match self.peek(0)? {
                            '"' => break,
                            '\\' => self.pos += 2,
                            '`' => return None,
                            '$' => {
                                if self.dollar()? {
                                    // `$(` inside double quotes: give up rather than track quotes in it.
                                    return None;
                                }
                            }
                            _ => self.pos += 1,
                        }
                    }
                    self.pos += 1;
                    text = None;
                }
                '`' => return None,
                '$' => {
                    text = None;
                    if self.dollar()? {
                        return Some((text, true));
                    }
                }
                '=' => {
                    // An assignment (or `a=b` as an argument; harmless there, checked by the caller).
                    if let Some(t) = text.as_mut() {
                        t.push('=');
                    }
                    self.pos += 1;
                }
                c => {
                    if let Some(t) = text.as_mut() {
                        t.push(c);
                    }
                    self.pos += 1;
                }
            }
        }
        Some((text, false))
    }

    /// At a `$`: skip a harmless expansion. `Some(true)` when it opens a command substitution `$(`;
    /// `None` for arithmetic or assigning forms.
    fn dollar(&mut self) -> Option<bool> {
        self.pos += 1;
        match self.peek(0) {
            Some('(') => {
                if self.peek(1) == Some('(') {
                    return None; // $(( … )) may assign
                }
                self.pos += 1;
                Some(true)
            }
            Some('{') => {
                self.pos += 1;
                loop {
                    match self.peek(0)? {
                        '}' => break,
                        '=' | '{' | '$' | '`' | '(' | '\'' | '"' | '\\' => return None,
                        _ => self.pos += 1,
                    }
                }
                self.pos += 1;
                Some(false)
            }
            _ => Some(false),
        }
    }

    fn harmless_command_word(&self, word: Option<&String>) -> bool {
        let Some(word) = word else { return false };
        if word.is_empty() || word.contains('=') || self.names.contains(word.as_str()) {
            return false;
        }
        !is_shell_word(word.as_str()) || READ_ONLY_BUILTINS.contains(&word.as_str())
    }
}

/// Function and alias names in a saved bash state (see `script::bootstrap`).
pub(crate) fn defined_names(state: &str) -> HashSet<String> {
    let mut names = HashSet::new();
    for line in state.lines() {
        if let Some(name) = line.strip_suffix(" () ") {
            if !name.contains(' ') {
                names.insert(name.to_owned());
            }
        } else if let Some(rest) = line.strip_prefix("alias ") {
            let rest = rest.strip_prefix("-- ").unwrap_or(rest);
            if let Some((name, _)) = rest.split_once('=') {
                names.insert(name.to_owned());
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cmd: &str) -> bool {
        let names: HashSet<String> = ["f", "ll"].iter().map(|s| (*s).to_owned()).collect();
        cannot_change_state(cmd, &names)
    }

    #[test]
    fn programs_and_pipelines_are_harmless() {
        for cmd in [
            "true",
            "ls -la | grep foo > out.txt 2>&1",
            "cargo test -p x && git status; echo done",
            "echo \"$HOME\" '$x=1' ${PATH}",
            "echo $(date) $(cd /; pwd)",
            "grep -r 'a(b' src # (comment",
            "sleep 1 &",
            "env A=1 prog",
        ] {
            assert!(check(cmd), "{cmd}");
        }
    }

    #[test]
    fn anything_that_may_change_state_is_caught() {
        for cmd in [
            "cd /tmp",
            "export A=1",
            "A=1",
            "A=1 prog",
            "f",
            "ll -a",
            "x | f",
            "true; unset X",
            "echo $((x=1))",
            "echo ${x:=1}",
            "echo `cd /`",
            "(cd /)",
            "{ cd /; }",
            "for i in 1; do :; done",
            "source f",
            ". f",
            "alias a=b",
            "set -e",
            "shopt -s extglob",
            "printf -v x 1",
            "read x",
            "eval cd /",
            "exec true",
            "exit 3",
            "\"cd\" /",
            "$CMD",
            ">out cd /",
            "echo 'unterminated",
            "echo $(cd /",
            "if true; then cd /; fi",
            "echo \"$(cd /)\"",
            "trap '' INT",
        ] {
            assert!(!check(cmd), "{cmd}");
        }
    }

    #[test]
    fn names_come_from_functions_and_aliases() {
        let state =
            "declare -- X=\"1\"\n#shellgate-state-functions\nf () \n{ \n    echo\n}\nalias ll='ls -l'\n";
        let names = defined_names(state);
        assert!(names.contains("f") && names.contains("ll"), "{names:?}");
        assert!(!names.contains("X"));
    }
}
