//! A program's options as far as a rule needs them, written as a compact spec and parsed once.
//!
//! A spec is a list of entries separated by blanks. An entry names one option by all its
//! spellings, separated by `|` (one letter: a short option; more: a long one); the first
//! spelling is its canonical name. A suffix says what follows it:
//! - `=`: it takes a value (attached, after `=`, or the next word);
//! - `?`: it takes a value only after `=` (`--force-with-lease[=ref]`);
//! - `;`: it takes the words up to `;` or `{} +` (`find -exec`);
//! - `>a+b`: it means the options `a` and `b` (`git branch -D` is `--delete --force`).

use std::sync::OnceLock;

/// What follows an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Nothing.
    Flag,
    /// A value, attached or the next word.
    Value,
    /// A value only when attached with `=`.
    Optional,
    /// The words up to a terminator.
    UntilTerminator,
}

/// One option.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The canonical name.
    pub name: String,
    /// What follows it.
    pub kind: Kind,
    /// The options it stands for, when it is a shorthand for others.
    pub means: Vec<String>,
}

#[derive(Debug, Default)]
struct Parsed {
    entries: Vec<Entry>,
    short: Vec<(char, usize)>,
    long: Vec<(String, usize)>,
}

/// How a long option written on the command line is found.
pub(crate) enum Long<'t> {
    /// Exactly, or by an abbreviation no other long option of the table shares.
    Found(&'t Entry),
    /// An abbreviation of several options: the program refuses it.
    Ambiguous,
    /// Not an option of the table.
    Unknown,
}

/// The option table of a program (or of one of its subcommands).
#[derive(Debug)]
pub(crate) struct Table {
    spec: &'static str,
    /// Unique abbreviations of long options are accepted (GNU getopt, git, curl, npm).
    pub abbrev: bool,
    /// Options are whole words after one dash (`find -name`), never clusters of letters.
    pub dash_long: bool,
    /// `--` separates two kinds of operands (`git checkout -- paths`), so its place is meaning.
    pub dashdash: bool,
    /// A word like `-x` or `-rw` is a mode operand (`chmod`).
    pub modes: bool,
    /// The operand the program assumes when none is given (`find` searches `.`).
    pub default_operand: Option<&'static str>,
    /// Options end at the first operand (`docker run IMAGE --flag` passes `--flag` on).
    pub posix: bool,
    /// An option whose value makes it another one: `(option, value, means)` (`rm
    /// --interactive=never` is `-f`); a value may be abbreviated where all the words it
    /// abbreviates mean the same.
    pub value_means: &'static [(&'static str, &'static str, &'static str)],
    parsed: OnceLock<Parsed>,
}

impl Table {
    /// A table of GNU-style options (no abbreviations; see the builder methods).
    pub const fn new(spec: &'static str) -> Self {
        Self {
            spec,
            abbrev: false,
            dash_long: false,
            dashdash: false,
            modes: false,
            default_operand: None,
            posix: false,
            value_means: &[],
            parsed: OnceLock::new(),
        }
    }

    /// Unique abbreviations of long options are accepted.
    pub const fn abbreviations(mut self) -> Self {
        self.abbrev = true;
        self
    }

    /// Options are whole words after one dash.
    pub const fn dash_long(mut self) -> Self {
        self.dash_long = true;
        self
    }

    /// `--` is meaning.
    pub const fn dashdash(mut self) -> Self {
        self.dashdash = true;
        self
    }

    /// Words like `-x` are modes.
    pub const fn modes(mut self) -> Self {
        self.modes = true;
        self
    }

    /// Options end at the first operand.
    pub const fn posix(mut self) -> Self {
        self.posix = true;
        self
    }

