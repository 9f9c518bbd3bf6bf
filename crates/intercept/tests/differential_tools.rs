//! `@safe`'s awk and sed readers agree with the real programs: for generated programs around the
//! constructs where a reader can go wrong (comments, line continuations, labels, file names,
//! regular expression or division, numbers with a trailing dot), whatever the policy allows must
//! neither run a command nor write a file as the real programs parse it. An awk program must be
//! harmless to both awks: mawk (Debian's `awk`) prints its parse with `-W dump`, gawk its program
//! with `--pretty-print`, neither running it. GNU sed prints the program it parsed with `--debug`
//! — every command, also those behind addresses that never match — when run on `/dev/null` in a
//! throwaway directory (where the `w` files it opens are created), and is also run on a few lines
//! there, where every command the fragments can run or write only creates a file.

mod common;

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use shellgate_intercept::Decision;

fn require(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty());
    if !found {
        assert!(
            std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
            "`{program}` is not installed (SHELLGATE_REQUIRE_ALL=1)"
        );
        eprintln!("skipped: `{program}` is not installed");
    }
    found
}

fn allowed(command: &str) -> bool {
    common::decide(&common::safe_policy(&[]), command) == Decision::Allow
}

/// How an awk parses a program.
#[derive(Debug, PartialEq, Eq)]
enum Awk {
    /// It is not a program mawk runs.
    Rejected,
    /// It only reads and prints to stdout.
    Harmless,
    /// It runs a command or writes a file (the instruction that does).
    Runs(String),
}

/// What mawk's parse of `program` runs or writes, if anything.
fn mawk_danger(program: &str) -> Awk {
    mawk_danger_sources(&[program.to_owned()])
}

/// What mawk's parse of the program made of `sources` (one `-f` file each) runs or writes.
fn mawk_danger_sources(sources: &[String]) -> Awk {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("mawk");
    cmd.args(["-W", "dump"]);
    for (k, source) in sources.iter().enumerate() {
        let file = dir.path().join(format!("p{k}.awk"));
        std::fs::write(&file, source).unwrap();
        cmd.arg("-f").arg(&file);
    }
    let out = cmd.current_dir(dir.path()).output().unwrap();
    if !out.status.success() {
        return Awk::Rejected;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut previous: Vec<&str> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let op = fields.get(2).copied().unwrap_or("");
        if op.contains("system") || op.contains("getline") {
            return Awk::Runs(line.to_owned());
        }
        // A print to a file or a pipe pushes a negative output type just before it.
        if matches!(op, "print" | "printf")
            && previous.first() == Some(&"pushint")
            && previous.get(1).is_some_and(|v| v.starts_with('-'))
        {
            return Awk::Runs(line.to_owned());
        }
        previous = fields.get(2..).map(<[&str]>::to_vec).unwrap_or_default();
    }
    Awk::Harmless
}

/// What gawk's parse of `program` runs or writes, if anything: its pretty-printed program puts
/// one statement a line and a redirected `print`'s arguments in parentheses (`print("a") > "f"`).
fn gawk_danger(program: &str) -> Awk {
    gawk_danger_sources(&[program.to_owned()])
}

/// What gawk's parse of the program made of `sources` (one `--source` each) runs or writes.
fn gawk_danger_sources(sources: &[String]) -> Awk {
    let dir = tempfile::tempdir().unwrap();
    let pretty = dir.path().join("pretty.awk");
    let mut cmd = Command::new("gawk");
    cmd.arg(format!("--pretty-print={}", pretty.display()));
    for source in sources {
        cmd.arg("--source").arg(source);
    }
    let out = cmd.current_dir(dir.path()).output().unwrap();
    if !out.status.success() {
        return Awk::Rejected;
    }
    let text = std::fs::read_to_string(&pretty).unwrap_or_default();
    for line in text.lines() {
        let statement = line.trim_start();
        let code = without_strings(statement);
        let redirected = ["print(", "printf("].iter().any(|p| code.starts_with(p))
            && after_parenthesis(&code).is_some_and(|rest| rest.trim_start().starts_with(['>', '|']));
        if code.contains("system(")
            || code
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(|w| w == "getline")
            || code.contains("|&")
            || statement.starts_with('@')
            || redirected
        {
            return Awk::Runs(line.to_owned());
        }
    }
    Awk::Harmless
}

/// Awk text with its string literals emptied (`"a)b"` → `""`).
fn without_strings(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '"' {
            while let Some(s) = chars.next() {
                if s == '\\' {
                    chars.next();
                } else if s == '"' {
                    out.push('"');
                    break;
                }
            }
        }
    }
    out
}

