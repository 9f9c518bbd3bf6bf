//! `cargo xtask lint-size`: keeps files and functions small enough to read in one sitting.
//!
//! The limits hold for the composition crate (`crates/tool`), which tends to collect logic that belongs
//! in a stage: `src/` at most [`MAX_SRC_LINES`] lines in all, no file under `src/` over
//! [`MAX_FILE_LINES`] lines, no function anywhere in the crate (sources, tests, examples) over
//! [`MAX_FN_LINES`] lines, signature and body included.
//!
//! Functions are found with a small lexer rather than a parser crate: it skips comments, strings
//! (raw ones too), and character literals, then matches the braces of every `fn NAME … { … }`.

use std::path::{Path, PathBuf};

/// Most lines `crates/tool/src` may hold in all: composing the stages fits in this, so that
/// capability added to the tool instead of a stage fails the check.
pub const MAX_SRC_LINES: usize = 3_000;
/// Longest file allowed under `crates/tool/src`.
pub const MAX_FILE_LINES: usize = 400;
/// Longest function allowed in `crates/tool`, from the `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 100;

/// One rule broken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The file, relative to the workspace root.
    pub file: PathBuf,
    /// What is too long and by how much.
    pub what: String,
}

/// A function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnSpan {
    /// Its name.
    pub name: String,
    /// 1-based line of `fn`.
    pub first: usize,
    /// 1-based line of the closing brace.
    pub last: usize,
}

impl FnSpan {
    /// Lines from `fn` to the closing brace, both included.
    pub fn lines(&self) -> usize {
        self.last - self.first + 1
    }
}

/// Check the tool crate under `root` (the workspace root); print what is too long.
pub fn run(root: &Path) -> anyhow::Result<bool> {
    let crate_dir = root.join("crates/tool");
    let violations = check_crate(&crate_dir)?;
    for v in &violations {
        let shown = v.file.strip_prefix(root).unwrap_or(&v.file);
        println!("{}: {}", shown.display(), v.what);
    }
    if violations.is_empty() {
        println!(
            "crates/tool: src/ within {MAX_SRC_LINES} lines, no file in src/ over {MAX_FILE_LINES} lines, \
             no function over {MAX_FN_LINES} lines"
        );
    }
    Ok(violations.is_empty())
}

/// Every violation in the crate at `crate_dir`.
pub fn check_crate(crate_dir: &Path) -> anyhow::Result<Vec<Violation>> {
    let mut violations = Vec::new();
    let mut src_lines = 0;
    for dir in ["src", "tests", "examples", "benches"] {
        let mut files = Vec::new();
        rust_files(&crate_dir.join(dir), &mut files)?;
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file)?;
            let lines = text.lines().count();
            if dir == "src" {
                src_lines += lines;
            }
            if dir == "src" && lines > MAX_FILE_LINES {
                violations.push(Violation {
                    file: file.clone(),
                    what: format!("{lines} lines (at most {MAX_FILE_LINES})"),
                });
            }
            for f in functions(&text) {
                if f.lines() > MAX_FN_LINES {
                    violations.push(Violation {
                        file: file.clone(),
                        what: format!(
                            "fn {} at line {} has {} lines (at most {MAX_FN_LINES})",
                            f.name,
                            f.first,
                            f.lines()
                        ),
                    });
                }
            }
        }
    }
    if src_lines > MAX_SRC_LINES {
        violations.push(Violation {
            file: crate_dir.join("src"),
            what: format!(
                "{src_lines} lines in all (at most {MAX_SRC_LINES}): move capability into its stage"
            ),
        });
    }
    Ok(violations)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// A token the function finder cares about.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Open,
    Close,
    Semi,
    Other,
}

/// The tokens of `text` with their 1-based lines; comments, strings and character literals vanish.
fn tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => i = skip_block_comment(&chars, i, &mut line),
            '"' => i = skip_string(&chars, i + 1, &mut line),
            '\'' => i = skip_char_or_lifetime(&chars, i),
            'r' | 'b' | 'c' if starts_raw_or_byte_string(&chars, i) => {
                i = skip_prefixed_string(&chars, i, &mut line);
            }
            '{' => {
                out.push((Token::Open, line));
                i += 1;
            }
            '}' => {
                out.push((Token::Close, line));
                i += 1;
            }
            ';' => {
                out.push((Token::Semi, line));
                i += 1;
            }
            c if c.is_alphanumeric() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((Token::Ident(chars[start..i].iter().collect()), line));
            }
            c if c.is_whitespace() => i += 1,
            _ => {
                out.push((Token::Other, line));
                i += 1;
            }
        }
    }
    out
}

fn skip_block_comment(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            if chars[i] == '\n' {
                *line += 1;
            }
            i += 1;
        }
    }
    i
}

/// From just after an opening quote to just after the closing one.
fn skip_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if chars.get(i + 1) == Some(&'\n') {
                    *line += 1;
                }
                i += 2;
            }
            '"' => return i + 1,
            '\n' => {
                *line += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    i
}

