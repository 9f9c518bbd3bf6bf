//! Rule patterns: argv prefixes with alternatives and wildcards, or resolved-binary globs.
//!
//! Syntax (words separated by blanks, `'…'`/`"…"` quote a word literally):
//! - `git status` matches exactly `git status` (no further arguments);
//! - a trailing `*` matches any remaining arguments, none included: `cargo test *`;
//! - a `*` word elsewhere matches exactly one argument of any value: `git -C * status`;
//! - alternatives are separated by `|`, optionally in parentheses: `git (status|log) *` or
//!   `git status|log *`;
//! - `*` and `?` inside a word glob one static argument: `cargo +nightly-* build`;
//! - a first word containing `/` (or starting with `~/`) is a glob over the resolved binary
//!   path, `*` not crossing `/` and `**` crossing it: `/usr/bin/* *`;
//! - a bare first word matches only a command found through the absolute PATH entries (or given
//!   as the absolute path PATH resolves it to), never `./sed` or `/tmp/x/sed`.

use std::path::Path;

use crate::ConfigError;
use crate::argv::{Arg, basename};
use crate::path_lookup::PathLookup;

/// A parsed rule pattern.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// The rule as written (its name in verdicts).
    pub source: String,
    head: Head,
    args: Vec<Token>,
    /// A trailing `*`: any remaining arguments.
    rest: bool,
    /// The rule in canonical form, per program with an option table it names (see `meaning`).
    meaning: RuleMeaning,
}

type RuleMeaning = Vec<(&'static crate::meaning::Program, Vec<crate::meaning::Canonical>)>;

#[derive(Debug, Clone)]
enum Head {
    /// Command names (alternatives), matched through PATH.
    Names(Vec<Glob>),
    /// A glob over the resolved absolute path.
    Path(String),
}

#[derive(Debug, Clone)]
enum Token {
    /// Any one argument.
    Any,
    /// One static argument matching one of these.
    Alts(Vec<Glob>),
}

#[derive(Debug, Clone)]
struct Glob {
    text: String,
    wild: bool,
}

impl Glob {
    fn matches(&self, s: &str) -> bool {
        if self.wild {
            glob_match(self.text.as_bytes(), s.as_bytes(), false)
        } else {
            self.text == s
        }
    }
}

/// Words of a pattern: `(text, quoted)`.
fn split_words(src: &str) -> Result<Vec<(String, bool)>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push((std::mem::take(&mut cur), quoted));
                    quoted = false;
                    in_word = false;
                }
            }
            '\'' | '"' => {
                in_word = true;
                quoted = true;
                loop {
                    match chars.next() {
                        None => return Err("unterminated quote".into()),
                        Some(q) if q == c => break,
                        Some('\\') if c == '"' => cur.extend(chars.next()),
                        Some(other) => cur.push(other),
                    }
                }
            }
            '\\' => {
                in_word = true;
                quoted = true;
                cur.extend(chars.next());
            }
            other => {
                in_word = true;
                cur.push(other);
            }
        }
    }
    if in_word {
        words.push((cur, quoted));
    }
    Ok(words)
}

fn alternatives(word: &str, quoted: bool) -> Result<Vec<Glob>, String> {
    if quoted {
        return Ok(vec![Glob {
            text: word.to_owned(),
            wild: false,
        }]);
    }
    let inner = match (word.strip_prefix('('), word.strip_suffix(')')) {
        (Some(_), Some(_)) if word.len() >= 2 => &word[1..word.len() - 1],
        // A lone `(` or `)` is a literal argument (`find . ( -name x )`).
        (Some(_), None) | (None, Some(_)) if word.len() > 1 => {
            return Err(format!("unbalanced parentheses in `{word}`"));
        }
        _ => word,
    };
    let alts: Vec<Glob> = inner
        .split('|')
        .map(|a| Glob {
            text: a.to_owned(),
            wild: a.contains(['*', '?']),
        })
        .collect();
    if alts.iter().any(|a| a.text.is_empty()) {
        return Err(format!("empty alternative in `{word}`"));
    }
    Ok(alts)
}

