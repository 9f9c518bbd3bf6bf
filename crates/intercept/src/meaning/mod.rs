//! What a command means to a deny rule, whatever its spelling: short options split and merged
//! (`-rf` ≡ `-fr` ≡ `-r -f` ≡ `-Rf` for `rm`), long options and their unique abbreviations mapped
//! to one name (`--recursive` ≡ `-r`), values attached or apart (`-XDELETE` ≡ `--request DELETE`),
//! option order free, `--` respected, subcommands found behind global options and aliases (`git -C
//! . push`, `npm i`, `docker container rm`), and words only known at run time (`$x`, `$(…)`,
//! `{a,b}`, `pus[h]`) treated as possibly anything. Programs without a table keep literal
//! matching.

mod git;
mod programs;
mod scan;
mod table;
mod view;

pub(crate) use git::expand_aliases as expand_git_aliases;
pub(crate) use programs::{Program, program};
pub(crate) use scan::Word;
pub(crate) use table::{Kind, Long, Table};
pub(crate) use view::{APPENDED, CommandView, dispatched};

use std::fmt::Write as _;

use crate::argv::Arg;
use crate::pattern::glob_match;
use scan::{Stop, Tables, scan};

/// What follows an option in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Val {
    /// No value (or, in a rule, any value).
    Flag,
    /// A known value (in a rule, a glob).
    Known(String),
    /// A value only known at run time.
    Unknown,
}

/// One option in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Opt {
    /// A global option of a program with subcommands (`git -C`, `kubectl -n`).
    pub global: bool,
    /// The canonical name (`r`, `force-with-lease`; as written for options not in the table).
    pub name: String,
    /// Its value.
    pub val: Val,
}

/// A command line in canonical form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Canonical {
    /// Options, sorted.
    pub options: Vec<Opt>,
    /// Operands in order (a subcommand first); `None` for one only known at run time.
    pub operands: Vec<Option<String>>,
    /// A word only known at run time stands where options are read: it may be any of them.
    pub open: bool,
    /// How many operands came before `--`, where that is meaning.
    pub dashdash: Option<usize>,
    /// The command's table gives `--` meaning.
    pub dashdash_matters: bool,
    /// Options are written after one dash (`find -delete`).
    pub dash_long: bool,
}

impl Canonical {
    fn push(&mut self, o: Opt) {
        if let Err(at) = self.options.binary_search(&o) {
            self.options.insert(at, o);
        }
    }

    /// `-r`, `--force-with-lease=main`, `-delete`.
    fn option_text(&self, o: &Opt) -> String {
        let mut s = if o.name.chars().count() == 1 {
            format!("-{}", o.name)
        } else if o.name.starts_with(['-', '+']) {
            o.name.clone()
        } else if self.dash_long {
            format!("-{}", o.name)
        } else {
            format!("--{}", o.name)
        };
        match &o.val {
            Val::Flag => {}
            Val::Known(v) => {
                s.push('=');
                s.push_str(v);
            }
            Val::Unknown => s.push_str("=<run time>"),
        }
        s
    }

    /// The form for people: `git push [-f] origin x`.
    pub fn describe(&self) -> String {
        let options: Vec<String> = self.options.iter().map(|o| self.option_text(o)).collect();
        let operands: Vec<&str> = self
            .operands
            .iter()
            .map(|o| o.as_deref().unwrap_or("<run time>"))
            .collect();
        let mut s = format!(
            "options [{}] operands [{}]",
            options.join(" "),
            operands.join(" ")
        );
        if let Some(n) = self.dashdash.filter(|_| self.dashdash_matters) {
            let _ = write!(s, " (`--` after {n} operand(s))");
        }
        if self.open {
            s.push_str(" (a word only known at run time may add options)");
        }
        s
    }
}

/// The words of `args` as the canonical reading needs them: a word bash may expand is unknown,
/// and may hold options when it could start with `-` or split into several words (a last quoted
/// `"$f"` is one operand).
pub(crate) fn words(args: &[Arg]) -> Vec<Word<'_>> {
    args.iter()
        .enumerate()
        .map(|(i, a)| {
            if uncertain(a) {
                let may = (a.option_like() || a.raw.contains("{-") || a.raw.contains(",-"))
                    && (!a.raw.starts_with('"') || i + 1 < args.len() || expands_to_words(&a.raw));
                Word {
                    value: None,
                    may_hold_options: may || (a.get().is_some() && a.raw.starts_with('-')),
                }
            } else {
                Word::known(a.get().unwrap_or_default())
            }
        })
        .collect()
}

