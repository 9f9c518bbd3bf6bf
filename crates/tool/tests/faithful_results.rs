//! Regression tests: a lifted limiter never changes how a command ends, and nothing reaches the model
//! half-rendered or cut short (one test per failure seen).

#[path = "jobs_common.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use shellgate::{BashParams, CancellationToken, ToolStatus};

async fn run_in(session: &str, command: &str) -> shellgate::ToolResult {
    let (bash, _) = tools();
    let mut params = BashParams::new(command);
    params.session = Some(session.to_owned());
    params.timeout = Some(60.0);
    bash.call(params, CancellationToken::new()).await
}

#[tokio::test]
async fn endless_producer_under_a_lifted_head_ends_as_under_bash() {
    for session in ["none", "default"] {
        for (command, output, stages) in [
            ("yes | cat | head -n 3", "y\ny\ny\n", vec![141, 141, 0]),
            ("seq 1 100000000 | head -n 5", "1\n2\n3\n4\n5\n", vec![141, 0]),
            ("cat /dev/zero | od -v | head -n 2", "", vec![141, 141, 0]),
            ("(echo a; sleep 60) | head -n 1", "a\n", vec![141, 0]),
        ] {
            let started = Instant::now();
            let r = run_in(session, command).await;
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{command} took {:?}",
                started.elapsed()
            );
            assert_eq!(r.status, ToolStatus::Completed, "{session} {command}: {r:?}");
            assert_eq!(r.exit_code, Some(0), "{session} {command}: {r:?}");
            assert_eq!(
                r.pipeline_status.as_deref(),
                Some(&stages[..]),
                "{session} {command}"
            );
            if !output.is_empty() {
                assert_eq!(r.output, output, "{session} {command}");
            }
            assert!(
                r.notices.iter().any(|n| n.contains("of at least")),
                "{session} {command}: {:?}",
                r.notices
            );
        }
        // Python ignores SIGPIPE: it meets EPIPE and exits 1, as under bash.
        let r = run_in(session, "python3 -c 'while True: print(1)' | head -n 2").await;
        assert_eq!((r.exit_code, r.output.as_str()), (Some(0), "1\n1\n"), "{session}");
        assert_eq!(r.pipeline_status.as_deref(), Some(&[1, 0][..]), "{session}");
    }
}

#[tokio::test]
async fn a_builtin_loop_under_a_lifted_head_leaves_the_session_alive() {
    let (bash, _) = tools();
    let call = |command: &str| {
        let mut params = BashParams::new(command);
        params.session = Some("loop".to_owned());
        params.timeout = Some(60.0);
        bash.call(params, CancellationToken::new())
    };
    call("export KEEP=1").await;
    let r = call("while :; do echo 1; KEEP=2; done | head -n 2").await;
    assert_eq!((r.exit_code, r.output.as_str()), (Some(0), "1\n1\n"), "{r:?}");
    assert_eq!(r.pipeline_status.as_deref(), Some(&[141, 0][..]));
    assert!(
        r.notices.iter().any(|n| n.contains("of at least")),
        "{:?}",
        r.notices
    );
    assert!(!r.notices.iter().any(|n| n.contains("ended")), "{:?}", r.notices);
    let r = call("echo $KEEP").await;
    assert_eq!(r.output, "1\n", "a pipeline stage runs in a subshell, as in bash");
    assert!(
        !r.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        r.notices
    );
}

#[tokio::test]
async fn pipeline_status_of_a_lifted_tail_is_that_of_the_pipeline_as_written() {
    for session in ["none", "default"] {
        let r = run_in(session, "sh -c 'echo out; exit 3' | tail -1").await;
        assert_eq!(r.exit_code, Some(0), "{session}: {r:?}");
        assert_eq!(r.pipeline_status.as_deref(), Some(&[3, 0][..]), "{session}");
        assert!(
            r.notices
                .iter()
                .any(|n| n.contains("stage 1 of 2 (`sh`) exited with code 3")),
            "{session}: {:?}",
            r.notices
        );
    }
    // Under pipefail (set earlier in the session) the pipeline's status is the failing stage's.
    let (bash, _) = tools();
    let call = |command: &str| {
        let mut params = BashParams::new(command);
        params.session = Some("pf".to_owned());
        bash.call(params, CancellationToken::new())
    };
    call("set -o pipefail").await;
    let r = call("sh -c 'echo out; exit 3' | tail -1").await;
    assert_eq!(r.exit_code, Some(3), "{r:?}");
    assert_eq!(r.pipeline_status.as_deref(), Some(&[3, 0][..]));
}

#[tokio::test]
async fn erase_line_and_cursor_column_render_as_a_terminal_shows() {
    let r = run_in("none", r"printf '\033[31mred\033[0m plain \033[2K\033[1Gdone\n'").await;
    assert_eq!(r.output, "done\n");
}

#[tokio::test]
async fn a_long_merged_line_keeps_its_end() {
    let r = run_in(
        "none",
        r#"python3 -c "import sys; sys.stderr.write('x'*3000000); print('OUT')""#,
    )
    .await;
    assert!(
        r.output.contains("OUT"),
        "{}",
        &r.output[r.output.len().saturating_sub(200)..]
    );
    assert!(r.output.contains("bytes cut"), "the cut is marked");
    assert!(r.output.len() < 10_000);
}