impl Pattern {
    /// Parse a pattern.
    pub fn parse(source: &str) -> Result<Self, ConfigError> {
        let bad = |reason: String| ConfigError::BadPattern {
            rule: source.to_owned(),
            reason,
        };
        let words = split_words(source).map_err(bad)?;
        let Some(((first, first_quoted), rest_words)) = words.split_first() else {
            return Err(bad("the pattern is empty".into()));
        };
        let head = if !first_quoted && (first.contains('/') || first.starts_with("~/")) {
            let expanded = match first.strip_prefix("~/") {
                Some(tail) => {
                    let home = std::env::var("HOME").map_err(|_| bad("`~` needs HOME to be set".into()))?;
                    format!("{}/{tail}", home.trim_end_matches('/'))
                }
                None => first.clone(),
            };
            if !expanded.starts_with('/') {
                return Err(bad("a binary path pattern must be absolute".into()));
            }
            Head::Path(expanded)
        } else {
            if !first_quoted && first == "*" {
                return Err(bad(
                    "the command name cannot be `*`; write a path glob such as `/usr/bin/*`".into(),
                ));
            }
            Head::Names(alternatives(first, *first_quoted).map_err(bad)?)
        };
        let mut args = Vec::new();
        let mut rest = false;
        for (i, (w, quoted)) in rest_words.iter().enumerate() {
            if !quoted && w == "*" {
                if i + 1 == rest_words.len() {
                    rest = true;
                } else {
                    args.push(Token::Any);
                }
            } else {
                args.push(Token::Alts(alternatives(w, *quoted).map_err(bad)?));
            }
        }
        let meaning = rule_meaning(&head, &args);
        Ok(Self {
            source: source.to_owned(),
            head,
            args,
            rest,
            meaning,
        })
    }

    /// Whether the command `v` means what the pattern says, however spelled (canonical options
    /// for a program with a table, a subcommand behind global options and aliases, the program by
    /// any name it runs as). With `possibly`, a word only known at run time may be anything: the
    /// command could mean it once run.
    pub fn matches_view(
        &self,
        v: &crate::meaning::CommandView,
        lookup: &PathLookup,
        cwd: Option<&Path>,
        possibly: bool,
    ) -> bool {
        use crate::meaning::{canonical, rule_matches, words};
        if v.names.is_empty() {
            // A program only known at run time could be this one, if its words could fit.
            if !possibly {
                return false;
            }
            if self.meaning.is_empty() {
                return self.words_match(&v.args, true);
            }
            let w = words(&v.args);
            return self.meaning.iter().any(|(p, forms)| {
                let c = canonical(p, &w, false);
                forms.iter().any(|f| rule_matches(f, self.rest, &c, true))
            });
        }
        let head = match &self.head {
            Head::Names(alts) => v.names.iter().any(|n| alts.iter().any(|g| g.matches(n))),
            Head::Path(_) => v
                .word
                .as_deref()
                .is_some_and(|w| self.head_matches(w, lookup, cwd)),
        };
        if !head {
            return false;
        }
        if let Some((program, c)) = &v.canonical
            && let Some((_, forms)) = self.meaning.iter().find(|(p, _)| std::ptr::eq(*p, *program))
        {
            return forms.iter().any(|f| rule_matches(f, self.rest, c, possibly));
        }
        self.words_match(&v.args, possibly)
    }

    /// Whether the pattern ends in `*` (any further arguments).
    pub fn open_ended(&self) -> bool {
        self.rest
    }

    /// The pattern's argument tokens against `args` positionally; `possibly`: a word only known at
    /// run time matches anything, and may stand for any number of words.
    fn words_match(&self, args: &[Arg], possibly: bool) -> bool {
        let unknown = possibly && args.iter().any(crate::meaning::uncertain);
        let count = args.len() >= self.args.len() && (self.rest || args.len() == self.args.len());
        if !count && !unknown {
            return false;
        }
        for (tok, arg) in self.args.iter().zip(args) {
            if possibly && crate::meaning::uncertain(arg) {
                return true;
            }
            let ok = match tok {
                Token::Any => true,
                Token::Alts(alts) => arg.get().is_some_and(|v| alts.iter().any(|g| g.matches(v))),
            };
            if !ok {
                return false;
            }
        }
        count || unknown
    }