    /// Options whose value makes them another one.
    pub const fn value_means(mut self, means: &'static [(&'static str, &'static str, &'static str)]) -> Self {
        self.value_means = means;
        self
    }

    /// What the option `name` with the value `value` stands for, when its value makes it another
    /// option.
    pub fn meant_by(&self, name: &str, value: &str) -> Option<&'static str> {
        let words = self.value_means.iter().filter(|(o, _, _)| *o == name);
        if let Some((_, _, m)) = words.clone().find(|(_, v, _)| *v == value) {
            return Some(m);
        }
        let mut meant = words
            .filter(|(_, v, _)| !value.is_empty() && v.starts_with(value))
            .map(|(_, _, m)| *m);
        let first = meant.next()?;
        meant.all(|m| m == first).then_some(first)
    }

    /// The operand assumed when none is given.
    pub const fn default_operand(mut self, operand: &'static str) -> Self {
        self.default_operand = Some(operand);
        self
    }

    fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| parse(self.spec))
    }

    /// The short option `letter`.
    pub fn short(&self, letter: char) -> Option<&Entry> {
        let p = self.parsed();
        p.short
            .iter()
            .find(|(c, _)| *c == letter)
            .map(|&(_, i)| &p.entries[i])
    }

    /// The long option written `name` (without dashes or value).
    pub fn long(&self, name: &str) -> Long<'_> {
        let p = self.parsed();
        if let Some(&(_, i)) = p.long.iter().find(|(l, _)| l == name) {
            return Long::Found(&p.entries[i]);
        }
        if !self.abbrev || name.is_empty() {
            return Long::Unknown;
        }
        let mut hits = p.long.iter().filter(|(l, _)| l.starts_with(name));
        match (hits.next(), hits.next()) {
            (Some(&(_, i)), None) => Long::Found(&p.entries[i]),
            (Some(&(_, a)), Some(&(_, b))) => {
                // Two spellings of one option are no ambiguity.
                if a == b && hits.all(|&(_, c)| c == a) {
                    Long::Found(&p.entries[a])
                } else {
                    Long::Ambiguous
                }
            }
            _ => Long::Unknown,
        }
    }
}

fn parse(spec: &str) -> Parsed {
    let mut p = Parsed::default();
    for item in spec.split_whitespace() {
        let (names, means) = match item.split_once('>') {
            Some((n, m)) => (n, m.split('+').map(str::to_owned).collect()),
            None => (item, Vec::new()),
        };
        let (names, kind) = match names.as_bytes().last() {
            Some(b'=') => (&names[..names.len() - 1], Kind::Value),
            Some(b'?') => (&names[..names.len() - 1], Kind::Optional),
            Some(b';') => (&names[..names.len() - 1], Kind::UntilTerminator),
            _ => (names, Kind::Flag),
        };
        let index = p.entries.len();
        let mut spellings = names.split('|');
        let name = spellings.next().unwrap_or_default().to_owned();
        for s in std::iter::once(name.as_str()).chain(spellings) {
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => p.short.push((c, index)),
                _ => p.long.push((s.to_owned(), index)),
            }
        }
        p.entries.push(Entry { name, kind, means });
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    static T: Table = Table::new(
        "f|force force-with-lease? force-if-includes u|set-upstream D>d+f d|delete o|push-option=",
    )
    .abbreviations();

    static EXACT: Table = Table::new("privileged rm");

    #[test]
    fn spellings_and_abbreviations() {
        assert_eq!(T.short('f').map(|e| e.name.as_str()), Some("f"));
        assert!(matches!(T.long("force"), Long::Found(e) if e.name == "f"));
        assert!(matches!(T.long("forc"), Long::Ambiguous));
        assert!(matches!(T.long("force-w"), Long::Found(e) if e.kind == Kind::Optional));
        assert!(matches!(T.long("set"), Long::Found(e) if e.name == "u"));
        assert!(matches!(T.long("nope"), Long::Unknown));
        assert_eq!(
            T.short('D').map(|e| e.means.clone()),
            Some(vec!["d".into(), "f".into()])
        );
        assert_eq!(T.short('o').map(|e| e.kind), Some(Kind::Value));
        assert!(matches!(EXACT.long("priv"), Long::Unknown));
    }
}
