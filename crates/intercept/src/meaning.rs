//! What a command means to a deny rule, whatever its spelling: short options split and merged
//! (`-rf` ≡ `-fr` ≡ `-r -f` ≡ `-Rf` for `rm`), long options and their unique abbreviations mapped
//! to one name (`--recursive` ≡ `-r`), option order free, `--` respected, git's global options
//! skipped to find its subcommand, and words only known at run time (`$x`, `$(…)`, `{a,b}`,
//! `pus[h]`) treated as possibly anything. Programs without a table keep literal matching.

use std::collections::BTreeSet;

use crate::argv::Arg;
use crate::getopt::long_may_be;

/// A program's options, as far as a rule needs them.
pub(crate) struct Table {
    /// Short letters that mean another (`R` is `r` for `rm`).
    same: &'static [(char, char)],
    /// Long options and the short letter they mean (`recursive` → `r`); others keep their name.
    long: &'static [(&'static str, char)],
    /// Short letters that take a value (the rest of the word, or the next word).
    valued_short: &'static str,
    /// Long options that take a value (after `=`, or the next word).
    valued_long: &'static [&'static str],
    /// `chmod`: a word like `-x` or `-rw` is a mode operand, not options.
    modes: bool,
}

const RM: Table = Table {
    same: &[('R', 'r')],
    long: &[("recursive", 'r'), ("force", 'f'), ("dir", 'd'), ("verbose", 'v')],
    valued_short: "",
    valued_long: &[],
    modes: false,
};
const CP: Table = Table {
    same: &[('R', 'r')],
    long: &[
        ("recursive", 'r'),
        ("force", 'f'),
        ("archive", 'a'),
        ("verbose", 'v'),
        ("interactive", 'i'),
        ("no-clobber", 'n'),
        ("update", 'u'),
        ("link", 'l'),
        ("symbolic-link", 's'),
        ("target-directory", 't'),
        ("no-target-directory", 'T'),
    ],
    valued_short: "tS",
    valued_long: &[
        "target-directory",
        "suffix",
        "backup",
        "reflink",
        "sparse",
        "preserve",
    ],
    modes: false,
};
const MV: Table = Table {
    same: &[],
    long: &[
        ("force", 'f'),
        ("interactive", 'i'),
        ("no-clobber", 'n'),
        ("verbose", 'v'),
        ("update", 'u'),
        ("target-directory", 't'),
        ("no-target-directory", 'T'),
    ],
    valued_short: "tS",
    valued_long: &["target-directory", "suffix", "backup"],
    modes: false,
};
const CHMOD: Table = Table {
    same: &[],
    long: &[
        ("recursive", 'R'),
        ("verbose", 'v'),
        ("changes", 'c'),
        ("silent", 'f'),
        ("quiet", 'f'),
    ],
    valued_short: "",
    valued_long: &["reference"],
    modes: true,
};
const CHOWN: Table = Table {
    same: &[],
    long: &[
        ("recursive", 'R'),
        ("verbose", 'v'),
        ("changes", 'c'),
        ("silent", 'f'),
        ("quiet", 'f'),
        ("no-dereference", 'h'),
    ],
    valued_short: "",
    valued_long: &["reference", "from"],
    modes: false,
};

/// The option table of a program, by the name it is invoked as.
pub(crate) fn table(name: &str) -> Option<&'static Table> {
    Some(match name {
        "rm" => &RM,
        "cp" => &CP,
        "mv" => &MV,
        "chmod" => &CHMOD,
        "chown" | "chgrp" => &CHOWN,
        _ => return None,
    })
}

/// A command line in canonical form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Canonical {
    /// Options by canonical name (`r`, `f`, `--no-preserve-root`).
    pub options: BTreeSet<String>,
    /// Operands in order; `None` for one only known at run time.
    pub operands: Vec<Option<String>>,
    /// A word only known at run time stands where options are read: it may be any of them.
    pub open: bool,
}

/// The canonical form of `args` (after the program name) under `t`; a word is `None` when only
/// known at run time, and `may_be_options(i)` says whether that word could hold options.
pub(crate) fn canonical(
    t: &Table,
    args: &[Option<&str>],
    may_be_options: &dyn Fn(usize) -> bool,
) -> Canonical {
    let mut c = Canonical::default();
    let mut i = 0;
    let mut options_done = false;
    while let Some(word) = args.get(i) {
        i += 1;
        let Some(v) = *word else {
            if !options_done && may_be_options(i - 1) {
                c.open = true;
            }
            c.operands.push(None);
            continue;
        };
        if options_done || v == "-" || !v.starts_with('-') || (t.modes && is_mode(v)) {
            c.operands.push(Some(v.to_owned()));
            continue;
        }
        if v == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let full = t
                .long
                .iter()
                .map(|(l, _)| *l)
                .chain(t.valued_long.iter().copied())
                .find(|l| long_may_be(name, l))
                .unwrap_or(name);
            match t.long.iter().find(|(l, _)| *l == full) {
                Some((_, short)) => c.options.insert(short.to_string()),
                None => c.options.insert(format!("--{full}")),
            };
            if inline.is_none() && t.valued_long.contains(&full) {
                i += 1;
            }
            continue;
        }
        for (k, letter) in v[1..].char_indices() {
            let letter = t
                .same
                .iter()
                .find(|(a, _)| *a == letter)
                .map_or(letter, |(_, b)| *b);
            c.options.insert(letter.to_string());
            if t.valued_short.contains(letter) {
                // The value is the rest of the word, or the next word.
                if k + letter.len_utf8() == v.len() - 1 {
                    i += 1;
                }
                break;
            }
        }
    }
    c
}