/// `'x'`, `'\n'`, `'\u{1F600}'` are skipped whole; a lifetime `'a` only loses its quote.
fn skip_char_or_lifetime(chars: &[char], i: usize) -> usize {
    match (chars.get(i + 1), chars.get(i + 2)) {
        (Some('\\'), _) => {
            let mut j = i + 2;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            j + 1
        }
        (Some(_), Some('\'')) => i + 3,
        _ => i + 1,
    }
}

/// `r"…"`, `r#"…"#`, `b"…"`, `br#"…"#`, `c"…"` (not an identifier such as `rust` or `b`).
fn starts_raw_or_byte_string(chars: &[char], i: usize) -> bool {
    if i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_') {
        return false;
    }
    let mut j = i;
    if chars[j] == 'b' || chars[j] == 'c' {
        j += 1;
        if chars.get(j) == Some(&'"') {
            return true;
        }
    }
    if chars.get(j) == Some(&'r') {
        j += 1;
        while chars.get(j) == Some(&'#') {
            j += 1;
        }
        return chars.get(j) == Some(&'"');
    }
    false
}

fn skip_prefixed_string(chars: &[char], mut i: usize, line: &mut usize) -> usize {
    while chars[i] != 'r' && chars[i] != '"' {
        i += 1;
    }
    if chars[i] == '"' {
        return skip_string(chars, i + 1, line);
    }
    i += 1;
    let mut hashes = 0;
    while chars[i] == '#' {
        hashes += 1;
        i += 1;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '\n' {
            *line += 1;
        }
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// Every function with a body in `text` (nested ones too; a declaration ending in `;` has none).
pub fn functions(text: &str) -> Vec<FnSpan> {
    let tokens = tokens(text);
    let mut found = Vec::new();
    for (k, (token, line)) in tokens.iter().enumerate() {
        let (Token::Ident(kw), Some((Token::Ident(name), _))) = (token, tokens.get(k + 1)) else {
            continue;
        };
        if kw != "fn" {
            continue;
        }
        let Some(open) = tokens[k + 2..]
            .iter()
            .position(|(t, _)| matches!(t, Token::Open | Token::Semi))
            .map(|p| k + 2 + p)
        else {
            continue;
        };
        if tokens[open].0 == Token::Semi {
            continue;
        }
        let mut depth = 0usize;
        for (t, end_line) in &tokens[open..] {
            match t {
                Token::Open => depth += 1,
                Token::Close => {
                    depth -= 1;
                    if depth == 0 {
                        found.push(FnSpan {
                            name: name.clone(),
                            first: *line,
                            last: *end_line,
                        });
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_span_from_fn_to_their_closing_brace() {
        let text = "\
/// doc with { brace
fn first() {
    let s = \"}\";
    let c = '}';
    let r = r#\"}\"#;
    // }
}

impl X {
    pub async fn second<'a>(x: &'a str) -> impl Fn(u8) -> u8 {
        /* { */
        |b| { b }
    }
    fn declared(&self);
}
";
        let found = functions(text);
        assert_eq!(
            found,
            vec![
                FnSpan {
                    name: "first".into(),
                    first: 2,
                    last: 7
                },
                FnSpan {
                    name: "second".into(),
                    first: 10,
                    last: 13
                },
            ]
        );
        assert_eq!(found[0].lines(), 6);
    }

    #[test]
    fn byte_strings_and_escapes_do_not_unbalance_braces() {
        let text =
            "fn a() {\n    let x = b\"{\";\n    let y = '\\'';\n    let z = \"\\\"{\";\n}\nfn b() {}\n";
        let names: Vec<_> = functions(text)
            .into_iter()
            .map(|f| (f.name, f.first, f.last))
            .collect();
        assert_eq!(names, vec![("a".into(), 1, 5), ("b".into(), 6, 6)]);
    }

    #[test]
    fn too_long_files_and_functions_are_reported() {
        let dir = std::env::temp_dir().join(format!("xtask-size-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let long_fn = format!("fn big() {{\n{}}}\n", "    let _ = 1;\n".repeat(MAX_FN_LINES));
        std::fs::write(src.join("lib.rs"), &long_fn).unwrap();
        std::fs::write(src.join("ok.rs"), "fn small() {}\n").unwrap();
        std::fs::write(src.join("long.rs"), "\n".repeat(MAX_FILE_LINES + 1)).unwrap();
        let found = check_crate(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].file.ends_with("lib.rs"));
        assert!(
            found[0].what.contains("fn big at line 1 has 102 lines"),
            "{}",
            found[0].what
        );
        assert!(found[1].file.ends_with("long.rs"));
        assert!(found[1].what.starts_with("401 lines"), "{}", found[1].what);
    }

    #[test]
    fn a_source_tree_over_its_total_is_reported() {
        let dir = std::env::temp_dir().join(format!("xtask-size-total-{}", std::process::id()));
        let src = dir.join("src");
        std::fs::create_dir_all(&src).unwrap();
        let files = MAX_SRC_LINES / MAX_FILE_LINES + 1;
        for i in 0..files {
            std::fs::write(src.join(format!("f{i}.rs")), "\n".repeat(MAX_FILE_LINES)).unwrap();
        }
        let found = check_crate(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].file.ends_with("src"));
        assert!(
            found[0]
                .what
                .starts_with(&format!("{} lines in all", files * MAX_FILE_LINES)),
            "{}",
            found[0].what
        );
    }
}
