//! `@safe`'s awk and sed readers agree with the real programs: for generated programs around the
//! constructs where a reader can go wrong (comments, line continuations, labels, file names,
//! regular expression or division, numbers with a trailing dot), whatever the policy allows must
//! neither run a command nor write a file as the real program parses it. mawk (Debian's `awk`)
//! prints its parse with `-W dump` without running it; GNU sed is run on a few lines in a
//! throwaway directory, where every command the fragments can run or write only creates a file.

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

/// How mawk parses a program.
#[derive(Debug, PartialEq, Eq)]
enum Mawk {
    /// It is not a program mawk runs.
    Rejected,
    /// It only reads and prints to stdout.
    Harmless,
    /// It runs a command or writes a file (the instruction that does).
    Runs(String),
}

/// What mawk's parse of `program` runs or writes, if anything.
fn mawk_danger(program: &str) -> Mawk {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.awk");
    std::fs::write(&file, program).unwrap();
    let out = Command::new("mawk")
        .args(["-W", "dump", "-f"])
        .arg(&file)
        .current_dir(dir.path())
        .output()
        .unwrap();
    if !out.status.success() {
        return Mawk::Rejected;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut previous: Vec<&str> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let op = fields.get(2).copied().unwrap_or("");
        if op.contains("system") || op.contains("getline") {
            return Mawk::Runs(line.to_owned());
        }
        // A print to a file or a pipe pushes a negative output type just before it.
        if matches!(op, "print" | "printf")
            && previous.first() == Some(&"pushint")
            && previous.get(1).is_some_and(|v| v.starts_with('-'))
        {
            return Mawk::Runs(line.to_owned());
        }
        previous = fields.get(2..).map(<[&str]>::to_vec).unwrap_or_default();
    }
    Mawk::Harmless
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
];

fn awk_program(statements: &[(usize, usize, usize)]) -> String {
    let body: Vec<String> = statements
        .iter()
        .map(|&(s, e1, e2)| {
            AWK_STATEMENTS[s % AWK_STATEMENTS.len()]
                .replacen("@E", AWK_EXPRESSIONS[e1 % AWK_EXPRESSIONS.len()], 1)
                .replacen("@E", AWK_EXPRESSIONS[e2 % AWK_EXPRESSIONS.len()], 1)
        })
        .collect();
    format!("BEGIN {{ {} }}", body.join("; "))
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
    fn awk_programs_the_policy_allows_do_nothing_in_mawk(
        statements in prop::collection::vec((0..64usize, 0..64usize, 0..64usize), 1..6)
    ) {
        if !require("mawk") {
            return Ok(());
        }
        let program = awk_program(&statements);
        if allowed(&format!("awk '{program}' f"))
            && let Mawk::Runs(op) = mawk_danger(&program)
        {
            prop_assert!(false, "allowed {program:?}, which mawk parses to run `{op}`");
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
        Mawk::Runs(_)
    ));
    assert!(matches!(
        mawk_danger(r#"BEGIN { x = 1. / 1; print "a" | "sh" }"#),
        Mawk::Runs(_)
    ));
    assert_eq!(mawk_danger("{ print $1 / 2 }"), Mawk::Harmless);
    assert_eq!(sed_effects(&["#x\\".into(), "e touch E1".into()]), ["E1"]);
    assert_eq!(sed_effects(&[":a e touch E1".into()]), ["E1"]);
    assert!(sed_effects(&["p".into()]).is_empty());
}
