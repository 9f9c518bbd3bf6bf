//! `awk`: read-only unless the program runs commands (`system`, pipes, `getline`), writes
//! (`print > file`) or opens a connection (gawk's `/inet/…` files, as an operand or through
//! `ARGV`). The program is tokenized so that `NR>1 && NR<5` (a comparison) and strings or regular
//! expressions containing `|` are not mistaken for output redirections. Every source (`-e`,
//! `--source`) is judged, joined as gawk joins them; where mawk and gawk read a `/` differently
//! (after the condition of an `if`, `while` or `for`: gawk a regular expression, mawk a division)
//! both readings are judged.

use crate::argv::Arg;
use crate::getopt::{Item, Spec, long_may_be, scan};

pub(super) fn check(name: &str, args: &[Arg]) -> Result<(), String> {
    let spec = Spec {
        short_values: "Fvfe",
        long_values: &["field-separator", "assign", "file", "source"],
    };
    let mut sources: Vec<&str> = Vec::new();
    let mut positional_program = true;
    let mut operands: Vec<&Arg> = Vec::new();
    let dynamic_source = || format!("a `{name}` program source is only known when it runs");
    for item in &scan(args, spec) {
        match item {
            Item::Short('F' | 'v', _) => {}
            Item::Positional(a) => operands.push(a),
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
                sources.push(v.ok_or_else(dynamic_source)?);
            }
            Item::Long(n, v) if long_may_be(n, "source") => {
                positional_program = false;
                sources.push(v.ok_or_else(dynamic_source)?);
            }
            Item::Short(c, _) => return Err(format!("`{name} -{c}` is not known to be read-only")),
            Item::Long(n, _) => return Err(format!("`{name} --{n}` is not known to be read-only")),
            Item::Unknown(a) => return Err(format!("`{name}` argument `{}` may expand to an option", a.raw)),
        }
    }
    if positional_program {
        let Some((first, rest)) = operands.split_first() else {
            return Err(format!("`{name}` without a program"));
        };
        sources.push(
            first
                .get()
                .ok_or_else(|| format!("the `{name}` program `{}` is only known when it runs", first.raw))?,
        );
        operands = rest.to_vec();
    }
    for a in operands {
        if may_name_a_network_file(a) {
            return Err(format!(
                "the `{name}` operand `{}` may name a network connection (gawk's `/inet/…`)",
                a.raw
            ));
        }
    }
    // gawk reads its sources one after another, a newline between them.
    program_is_read_only(&sources.join("\n")).map_err(|why| format!("the `{name}` program {why}"))
}

/// Whether an operand may be one of gawk's network files (`/inet/tcp/…`, `/inet4/…`,
/// `/inet6/…`), which gawk connects to when it reads them. A word only known at run time counts
/// unless its fixed start rules it out (`src/*.txt`).
fn may_name_a_network_file(a: &Arg) -> bool {
    let start: String = match a.get() {
        Some(v) => v.chars().take(5).collect(),
        // The literal start of the word as written, quotes dropped, up to the first expansion.
        None => a
            .raw
            .chars()
            .filter(|c| !matches!(c, '\'' | '"'))
            .take_while(|c| !matches!(c, '$' | '`' | '*' | '?' | '[' | '{' | '~' | '\\'))
            .take(5)
            .collect(),
    };
    let known = a.get().is_some() || start.len() >= 5;
    if known {
        start == "/inet"
    } else {
        "/inet".starts_with(&start)
    }
}

/// How a `/` here is read.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
enum Prev {
    /// Start, an operator, `(`, `,`, `{`, `;`: a `/` here starts a regular expression.
    Operator,
    /// An identifier, number, `)`, `]`, string: a `/` here divides.
    Operand,
    /// After the condition of an `if`, `while` or `for`: gawk starts a regular expression, mawk
    /// divides.
    Either,
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
            // The files awk reads next are ARGV's elements: one set to `/inet/…` connects.
            "ARGV" | "SYMTAB" => Some("uses `ARGV`, which can name the files it opens"),
            _ => None,
        })
}

/// Keywords after which a `/` starts a regular expression (an expression follows them).
const EXPRESSION_KEYWORDS: &[&str] = &[
    "print", "printf", "return", "in", "case", "do", "else", "delete", "exit",
];

