//! Script preflight (SPEC I-6): before `python`/`node`/`deno`/`bun` run a script file in the
//! working directory, look for shell-variable syntax (`$NAME`, `${NAME}`) that was meant for a
//! shell and would be a syntax error or a literal string in the script. String literals and
//! comments are skipped (Python strings, f-strings and triple quotes; JavaScript strings and
//! template literals, where `${…}` is legitimate), so only code is reported.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::argv::{Arg, basename};

/// Largest prefix of a script that is read.
const MAX_SCRIPT: u64 = 512 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Python,
    Js,
}

/// A finding: the message names the file and line.
pub(crate) fn check(argv: &[Arg], cwd: Option<&Path>) -> Option<String> {
    let cwd = cwd?;
    let name = basename(argv.first()?.get()?);
    let (lang, scripts) = if name.starts_with("python") || name.starts_with("pypy") {
        (Lang::Python, python_scripts(&argv[1..]))
    } else if matches!(name, "node" | "nodejs") {
        (Lang::Js, node_scripts(&argv[1..]))
    } else if name == "deno" || name == "bun" {
        (Lang::Js, runner_scripts(&argv[1..]))
    } else {
        return None;
    };
    scripts.into_iter().find_map(|s| {
        let path = inside(cwd, &s)?;
        let text = read_bounded(&path)?;
        let (line, var) = find_shell_syntax(&text, lang)?;
        let hint = match lang {
            Lang::Python => format!("use os.environ.get(\"{var}\") instead"),
            Lang::Js => format!("use process.env[\"{var}\"] instead"),
        };
        Some(format!(
            "`{s}` line {line} contains shell-variable syntax `${var}` outside strings and comments, which the shell will not expand inside a script; {hint}"
        ))
    })
}

fn python_scripts(args: &[Arg]) -> Vec<String> {
    let mut i = 0;
    while let Some(v) = args.get(i).and_then(Arg::get) {
        match v {
            "-c" | "-m" | "-" => return Vec::new(),
            _ if v.starts_with("-c") || v.starts_with("-m") => return Vec::new(),
            "-W" | "-X" | "-Q" | "--check-hash-based-pycs" => i += 2,
            "--" => {
                i += 1;
                break;
            }
            _ if v.starts_with('-') => i += 1,
            _ => break,
        }
    }
    args.get(i)
        .and_then(Arg::get)
        .filter(|s| {
            Path::new(s)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("py"))
        })
        .map(|s| vec![s.to_owned()])
        .unwrap_or_default()
}

