//! Session commands report the stages of their last top-level pipeline (`pipeline_status`) like the pipe
//! executor does, without changing the command's status, output, `set -e`, `pipefail` or traps.

mod common;

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

use common::zsh_session_key as zsh_key;

fn bash_key(name: &str) -> SessionKey {
    common::session_key(name, "/bin/bash")
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

/// Runs `cmd` and checks its exit code, stages and output.
async fn check(m: &SessionManager, k: &SessionKey, cmd: &str, exit: i32, stages: &[i32], out: &str) {
    let (o, got) = run(m, k, cmd).await;
    assert_eq!(o.exit_code, Some(exit), "{cmd:?}: {o:?}");
    assert_eq!(o.pipeline_status, stages, "{cmd:?}: {o:?}");
    assert_eq!(got, out, "{cmd:?}: {o:?}");
    assert!(o.notices.is_empty(), "{cmd:?}: {:?}", o.notices);
}

/// The cases both shells share; `k` is a fresh session.
async fn core_cases(m: &SessionManager, k: &SessionKey) {
    check(m, k, "false | true", 0, &[1, 0], "").await;
    check(m, k, "true | false", 1, &[0, 1], "").await;
    // The command after a pipeline reports its own (empty) stages, not the previous ones.
    check(m, k, "echo hi", 0, &[], "hi\n").await;
    check(m, k, "false", 1, &[], "").await;
    check(m, k, "true | false; echo x", 0, &[], "x\n").await;
    // `head` exits after one line; the shell reports `yes` killed by SIGPIPE as 128 + 13.
    check(m, k, "yes | head -n 1", 0, &[141, 0], "y\n").await;
    check(m, k, "cd / && false | true", 0, &[1, 0], "").await;
    check(m, k, "printf 'a\\nb\\n' | grep b | wc -l", 0, &[0, 0, 0], "1\n").await;
    // No status line where it could change the meaning: here-documents, a trailing continuation.
    check(m, k, "cat <<EOF | tr a b\naaa\nEOF", 0, &[], "bbb\n").await;
    check(m, k, "echo a | tr a b \\\n", 0, &[], "b\n").await;
    // A command that returns before its last line reports no stages.
    check(m, k, "echo a | cat; return 4\necho b | cat", 4, &[], "a\n").await;
    // The pipeline's status is what `pipefail` makes it, and the option stays set.
    check(m, k, "set -o pipefail; false | true", 1, &[1, 0], "").await;
    check(m, k, "false | true", 1, &[1, 0], "").await;
    check(
        m,
        k,
        "set +o pipefail; set -u; IFS=0; false | true",
        0,
        &[1, 0],
        "",
    )
    .await;
    check(m, k, "unset IFS; set +u", 0, &[], "").await;
}

#[tokio::test]
async fn bash_sessions_report_pipeline_stages() {
    let m = SessionManager::default();
    core_cases(&m, &bash_key("stages")).await;
    m.shutdown();
}

#[tokio::test]
async fn zsh_sessions_report_pipeline_stages() {
    let Some(k) = zsh_key("zstages") else { return };
    let m = SessionManager::default();
    core_cases(&m, &k).await;
    m.shutdown();
}

/// `set -e`: a pipeline whose last stage succeeds keeps the shell; a failing one ends it exactly as a
/// plain failing command does (the next command runs in a restored shell).
async fn errexit_cases(m: &SessionManager, k: &SessionKey) {
    check(m, k, "set -e; X=kept", 0, &[], "").await;
    check(m, k, "false | true", 0, &[1, 0], "").await;
    check(m, k, "false | true; echo after", 0, &[], "after\n").await;
    check(m, k, "true | false || echo handled", 0, &[], "handled\n").await;
    let (o, out) = run(m, k, "true | false; echo not-reached").await;
    assert_eq!((out.as_str(), o.exit_code), ("", Some(1)), "{o:?}");
    let (o, out) = run(m, k, "echo \"$X\"; [[ -o errexit ]] && echo errexit").await;
    assert_eq!(out, "kept\nerrexit\n", "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
}

#[tokio::test]
async fn bash_errexit_sessions_survive_passing_pipelines() {
    let m = SessionManager::default();
    errexit_cases(&m, &bash_key("errexit")).await;
    m.shutdown();
}

#[tokio::test]
async fn zsh_errexit_sessions_survive_passing_pipelines() {
    let Some(k) = zsh_key("zerrexit") else { return };
    let m = SessionManager::default();
    errexit_cases(&m, &k).await;
    // zsh leaves the failure of an `&&` list's left side to the caller of the sourced file: the shell
    // ends as it did before stages were reported.
    let (o, _) = run(&m, &k, "true | false && true").await;
    assert_eq!(o.exit_code, Some(1), "{o:?}");
    let (o, _) = run(&m, &k, "true").await;
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
    // … while `!` exempts a pipeline: the shell stays.
    check(&m, &k, "! true | true", 1, &[0, 0], "").await;
    check(&m, &k, "echo still", 0, &[], "still\n").await;
    // … and so does a compound command around the `&&` list.
    for compound in [
        "{ true | false && true; }",
        "if true; then true | false && true; fi",
    ] {
        let (o, _) = run(&m, &k, compound).await;
        assert_eq!(o.exit_code, Some(1), "{compound:?}: {o:?}");
        check(&m, &k, "echo still", 0, &[], "still\n").await;
    }
    m.shutdown();
}

/// Traps fire as often as for the same command without a pipe (which gets no status line); their output
/// is the command's.
async fn trap_cases(m: &SessionManager, k: &SessionKey, trap: &str) {
    check(m, k, trap, 0, &[], "").await;
    check(m, k, "false | true", 0, &[1, 0], "").await;
    for (piped, plain) in [
        ("true | false", "false"),
        ("! true | true", "! true"),
        ("true | false && true", "false && true"),
        ("true | false || false", "false || false"),
    ] {
        let (o, want) = run(m, k, plain).await;
        assert_eq!(o.exit_code, Some(1), "{plain:?}: {o:?}");
        let (o, got) = run(m, k, piped).await;
        assert_eq!(
            (got.as_str(), o.exit_code),
            (want.as_str(), Some(1)),
            "{piped:?}: {o:?}"
        );
    }
    let (_, out) = run(m, k, "false").await;
    assert!(out.starts_with("trapped\n"), "{out:?}");
}

#[tokio::test]
async fn bash_err_traps_fire_as_without_stages() {
    let m = SessionManager::default();
    let k = bash_key("errtrap");
    trap_cases(&m, &k, "trap 'echo trapped' ERR").await;
    // bash keeps PIPESTATUS across the trap.
    let (o, _) = run(&m, &k, "true | false").await;
    assert_eq!(o.pipeline_status, [0, 1], "{o:?}");
    m.shutdown();
}

#[tokio::test]
async fn zsh_zerr_traps_fire_as_without_stages() {
    let Some(k) = zsh_key("zerrtrap") else { return };
    let m = SessionManager::default();
    trap_cases(&m, &k, "trap 'echo trapped' ZERR").await;
    m.shutdown();
}

/// With `xtrace` or `verbose` on, the command runs without the status line, which would show in the
/// trace; the output is the command's own.
async fn trace_cases(m: &SessionManager, k: &SessionKey) {
    for opt in ["xtrace", "verbose"] {
        let (o, out) = run(m, k, &format!("set -o {opt}; false | true; set +o {opt}")).await;
        assert_eq!(o.exit_code, Some(0), "{o:?}");
        assert!(!out.contains("__shellgate"), "{out:?}");
        check(m, k, &format!("set -o {opt}"), 0, &[], "").await;
        let (o, out) = run(m, k, "false | true").await;
        assert_eq!(
            (o.exit_code, o.pipeline_status.as_slice()),
            (Some(0), &[][..]),
            "{o:?}"
        );
        assert!(out.contains("true") && !out.contains("__shellgate"), "{out:?}");
        let (o, _) = run(m, k, &format!("set +o {opt}")).await;
        assert_eq!(o.exit_code, Some(0), "{o:?}");
        check(m, k, "false | true", 0, &[1, 0], "").await;
    }
}

#[tokio::test]
async fn bash_traces_do_not_show_the_status_line() {
    let m = SessionManager::default();
    let k = bash_key("trace");
    trace_cases(&m, &k).await;
    // A trace switched on by the command itself does not show the status line either.
    let (o, out) = run(&m, &k, "set -x; false | true").await;
    assert_eq!(
        (o.exit_code, o.pipeline_status.as_slice()),
        (Some(0), &[1, 0][..]),
        "{o:?}"
    );
    assert!(!out.contains("__shellgate"), "{out:?}");
    let (o, _) = run(&m, &k, "set +x").await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    // With `functrace`, a DEBUG trap runs inside the command; the status line would add runs of it.
    check(&m, &k, "set -T; trap 'echo dbg' DEBUG", 0, &[], "").await;
    let (_, plain) = run(&m, &k, "true; true").await;
    let (o, piped) = run(&m, &k, "false | true").await;
    assert_eq!((o.exit_code, piped), (Some(0), plain), "{o:?}");
    m.shutdown();
}

#[tokio::test]
async fn zsh_traces_do_not_show_the_status_line() {
    let Some(k) = zsh_key("ztrace") else { return };
    let m = SessionManager::default();
    trace_cases(&m, &k).await;
    m.shutdown();
}
