//! Snapshots of the model text `shellgate run` prints off a terminal, for real commands with
//! deterministic output: completed with output, no output, non-zero exit, killed, timed out, and
//! truncated with its artifact (ids redacted).

use std::process::Command;

fn shellgate(store: &std::path::Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"));
    cmd.env("SHELLGATE_ARTIFACT_DIR", store);
    cmd
}

/// The model text of `shellgate run ARGS` (stdout), and its exit status.
fn model_text(args: &[&str]) -> (String, Option<i32>) {
    let store = tempfile::Builder::new()
        .prefix("shellgate-snap-")
        .tempdir()
        .unwrap();
    let out = shellgate(store.path()).arg("run").args(args).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    (text, out.status.code())
}

fn snapshot(name: &str, args: &[&str], expected_status: i32) {
    // The command, without the options (which may name scratch files).
    let command = args.last().copied().unwrap_or_default();
    let (text, status) = model_text(args);
    assert_eq!(status, Some(expected_status), "{args:?}: {text}");
    insta::with_settings!({
        filters => vec![(r"artifact://\d+", "artifact://[ID]")],
        description => command,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn completed_with_output() {
    snapshot("completed_with_output", &["printf 'alpha\\nbeta\\n'"], 0);
}

#[test]
fn completed_without_output() {
    snapshot("completed_without_output", &["true"], 0);
}

#[test]
fn clean_text_without_colours_or_carriage_returns() {
    snapshot(
        "clean_text",
        &["printf '\\033[31mred\\033[0m\\r\\n50%%\\r100%%\\n'"],
        0,
    );
}

#[test]
fn non_zero_exit() {
    snapshot("non_zero_exit", &["echo boom >&2; exit 3"], 3);
}

#[test]
fn killed_by_a_signal() {
    snapshot("killed_by_signal", &["echo dying; kill -9 $$"], 137);
}

#[test]
fn timed_out() {
    snapshot("timed_out", &["--timeout", "1", "echo started; sleep 30"], 124);
}

#[test]
fn truncated_with_artifact() {
    let dir = tempfile::Builder::new()
        .prefix("shellgate-snap-config-")
        .tempdir()
        .unwrap();
    let config = dir.path().join("small-window.toml");
    std::fs::write(&config, "head_bytes = 24\ntail_bytes = 24\n").unwrap();
    snapshot(
        "truncated_with_artifact",
        &["--config", config.to_str().unwrap(), "seq 1 1000"],
        0,
    );
}