/// What follows the parenthesis that closes the first one opened in `code`.
fn after_parenthesis(code: &str) -> Option<&str> {
    let open = code.find('(')?;
    let mut depth = 0usize;
    for (i, c) in code[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&code[open + i + 1..]);
                }
            }
            _ => {}
        }
    }
    None
}

/// What GNU sed's parse of `scripts` runs or writes: the commands `--debug` prints when it runs
/// them over `/dev/null` in a throwaway directory (`e`, `w`, `W`, `s///e`, `s///w`), and the
/// files it created there. `None` when sed rejects the script or nothing in it runs or writes.
fn sed_parse_danger(scripts: &[String]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("timeout");
    cmd.args(["5", "sed", "--debug", "-n"]);
    for s in scripts {
        cmd.arg("-e").arg(s);
    }
    let out = cmd.arg("/dev/null").current_dir(dir.path()).output().unwrap();
    if !out.status.success() {
        return None;
    }
    let files = created(dir.path());
    if !files.is_empty() {
        return Some(format!("created {files:?}"));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // Commands are indented; the text of `a`, `i`, `c` continues at the line start.
    text.lines()
        .filter(|l| l.starts_with("  "))
        .find(|l| sed_command_runs(command_after_address(l.trim_start())))
        .map(str::to_owned)
}

/// The command of a `--debug` line after its address (`/re/`, `\cREc`, `1`, `$`, `1,3`, `1~2`,
/// `!`) and the blank after it.
fn command_after_address(line: &str) -> &str {
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        match b.get(i) {
            Some(b'/' | b'\\') => {
                let delimiter = if b[i] == b'\\' {
                    i += 1;
                    b.get(i).copied().unwrap_or(b'/')
                } else {
                    b'/'
                };
                i += 1;
                while i < b.len() && b[i] != delimiter {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                while matches!(b.get(i), Some(b'I' | b'M')) {
                    i += 1;
                }
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'$' | b',' | b'~' | b'+' | b'!') => i += 1,
            Some(b' ') if i > 0 => return line.get(i + 1..).unwrap_or(""),
            _ => return line.get(i..).unwrap_or(""),
        }
    }
}

fn sed_command_runs(command: &str) -> bool {
    match command.as_bytes().first() {
        Some(b'e' | b'w' | b'W') => true,
        Some(b's') => {
            let b = command.as_bytes();
            let Some(&delimiter) = b.get(1) else { return false };
            let (mut i, mut seen) = (2, 0);
            while i < b.len() && seen < 2 {
                if b[i] == b'\\' {
                    i += 1;
                } else if b[i] == delimiter {
                    seen += 1;
                }
                i += 1;
            }
            let flags = &command[i.min(command.len())..];
            let flags = flags.split('w').next().unwrap_or("");
            flags.contains('e') || command[i.min(command.len())..].contains('w')
        }
        _ => false,
    }
}

/// The files GNU sed creates running `scripts` (as `-e` arguments) over a few lines.
fn sed_effects(scripts: &[String]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("input"), "touch E3\na\nx\n").unwrap();
    let mut cmd = Command::new("timeout");
    cmd.args(["5", "sed", "-n"]);
    for s in scripts {
        cmd.arg("-e").arg(s);
    }
    let _ = cmd.arg("input").current_dir(dir.path()).output().unwrap();
    created(dir.path())
}

fn created(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "input")
        .collect()
}

/// Expressions around the places a reader can take a division for a regular expression.
const AWK_EXPRESSIONS: &[&str] = &[
    "1.",
    "1",
    ".5",
    "1e3",
    "2E-1",
    "x",
    "a[1]",
    "$1",
    "(x)",
    "x++",
    "y--",
    "length",
    "\"s\"",
    "/re/",
    "/a|b/",
    "x / 2",
    "1. / 1",
    "x / y / z",
    "$1 / 2",
    "a[1] / 2",
    "(x) / 2",
    "length / 2",
    "x++ / 2",
    "\"a/b\"",
    "/\\//",
    "NR>1",
    "x ~ /b|c/",
    "/\"/",
    "/[]/\"]/",
    "/[^]/\"]/",
    "/[[:alpha:]/\"]/",
    "/[\\]/\"]/",
    "x \\\n/ 2",
    "(x) \\\n/ 2 / 1",
];

