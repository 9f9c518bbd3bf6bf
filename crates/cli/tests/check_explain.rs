//! `shellgate check --explain` through the binary, under `deny = ["git push *", "rm -rf *"]`:
//! the verdict's exit code, the canonical form a command was matched in, and for a word only known
//! at run time, the deny rule it could make match.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory with a fake home and a configuration (removed when dropped).
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("shellgate-check-explain-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        std::fs::write(
            dir.join("shellgate.toml"),
            "[policy]\nsecurity = \"full\"\nask = \"on-miss\"\ndeny = [\"git push *\", \"rm -rf *\"]\n",
        )
        .unwrap();
        Self(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `shellgate check --config … --explain -- COMMAND`: the exit code and what it printed.
fn explain(s: &Scratch, command: &str) -> (Option<i32>, String) {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
        .env("HOME", s.path().join("home"))
        .env("XDG_CONFIG_HOME", s.path().join("xdg"))
        .current_dir(s.path())
        .arg("check")
        .arg("--config")
        .arg(s.path().join("shellgate.toml"))
        .args(["--explain", "--", command])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn respellings_are_denied_and_their_canonical_form_is_shown() {
    let s = Scratch::new("deny");
    for (command, form) in [
        ("rm -fr build", "rm options [-f -r] operands [build]"),
        (
            "rm --recursive --force -- build",
            "rm options [-f -r] operands [build]",
        ),
        ("/bin/rm -Rf build", "rm options [-f -r] operands [build]"),
        (
            "git -C . --no-pager push --force origin x",
            "operands [push origin x]",
        ),
        ("git -c alias.p=push p origin x", "operands [push origin x]"),
        ("git send-pack origin main", "operands [push origin main]"),
    ] {
        let (code, text) = explain(&s, command);
        assert_eq!(code, Some(2), "{command}: {text}");
        assert!(
            text.starts_with("deny (git push *)") || text.starts_with("deny (rm -rf *)"),
            "{command}: {text}"
        );
        assert!(text.contains(form), "{command}: no `{form}` in {text}");
    }
}

#[test]
fn a_word_only_known_at_run_time_names_the_rule_it_could_make_match() {
    let s = Scratch::new("dynamic");
    for (command, word, rule) in [
        ("git $x origin", "`$x` is", "`git push *`"),
        ("g=git; $g push", "`$g` is", "`git push *`"),
        ("git $(echo push)", "`$(echo push)` is", "`git push *`"),
        ("o=-rf; rm $o build", "`$o` is", "`rm -rf *`"),
        (
            "echo push | xargs git",
            "the words appended at run time are",
            "`git push *`",
        ),
    ] {
        let (code, text) = explain(&s, command);
        assert_eq!(code, Some(1), "{command}: {text}");
        let expected = format!("{word} only known at run time and could make it match the deny rule {rule}");
        assert!(text.contains(&expected), "{command}: no `{expected}` in {text}");
    }
    let (code, text) = explain(&s, "ls $x");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("`$x` is only known at run time, and no deny rule could match it"),
        "{text}"
    );
    let (code, text) = explain(&s, "tar xf a.tar");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("`tar` has no option table: rules match its words as written"),
        "{text}"
    );
}

#[test]
fn run_time_program_words_and_eval_text_name_the_rule_they_could_make_match() {
    let s = Scratch::new("split");
    for (command, word, rule) in [
        ("c='git push origin x'; $c", "`$c` is", "`git push *`"),
        (
            "$(echo git push) origin x",
            "`$(echo git push)` is",
            "`git push *`",
        ),
        ("x='git push'; eval \"$x\"", "`$x` is", "`git push *`"),
        ("bash -c \"$x\"", "`$x` is", "`git push *`"),
    ] {
        let (code, text) = explain(&s, command);
        assert_eq!(code, Some(1), "{command}: {text}");
        let expected = format!("{word} only known at run time and could make it match the deny rule {rule}");
        assert!(text.contains(&expected), "{command}: no `{expected}` in {text}");
    }
    for (command, form) in [
        ("{git,push} origin x", "operands [push origin x]"),
        ("sh -c 'git \"$1\" origin x' sh push", "operands [push origin x]"),
    ] {
        let (code, text) = explain(&s, command);
        assert_eq!(code, Some(2), "{command}: {text}");
        assert!(text.contains(form), "{command}: no `{form}` in {text}");
    }
    let (code, text) = explain(&s, "\"$EDITOR\" notes.txt");
    assert_eq!(code, Some(0), "{text}");
}