/// The most readings of one program judged (each `/` after a condition doubles them).
const MAX_READINGS: usize = 16;

/// Whether an awk program only reads its input and prints to stdout.
fn program_is_read_only(p: &str) -> Result<(), &'static str> {
    if let Some(why) = mentions_code(p) {
        return Err(why);
    }
    let mut readings = 1;
    Reader::new(p.as_bytes()).read(&mut readings)
}

/// One reading of a program, from `i` on.
#[derive(Clone)]
struct Reader<'a> {
    b: &'a [u8],
    i: usize,
    prev: Prev,
    /// Open parentheses and brackets.
    depth: usize,
    /// The depth of the `print` or `printf` whose arguments are being read.
    print_depth: Option<usize>,
    /// The depths at which the parentheses of a condition were opened.
    conditions: Vec<usize>,
    /// The last word was `if`, `while` or `for`: the next `(` opens a condition.
    condition_next: bool,
    /// A newline here continues the statement: after `,`, `{`, `&&`, `||`, `?`, `:`, `do`,
    /// `else` and a condition's `)` (gawk's list; mawk takes fewer, and rejects the rest).
    newline_continues: bool,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Self {
            b,
            i: 0,
            prev: Prev::Operator,
            depth: 0,
            print_depth: None,
            conditions: Vec::new(),
            condition_next: false,
            newline_continues: false,
        }
    }

    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    /// A token was read: what it leaves for the next one.
    fn token(&mut self, prev: Prev, newline_continues: bool) {
        self.prev = prev;
        self.newline_continues = newline_continues;
        self.condition_next = false;
    }

    fn read(mut self, readings: &mut usize) -> Result<(), &'static str> {
        while let Some(c) = self.at(0) {
            match c {
                // Blanks (mawk also takes form feeds and vertical tabs for blanks).
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => self.i += 1,
                // A backslash before the end of the line continues it.
                b'\\' if self.at(1) == Some(b'\n') => self.i += 2,
                b'\\' if self.at(1) == Some(b'\r') && self.at(2) == Some(b'\n') => self.i += 3,
                b'\\' => return Err("has a backslash outside a string"),
                b'#' => {
                    while self.at(0).is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                b'\n' if self.newline_continues => self.i += 1,
                b'"' => {
                    self.i = string_end(self.b, self.i + 1)?;
                    self.token(Prev::Operand, false);
                }
                b'/' if self.prev == Prev::Either => {
                    // mawk's reading: a division.
                    *readings += 1;
                    if *readings > MAX_READINGS {
                        return Err("has too many places where the awks read `/` differently");
                    }
                    let mut division = self.clone();
                    division.i += 1;
                    division.token(Prev::Operator, false);
                    division.read(readings)?;
                    // gawk's: a regular expression.
                    self.i = regex_end(self.b, self.i + 1)?;
                    self.token(Prev::Operand, false);
                }
                b'/' if self.prev == Prev::Operator => {
                    self.i = regex_end(self.b, self.i + 1)?;
                    self.token(Prev::Operand, false);
                }
                b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'@' => self.word()?,
                // A number, with its fraction and exponent: `1.` and `1e3` end in an operand.
                b'0'..=b'9' | b'.' if c != b'.' || self.at(1).is_some_and(|d| d.is_ascii_digit()) => {
                    self.i = number_end(self.b, self.i);
                    self.token(Prev::Operand, false);
                }
                // `x++ / 2` divides; `++x` is followed by its operand anyway.
                b'+' | b'-' if self.at(1) == Some(c) => self.i += 2,
                b'(' | b'[' => {
                    self.depth += 1;
                    if c == b'(' && self.condition_next {
                        self.conditions.push(self.depth);
                    }
                    self.i += 1;
                    self.token(Prev::Operator, false);
                }
                b')' | b']' => {
                    let condition = c == b')' && self.conditions.last() == Some(&self.depth);
                    if condition {
                        self.conditions.pop();
                    }
                    self.depth = self.depth.saturating_sub(1);
                    self.i += 1;
                    if condition {
                        self.token(Prev::Either, true);
                    } else {
                        self.token(Prev::Operand, false);
                    }
                }
                b';' | b'\n' | b'{' | b'}' => {
                    if self.print_depth.is_some_and(|d| self.depth <= d) || c == b'}' || c == b'{' {
                        self.print_depth = None;
                    }
                    self.i += 1;
                    self.token(Prev::Operator, c == b'{');
                }
                b'|' if self.at(1) == Some(b'|') => {
                    self.i += 2;
                    self.token(Prev::Operator, true);
                }
                b'|' => return Err("pipes to or from a command"),
                b'&' if self.at(1) == Some(b'&') => {
                    self.i += 2;
                    self.token(Prev::Operator, true);
                }
                b'>' if self.print_depth == Some(self.depth) => return Err("redirects output to a file"),
                b',' | b'?' | b':' => {
                    self.i += 1;
                    self.token(Prev::Operator, true);
                }
                b'>' | b'<' | b'=' | b'!' | b'~' | b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'$' | b'&' => {
                    self.i += 1;
                    self.token(Prev::Operator, false);
                }
                _ => return Err("has a character the awks may read differently"),
            }
        }
        Ok(())
    }

    fn word(&mut self) -> Result<(), &'static str> {
        let start = self.i;
        self.i += 1;
        while self.at(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.i += 1;
        }
        let word = &self.b[start..self.i];
        if matches!(word, b"print" | b"printf") {
            self.print_depth = Some(self.depth);
        }
        // `length` without parentheses, then `/`: gawk divides, mawk reads a regular expression
        // (so a `>` after it may become a redirection). Neither reading is safe to assume.
        if word == b"length" && self.b[self.i..].iter().find(|c| !matches!(c, b' ' | b'\t')) == Some(&b'/') {
            return Err("has `length /`, which the awks read differently");
        }
        let prev = if EXPRESSION_KEYWORDS.iter().any(|k| k.as_bytes() == word) {
            Prev::Operator
        } else {
            Prev::Operand
        };
        self.token(prev, matches!(word, b"do" | b"else"));
        self.condition_next = matches!(word, b"if" | b"while" | b"for");
        Ok(())
    }
}

