//! POSIX shell words for text that crosses to a remote shell (quoting is the executor's `sh_quote`).

pub use shellgate_executor::sh_quote;

/// Whether `name` can be assigned by a POSIX shell (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_survive_a_real_shell() {
        for text in [
            "plain",
            "a b",
            "it's",
            "'",
            "$(touch x) `y` \"z\" \\n",
            "line\nbreak",
            "",
        ] {
            let out = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", sh_quote(text))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
        }
    }

    #[test]
    fn shell_names() {
        assert!(is_shell_name("PATH"));
        assert!(is_shell_name("_x1"));
        assert!(!is_shell_name("1x"));
        assert!(!is_shell_name("A-B"));
        assert!(!is_shell_name(""));
    }
}