    /// The literal command names this pattern can match, when they are all plain names (used to
    /// index rules); `None` for globs and paths.
    pub fn literal_names(&self) -> Option<Vec<&str>> {
        match &self.head {
            Head::Names(alts) if alts.iter().all(|a| !a.wild) => {
                Some(alts.iter().map(|a| a.text.as_str()).collect())
            }
            _ => None,
        }
    }

    /// Whether the pattern matches `argv` (`open_ended`: more arguments are added when it runs,
    /// as with `xargs`).
    #[cfg(test)]
    pub fn matches(&self, argv: &[Arg], open_ended: bool, lookup: &PathLookup, cwd: Option<&Path>) -> bool {
        self.matches_covering(argv, open_ended, lookup, cwd, &[])
    }

    /// Like `matches`, but the arguments at `literal_only` (indexes into `argv`) match only a
    /// literal word of the pattern, never a wildcard.
    pub fn matches_covering(
        &self,
        argv: &[Arg],
        open_ended: bool,
        lookup: &PathLookup,
        cwd: Option<&Path>,
        literal_only: &[usize],
    ) -> bool {
        let Some((cmd, args)) = argv.split_first() else {
            return false;
        };
        let Some(name) = cmd.get() else {
            return false;
        };
        if !self.head_matches(name, lookup, cwd) {
            return false;
        }
        if args.len() < self.args.len() {
            return false;
        }
        if !self.rest && (args.len() != self.args.len() || open_ended) {
            return false;
        }
        if literal_only.iter().any(|&i| i > self.args.len()) {
            // Covered by the trailing `*`.
            return false;
        }
        self.args
            .iter()
            .zip(args)
            .enumerate()
            .all(|(j, (tok, arg))| match tok {
                Token::Any => !literal_only.contains(&(j + 1)),
                Token::Alts(alts) => arg.get().is_some_and(|v| {
                    alts.iter()
                        .any(|g| g.matches(v) && (!g.wild || !literal_only.contains(&(j + 1))))
                }),
            })
    }

    fn head_matches(&self, name: &str, lookup: &PathLookup, cwd: Option<&Path>) -> bool {
        match &self.head {
            Head::Names(alts) => {
                if name.contains('/') {
                    // An explicit path matches a bare-name rule only when it is the binary that PATH
                    // resolves the name to.
                    let base = basename(name);
                    if !alts.iter().any(|g| g.matches(base)) {
                        return false;
                    }
                    match (lookup.command_path(name, cwd), lookup.resolve(base)) {
                        // `/bin/rm` is `/usr/bin/rm` where `/bin` links there.
                        (Some(given), Some(resolved)) => given == resolved || same_file(&given, &resolved),
                        _ => false,
                    }
                } else {
                    alts.iter().any(|g| g.matches(name)) && lookup.bare_name_is_trusted(name)
                }
            }
            Head::Path(glob) => lookup
                .command_path(name, cwd)
                .and_then(|p| {
                    p.to_str()
                        .map(|s| glob_match(glob.as_bytes(), s.as_bytes(), true))
                })
                .unwrap_or(false),
        }
    }
}

/// The most canonical forms one rule expands to (its alternatives multiplied out).
const MAX_FORMS: usize = 16;

