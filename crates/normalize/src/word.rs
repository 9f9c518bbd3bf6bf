//! Word helpers for later stages: the literal value of a word when it is fully static.

use crate::ast::{Command, SimpleCommand, Word, WordPart};

/// What a word expands to, as far as can be known without running anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WordValue {
    /// The word is one argument with exactly this text (quotes removed, escapes applied).
    Static(String),
    /// The word contains an expansion, glob, tilde or brace expansion: its value is only known
    /// when it runs (it may even become zero or several arguments).
    Dynamic,
}

impl WordValue {
    /// The static text, if any.
    pub fn as_static(&self) -> Option<&str> {
        match self {
            WordValue::Static(s) => Some(s),
            WordValue::Dynamic => None,
        }
    }
}

impl Word {
    /// The word's value if it is fully static.
    pub fn value(&self) -> WordValue {
        self.static_value().map_or(WordValue::Dynamic, WordValue::Static)
    }

    /// The word's literal text when fully static, otherwise `None`.
    pub fn static_value(&self) -> Option<String> {
        if self.brace_expansion {
            return None;
        }
        let mut out = String::new();
        parts_static(&self.parts, &mut out).then_some(out)
    }

    /// Whether the word is exactly the unquoted literal `text` (no allocation: for hot checks of
    /// command names).
    pub fn is_literal(&self, text: &str) -> bool {
        !self.brace_expansion
            && matches!(self.parts.as_slice(), [WordPart::Literal { value, span }]
                if value.as_bytes() == text.as_bytes() && span.len() == text.len())
    }

    /// The static value, borrowed when the word is a single unquoted or single-quoted part (the
    /// common case: no allocation).
    pub(crate) fn static_cow(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self.parts.as_slice() {
            [WordPart::Literal { value, .. } | WordPart::SingleQuoted { value, .. }]
                if !self.brace_expansion =>
            {
                Some(std::borrow::Cow::Borrowed(value.as_str()))
            }
            _ => self.static_value().map(std::borrow::Cow::Owned),
        }
    }

    /// Whether the word is fully static.
    pub fn is_static(&self) -> bool {
        self.static_value().is_some()
    }

    /// Whether any part of the word is quoted or escaped in the source.
    pub fn is_quoted(&self, source: &str) -> bool {
        self.span.slice(source).contains(['\'', '"', '\\'])
    }

    /// Whether the word contains a command or process substitution (code that runs).
    pub fn has_substitution(&self) -> bool {
        fn any(parts: &[WordPart]) -> bool {
            parts.iter().any(|p| match p {
                WordPart::CommandSubstitution { .. } | WordPart::ProcessSubstitution { .. } => true,
                WordPart::DoubleQuoted { parts, .. } => any(parts),
                WordPart::Array { elements, .. } => elements.iter().any(Word::has_substitution),
                _ => false,
            })
        }
        any(&self.parts)
    }
}

fn parts_static(parts: &[WordPart], out: &mut String) -> bool {
    for p in parts {
        match p {
            WordPart::Literal { value, .. } | WordPart::SingleQuoted { value, .. } => {
                out.push_str(value);
            }
            WordPart::AnsiC {
                value, exact: true, ..
            } => out.push_str(value),
            WordPart::DoubleQuoted { parts, .. } => {
                if !parts_static(parts, out) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

impl SimpleCommand {
    /// The command name's static value (`None` without a name or when it is dynamic).
    pub fn name(&self) -> Option<String> {
        self.words.first().and_then(Word::static_value)
    }

    /// All words' static values, or `None` if any word is dynamic.
    pub fn static_argv(&self) -> Option<Vec<String>> {
        self.words.iter().map(Word::static_value).collect()
    }
}

impl Command {
    /// The simple command, if this is one.
    pub fn as_simple(&self) -> Option<&SimpleCommand> {
        match self {
            Command::Simple(s) => Some(s),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse;

    fn words(src: &str) -> Vec<Option<String>> {
        let script = parse(src).unwrap();
        let cmd = script.list.items[0].and_or.first.commands[0]
            .as_simple()
            .unwrap()
            .clone();
        cmd.words.iter().map(super::Word::static_value).collect()
    }

    #[test]
    fn static_values_remove_quotes() {
        assert_eq!(
            words(r#"echo 'a b' "c\"d" e\ f $'g\th' "x"y"#),
            vec![
                Some("echo".into()),
                Some("a b".into()),
                Some("c\"d".into()),
                Some("e f".into()),
                Some("g\th".into()),
                Some("xy".into())
            ]
        );
    }

    #[test]
    fn expansions_are_dynamic() {
        let w = words(r#"echo $HOME "${x}" $(ls) `ls` * ~ {a,b} {1..3} a[b] $((1+2))"#);
        assert!(w[1..].iter().all(Option::is_none), "{w:?}");
    }

    #[test]
    fn braces_and_brackets_without_expansion_are_static() {
        assert_eq!(
            words("find . -exec {} ; x{a} [ a]"),
            vec![
                Some("find".into()),
                Some(".".into()),
                Some("-exec".into()),
                Some("{}".into())
            ]
        );
        assert_eq!(
            words("echo x{a} [ a]")[1..],
            [Some("x{a}".into()), Some("[".into()), Some("a]".into())]
        );
    }
}
