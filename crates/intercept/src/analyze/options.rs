//! Reading a wrapper's options exactly, from a table of them (the format of `meaning::Table`):
//! clustered short options, values attached or in the next word, optional values (attached or
//! after `=` only), unique abbreviations of long options where the program accepts them, and
//! either POSIX order (options end at the first operand, as with getopt's `+`) or GNU order
//! (options and operands mix until `--`). A word the table does not know, an ambiguous
//! abbreviation or an option word only known at run time makes the command line unreadable: the
//! caller then fails closed.

use crate::argv::Arg;
use crate::meaning::{Kind, Long, Table};

/// Where options may stand.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    /// Options end at the first operand (getopt's `+`: `env`, `sudo`, `timeout`).
    Posix,
    /// Options and operands mix until `--` (`script`, `su`).
    Gnu,
}

/// A command line's options as the program reads them.
#[derive(Debug, Default)]
pub(super) struct Read {
    /// The index of the first word after the options (POSIX order), or of the end.
    pub end: usize,
    /// Options in order: canonical name and value.
    pub options: Vec<(String, Option<Arg>)>,
    /// The indexes of operands (GNU order; in POSIX order the operands start at `end`).
    pub operands: Vec<usize>,
}

impl Read {
    /// Whether the option `name` (canonical) was given.
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    /// The value of the last `name` option given.
    pub fn value(&self, name: &str) -> Option<&Arg> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref())
    }
}

/// Why a command line's options cannot be read, and where.
#[derive(Debug)]
pub(super) struct Unreadable {
    /// The index of the word.
    pub at: usize,
    /// Why, for people.
    pub why: String,
}

/// Read the options of `argv` from index `from` under `table`; `program` names it in messages.
pub(super) fn read(
    argv: &[Arg],
    from: usize,
    table: &Table,
    order: Order,
    program: &str,
) -> Result<Read, Unreadable> {
    read_until(argv, from, table, order, program, None)
}

/// Like [`read`], but reading stops right after the option `stop` (canonical name): `end` is then
/// the index after it and its value (`env -S STRING` puts the string's words there).
pub(super) fn read_until(
    argv: &[Arg],
    from: usize,
    table: &Table,
    order: Order,
    program: &str,
    stop: Option<&str>,
) -> Result<Read, Unreadable> {
    let mut read = Read {
        end: argv.len(),
        ..Read::default()
    };
    let unreadable = |at: usize, why: String| Err(Unreadable { at, why });
    let mut i = from;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            if a.may_be_option {
                return unreadable(
                    i,
                    format!("the `{program}` option `{}` is only known when it runs", a.raw),
                );
            }
            if order == Order::Posix {
                read.end = i;
                return Ok(read);
            }
            read.operands.push(i);
            i += 1;
            continue;
        };
        if v == "--" {
            match order {
                Order::Posix => read.end = i + 1,
                Order::Gnu => read.operands.extend(i + 1..argv.len()),
            }
            return Ok(read);
        }
        if v == "-" || !v.starts_with('-') {
            if order == Order::Posix {
                read.end = i;
                return Ok(read);
            }
            read.operands.push(i);
            i += 1;
            continue;
        }
        i += 1;
        if let Some(long) = v.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, x)| (n, Some(x)));
            let e = match table.long(name) {
                Long::Found(e) => e,
                Long::Ambiguous => {
                    return unreadable(i - 1, format!("`{v}` is an ambiguous option of `{program}`"));
                }
                Long::Unknown => {
                    return unreadable(
                        i - 1,
                        format!("`{v}` is not an option of `{program}` this policy knows"),
                    );
                }
            };
            let value = match (e.kind, inline) {
                (Kind::Flag, Some(_)) => {
                    return unreadable(i - 1, format!("`{v}`: the `{program}` option takes no value"));
                }
                (_, Some(x)) => Some(Arg::literal(x)),
                (Kind::Value | Kind::UntilTerminator, None) => match argv.get(i) {
                    Some(next) => {
                        i += 1;
                        Some(next.clone())
                    }
                    None => return unreadable(i - 1, format!("`{v}` lacks its value")),
                },
                (Kind::Flag | Kind::Optional, None) => None,
            };
            read.options.push((e.name.clone(), value));
            if stop == Some(e.name.as_str()) {
                read.end = i;
                return Ok(read);
            }
            continue;
        }
        let letters = &v[1..];
        for (k, c) in letters.char_indices() {
            let Some(e) = table.short(c) else {
                return unreadable(
                    i - 1,
                    format!("`-{c}` (in `{v}`) is not an option of `{program}` this policy knows"),
                );
            };
            let rest = &letters[k + c.len_utf8()..];
            match e.kind {
                Kind::Flag => read.options.push((e.name.clone(), None)),
                Kind::Optional => {
                    let value = (!rest.is_empty()).then(|| Arg::literal(rest));
                    read.options.push((e.name.clone(), value));
                    break;
                }
                Kind::Value | Kind::UntilTerminator => {
                    let value = if rest.is_empty() {
                        let Some(next) = argv.get(i) else {
                            return unreadable(i - 1, format!("`{v}` lacks its value"));
                        };
                        i += 1;
                        next.clone()
                    } else {
                        Arg::literal(rest)
                    };
                    read.options.push((e.name.clone(), Some(value)));
                    break;
                }
            }
            if stop == Some(e.name.as_str()) {
                read.end = i;
                return Ok(read);
            }
        }
    }
    Ok(read)
}

/// The command lines a wrapper whose options cannot be read from `at` on may run: each tail of
/// `argv` from there that starts with a word that is no option (at most 16).
pub(super) fn tails(argv: &[Arg], at: usize) -> Vec<Vec<Arg>> {
    (at..argv.len())
        .filter(|&k| k == at && argv[k].is_dynamic() || !argv[k].option_like())
        .take(16)
        .map(|k| argv[k..].to_vec())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    static ENV: Table =
        Table::new("i|ignore-environment u|unset= S|split-string= default-signal? ignore-signal? v|debug")
            .abbreviations();

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn clusters_values_and_optional_values() {
        let a = args("env -vS x --default-signal git push");
        let r = read(&a, 1, &ENV, Order::Posix, "env").unwrap();
        assert_eq!(r.end, 4);
        assert!(r.has("v") && r.has("default-signal"));
        assert_eq!(r.value("S").and_then(Arg::get), Some("x"));
        let a = args("env -uHOME --def=INT --ign git");
        assert!(read(&a, 1, &ENV, Order::Posix, "env").is_err());
        let a = args("env -uHOME --def=INT --ignore-e git");
        let r = read(&a, 1, &ENV, Order::Posix, "env").unwrap();
        assert_eq!(r.end, 4);
        assert_eq!(r.value("u").and_then(Arg::get), Some("HOME"));
        assert!(read(&args("env -x git"), 1, &ENV, Order::Posix, "env").is_err());
        let r = read(&args("env f -i g -- -u"), 1, &ENV, Order::Gnu, "env").unwrap();
        assert_eq!(r.operands, [1, 3, 5]);
    }
}
