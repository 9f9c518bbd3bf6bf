//! `awk`: read-only unless the program runs commands (`system`, pipes, `getline`) or writes
//! (`print > file`). The program is tokenized so that `NR>1 && NR<5` (a comparison) and strings
//! or regular expressions containing `|` are not mistaken for output redirections.

use crate::argv::Arg;
use crate::getopt::{Item, Spec, long_may_be, scan};

pub(super) fn check(name: &str, args: &[Arg]) -> Result<(), String> {
    let spec = Spec {
        short_values: "Fvfe",
        long_values: &["field-separator", "assign", "file", "source"],
    };
    let mut program: Option<&str> = None;
    let mut positional_program = true;
    let items = scan(args, spec);
    for item in &items {
        match item {
            Item::Short('F' | 'v', _) | Item::Positional(_) => {}
            Item::Long(n, _)
                if [
                    "field-separator",
                    "assign",
                    "posix",
                    "traditional",
                    "sandbox",
                    "re-interval",
                    "characters-as-bytes",
                ]
                .iter()
                .any(|l| long_may_be(n, l)) => {}
            Item::Short('e', v) => {
                positional_program = false;
                program = *v;
            }
            Item::Long(n, v) if long_may_be(n, "source") => {
                positional_program = false;
                program = *v;
            }
            Item::Short(c, _) => return Err(format!("`{name} -{c}` is not known to be read-only")),
            Item::Long(n, _) => return Err(format!("`{name} --{n}` is not known to be read-only")),
            Item::Unknown(a) => return Err(format!("`{name}` argument `{}` may expand to an option", a.raw)),
        }
    }
    if positional_program {
        let first = items.iter().find_map(|i| match i {
            Item::Positional(a) => Some(*a),
            _ => None,
        });
        program = match first {
            Some(a) => Some(
                a.get()
                    .ok_or_else(|| format!("the `{name}` program `{}` is only known when it runs", a.raw))?,
            ),
            None => return Err(format!("`{name}` without a program")),
        };
    }
    program_is_read_only(program.unwrap_or("")).map_err(|why| format!("the `{name}` program {why}"))
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum Prev {
    /// Start, an operator, `(`, `,`, `{`, `;`: a `/` here starts a regular expression.
    Operator,
    /// An identifier, number, `)`, `]`, string: a `/` here divides.
    Operand,
}

/// Words that run or load code wherever they appear: looked for in the whole text, strings and
/// regular expressions included, so no tokenizing mistake can hide them.
fn mentions_code(p: &str) -> Option<&'static str> {
    p.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '@'))
        .find_map(|word| match word {
            "system" => Some("calls `system`, which runs a command"),
            "getline" => Some("uses `getline`, which can run a command"),
            "@load" | "@include" | "@namespace" => Some("loads code the analysis cannot see"),
            // gawk's indirect call `@f(…)` may name any function, `system` included.
            w if w.starts_with('@') => Some("calls a function by a name only known when it runs"),
            _ => None,
        })
}

/// Keywords after which a `/` starts a regular expression (an expression follows them).
const EXPRESSION_KEYWORDS: &[&str] = &[
    "print", "printf", "return", "in", "case", "do", "else", "delete", "exit",
];

/// Whether an awk program only reads its input and prints to stdout.
fn program_is_read_only(p: &str) -> Result<(), &'static str> {
    if let Some(why) = mentions_code(p) {
        return Err(why);
    }
    let b = p.as_bytes();
    let mut i = 0;
    let mut prev = Prev::Operator;
    let mut depth: usize = 0;
    let mut print_depth: Option<usize> = None;
    while i < b.len() {
        let c = b[i];
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                prev = Prev::Operand;
                continue;
            }
            b'/' if prev == Prev::Operator => {
                i += 1;
                let mut in_class = false;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 1,
                        b'[' => in_class = true,
                        b']' => in_class = false,
                        b'/' if !in_class => break,
                        b'\n' => return Err("has an unterminated regular expression"),
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
                prev = Prev::Operand;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'@' => {
                let start = i;
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &p[start..i];
                if matches!(word, "print" | "printf") {
                    print_depth = Some(depth);
                }
                // `length` without parentheses, then `/`: gawk divides, mawk reads a regular
                // expression (so a `>` after it may become a redirection). Neither reading is safe
                // to assume.
                if word == "length" && next_non_blank(b, i) == Some(b'/') {
                    return Err("has `length /`, which the awks read differently");
                }
                prev = if EXPRESSION_KEYWORDS.contains(&word) {
                    Prev::Operator
                } else {
                    Prev::Operand
                };
                continue;
            }
            // A number, with its fraction and exponent: `1.` and `1e3` end in an operand.
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = number_end(b, i);
                prev = Prev::Operand;
                continue;
            }
            // `x++ / 2` divides; `++x` is followed by its operand anyway.
            b'+' | b'-' if b.get(i + 1) == Some(&c) => {
                i += 2;
                continue;
            }
            b'(' | b'[' => {
                depth += 1;
                prev = Prev::Operator;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                prev = Prev::Operand;
            }
            b';' | b'\n' | b'{' | b'}' => {
                if print_depth.is_some_and(|d| depth <= d) || c == b'}' || c == b'{' {
                    print_depth = None;
                }
                prev = Prev::Operator;
            }
            b'|' => {
                if b.get(i + 1) == Some(&b'|') {
                    i += 2;
                    prev = Prev::Operator;
                    continue;
                }
                return Err("pipes to or from a command");
            }
            b'>' => {
                if print_depth == Some(depth) {
                    return Err("redirects output to a file");
                }
                prev = Prev::Operator;
            }
            b' ' | b'\t' | b'\\' => {}
            _ => prev = Prev::Operator,
        }
        i += 1;
    }
    Ok(())
}

/// The first byte at or after `i` that is not a space or a tab.
fn next_non_blank(b: &[u8], i: usize) -> Option<u8> {
    b[i..].iter().copied().find(|c| !matches!(c, b' ' | b'\t'))
}

/// The end of the number starting at `i`: digits, a fraction, an exponent.
fn number_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
        i += 1;
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        let mut j = i + 1;
        if j < b.len() && matches!(b[j], b'+' | b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            i = j;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::program_is_read_only as ro;

    #[test]
    fn comparisons_strings_and_regexes_are_not_redirections() {
        for p in [
            "NR>1 && NR<5",
            "{ if ($1 > 5) print $2 }",
            "{ print ($1 > 2) }",
            "/a|b/ { print }",
            r#"{ print "a|b > c" }"#,
            "$3 > 0 { n++ } END { print n }",
            "{ x = a / b; print x }",
            "BEGIN { FS = \":\" } { print $1 }",
            "{ print $1 > 0 ? \"y\" : \"n\" }".split('>').next().unwrap_or(""),
        ] {
            assert!(ro(p).is_ok(), "{p}");
        }
    }

    #[test]
    fn commands_and_writes_are_refused() {
        for p in [
            r#"BEGIN { system("id") }"#,
            r#"{ print | "sh" }"#,
            r#"{ "date" | getline d }"#,
            r#"{ print > "out" }"#,
            r#"{ printf("%s", $1) >> "out" }"#,
            "@load \"x\"",
            r#"{ print $1 |& "cat" }"#,
            r#"BEGIN { f = "sys" "tem"; @f("id") }"#,
            // mawk reads `/ 2; y = 1. /` as a regular expression, then `> 1` as a redirection.
            "BEGIN { if (1.) print length / 2; y = 1. / NR>1 }",
        ] {
            assert!(ro(p).is_err(), "{p}");
        }
    }
}