/// The canonical forms of a rule, per program with an option table it names: a `*` word is an
/// operand or value matching anything, alternatives give one form each.
fn rule_meaning(head: &Head, args: &[Token]) -> RuleMeaning {
    let names: Vec<&str> = match head {
        Head::Names(names) => names
            .iter()
            .filter(|n| !n.wild)
            .map(|n| n.text.as_str())
            .collect(),
        Head::Path(glob) => vec![basename(glob)]
            .into_iter()
            .filter(|n| !n.contains(['*', '?']))
            .collect(),
    };
    let mut combos: Vec<Vec<&str>> = vec![Vec::new()];
    for t in args {
        let alts: Vec<&str> = match t {
            Token::Any => vec!["*"],
            Token::Alts(alts) => alts.iter().map(|a| a.text.as_str()).collect(),
        };
        if combos.len() * alts.len() > MAX_FORMS {
            return Vec::new();
        }
        combos = combos
            .iter()
            .flat_map(|c| {
                alts.iter().map(move |a| {
                    let mut c = c.clone();
                    c.push(*a);
                    c
                })
            })
            .collect();
    }
    names
        .into_iter()
        .filter_map(crate::meaning::program)
        .map(|p| {
            let forms = combos
                .iter()
                .map(|words| {
                    let w: Vec<_> = words.iter().map(|v| crate::meaning::Word::known(v)).collect();
                    crate::meaning::canonical(p, &w, true)
                })
                .collect();
            (p, forms)
        })
        .collect()
}

/// Whether two paths name the same file once links are followed.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Glob matching with `*` and `?`; with `paths`, `*` and `?` do not cross `/` and `**` does.
pub(crate) fn glob_match(pat: &[u8], s: &[u8], paths: bool) -> bool {
    match pat.split_first() {
        None => s.is_empty(),
        Some((b'*', rest)) => {
            if paths && rest.first() == Some(&b'*') {
                let rest = &rest[1..];
                (0..=s.len()).any(|i| glob_match(rest, &s[i..], paths))
            } else {
                for i in 0..=s.len() {
                    if glob_match(rest, &s[i..], paths) {
                        return true;
                    }
                    if paths && s.get(i) == Some(&b'/') {
                        return false;
                    }
                }
                false
            }
        }
        Some((b'?', rest)) => match s.split_first() {
            Some((c, srest)) if !(paths && *c == b'/') => glob_match(rest, srest, paths),
            _ => false,
        },
        Some((c, rest)) => s.first() == Some(c) && glob_match(rest, &s[1..], paths),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn argv(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    fn m(p: &str, cmd: &str) -> bool {
        let lookup = PathLookup::new(Some(&OsString::from("/usr/bin:/bin")));
        Pattern::parse(p)
            .unwrap()
            .matches(&argv(cmd), false, &lookup, Some(Path::new("/w")))
    }

    #[test]
    fn exact_and_rest() {
        assert!(m("git status", "git status"));
        assert!(!m("git status", "git status -s"));
        assert!(m("git status *", "git status -s"));
        assert!(m("git status *", "git status"));
        assert!(!m("git status *", "git log"));
    }

    #[test]
    fn alternatives_and_any() {
        assert!(m("git (status|log) *", "git log -1"));
        assert!(m("git status|log", "git log"));
        assert!(!m("git status|log", "git diff"));
        assert!(m("git -C * status", "git -C dir status"));
        assert!(m("cargo +nightly-* build", "cargo +nightly-2024 build"));
        assert!(m("(cat|head) *", "head -n 1 x"));
    }

    #[test]
    fn bare_names_never_match_planted_binaries() {
        assert!(!m("sed *", "./sed -n 1p"));
        assert!(!m("sed *", "/tmp/x/sed -n 1p"));
        assert!(m("sh *", "/bin/sh -c x") || m("sh *", "/usr/bin/sh -c x"));
    }

    #[test]
    fn path_globs() {
        assert!(m("/usr/bin/* *", "/usr/bin/env x"));
        assert!(!m("/usr/bin/*", "/usr/bin/x/y"));
        assert!(m("/usr/**", "/usr/bin/x/y"));
        assert!(!m("/usr/bin/*", "./x"));
    }

    #[test]
    fn open_ended_needs_rest() {
        let lookup = PathLookup::new(Some(&OsString::from("/usr/bin")));
        let p = Pattern::parse("grep foo").unwrap();
        assert!(!p.matches(&argv("grep foo"), true, &lookup, None));
        let p = Pattern::parse("grep *").unwrap();
        assert!(p.matches(&argv("grep foo"), true, &lookup, None));
    }

    #[test]
    fn bad_patterns_are_named() {
        for bad in ["", "* x", "git (a|", "a||b", "'x", "rel/x"] {
            let e = Pattern::parse(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("`{bad}`")), "{e}");
        }
    }
}