/// `chmod` modes written like options: `-x`, `-rw`, `-w+x`.
fn is_mode(v: &str) -> bool {
    v.len() > 1 && v[1..].chars().all(|c| "rwxXstugoa+-=,0123456789".contains(c))
}

/// git's global options (before the subcommand), and whether each takes the next word.
const GIT_GLOBAL_VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
    "--config-env",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
];

/// `git` with its global options removed (`git -C . -c k=v --no-pager push` → `git push`), so
/// rules see the subcommand; `None` when there were none.
pub(crate) fn without_git_globals(argv: &[Arg]) -> Option<Vec<Arg>> {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else { break };
        if !v.starts_with('-') || v == "-" {
            break;
        }
        if v == "--" {
            i += 1;
            break;
        }
        let name = v.split('=').next().unwrap_or(v);
        i += if GIT_GLOBAL_VALUED.contains(&name) && !v.contains('=') {
            2
        } else {
            1
        };
    }
    (i > 1).then(|| {
        let mut out = vec![argv[0].clone()];
        out.extend(argv.get(i..).unwrap_or_default().iter().cloned());
        out
    })
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

/// The form deny rules match `argv` in, for `shellgate check --explain`.
pub fn canonical_form(argv: &[String]) -> String {
    let args: Vec<Arg> = argv.iter().map(|a| Arg::literal(a)).collect();
    let Some(name) = argv.first().map(|n| crate::argv::basename(n)) else {
        return String::new();
    };
    if name == "git" {
        let stripped = without_git_globals(&args).unwrap_or(args);
        let words: Vec<&str> = stripped.iter().filter_map(Arg::get).collect();
        return format!(
            "git by its subcommand (global options skipped): {}",
            words.join(" ")
        );
    }
    let Some(t) = table(name) else {
        return format!("`{name}` has no option table: rules match its words as written");
    };
    let words: Vec<Option<&str>> = argv[1..].iter().map(|a| Some(a.as_str())).collect();
    let c = canonical(t, &words, &|_| false);
    let options: Vec<String> = c
        .options
        .iter()
        .map(|o| {
            if o.starts_with("--") {
                o.clone()
            } else {
                format!("-{o}")
            }
        })
        .collect();
    let operands: Vec<&str> = c.operands.iter().flatten().map(String::as_str).collect();
    format!(
        "{name} options [{}] operands [{}] (option order and spelling free)",
        options.join(" "),
        operands.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(t: &Table, s: &str) -> Canonical {
        let words: Vec<&str> = s.split_whitespace().collect();
        canonical(t, &words.iter().map(|w| Some(*w)).collect::<Vec<_>>(), &|_| false)
    }

    #[test]
    fn spellings_agree() {
        let rf = c(&RM, "-rf x");
        for s in [
            "-fr x",
            "-r -f x",
            "-Rf x",
            "--recursive --force x",
            "--rec --forc x",
            "-f -R x",
        ] {
            assert_eq!(c(&RM, s), rf, "{s}");
        }
        assert_eq!(c(&RM, "-- -rf").operands, [Some("-rf".to_owned())]);
        assert!(c(&CHMOD, "-x f").options.is_empty());
        assert_eq!(c(&CP, "-t /d a").operands, [Some("a".to_owned())]);
    }

    #[test]
    fn git_globals_are_skipped() {
        let argv = |s: &str| s.split_whitespace().map(Arg::literal).collect::<Vec<_>>();
        let stripped =
            without_git_globals(&argv("git -C . -c a=b --no-pager --git-dir .git push x")).unwrap();
        assert_eq!(
            stripped.iter().filter_map(Arg::get).collect::<Vec<_>>(),
            ["git", "push", "x"]
        );
        assert!(without_git_globals(&argv("git push")).is_none());
        let form = |s: &str| canonical_form(&s.split_whitespace().map(str::to_owned).collect::<Vec<_>>());
        assert_eq!(form("rm -fR --verbose x"), form("rm -v -r -f x"));
        assert!(form("git -C . push").ends_with(": git push"));
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