/// Statements, some of which run a command or write a file (`@E` is an expression).
const AWK_STATEMENTS: &[&str] = &[
    "x = @E",
    "print @E",
    "print @E > \"out\"",
    "print @E | \"sh\"",
    "printf(\"%s\", @E) >> \"out\"",
    "system(\"touch p\")",
    "if (@E) print @E",
    "y = @E / @E",
    "z = (@E) / @E",
    "# c / d\n",
    "n++",
    "\"date\" | getline d",
    "print @E\n",
    "print @E |& \"sh\"",
    "\"cat\" |& getline z",
    "printf @E > \"out\"",
    "x = @E; print x > \"out\" @E",
    "print @E \\\n> \"out\"",
    "x = @E \\\n/ 2",
    "print @E,\n@E > \"out\"",
    "print @E &&\n@E > \"out\"",
    "print @E ||\n@E | \"sh\"",
    "print @E ?\n@E :\n@E > \"out\"",
    "if (@E) /\"/",
    "if (@E)\n/\"/",
    "if (@E) @E; else /\"/",
    "while (@E) /re/",
    "for (;@E;) /\"/",
    "do @E; while (@E)",
    "do\n@E / 2; while (0)",
    "if (@E) @E\nelse\n/\"/",
    "{\n@E\n}\n/\"/",
    "{ @E\n}",
    "if ((@E)) @E / 2",
    "print \"touch p\" | \"sh\"",
];

/// What separates two statements.
const AWK_JOINERS: &[&str] = &["; ", "\n", " \\\n", ";\n", "\n\n"];

/// The statements of a generated program, each with what follows it.
fn awk_statements(statements: &[(usize, usize, usize, usize)]) -> Vec<String> {
    statements
        .iter()
        .map(|&(s, e1, e2, j)| {
            let statement = AWK_STATEMENTS[s % AWK_STATEMENTS.len()]
                .replacen("@E", AWK_EXPRESSIONS[e1 % AWK_EXPRESSIONS.len()], 1)
                .replacen("@E", AWK_EXPRESSIONS[e2 % AWK_EXPRESSIONS.len()], 1)
                .replace("@E", "x");
            format!("{statement}{}", AWK_JOINERS[j % AWK_JOINERS.len()])
        })
        .collect()
}

fn awk_program(statements: &[(usize, usize, usize, usize)]) -> String {
    format!("BEGIN {{ {} }}", awk_statements(statements).concat())
}

/// The program of `statements` cut into sources before the statements `cuts` names (as `-e`
/// arguments, which gawk reads one after another).
fn awk_sources(statements: &[(usize, usize, usize, usize)], cuts: &[usize]) -> Vec<String> {
    let pieces = awk_statements(statements);
    let mut sources = vec!["BEGIN { ".to_owned()];
    for (k, piece) in pieces.iter().enumerate() {
        if k > 0 && cuts.iter().any(|c| c % pieces.len() == k) {
            sources.push(String::new());
        }
        sources.last_mut().unwrap().push_str(piece);
    }
    sources.last_mut().unwrap().push_str(" }");
    sources
}

