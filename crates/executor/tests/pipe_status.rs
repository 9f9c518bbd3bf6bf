//! Exit codes, signals, pipeline statuses, timeouts and output order.

mod common;

use std::fmt::Write as _;
use std::time::Duration;

use common::{bash, run, run_spec};
use shellgate_executor::RunStatus;

#[tokio::test]
async fn exact_exit_codes() {
    for (command, code) in [
        ("exit 0", 0),
        ("exit 7", 7),
        ("exit 255", 255),
        ("exit 256", 0),
        ("false", 1),
    ] {
        let (outcome, _) = run(command).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{command}");
        assert_eq!(outcome.exit_code, Some(code), "{command}");
        assert_eq!(outcome.signal, None, "{command}");
    }
    let (outcome, out) = run("no-such-command-4711").await;
    assert_eq!(outcome.exit_code, Some(127));
    assert!(out.contains("not found"), "{out}");
}

#[tokio::test]
async fn exact_signals() {
    for (command, name, status) in [
        ("kill -KILL $$", "SIGKILL", 137),
        ("kill -TERM $$", "SIGTERM", 143),
        ("kill -USR1 $$", "SIGUSR1", 138),
    ] {
        let (outcome, _) = run(command).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{command}");
        assert_eq!(outcome.exit_code, None, "{command}");
        assert_eq!(outcome.signal.as_deref(), Some(name), "{command}");
        assert_eq!(outcome.shell_status(), Some(status), "{command}");
    }
}

#[tokio::test]
async fn pipeline_statuses_excuse_upstream_sigpipe() {
    let (outcome, out) = run("printf 'a\\nb\\n' | false | cat").await;
    assert_eq!(out, "");
    assert_eq!(outcome.exit_code, Some(0));
    // `printf` may or may not hit the closed pipe before `false` exits: 141 then, excused.
    assert!(
        [vec![0, 1, 0], vec![141, 1, 0]].contains(&outcome.pipeline_status),
        "{:?}",
        outcome.pipeline_status
    );
    assert_eq!(outcome.failed_stages(), vec![1]);

    let (outcome, out) = run("yes | head -n 1").await;
    assert_eq!(out, "y\n");
    assert_eq!(outcome.pipeline_status, vec![141, 0]);
    assert!(outcome.failed_stages().is_empty());

    let (outcome, _) = run("set -o pipefail; true | exit 3 | true").await;
    assert_eq!(outcome.exit_code, Some(3));
    assert_eq!(outcome.pipeline_status, vec![0, 3, 0]);

    // Only the last top-level command counts; a plain command reports no stages.
    let (outcome, _) = run("false | true; echo x").await;
    assert!(outcome.pipeline_status.is_empty());
}

#[tokio::test]
async fn own_exit_124_is_not_a_timeout() {
    let (outcome, out) = run("timeout 1 sleep 5; echo rc=$?").await;
    assert_eq!(out, "rc=124\n");
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(0));

    let (outcome, _) = run("exit 124").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(124));
}

#[tokio::test]
async fn engine_timeout_is_timed_out() {
    let mut spec = bash("echo before; sleep 987.301; echo after");
    // Long enough for a loaded machine to print `before` before the timeout.
    spec.timeout = Some(Duration::from_secs(2));
    spec.kill_grace = Duration::from_millis(200);
    let (outcome, out) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert_eq!(out, "before\n");
    common::assert_no_survivors("987.301");
}

#[tokio::test]
async fn stdout_and_stderr_keep_their_order() {
    let command = "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; echo err$i >&2; done";
    let mut expected = String::new();
    for i in 1..=10 {
        write!(expected, "out{i}\nerr{i}\n").unwrap();
    }
    for _ in 0..100 {
        let (outcome, out) = run(command).await;
        assert_eq!(outcome.exit_code, Some(0));
        assert_eq!(out, expected);
    }
}

#[tokio::test]
async fn megabytes_on_stderr_before_stdout_do_not_deadlock() {
    let (outcome, out) = run("head -c 2000000 /dev/zero | tr '\\0' x >&2; echo done").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out.len(), 2_000_005);
    assert!(out.ends_with("xdone\n"));
}