fn is_js(s: &str) -> bool {
    [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"]
        .iter()
        .any(|e| s.ends_with(e))
}

fn node_scripts(args: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut eval = false;
    let mut entry = None;
    while let Some(v) = args.get(i).and_then(Arg::get) {
        match v {
            "-e" | "-p" | "--eval" | "--print" => eval = true,
            "-r" | "--require" | "--import" => {
                if let Some(p) = args.get(i + 1).and_then(Arg::get) {
                    out.push(p.to_owned());
                }
                i += 1;
            }
            _ if v.starts_with("--require=") || v.starts_with("--import=") => {
                out.push(v.split_once('=').map(|(_, p)| p.to_owned()).unwrap_or_default());
            }
            _ if v.starts_with('-') => {}
            _ => {
                entry = Some(v.to_owned());
                break;
            }
        }
        i += 1;
    }
    if !eval && let Some(e) = entry {
        out.push(e);
    }
    out.retain(|s| is_js(s));
    out
}

fn runner_scripts(args: &[Arg]) -> Vec<String> {
    args.iter()
        .filter_map(Arg::get)
        .find(|v| !v.starts_with('-') && is_js(v))
        .map(|s| vec![s.to_owned()])
        .unwrap_or_default()
}

/// The script's path when it lies inside `cwd` (symbolic links resolved).
fn inside(cwd: &Path, script: &str) -> Option<PathBuf> {
    let root = cwd.canonicalize().ok()?;
    let path = cwd.join(script).canonicalize().ok()?;
    path.starts_with(&root).then_some(path)
}

fn read_bounded(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    file.take(MAX_SCRIPT).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The first `(line, NAME)` of shell-variable syntax in code (not strings or comments).
fn find_shell_syntax(text: &str, lang: Lang) -> Option<(usize, String)> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut line = 1;
    // For JavaScript: brace depths at which a template literal resumes.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    while i < b.len() {
        let c = b[i];
        match (lang, c) {
            (_, b'\n') => line += 1,
            (Lang::Python, b'#') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            (Lang::Js, b'/') if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            (Lang::Js, b'/') if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                i += 2;
                continue;
            }
            (_, b'\'' | b'"') => {
                let triple = lang == Lang::Python && b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c);
                i += if triple { 3 } else { 1 };
                while i < b.len() {
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                        if !triple {
                            break;
                        }
                    }
                    if b[i] == c && (!triple || (b.get(i + 1) == Some(&c) && b.get(i + 2) == Some(&c))) {
                        i += if triple { 3 } else { 1 };
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            (Lang::Js, b'`') => {
                i += 1;
                if skip_template(b, &mut i, &mut line) {
                    templates.push(depth);
                    depth += 1;
                }
                continue;
            }
            (Lang::Js, b'{') => depth += 1,
            (Lang::Js, b'}') => {
                depth = depth.saturating_sub(1);
                if templates.last() == Some(&depth) {
                    templates.pop();
                    i += 1;
                    if skip_template(b, &mut i, &mut line) {
                        templates.push(depth);
                        depth += 1;
                    }
                    continue;
                }
            }
            (_, b'$') => {
                let prev_ident =
                    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b'$');
                let rest = &text[i + 1..];
                let braced = rest.starts_with('{');
                let name: String = rest
                    .trim_start_matches('{')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let starts_ok = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
                let hit = match lang {
                    Lang::Python => starts_ok,
                    // In JavaScript `$x` is an identifier: only `${` outside a template literal, or an
                    // upper-case `$NAME` of two or more characters, looks like a shell variable.
                    Lang::Js => {
                        starts_ok
                            && !prev_ident
                            && (braced
                                || (name.len() >= 2
                                    && name
                                        .bytes()
                                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')))
                    }
                };
                if hit {
                    return Some((line, name));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Skip template-literal text from `i` (after a backtick or a closing `}`): returns `true` when
/// a `${` expression starts (the cursor is after it), `false` at the closing backtick.
fn skip_template(b: &[u8], i: &mut usize, line: &mut usize) -> bool {
    while *i < b.len() {
        match b[*i] {
            b'\\' => *i += 2,
            b'`' => {
                *i += 1;
                return false;
            }
            b'$' if b.get(*i + 1) == Some(&b'{') => {
                *i += 2;
                return true;
            }
            b'\n' => {
                *line += 1;
                *i += 1;
            }
            _ => *i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_code_versus_strings_and_comments() {
        assert_eq!(
            find_shell_syntax("import os\nkey = $API_KEY\n", Lang::Python),
            Some((2, "API_KEY".into()))
        );
        assert_eq!(
            find_shell_syntax("x = ${HOME}\n", Lang::Python),
            Some((1, "HOME".into()))
        );
        for ok in [
            "print('$HOME')\n",
            "print(\"${HOME}\")\n",
            "# uses $HOME\n",
            "s = f\"cost: ${price}\"\n",
            "doc = '''\n$HOME\n'''\n",
            "doc = \"\"\"a\n${X}\"\"\"\n",
            "x = r'\\$y'\n",
        ] {
            assert_eq!(find_shell_syntax(ok, Lang::Python), None, "{ok}");
        }
    }

    #[test]
    fn js_template_literals_and_identifiers() {
        assert_eq!(
            find_shell_syntax("const k = $API_KEY;\n", Lang::Js),
            Some((1, "API_KEY".into()))
        );
        assert_eq!(
            find_shell_syntax("a\nconst k = ${HOME};\n", Lang::Js),
            Some((2, "HOME".into()))
        );
        for ok in [
            "const s = `home: ${process.env.HOME}`;\n",
            "const s = `a ${ `b ${c}` } $HOME`;\n",
            "const $el = $('#x'); jQuery.$x = 1;\n",
            "// $HOME\n/* ${X} */\n",
            "const s = '$HOME' + \"${X}\";\n",
            "const o = { a: `${x}` }; const y = { b: 1 };\n",
        ] {
            assert_eq!(find_shell_syntax(ok, Lang::Js), None, "{ok}");
        }
        assert_eq!(
            find_shell_syntax("const s = `${a}`; const t = $TOKEN;\n", Lang::Js),
            Some((1, "TOKEN".into()))
        );
    }

    #[test]
    fn script_arguments() {
        let a = |s: &str| s.split_whitespace().map(Arg::literal).collect::<Vec<_>>();
        assert_eq!(python_scripts(&a("-u -W ignore x.py arg")), ["x.py"]);
        assert!(python_scripts(&a("-c print(1)")).is_empty());
        assert!(python_scripts(&a("-m pytest")).is_empty());
        assert_eq!(node_scripts(&a("-r ./pre.js main.js")), ["./pre.js", "main.js"]);
        assert_eq!(node_scripts(&a("-e 1 x.js")), Vec::<String>::new());
        assert_eq!(runner_scripts(&a("run --allow-read main.ts")), ["main.ts"]);
    }
}
