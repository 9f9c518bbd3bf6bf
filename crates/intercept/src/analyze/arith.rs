//! Where bash evaluates text as arithmetic — `$(( ))`, `(( ))`, `let`, `[[ -eq ]]`, array
//! subscripts, `${x:off:len}`, and every value given to an integer variable or a name reference —
//! and whether that may run a command: arithmetic runs the substitutions in array subscripts
//! (`a[$(id)]`), and it evaluates a variable's value as more arithmetic, so a name whose value is
//! only known when the call runs (`x=$(cat f); echo $((x))`) may run whatever that value holds.

use shellgate_normalize::ast::{Assignment, WordPart};

use super::Walker;
use super::expansions::text_may_execute;
use crate::argv::Arg;

/// A value an integer variable may be given: numbers and operators, no names (a name's value is
/// evaluated in turn), no expansions, quotes or subscripts.
pub(super) fn plain_integer_value(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_digit() || b" \t+-*/%()<>=!&|^~?:,".contains(&b))
}

impl Walker<'_, '_> {
    /// Whether `name` may carry the integer attribute (or be a name reference) when assigned.
    pub(super) fn may_be_integer(&self, name: &str) -> bool {
        self.names.integers.contains(name) || self.opts.session.is_some_and(|v| v.integers.contains(name))
    }

    /// Why reading the names in `text` as arithmetic may run a command.
    pub(super) fn unsafe_names(&self, text: &str) -> Option<String> {
        if let Some(name) = super::session::unsafe_in_arithmetic(self, text) {
            return Some(format!(
                "reads the session variable `{name}`, whose value runs a command there"
            ));
        }
        if let Some(name) = identifiers(text).find(|n| self.names.is_dynamic(n)) {
            return Some(format!(
                "reads `{name}`, whose value is only known when it runs and is evaluated as arithmetic"
            ));
        }
        if let Some(name) = identifiers(text).find(|n| self.names.code_values.contains(n)) {
            return Some(format!(
                "reads `{name}`, whose value holds `$`, a backquote or `[`: arithmetic expands and evaluates it (joined with the text around it) as code"
            ));
        }
        if reads_positional(text) {
            return Some(
                "reads a positional parameter, whose value is only known when it runs and is evaluated as arithmetic"
                    .into(),
            );
        }
        None
    }

    /// Why the arithmetic expression `expr` may run a command.
    pub(super) fn arithmetic_hazard(&self, expr: &str) -> Option<String> {
        if text_may_execute(expr) {
            Some("contains a command substitution".into())
        } else if expr.contains('[') || self.arith_poison {
            Some("may evaluate an array subscript that runs a command".into())
        } else {
            self.unsafe_names(expr)
        }
    }

    /// Why an array subscript (the text between the brackets) may run a command.
    pub(super) fn subscript_hazard(&self, subscript: &str) -> Option<String> {
        if crate::argv::code_in_subscript(&format!("[{subscript}]")) || text_may_execute(subscript) {
            Some(format!("the subscript `[{subscript}]` runs a command"))
        } else if self.arith_poison && identifiers(subscript).next().is_some() {
            Some(format!(
                "the subscript `[{subscript}]` may evaluate text that runs a command"
            ))
        } else {
            self.unsafe_names(subscript)
                .map(|why| format!("the subscript `[{subscript}]` {why}"))
        }
    }

    /// Why giving `value` (`None`: only known when it runs) to `name` runs code.
    pub(super) fn assignment_hazard(&self, name: &str, value: Option<&str>) -> Option<String> {
        (self.may_be_integer(name) && !value.is_some_and(plain_integer_value)).then(|| {
            format!(
                "`{name}` may be an integer variable or a name reference: what is assigned to it is evaluated as arithmetic, which can run a command"
            )
        })
    }