const SED_PIECES: &[&str] = &[
    "p",
    "d",
    "n",
    "#x\\",
    "\n",
    ";",
    " ",
    "e touch E1",
    "e",
    "w W1",
    "W W2",
    "s/a/b/",
    "s/x/y/w S1",
    "s/E/F/e",
    "r R\\",
    "R R",
    ":a",
    "b a",
    "t a",
    "T",
    "{",
    "}",
    "1",
    "$",
    "/a/",
    "!",
    "a foo\\",
    "i bar",
    "c baz",
    "y/a/b/",
    "q",
    "l",
    "=",
    "\\",
    "-e",
    "v",
    "F",
    "z",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn awk_programs_the_policy_allows_do_nothing_in_mawk_or_gawk(
        statements in prop::collection::vec((0..64usize, 0..64usize, 0..64usize, 0..8usize), 1..6)
    ) {
        if !require("mawk") || !require("gawk") {
            return Ok(());
        }
        let program = awk_program(&statements);
        if allowed(&format!("awk '{program}' f")) {
            if let Awk::Runs(op) = mawk_danger(&program) {
                prop_assert!(false, "allowed {program:?}, which mawk parses to run `{op}`");
            }
            if let Awk::Runs(op) = gawk_danger(&program) {
                prop_assert!(false, "allowed {program:?}, which gawk parses to run `{op}`");
            }
        }
    }

    #[test]
    fn awk_programs_of_several_sources_the_policy_allows_do_nothing_in_mawk_or_gawk(
        statements in prop::collection::vec((0..64usize, 0..64usize, 0..64usize, 0..8usize), 2..6),
        cuts in prop::collection::vec(0..8usize, 1..3)
    ) {
        if !require("mawk") || !require("gawk") {
            return Ok(());
        }
        let sources = awk_sources(&statements, &cuts);
        let command: String = std::iter::once("gawk".to_owned())
            .chain(sources.iter().map(|s| format!("-e '{s}'")))
            .chain(std::iter::once("f".to_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        if allowed(&command) {
            if let Awk::Runs(op) = mawk_danger_sources(&sources) {
                prop_assert!(false, "allowed {command:?}, which mawk parses to run `{op}`");
            }
            if let Awk::Runs(op) = gawk_danger_sources(&sources) {
                prop_assert!(false, "allowed {command:?}, which gawk parses to run `{op}`");
            }
        }
    }

    #[test]
    fn sed_scripts_the_policy_allows_do_nothing_in_gnu_sed(
        pieces in prop::collection::vec(prop::sample::select(SED_PIECES), 1..10)
    ) {
        if !require("sed") {
            return Ok(());
        }
        // `-e` pieces split the script into separate `-e` arguments.
        let scripts: Vec<String> = pieces
            .split(|p| *p == "-e")
            .map(<[&str]>::concat)
            .filter(|s| !s.is_empty())
            .collect();
        if scripts.is_empty() {
            return Ok(());
        }
        let command: String = std::iter::once("sed -n".to_owned())
            .chain(scripts.iter().map(|s| format!("-e '{s}'")))
            .chain(std::iter::once("input".to_owned()))
            .collect::<Vec<_>>()
            .join(" ");
        if allowed(&command) {
            let effects = sed_effects(&scripts);
            prop_assert!(effects.is_empty(), "allowed {command:?}, and GNU sed created {effects:?}");
            let parsed = sed_parse_danger(&scripts);
            prop_assert!(parsed.is_none(), "allowed {command:?}, and GNU sed parses `{parsed:?}`");
        }
    }
}

#[test]
fn the_oracles_see_the_known_attacks() {
    if !require("mawk") || !require("sed") {
        return;
    }
    assert!(matches!(
        mawk_danger(r#"BEGIN { x = 1. / 1; system("touch p") }"#),
        Awk::Runs(_)
    ));
    assert!(matches!(
        mawk_danger(r#"BEGIN { x = 1. / 1; print "a" | "sh" }"#),
        Awk::Runs(_)
    ));
    assert_eq!(mawk_danger("{ print $1 / 2 }"), Awk::Harmless);
    if require("gawk") {
        for program in [
            r#"BEGIN { x = 1. / 1; system("touch p") }"#,
            r#"BEGIN { print "a" > "out" }"#,
            "BEGIN { print NR > 1 }",
            r#"BEGIN { "date" | getline d }"#,
            r#"BEGIN { print "a" |& "sh" }"#,
        ] {
            assert!(matches!(gawk_danger(program), Awk::Runs(_)), "{program}");
        }
        // What the policy once misread: a continued line, a newline after a comma, a regular
        // expression after a condition (which mawk rejects), a bracket expression holding `/`.
        for program in [
            "BEGIN { x = 1 \\\n/ 2; print \"a\" | \"sh\"; y = 1 / 1 }",
            "BEGIN { print 1 \\\n> \"out\" }",
            "BEGIN { print 1,\n2 > \"out\" }",
            "BEGIN { if (1) /\"/; print \"a\" | \"sh\" }",
            "BEGIN { x = /[]/\"]/; print \"a\" | \"sh\" }",
        ] {
            assert!(matches!(gawk_danger(program), Awk::Runs(_)), "{program}");
        }
        assert_eq!(
            mawk_danger("BEGIN { if (1) /\"/; print \"a\" | \"sh\" }"),
            Awk::Rejected
        );
        assert!(matches!(
            gawk_danger_sources(&["BEGIN { system(\"id\") }".into(), "{ print }".into()]),
            Awk::Runs(_)
        ));
        for program in [
            "{ print $1 / 2 }",
            "BEGIN { print (NR > 1) }",
            r#"BEGIN { x = "a)b" }"#,
        ] {
            assert_eq!(gawk_danger(program), Awk::Harmless, "{program}");
        }
    }
    // Behind an address that never matches, only the parse shows them.
    for script in [
        "/zz/ e touch E1",
        "/zz/ s/a/b/e",
        "/zz/ w W1",
        "1!{s/a/b/gw S1\n}",
    ] {
        assert!(sed_parse_danger(&[script.into()]).is_some(), "{script}");
    }
    for script in ["p", "/e/ p", "s/w/e/g", "a e touch\\\nw x", "y/e/w/"] {
        assert_eq!(sed_parse_danger(&[script.into()]), None, "{script}");
    }
    assert_eq!(sed_effects(&["#x\\".into(), "e touch E1".into()]), ["E1"]);
    assert_eq!(sed_effects(&[":a e touch E1".into()]), ["E1"]);
    assert!(sed_effects(&["p".into()]).is_empty());
}
