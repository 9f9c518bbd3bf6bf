//! The PTY executor end to end: status, exit codes, output, timeouts and cleanup.

mod common;

use std::time::Duration;

use common::{eventually, processes_matching, spec};
use shellgate_executor::{CancellationToken, ExecOutcome, Executor, LaunchSpec, RunStatus};
use shellgate_pty::PtyExecutor;
use shellgate_sink::Collect;

async fn run(spec: LaunchSpec) -> (ExecOutcome, String) {
    run_with(spec, CancellationToken::new()).await
}

async fn run_with(spec: LaunchSpec, cancel: CancellationToken) -> (ExecOutcome, String) {
    let mut out = Collect::default();
    let outcome = PtyExecutor::default().run(spec, &mut out, cancel).await;
    (outcome, String::from_utf8_lossy(&out.bytes).into_owned())
}

fn sh(script: &str) -> LaunchSpec {
    spec("sh", &["-c", script]).with_timeout(Duration::from_secs(30))
}

#[tokio::test]
async fn tty_prints_the_terminal_and_lines_end_in_lf() {
    let (outcome, text) = run(sh("tty; printf 'a\\nb\\n'")).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(0));
    assert!(outcome.pid.is_some());
    let mut lines = text.split('\n');
    assert!(lines.next().unwrap().starts_with("/dev/pts/"), "{text:?}");
    assert_eq!(lines.collect::<Vec<_>>(), ["a", "b", ""]);
    assert!(!text.contains('\r'), "{text:?}");
}

#[tokio::test]
async fn exit_codes_and_signals_are_reported() {
    let (outcome, _) = run(sh("exit 7")).await;
    assert_eq!(
        (outcome.status, outcome.exit_code, outcome.signal.as_deref()),
        (RunStatus::Completed, Some(7), None)
    );
    let (outcome, _) = run(sh("kill -TERM $$")).await;
    assert_eq!(outcome.exit_code, None);
    assert_eq!(outcome.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(outcome.shell_status(), Some(143));
}

#[tokio::test]
async fn timeout_kills_the_whole_group_and_reports_timed_out() {
    let marker = "985.1234";
    let mut spec = sh(&format!("sleep {marker} & sleep {marker}; echo unreachable"));
    spec.timeout = Some(Duration::from_millis(500));
    spec.kill_grace = Duration::from_millis(500);
    let (outcome, text) = run(spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert!(!text.contains("unreachable"));
    eventually("the sleeps are gone", || processes_matching(marker).is_empty());
}

#[tokio::test]
async fn timeout_escalates_to_sigkill_when_signals_are_ignored() {
    let marker = "984.1234";
    let mut spec = sh(&format!("trap '' HUP TERM; sleep {marker}; sleep {marker}"));
    // Long enough for a loaded machine to get past the `trap` before the timeout.
    spec.timeout = Some(Duration::from_secs(2));
    spec.kill_grace = Duration::from_millis(300);
    let (outcome, _) = run(spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert_eq!(outcome.signal.as_deref(), Some("SIGKILL"));
    eventually("the sleeps are gone", || processes_matching(marker).is_empty());
}

#[tokio::test]
async fn cancel_stops_the_run() {
    let marker = "983.1234";
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let (outcome, _) = run_with(sh(&format!("sleep {marker}")), cancel).await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    eventually("the sleep is gone", || processes_matching(marker).is_empty());
}

#[tokio::test]
async fn leftover_background_processes_are_stopped_with_a_notice() {
    let marker = "982.1234";
    // nohup-style: ignores the hangup the kernel sends when the session leader exits.
    let (outcome, text) = run(sh(&format!(
        "trap '' HUP; sleep {marker} > /dev/null 2>&1 & echo started"
    )))
    .await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(text.contains("started"), "{text:?}");
    assert_eq!(outcome.notices.len(), 1, "{:?}", outcome.notices);
    eventually("the sleep is gone", || processes_matching(marker).is_empty());
}

#[tokio::test]
async fn stdin_is_the_terminal() {
    let (outcome, text) = run(sh("test -t 0 && test -t 1 && test -t 2 && echo all-terminals")).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert!(text.contains("all-terminals"));
}

#[tokio::test]
async fn large_output_arrives_complete() {
    let (outcome, text) = run(sh("seq 1 200000")).await;
    assert_eq!(outcome.exit_code, Some(0));
    let expected = (1..=200_000)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert_eq!(text.len(), expected.len());
    assert!(text == expected);
}