/// The canonical form of `words` (after the program name) under `p`; a rule's words get no
/// default operand.
pub(crate) fn canonical(program: &Program, words: &[Word<'_>], is_rule: bool) -> Canonical {
    let mut canon = Canonical {
        dash_long: program.table.dash_long,
        ..Canonical::default()
    };
    let Some(subs) = program.subcommands else {
        let tables = Tables {
            own: program.table,
            globals: None,
            own_is_global: false,
        };
        scan(tables, words, &mut canon, Stop::Never, &|_| false);
        let table = program.table;
        if !table.value_means.is_empty() {
            let options = std::mem::take(&mut canon.options);
            for o in options {
                match &o.val {
                    Val::Known(v) if let Some(m) = table.meant_by(&o.name, v) => canon.push(Opt {
                        global: o.global,
                        name: m.to_owned(),
                        val: Val::Flag,
                    }),
                    _ => canon.push(o),
                }
            }
        }
        if !is_rule
            && canon.operands.is_empty()
            && let Some(d) = program.table.default_operand
        {
            canon.operands.push(Some(d.to_owned()));
        }
        canon.dashdash_matters = program.table.dashdash;
        return canon;
    };
    let mut words = words;
    if subs.toolchain
        && let Some(v) = words.first().and_then(|w| w.value)
        && let Some(toolchain) = v.strip_prefix('+')
    {
        canon.push(Opt {
            global: true,
            name: "+".into(),
            val: Val::Known(toolchain.to_owned()),
        });
        words = &words[1..];
    }
    // An option the table does not know may take the next word, unless that names a command.
    let unknown_value = |next: &str| !subs.abbreviated.is_empty() && !subs.knows(next);
    let globals = Tables {
        own: program.table,
        globals: None,
        own_is_global: true,
    };
    let i = scan(globals, words, &mut canon, Stop::AtOperand, &unknown_value);
    let Some(w) = words.get(i) else { return canon };
    let rest = &words[i + 1..];
    let Some(v) = w.value else {
        canon.open |= w.may_hold_options;
        canon.operands.push(None);
        literal(rest, &mut canon);
        return canon;
    };
    let two_words = rest.first().and_then(|n| n.value).and_then(|next| {
        subs.aliases
            .iter()
            .find(|(from, _)| from.split_once(' ') == Some((v, next)))
    });
    let (sub, rest) = match two_words {
        Some((_, to)) => ((*to).to_owned(), &rest[1..]),
        None => (subs.resolve(v).into_owned(), rest),
    };
    let sub_table = (subs.table)(&sub);
    canon.operands.push(Some(sub));
    match sub_table {
        Some(table) => {
            let tables = Tables {
                own: table,
                globals: subs.globals_anywhere.then_some(program.table),
                own_is_global: false,
            };
            scan(tables, rest, &mut canon, Stop::Never, &|_| false);
            canon.dashdash_matters = table.dashdash;
            canon.dash_long = table.dash_long;
        }
        None => literal(rest, &mut canon),
    }
    canon
}

/// Words of a subcommand without a table: operands as written.
fn literal(rest: &[Word<'_>], c: &mut Canonical) {
    c.operands.extend(rest.iter().map(|w| w.value.map(str::to_owned)));
}

/// Whether a command in canonical form `cmd` meets a rule in canonical form `rule` (`rest`: the
/// rule ends in `*`). With `possibly`, a word only known at run time may be anything: an option,
/// a value, any number of operands.
pub(crate) fn rule_matches(rule: &Canonical, rest: bool, cmd: &Canonical, possibly: bool) -> bool {
    let val_ok = |r: &Val, c: &Val| match (r, c) {
        (Val::Flag | Val::Unknown, _) => true,
        (Val::Known(g), Val::Known(v)) => glob_match(g.as_bytes(), v.as_bytes(), false),
        (Val::Known(_), Val::Unknown) => possibly,
        (Val::Known(_), Val::Flag) => false,
    };
    let covered = |r: &Opt| {
        cmd.options
            .iter()
            .any(|c| c.name == r.name && c.global == r.global && val_ok(&r.val, &c.val))
    };
    let mut options = rule.options.iter().all(covered);
    if options && !rest {
        // Without a trailing `*`, the command has no option the rule does not name (global
        // options of a program with subcommands aside).
        options = cmd.options.iter().filter(|c| !c.global).all(|c| {
            rule.options
                .iter()
                .any(|r| r.name == c.name && !r.global && val_ok(&r.val, &c.val))
        });
    }
    if !(options || possibly && cmd.open) {
        return false;
    }
    let unknown = possibly && cmd.operands.iter().any(Option::is_none);
    let count = if rest || unknown {
        cmd.operands.len() >= rule.operands.len() || unknown
    } else {
        cmd.operands.len() == rule.operands.len()
    };
    if !count {
        return false;
    }
    for (r, o) in rule.operands.iter().zip(&cmd.operands) {
        match (r, o) {
            // A word only known at run time may be any number of words: what follows it may
            // stand anywhere.
            (_, None) => return possibly,
            (Some(r), Some(o)) if !glob_match(r.as_bytes(), o.as_bytes(), false) => return false,
            _ => {}
        }
    }
    !cmd.dashdash_matters || rule.dashdash.is_none() || rule.dashdash == cmd.dashdash || unknown
}

/// Whether bash may turn the word into something other than its literal text: an expansion, or
/// an unquoted glob or brace list.
pub(crate) fn uncertain(a: &Arg) -> bool {
    if a.get().is_none() {
        return true;
    }
    let mut quote = None;
    let mut escaped = false;
    let raw = a.raw.as_bytes();
    for (i, &c) in raw.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (None, b'\\') => escaped = true,
            (None, b'\'' | b'"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'*' | b'?' | b'[') => return true,
            (None, b'{')
                if raw[i..].contains(&b'}')
                    && (raw[i..].contains(&b',') || raw[i..].windows(2).any(|w| w == b"..")) =>
            {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Whether bash may split the word into several words (or none): an unquoted expansion, glob or
/// brace list. A word standing for text only known at run time that the analysis names itself
/// (`(the words appended at run time)`) may too; a shell word cannot start with `(`.
pub(crate) fn may_split(a: &Arg) -> bool {
    if a.raw.starts_with('(') {
        return true;
    }
    if !uncertain(a) {
        return false;
    }
    let raw = a.raw.as_bytes();
    let mut quote = None;
    let mut escaped = false;
    for (i, &c) in raw.iter().enumerate() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (None | Some(b'"'), b'\\') => escaped = true,
            (None, b'\'' | b'"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, b'`' | b'*' | b'?' | b'[') => return true,
            (None, b'$') if raw.get(i + 1).is_some_and(|n| !matches!(n, b'\'' | b'"')) => return true,
            (None, b'{') if raw[i..].contains(&b'}') => return true,
            _ => {}
        }
    }
    expands_to_words(&a.raw)
}

/// Whether the text holds an expansion that gives several words even in double quotes: `"$@"`,
/// `"${arr[@]}"`, `"${@:2}"`, `"${!prefix@}"`.
fn expands_to_words(raw: &str) -> bool {
    raw.contains("$@")
        || raw.match_indices("${").any(|(i, _)| {
            let inner = &raw[i + 2..];
            let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
            inner.starts_with('@')
                || inner.contains("[@]")
                || (inner.starts_with('!') && inner.ends_with('@'))
        })
}

/// The form deny rules match `argv` in, for `shellgate check --explain`.
pub fn canonical_form(argv: &[String]) -> String {
    let args: Vec<Arg> = argv.iter().map(|a| Arg::literal(a)).collect();
    let Some(name) = argv.first().map(|n| crate::argv::basename(n)) else {
        return String::new();
    };
    match program(name) {
        Some(p) => describe(p, &args[1..]),
        None => format!("`{name}` has no option table: rules match its words as written"),
    }
}

/// `NAME options [...] operands [...] (option order and spelling free)`.
pub(crate) fn describe(p: &Program, args: &[Arg]) -> String {
    let c = canonical(p, &words(args), false);
    let globals = if p.subcommands.is_some() {
        "; global options may stand anywhere before the subcommand"
    } else {
        ""
    };
    format!(
        "{} {} (option order and spelling free{globals})",
        p.name,
        c.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, s: &str) -> Canonical {
        let args: Vec<Arg> = s.split_whitespace().map(Arg::literal).collect();
        canonical(program(name).unwrap(), &words(&args), false)
    }

    #[test]
    fn spellings_agree() {
        let rf = c("rm", "-rf x");
        for s in [
            "-fr x",
            "-r -f x",
            "-Rf x",
            "--recursive --force x",
            "--rec --forc x",
            "-f -R x",
        ] {
            assert_eq!(c("rm", s), rf, "{s}");
        }
        assert_eq!(c("rm", "-- -rf").operands, [Some("-rf".to_owned())]);
        assert!(c("chmod", "-x f").options.is_empty());
        assert_eq!(c("cp", "-t /d a").operands, [Some("a".to_owned())]);
        assert_eq!(c("curl", "-XDELETE u"), c("curl", "--request=DELETE u"));
        assert_eq!(c("find", "-delete").operands, [Some(".".to_owned())]);
    }

    #[test]
    fn subcommands_behind_global_options() {
        let push = c("git", "push -f origin x");
        assert_eq!(push.operands[0].as_deref(), Some("push"));
        let with_globals = c("git", "-C . -c a=b --no-pager push origin x --force");
        assert!(rule_matches(&push, true, &with_globals, false));
        assert_eq!(
            c("git", "send-pack --force origin x").operands[0].as_deref(),
            Some("push")
        );
        assert_eq!(c("npm", "--tag next i x").operands[0].as_deref(), Some("install"));
        assert_eq!(
            c("docker", "container rm -f x").operands,
            c("docker", "rm -f x").operands
        );
        assert_eq!(c("cargo", "+nightly b").operands[0].as_deref(), Some("build"));
    }

    #[test]
    fn forms_for_people() {
        let form = |s: &str| canonical_form(&s.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(form("rm -fR --verbose x"), form("rm -v -r -f x"));
        let git = form("git -C . push -f");
        assert!(git.contains("operands [push]") && git.contains("-f"), "{git}");
        assert!(form("tar xf a").contains("no option table"));
    }

    #[test]
    fn uncertain_words() {
        let quoted = Arg {
            value: Some("pus[h]".into()),
            raw: "'pus[h]'".into(),
            may_be_option: false,
        };
        assert!(uncertain(&Arg::literal("pus[h]")));
        assert!(uncertain(&Arg::literal("{push,origin}")));
        assert!(!uncertain(&quoted));
        assert!(!uncertain(&Arg::literal("push")));
    }
}
