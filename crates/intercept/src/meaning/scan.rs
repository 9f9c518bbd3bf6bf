//! Reading a command line into its canonical form under an option table.

use super::table::{Entry, Kind, Long, Table};
use super::{Canonical, Opt, Val};

/// One word of the command line as far as it is known before it runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Word<'a> {
    /// Its value, when known.
    pub value: Option<&'a str>,
    /// For a word only known at run time: whether it may hold options (it may split into
    /// several words, or start with `-`).
    pub may_hold_options: bool,
}

impl<'a> Word<'a> {
    /// A word known to be `v`.
    pub fn known(v: &'a str) -> Self {
        Self {
            value: Some(v),
            may_hold_options: false,
        }
    }
}

/// Where reading stops.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// At the first operand (a program's global options end at its subcommand).
    AtOperand,
    /// At the end of the words.
    Never,
}

/// The tables a scan consults: the command's own, then (options that may also stand there) the
/// program's global ones, whose options are marked global.
#[derive(Clone, Copy)]
pub(crate) struct Tables<'t> {
    pub own: &'t Table,
    pub globals: Option<&'t Table>,
    /// Options read through `own` are the program's global ones.
    pub own_is_global: bool,
}

impl Tables<'_> {
    fn short(&self, c: char) -> Option<(&Entry, bool)> {
        self.own
            .short(c)
            .map(|e| (e, self.own_is_global))
            .or_else(|| self.globals.and_then(|g| g.short(c)).map(|e| (e, true)))
    }

    fn long(&self, name: &str) -> (Long<'_>, bool) {
        match self.own.long(name) {
            Long::Unknown => match self.globals.map(|g| g.long(name)) {
                Some(found @ (Long::Found(_) | Long::Ambiguous)) => (found, true),
                _ => (Long::Unknown, self.own_is_global),
            },
            found => (found, self.own_is_global),
        }
    }
}

/// Read `words` into `c` under `t`, from the start; returns the index where reading stopped.
/// `unknown_value(next)`: whether an option the tables do not know takes the next word `next` as
/// its value.
pub(crate) fn scan(
    tables: Tables<'_>,
    words: &[Word<'_>],
    canon: &mut Canonical,
    stop: Stop,
    unknown_value: &dyn Fn(&str) -> bool,
) -> usize {
    let table = tables.own;
    let mut i = 0;
    let mut options_done = false;
    while let Some(w) = words.get(i) {
        i += 1;
        let Some(v) = w.value else {
            if !options_done && w.may_hold_options {
                canon.open = true;
            }
            if stop == Stop::AtOperand {
                return i - 1;
            }
            canon.operands.push(None);
            continue;
        };
        if !options_done && table.dash_long && matches!(v, "(" | ")" | "!" | ",") {
            continue;
        }
        if options_done || v == "-" || !v.starts_with('-') || (table.modes && is_mode(v)) {
            if stop == Stop::AtOperand {
                return i - 1;
            }
            canon.operands.push(Some(v.to_owned()));
            if table.posix {
                options_done = true;
            }
            continue;
        }
        if v == "--" {
            options_done = true;
            if stop == Stop::AtOperand {
                return i;
            }
            if table.dashdash {
                canon.dashdash = Some(canon.operands.len());
            }
            continue;
        }
        let long = if table.dash_long && v.chars().count() > 2 {
            Some((&v[1..], None))
        } else {
            v.strip_prefix("--")
                .map(|l| l.split_once('=').map_or((l, None), |(n, x)| (n, Some(x))))
        };
        if let Some((name, inline)) = long {
            match tables.long(name) {
                (Long::Found(e), global) => option(e, global, inline, words, &mut i, canon),
                (Long::Ambiguous | Long::Unknown, global) => {
                    let val = match inline {
                        Some(x) => Val::Known(x.to_owned()),
                        None => match words.get(i).and_then(|w| w.value) {
                            Some(next) if !next.starts_with('-') && unknown_value(next) => {
                                i += 1;
                                Val::Known(next.to_owned())
                            }
                            _ => Val::Flag,
                        },
                    };
                    let dashes = if table.dash_long { "-" } else { "--" };
                    canon.push(Opt {
                        global,
                        name: format!("{dashes}{name}"),
                        val,
                    });
                }
            }
            continue;
        }
        for (k, letter) in v[1..].char_indices() {
            let Some((e, global)) = tables.short(letter) else {
                canon.push(Opt {
                    global: tables.own_is_global,
                    name: letter.to_string(),
                    val: Val::Flag,
                });
                continue;
            };
            if e.kind == Kind::Value {
                // The value is the rest of the word, or the next word.
                let rest = &v[1 + k + letter.len_utf8()..];
                let inline = (!rest.is_empty()).then_some(rest);
                option(e, global, inline, words, &mut i, canon);
                break;
            }
            option(e, global, None, words, &mut i, canon);
        }
    }
    i
}

/// Record the option `e` (with `inline`, its attached value), taking its value from the words
/// after `*i` when it needs one.
fn option(
    e: &Entry,
    global: bool,
    inline: Option<&str>,
    words: &[Word<'_>],
    i: &mut usize,
    c: &mut Canonical,
) {
    let val = match (e.kind, inline) {
        (Kind::Flag | Kind::Optional, None) => Val::Flag,
        (_, Some(x)) => Val::Known(x.to_owned()),
        (Kind::Value, None) => match words.get(*i) {
            Some(w) => {
                *i += 1;
                w.value.map_or(Val::Unknown, |x| Val::Known(x.to_owned()))
            }
            None => Val::Flag,
        },
        (Kind::UntilTerminator, None) => {
            let start = *i;
            let mut end = start;
            while let Some(w) = words.get(end) {
                match w.value {
                    Some(";") => break,
                    Some("+") if end > start && words[end - 1].value == Some("{}") => break,
                    _ => end += 1,
                }
            }
            *i = (end + 1).min(words.len()).max(start);
            let known: Option<Vec<&str>> = words[start..end].iter().map(|w| w.value).collect();
            match known {
                Some(k) if k.is_empty() => Val::Flag,
                Some(k) => Val::Known(k.join(" ")),
                None => Val::Unknown,
            }
        }
    };
    if e.means.is_empty() {
        c.push(Opt {
            global,
            name: e.name.clone(),
            val,
        });
    } else {
        for m in &e.means {
            c.push(Opt {
                global,
                name: m.clone(),
                val: Val::Flag,
            });
        }
    }
}

/// `chmod` modes written like options: `-x`, `-rw`, `-w+x`.
fn is_mode(v: &str) -> bool {
    v.len() > 1 && v[1..].chars().all(|c| "rwxXstugoa+-=,0123456789".contains(c))
}
