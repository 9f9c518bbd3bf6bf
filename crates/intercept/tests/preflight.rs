//! Script preflight: shell-variable syntax in Python and JavaScript files in the workdir.

use std::fs;

use shellgate_intercept::{Context, Policy, Verdict};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn judge_in(dir: &std::path::Path, command: &str) -> Verdict {
    let policy = Policy::builder().build().unwrap();
    let ctx = Context {
        cwd: Some(dir.to_path_buf()),
        ..Context::default()
    };
    shellgate_intercept::Interceptor::inspect(
        &policy,
        &StandardNormalizer::default().normalize(command),
        &ctx,
    )
}

#[test]
fn python_shell_variables_are_found_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("app.py"),
        "import os\n# $HOME in a comment\nprint('$HOME', f\"{x} ${y}\")\nkey = $OPENAI_API_KEY\n",
    )
    .unwrap();
    match judge_in(dir.path(), "python3 app.py") {
        Verdict::Deny { rule, reason, .. } => {
            assert_eq!(rule, "preflight");
            assert!(
                reason.contains("app.py") && reason.contains("line 4") && reason.contains("OPENAI_API_KEY"),
                "{reason}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        judge_in(dir.path(), "cd . && timeout 60 python3 -u app.py"),
        Verdict::Deny { .. }
    ));
    assert_eq!(judge_in(dir.path(), "python3 -c 'print(1)'"), Verdict::Allow);
}

#[test]
fn strings_comments_fstrings_and_triple_quotes_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("ok.py"),
        "'''\n$HOME\n'''\nx = f\"${price:.2f}\"  # $X\ny = \"${Z}\"\n",
    )
    .unwrap();
    assert_eq!(judge_in(dir.path(), "python ok.py"), Verdict::Allow);
}

#[test]
fn javascript_template_literals_are_fine_code_is_not() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("ok.js"),
        "const a = `${process.env.HOME}`;\nconst $el = 1; // $HOME\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("bad.js"),
        "const a = 1;\nconst t = $GITHUB_TOKEN;\n",
    )
    .unwrap();
    assert_eq!(judge_in(dir.path(), "node ok.js"), Verdict::Allow);
    match judge_in(dir.path(), "node bad.js") {
        Verdict::Deny { reason, .. } => {
            assert!(reason.contains("bad.js") && reason.contains("line 2"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(judge_in(dir.path(), "bun bad.js"), Verdict::Deny { .. }));
}

#[test]
fn files_outside_the_workdir_are_not_read() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("x.py"), "a = $HOME\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let cmd = format!("python3 {}", outside.path().join("x.py").display());
    assert_eq!(judge_in(work.path(), &cmd), Verdict::Allow);
}

#[test]
fn preflight_can_be_switched_off() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("app.py"), "key = $KEY\n").unwrap();
    let policy = Policy::builder().preflight(false).build().unwrap();
    let ctx = Context {
        cwd: Some(dir.path().to_path_buf()),
        ..Context::default()
    };
    let v = shellgate_intercept::Interceptor::inspect(
        &policy,
        &StandardNormalizer::default().normalize("python3 app.py"),
        &ctx,
    );
    assert_eq!(v, Verdict::Allow);
}