    /// Why a builtin that assigns variables (`printf -v`, `read`, `mapfile`, `getopts`,
    /// `declare NAME=VALUE`) runs code through them, or `let` through its arithmetic.
    pub(super) fn builtin_assignment_hazard(&self, argv: &[Arg]) -> Option<String> {
        let name = argv.first()?.get()?;
        let args = &argv[1..];
        match name {
            "printf" => {
                let (target, rest) = printf_target(args)?;
                let Some(target) = target else {
                    return self
                        .any_integer()
                        .then(|| "`printf -v` assigns a variable only known when it runs".into());
                };
                let base = target.split('[').next().unwrap_or(target);
                (self.may_be_integer(base) && !formatted_plain(rest)).then(|| {
                    format!(
                        "`printf -v {target}` assigns a variable that may be an integer: the text printed is evaluated as arithmetic"
                    )
                })
            }
            "read" | "mapfile" | "readarray" | "getopts" => {
                let implied = match name {
                    "read" => "REPLY",
                    "getopts" => "OPTARG",
                    _ => "MAPFILE",
                };
                let mut targets = args.iter().filter_map(Arg::get).filter(|v| !v.starts_with('-'));
                if args.iter().any(Arg::is_dynamic) && self.any_integer() {
                    return Some(format!("`{name}` assigns variables only known when it runs"));
                }
                targets
                    .find(|t| self.may_be_integer(t))
                    .or_else(|| self.may_be_integer(implied).then_some(implied))
                    .map(|t| {
                        format!(
                            "`{name}` assigns `{t}`, which may be an integer variable: what is read is evaluated as arithmetic"
                        )
                    })
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => args
                .iter()
                .filter_map(Arg::get)
                .filter(|v| !v.starts_with(['-', '+']))
                .find_map(|v| {
                    let (target, value) = v.split_once('=')?;
                    let target = target.trim_end_matches('+');
                    if let Some(why) = array_literal_subscripts(value).find_map(|s| self.subscript_hazard(s))
                    {
                        return Some(why);
                    }
                    self.assignment_hazard(target.split('[').next().unwrap_or(target), Some(value))
                }),
            "let" => {
                let text: Vec<&str> = args.iter().map(|a| a.raw.as_str()).collect();
                self.arithmetic_hazard(&text.join(" "))
                    .map(|why| format!("`let` evaluates arithmetic that {why}"))
            }
            _ => None,
        }
    }

    /// Why the subscripts of an assignment (`a[i]=v`, `a=([i]=v)`) may run a command.
    pub(super) fn assignment_subscripts(&self, a: &Assignment, src: &str) -> Option<String> {
        let raw = a.word.span.slice(src);
        let target = raw.split('=').next().unwrap_or(raw);
        if let (Some(open), Some(close)) = (target.find('['), target.rfind(']'))
            && open < close
            && let Some(why) = self.subscript_hazard(&target[open + 1..close])
        {
            return Some(why);
        }
        a.word.parts.iter().find_map(|p| match p {
            WordPart::Array { elements, .. } => elements.iter().find_map(|e| {
                let text = e.span.slice(src);
                let close = text.find("]=")?;
                text.strip_prefix('[')
                    .and_then(|_| self.subscript_hazard(&text[1..close]))
            }),
            _ => None,
        })
    }

    /// Whether any variable may carry the integer attribute.
    fn any_integer(&self) -> bool {
        !self.names.integers.is_empty() || self.opts.session.is_some_and(|v| !v.integers.is_empty())
    }
}

/// `printf -v NAME rest…` / `printf -vNAME rest…`: (`Some(NAME)` when static, the rest); `None`
/// without `-v`.
fn printf_target(args: &[Arg]) -> Option<(Option<&str>, &[Arg])> {
    let first = args.first()?;
    if first.is("-v") {
        let target = args.get(1)?;
        Some((target.get(), args.get(2..).unwrap_or_default()))
    } else {
        let v = first.get()?.strip_prefix("-v")?;
        Some((Some(v), &args[1..]))
    }
}

/// Whether `printf FORMAT ARGS…` prints only numbers and operators: the format's conversions are
/// `%d`/`%i`/`%u`/`%s` (or `%%`) and every argument is itself a plain integer value.
fn formatted_plain(rest: &[Arg]) -> bool {
    let rest = match rest.first() {
        Some(a) if a.is("--") => &rest[1..],
        _ => rest,
    };
    let Some((format, values)) = rest.split_first() else {
        return true;
    };
    let Some(format) = format.get() else { return false };
    let mut literal = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        while chars
            .next_if(|c| "-+ 0#.".contains(*c) || c.is_ascii_digit())
            .is_some()
        {}
        if !matches!(chars.next(), Some('d' | 'i' | 'u' | 's' | '%')) {
            return false;
        }
    }
    plain_integer_value(&literal) && values.iter().all(|a| a.get().is_some_and(plain_integer_value))
}

/// The subscripts of an array literal's `[sub]=value` elements.
pub(super) fn array_literal_subscripts(value: &str) -> impl Iterator<Item = &str> {
    let inner = value.strip_prefix('(').unwrap_or("");
    inner.match_indices('[').filter_map(move |(i, _)| {
        let at_element_start = i == 0 || inner[..i].ends_with([' ', '\t', '\n']);
        let close = inner[i..].find("]=")?;
        at_element_start.then(|| &inner[i + 1..i + close])
    })
}

/// The names in arithmetic text.
pub(super) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// Whether text expands a positional parameter (`$1`, `${2}`, `$@`, `$*`).
fn reads_positional(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b'$' && {
            let next = b.get(i + 1).copied().unwrap_or(0);
            let after = if next == b'{' {
                b.get(i + 2).copied().unwrap_or(0)
            } else {
                next
            };
            after.is_ascii_digit() || after == b'@' || after == b'*'
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_formats() {
        let args = |s: &str| s.split(' ').map(Arg::literal).collect::<Vec<_>>();
        assert!(formatted_plain(&args("%d 3")));
        assert!(formatted_plain(&args("%s+%s 1 2")));
        assert!(!formatted_plain(&args("%x 255")));
        assert!(!formatted_plain(&args("%s x")));
        assert!(!formatted_plain(&args(r"a\x5b 1")));
        assert!(reads_positional("$1 + 2") && reads_positional("${@}") && !reads_positional("$x"));
        assert_eq!(
            array_literal_subscripts("([x]=1 [2]=b)").collect::<Vec<_>>(),
            ["x", "2"]
        );
    }
}