/// The end of the string whose text starts at `i` (after its `"`); a backslash escapes the next
/// character, a newline among them included (a continuation).
fn string_end(b: &[u8], mut i: usize) -> Result<usize, &'static str> {
    loop {
        match b.get(i) {
            None | Some(b'\n') => return Err("has an unterminated string"),
            Some(b'\\') => i += 2,
            Some(b'"') => return Ok(i + 1),
            Some(_) => i += 1,
        }
    }
}

/// The end of the regular expression whose text starts at `i` (after its `/`): a `/` in a
/// bracket expression (`[]/]`, `[^]/]`, `[[:alpha:]/]`, `[\]/]`) does not end it, in either awk.
fn regex_end(b: &[u8], mut i: usize) -> Result<usize, &'static str> {
    loop {
        match b.get(i) {
            None | Some(b'\n') => return Err("has an unterminated regular expression"),
            Some(b'\\') => i += 2,
            Some(b'[') => i = bracket_end(b, i)?,
            Some(b'/') => return Ok(i + 1),
            Some(_) => i += 1,
        }
    }
}

/// The end of the bracket expression opening at `i`.
fn bracket_end(b: &[u8], i: usize) -> Result<usize, &'static str> {
    let mut j = i + 1;
    if b.get(j) == Some(&b'^') {
        j += 1;
    }
    if b.get(j) == Some(&b']') {
        j += 1;
    }
    loop {
        match b.get(j) {
            None | Some(b'\n') => return Err("has an unterminated bracket expression"),
            Some(b'\\') => j += 2,
            Some(b'[') if matches!(b.get(j + 1), Some(b':' | b'.' | b'=')) => {
                let kind = b[j + 1];
                let close = b[j + 2..]
                    .windows(2)
                    .position(|w| w[0] == kind && w[1] == b']')
                    .ok_or("has a bracket expression the awks may read differently")?;
                let inner = &b[j + 2..j + 2 + close];
                if inner.iter().any(|&c| matches!(c, b'/' | b'\n' | b']')) {
                    return Err("has a bracket expression the awks may read differently");
                }
                j += 2 + close + 2;
            }
            Some(b']') => return Ok(j + 1),
            Some(_) => j += 1,
        }
    }
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