#[tokio::test]
async fn a_poll_answer_waits_for_the_line_to_end() {
    let (bash, process) = tools();
    let mut params = BashParams::new("python3 -c \"import sys; print('got', sys.stdin.readline().strip())\"");
    params.background = true;
    params.env.insert("PYTHONUNBUFFERED".into(), "1".into());
    let id = bash.call(params, CancellationToken::new()).await.job_id.unwrap();
    let mut write = shellgate::ProcessParams::new(shellgate::ProcessAction::Write, &id);
    write.data = Some("hello\n".into());
    write.wait_ms = Some(5000);
    let answer = process.call(write).await;
    assert_eq!(answer.output.as_deref(), Some("got hello\n"), "{answer:?}");
}

#[tokio::test]
async fn a_yielded_job_applies_head_to_the_full_stream() {
    let (bash, _) = tools();
    let mut params = BashParams::new("seq 1 200000 | head -n 150000");
    params.yield_ms = Some(30_000);
    let r = bash.call(params, CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::Completed, "{r:?}");
    assert!(
        r.output.ends_with("150000\n"),
        "{}",
        &r.output[r.output.len() - 50..]
    );
    assert!(!r.output.contains("150001"));
    let t = r.truncation.as_ref().expect("truncated");
    assert!(t.total_lines >= 150_000, "{t:?}");
    assert!(
        r.notices.iter().any(|n| n.contains("150000 of")),
        "the count is exact and excludes the elision marker: {:?}",
        r.notices
    );
}

fn auto_yield_tools(after_ms: u64) -> (shellgate::BashTool, shellgate::ProcessTool) {
    let mut config = test_config();
    config.auto_yield = Some(Duration::from_millis(after_ms));
    tools_with(config)
}

#[tokio::test]
async fn a_long_foreground_call_becomes_a_job_after_the_auto_yield() {
    for session in ["none", "default"] {
        let (bash, process) = auto_yield_tools(2000);
        // Starting the session takes a moment; it must not eat into the time before the yield.
        let mut warm = BashParams::new("true");
        warm.session = Some(session.to_owned());
        bash.call(warm, CancellationToken::new()).await;
        let mut params = BashParams::new("echo start; sleep 5; echo end; exit 3");
        params.session = Some(session.to_owned());
        let r = bash.call(params, CancellationToken::new()).await;
        // Running: the answer came at the yield, before the end.
        assert_eq!(r.status, ToolStatus::Running, "{session}: {r:?}");
        assert_eq!(r.output, "start\n", "{session}: the output so far");
        let id = r.job_id.clone().expect("a job id");
        assert!(
            r.model_text()
                .contains(&format!("Command still running (job {id}"))
        );
        let (last, seen) = poll_to_end(&process, &id).await;
        assert_eq!(seen, "end\n", "{session}: later output through poll");
        assert_eq!(last.exit_code, Some(3), "{session}: {last:?}");
    }
}

#[tokio::test]
async fn a_session_command_gone_to_the_background_keeps_the_session_busy_and_can_be_killed() {
    let (bash, process) = auto_yield_tools(1500);
    let call = |command: &str| {
        let mut params = BashParams::new(command);
        params.session = Some("busy".to_owned());
        bash.call(params, CancellationToken::new())
    };
    // Starting the session takes a moment; it must not be what goes to the background.
    let first = call("export MARK=kept").await;
    assert_eq!(first.status, ToolStatus::Completed, "{first:?}");
    let r = call("sleep 30").await;
    assert_eq!(r.status, ToolStatus::Running, "{r:?}");
    let id = r.job_id.unwrap();
    // The session's shell is busy: the next command runs in a fresh shell from its state.
    let next = call("echo $MARK").await;
    assert_eq!(next.output, "kept\n");
    assert!(next.notices.iter().any(|n| n.contains("was busy")), "{next:?}");
    let started = Instant::now();
    let killed = act(&process, shellgate::ProcessAction::Kill, &id).await;
    assert_eq!(killed.status, Some(shellgate::JobStatus::Killed), "{killed:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // A cancelled session command loses its shell; the session comes back from its saved state.
    let after = call("echo $MARK").await;
    assert_eq!(after.output, "kept\n", "{after:?}");
}

#[tokio::test]
async fn cancelling_the_caller_before_the_auto_yield_stops_the_run() {
    let (bash, _) = auto_yield_tools(30_000);
    let cancel = CancellationToken::new();
    cancel_once_running("30.4711", cancel.clone());
    let mut params = BashParams::new("echo partial; sleep 30.4711");
    params.session = Some("none".to_owned());
    let r = bash.call(params, cancel).await;
    assert_eq!(r.status, ToolStatus::Cancelled, "{r:?}");
    assert_eq!(r.output, "partial\n");
}

#[tokio::test]
async fn a_lifted_cd_into_a_missing_directory_answers_as_bash() {
    for session in ["none", "default"] {
        let r = run_in(session, "cd /nonexistent/shellgate-dir && echo reached").await;
        assert_eq!(r.status, ToolStatus::Completed, "{session}: {r:?}");
        assert_eq!(r.exit_code, Some(1), "{session}: {r:?}");
        assert!(
            r.output.contains("No such file or directory") && !r.output.contains("reached"),
            "{session}: {r:?}"
        );
        // An existing directory is still lifted.
        let r = run_in(session, "cd /tmp && pwd").await;
        assert_eq!(r.output.trim(), "/tmp", "{session}: {r:?}");
    }
}
