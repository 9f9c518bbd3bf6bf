//! One argument of a command as far as it is known before the command runs.

/// An argument word: its value when static, its source text, and whether its expansion could
/// start with `-` (and so be read as an option).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arg {
    /// The value after quote removal, when the word is fully static.
    pub value: Option<String>,
    /// The word as written.
    pub raw: String,
    /// For a dynamic word: whether what it expands to could begin with `-`.
    pub may_be_option: bool,
}

impl Arg {
    /// A static argument.
    pub fn literal(value: &str) -> Self {
        Self {
            value: Some(value.to_owned()),
            raw: value.to_owned(),
            may_be_option: false,
        }
    }

    /// A dynamic argument whose expansion is unknown (`raw` is its text).
    pub fn dynamic(raw: &str, may_be_option: bool) -> Self {
        Self {
            value: None,
            raw: raw.to_owned(),
            may_be_option,
        }
    }

    /// The static value.
    pub fn get(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// Whether the argument is statically `text`.
    pub fn is(&self, text: &str) -> bool {
        self.value.as_deref() == Some(text)
    }

    /// Whether the argument is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.value.is_none()
    }

    /// Whether the argument is, or could be, an option word.
    pub fn option_like(&self) -> bool {
        match &self.value {
            Some(v) => v.starts_with('-') && v.len() > 1,
            None => self.may_be_option,
        }
    }
}

/// The file name part of a command path (`/usr/bin/git` → `git`).
pub(crate) fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The static values of `argv`, stopping at the first dynamic word (the "exact argv prefix").
pub(crate) fn static_prefix(argv: &[Arg]) -> Vec<String> {
    argv.iter().map_while(|a| a.value.clone()).collect()
}

/// Render argv for messages: static values shell-quoted when needed, dynamic words as written.
pub(crate) fn render(argv: &[Arg]) -> String {
    let mut out = String::new();
    for (i, a) in argv.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match &a.value {
            Some(v)
                if !v.is_empty()
                    && v.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%^".contains(&b)) =>
            {
                out.push_str(v);
            }
            Some(v) => {
                out.push('\'');
                out.push_str(&v.replace('\'', r"'\''"));
                out.push('\'');
            }
            None => out.push_str(&a.raw),
        }
    }
    out
}

/// Whether text holds an array subscript with an expansion in it (`a[$(id)]`, `a[$i]`, ``a[`x`]``):
/// wherever bash evaluates such text as arithmetic (a name given to `printf -v`, `test -v`,
/// `declare`, `read`, an integer variable's value, `$(( ))`), the expansion runs.
pub(crate) fn code_in_subscript(text: &str) -> bool {
    let Some(open) = text.find('[') else {
        return false;
    };
    let b = &text.as_bytes()[open..];
    b.iter().enumerate().any(|(i, &c)| {
        c == b'`'
            || (c == b'$'
                && b.get(i + 1)
                    .is_some_and(|n| matches!(n, b'(' | b'{' | b'[' | b'_') || n.is_ascii_alphanumeric()))
    })
}

/// Whether a variable name given to a builtin (`printf -v NAME`, `test -v NAME`, `read NAME`)
/// is plain: an identifier, optionally with a subscript of digits, `@` or `*`. Anything else
/// may run code when bash evaluates the subscript.
pub(crate) fn plain_variable_name(arg: &Arg) -> bool {
    let Some(v) = arg.get() else { return false };
    let (name, subscript) = match v.split_once('[') {
        Some((n, rest)) => (n, Some(rest)),
        None => (v, None),
    };
    let identifier = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    identifier
        && subscript.is_none_or(|s| {
            s.strip_suffix(']').is_some_and(|i| {
                !i.is_empty() && (i == "@" || i == "*" || i.bytes().all(|b| b.is_ascii_digit()))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_likeness() {
        assert!(Arg::literal("-x").option_like());
        assert!(!Arg::literal("-").option_like());
        assert!(!Arg::literal("x-").option_like());
        assert!(Arg::dynamic("$x", true).option_like());
        assert!(!Arg::dynamic("src/*.rs", false).option_like());
    }

    #[test]
    fn rendering_quotes_what_needs_it() {
        let argv = [
            Arg::literal("git"),
            Arg::literal("commit"),
            Arg::literal("a b"),
            Arg::dynamic("$x", true),
        ];
        assert_eq!(render(&argv), "git commit 'a b' $x");
        assert_eq!(static_prefix(&argv), ["git", "commit", "a b"]);
        assert_eq!(basename("/usr/bin/git"), "git");
    }
}
