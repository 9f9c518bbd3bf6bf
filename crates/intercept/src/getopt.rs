//! GNU getopt conventions: clustered short options, `--name=value`, and unique prefixes of long
//! options (`--compress-prog` is `--compress-program`).

use crate::argv::Arg;

/// Whether `name` (after `--`, before `=`) denotes the long option `full` among the known
/// options `a` and `b`: exactly, or as a prefix no other known option shares.
pub(crate) fn long_is(name: &str, full: &str, a: &[&str], b: &[&str]) -> bool {
    if name == full {
        return true;
    }
    if name.is_empty() || !full.starts_with(name) {
        return false;
    }
    let exact_other = a.iter().chain(b).any(|o| *o == name);
    let others = a
        .iter()
        .chain(b)
        .filter(|o| **o != full && o.starts_with(name))
        .count();
    !exact_other && others == 0
}

/// Whether `name` could denote the long option `full` in a program whose other options are not
/// all known: any non-empty prefix counts. Used for dangerous options, where an ambiguous
/// abbreviation is rejected by the program anyway and a unique one is the option itself.
pub(crate) fn long_may_be(name: &str, full: &str) -> bool {
    !name.is_empty() && full.starts_with(name)
}

/// One item of a scanned command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item<'a> {
    /// `-x`, with its value if the letter takes one (`None` for a value only known at run time).
    Short(char, Option<&'a str>),
    /// `--name` or `--name=value` (the value of a value-taking option may be the next word;
    /// `None` when that word is only known at run time).
    Long(&'a str, Option<&'a str>),
    /// A positional argument (static or not).
    Positional(&'a Arg),
    /// A dynamic word that may expand to an option: the scan cannot know which.
    Unknown(&'a Arg),
}

/// Value-taking options of a program.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spec<'a> {
    /// Short letters that take a value (attached or the next word).
    pub short_values: &'a str,
    /// Long options that take a value (`=value` or the next word).
    pub long_values: &'a [&'a str],
}

/// Scan `args` (the arguments after the command name) GNU style: options may follow positionals
/// until `--`.
pub(crate) fn scan<'a>(args: &'a [Arg], spec: Spec<'_>) -> Vec<Item<'a>> {
    let mut out = Vec::with_capacity(args.len());
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(v) = a.get() else {
            out.push(if !options_done && a.may_be_option {
                Item::Unknown(a)
            } else {
                Item::Positional(a)
            });
            continue;
        };
        if options_done || v == "-" || !v.starts_with('-') {
            out.push(Item::Positional(a));
            continue;
        }
        if v == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            if let Some((n, val)) = long.split_once('=') {
                out.push(Item::Long(n, Some(val)));
            } else {
                let takes = spec
                    .long_values
                    .iter()
                    .any(|l| long_is(long, l, spec.long_values, &[]));
                let val = if takes {
                    let next = args.get(i);
                    i += 1;
                    value_word(next)
                } else {
                    None
                };
                out.push(Item::Long(long, val));
            }
            continue;
        }
        let letters = &v[1..];
        for (pos, c) in letters.char_indices() {
            if spec.short_values.contains(c) {
                let attached = &letters[pos + c.len_utf8()..];
                if attached.is_empty() {
                    let next = args.get(i);
                    i += 1;
                    out.push(Item::Short(c, value_word(next)));
                } else {
                    out.push(Item::Short(c, Some(attached)));
                }
                break;
            }
            out.push(Item::Short(c, None));
        }
    }
    out
}

/// The value an option takes from the next word: `None` when the word is only known at run time,
/// empty when there is none (the program then refuses the command line).
fn value_word(next: Option<&Arg>) -> Option<&str> {
    match next {
        Some(a) => a.get(),
        None => Some(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn unique_prefixes() {
        let opts = ["compress-program", "check", "output"];
        assert!(long_is("compress-prog", "compress-program", &opts, &[]));
        assert!(!long_is("c", "compress-program", &opts, &[]));
        assert!(long_may_be("c", "compress-program"));
        assert!(!long_may_be("", "compress-program"));
        assert!(!long_may_be("outputx", "output"));
    }

    #[test]
    fn scanning() {
        let a = args("-nto x --key=1 --output f -- -z");
        let items = scan(
            &a,
            Spec {
                short_values: "to",
                long_values: &["output"],
            },
        );
        assert_eq!(
            items,
            vec![
                Item::Short('n', None),
                Item::Short('t', Some("o")),
                Item::Positional(&a[1]),
                Item::Long("key", Some("1")),
                Item::Long("output", Some("f")),
                Item::Positional(&a[6]),
            ]
        );
    }
}
