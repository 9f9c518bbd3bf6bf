//! Background jobs through the library API: start, poll, log, write, kill, remove, clear, yield.

#[path = "jobs_common.rs"]
mod common;

use common::*;
use shellgate::{BashParams, CancellationToken, JobStatus, ProcessAction, ProcessParams, ToolStatus};

#[tokio::test]
async fn background_returns_at_once_with_a_job_id_and_pid() {
    let (bash, process) = tools();
    let r = background(&bash, "sleep 31.4151; echo done").await;
    assert_eq!(r.status, ToolStatus::Running);
    assert!(!r.is_error);
    let id = r.job_id.clone().unwrap();
    assert!(id.contains('-'), "{id}");
    assert!(r.pid.is_some());
    let text = r.model_text();
    assert!(
        text.contains(&format!("Command still running (job {id}, pid")),
        "{text}"
    );
    assert!(text.contains("poll"), "{text}");
    let list = process.call(ProcessParams::default()).await;
    let jobs = list.jobs.unwrap();
    assert_eq!(jobs[0].job_id, id);
    assert_eq!(jobs[0].status, JobStatus::Running);
    let killed = act(&process, ProcessAction::Kill, &id).await;
    assert_eq!(killed.status, Some(JobStatus::Killed));
    assert!(gone("sleep 31.4151").await);
}

#[tokio::test]
async fn exit_code_and_output_are_reported_once_and_idempotently() {
    let (bash, process) = tools();
    let id = background(&bash, "sleep 0.3; echo x; exit 3")
        .await
        .job_id
        .unwrap();
    let (last, all) = poll_to_end(&process, &id).await;
    assert_eq!(last.status, Some(JobStatus::Completed));
    assert_eq!(last.exit_code, Some(3));
    assert_eq!(all, "x\n");
    let again = poll(&process, &id, 0).await;
    assert_eq!(again.status, Some(JobStatus::Completed));
    assert_eq!(again.exit_code, Some(3));
    assert_eq!(again.output.as_deref(), Some(""));
    assert_eq!(again.cursor, last.cursor);
    // An explicit `since` re-reads.
    let mut params = ProcessParams::new(ProcessAction::Poll, &id);
    params.since = Some(0);
    assert_eq!(process.call(params).await.output.as_deref(), Some("x\n"));
}

#[tokio::test]
async fn poll_wakes_on_output_not_at_the_deadline() {
    let (bash, process) = tools();
    let id = background(&bash, "sleep 0.3; echo late; sleep 27.18")
        .await
        .job_id
        .unwrap();
    let r = poll(&process, &id, 60_000).await;
    assert_eq!(r.status, Some(JobStatus::Running));
    assert_eq!(r.output.as_deref(), Some("late\n"));
    act(&process, ProcessAction::Kill, &id).await;
    assert!(gone("sleep 27.18").await);
}

#[tokio::test]
async fn write_reaches_a_reading_job_and_eof_closes_stdin() {
    let (bash, process) = tools();
    let id = background(&bash, "read a; echo got:$a; cat; echo end")
        .await
        .job_id
        .unwrap();
    let mut w = ProcessParams::new(ProcessAction::Write, &id);
    w.data = Some("hello\n".into());
    let r = process.call(w.clone()).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.message, format!("Wrote 6 bytes to job {id}."));
    w.data = Some("tail".into());
    w.eof = true;
    assert!(!process.call(w.clone()).await.is_error);
    let (last, all) = poll_to_end(&process, &id).await;
    assert_eq!(all, "got:hello\ntailend\n");
    assert_eq!(last.exit_code, Some(0));
    let r = process.call(w).await;
    assert!(r.is_error);
}

#[tokio::test]
async fn write_with_wait_returns_the_answer_in_the_same_call() {
    let (bash, process) = tools();
    let id = background(&bash, "while read a; do echo got:$a; done; sleep 0.01; echo end")
        .await
        .job_id
        .unwrap();
    let mut w = ProcessParams::new(ProcessAction::Write, &id);
    w.data = Some("one\n".into());
    w.wait_ms = Some(10_000);
    let r = process.call(w.clone()).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(r.action, ProcessAction::Write);
    assert_eq!(r.output.as_deref(), Some("got:one\n"));
    assert_eq!(r.status, Some(JobStatus::Running));
    assert!(
        r.message.starts_with(&format!("Wrote 4 bytes to job {id}.")),
        "{r:?}"
    );
    assert!(r.model_text().starts_with("got:one\n"), "{}", r.model_text());
    // The answer was consumed: the next poll has only what came after it.
    w.data = Some("two\n".into());
    w.eof = true;
    let r = process.call(w).await;
    let mut seen = r.output.unwrap_or_default();
    let (last, rest) = poll_to_end(&process, &id).await;
    seen.push_str(&rest);
    assert_eq!(seen, "got:two\nend\n");
    assert_eq!(last.exit_code, Some(0));
    // Without wait_ms nothing is read.
    let id = background(&bash, "cat").await.job_id.unwrap();
    let mut w = ProcessParams::new(ProcessAction::Write, &id);
    w.data = Some("x\n".into());
    let r = process.call(w).await;
    assert_eq!(r.output, None);
    assert!(!r.model_text().contains('x'), "{}", r.model_text());
    act(&process, ProcessAction::Kill, &id).await;
}

#[tokio::test]
async fn log_pages_by_line() {
    let (bash, process) = tools();
    let id = background(&bash, "seq 1 450").await.job_id.unwrap();
    poll_to_end(&process, &id).await;
    let r = act(&process, ProcessAction::Log, &id).await;
    let out = r.output.unwrap();
    assert_eq!(out.lines().count(), 200);
    assert!(out.starts_with("251\n") && out.ends_with("450\n"));
    assert!(r.notices[0].contains("last 200 of 450"), "{:?}", r.notices);
    let mut p = ProcessParams::new(ProcessAction::Log, &id);
    p.offset = Some(1);
    p.limit = Some(2);
    assert_eq!(process.call(p).await.output.as_deref(), Some("2\n3\n"));
    let mut p = ProcessParams::new(ProcessAction::Log, &id);
    p.limit = Some(2);
    assert_eq!(process.call(p).await.output.as_deref(), Some("449\n450\n"));
}

#[tokio::test]
async fn remove_kills_and_forgets_and_clear_forgets_finished() {
    let (bash, process) = tools();
    let running = background(&bash, "sleep 16.1803").await.job_id.unwrap();
    let done = background(&bash, "true").await.job_id.unwrap();
    poll_to_end(&process, &done).await;
    let r = act(&process, ProcessAction::Remove, &running).await;
    assert!(!r.is_error);
    assert!(gone("sleep 16.1803").await);
    assert!(act(&process, ProcessAction::Poll, &running).await.is_error);
    let r = act(&process, ProcessAction::Clear, &done).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        process
            .call(ProcessParams::default())
            .await
            .jobs
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn kill_with_a_signal_and_the_graceful_sequence_cover_the_tree() {
    let (bash, process) = tools();
    // The shell ignores SIGINT and SIGTERM; its child sleeps. Only SIGKILL ends it.
    let id = background(&bash, "trap '' INT TERM; sleep 14.142 & sleep 14.142; wait")
        .await
        .job_id
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let mut p = ProcessParams::new(ProcessAction::Kill, &id);
    p.signal = Some("USR2".into());
    let r = process.call(p).await;
    // bash dies of an unhandled SIGUSR2.
    assert_eq!(r.status, Some(JobStatus::Killed), "{r:?}");
    assert!(gone("sleep 14.142").await, "tree survived");
}

#[tokio::test]
async fn yield_ms_returns_finished_commands_as_ordinary_results() {
    let (bash, process) = tools();
    let mut params = BashParams::new("echo quick; exit 2");
    params.yield_ms = Some(5000);
    let r = bash.call(params, CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::Completed);
    assert_eq!(r.exit_code, Some(2));
    assert_eq!(r.output, "quick\n");
    assert!(r.job_id.is_none());
    assert!(
        process
            .call(ProcessParams::default())
            .await
            .jobs
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn yield_ms_turns_a_slow_command_into_a_job() {
    let (bash, process) = tools();
    let mut params = BashParams::new("echo first; sleep 12.3456");
    // Long enough for a loaded machine to start the job's shell and print `first`.
    params.yield_ms = Some(3000);
    let r = bash.call(params, CancellationToken::new()).await;
    assert_eq!(r.status, ToolStatus::Running);
    assert_eq!(r.output, "first\n");
    let id = r.job_id.unwrap();
    // What the yield answer showed is not repeated by the first poll.
    assert_eq!(poll(&process, &id, 0).await.output.as_deref(), Some(""));
    act(&process, ProcessAction::Kill, &id).await;
    assert!(gone("sleep 12.3456").await);
}

#[tokio::test]
async fn cancelling_the_caller_does_not_kill_a_job_but_stops_a_foreground_yield_run() {
    let (bash, process) = tools();
    let cancel = CancellationToken::new();
    let mut params = BashParams::new("sleep 11.2233");
    params.background = true;
    let id = bash.call(params, cancel.clone()).await.job_id.unwrap();
    cancel.cancel();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(poll(&process, &id, 0).await.status, Some(JobStatus::Running));
    act(&process, ProcessAction::Kill, &id).await;

    let cancel = CancellationToken::new();
    let mut params = BashParams::new("sleep 10.9988");
    params.yield_ms = Some(60_000);
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let r = bash.call(params, cancel).await;
    assert_eq!(r.status, ToolStatus::Cancelled);
    assert!(gone("sleep 10.9988").await);
}

#[tokio::test]
async fn background_jobs_honour_their_own_timeout() {
    let (bash, process) = tools();
    let mut params = BashParams::new("echo t; sleep 9.87654");
    params.background = true;
    params.timeout = Some(1.0);
    let id = bash.call(params, CancellationToken::new()).await.job_id.unwrap();
    let (last, all) = poll_to_end(&process, &id).await;
    assert_eq!(last.status, Some(JobStatus::TimedOut));
    assert_eq!(all, "t\n");
    assert!(gone("sleep 9.87654").await);
}

#[tokio::test]
async fn unknown_jobs_and_missing_ids_are_error_results() {
    let (_bash, process) = tools();
    assert!(act(&process, ProcessAction::Poll, "no-such-job").await.is_error);
    let r = process
        .call(ProcessParams {
            action: ProcessAction::Kill,
            ..ProcessParams::default()
        })
        .await;
    assert!(r.is_error);
    assert!(r.message.contains("job_id"));
}

#[tokio::test]
async fn a_pipe_job_blocked_on_stdin_is_reported_waiting_for_input() {
    let (bash, process) = tools();
    let id = background(
        &bash,
        "echo ask; read answer; echo \"answer=$answer\"; sleep 5.4321",
    )
    .await
    .job_id
    .unwrap();
    let mut waiting = None;
    for _ in 0..100 {
        let r = poll(&process, &id, 50).await;
        waiting = r.waiting_for_input;
        if waiting == Some(true) {
            assert!(r.notices.iter().any(|n| n.contains("waiting for input")), "{r:?}");
            break;
        }
    }
    if available_or_skip(
        waiting.is_some(),
        "the kernel does not expose /proc/<pid>/syscall here",
    ) {
        assert_eq!(waiting, Some(true));
        let mut w = ProcessParams::new(ProcessAction::Write, &id);
        w.data = Some("42\n".into());
        process.call(w).await;
        let mut seen = String::new();
        for _ in 0..50 {
            let r = poll(&process, &id, 200).await;
            seen.push_str(r.output.as_deref().unwrap_or(""));
            if seen.contains("answer=42") {
                // Now asleep in `sleep`, not in a read of stdin.
                assert_eq!(poll(&process, &id, 0).await.waiting_for_input, Some(false));
                break;
            }
        }
        assert!(seen.contains("answer=42"), "{seen}");
    }
    act(&process, ProcessAction::Kill, &id).await;
    assert!(gone("sleep 5.4321").await);
}

#[tokio::test]
async fn empty_polls_back_off_and_output_resets_the_hint() {
    let (bash, process) = tools();
    let id = background(&bash, "read x; echo $x; sleep 4.8765")
        .await
        .job_id
        .unwrap();
    let mut hints = Vec::new();
    for _ in 0..5 {
        hints.push(poll(&process, &id, 0).await.retry_in_ms.unwrap());
    }
    assert_eq!(hints, [5000, 10000, 30000, 60000, 60000]);
    let mut w = ProcessParams::new(ProcessAction::Write, &id);
    w.data = Some("hi\n".into());
    process.call(w).await;
    // The program answers, then sleeps: the wait after input lasts until `wait_ms`, while it runs.
    let r = poll(&process, &id, 1500).await;
    assert_eq!(r.output.as_deref(), Some("hi\n"));
    assert_eq!(r.retry_in_ms, Some(5000));
    let killed = act(&process, ProcessAction::Kill, &id).await;
    assert_eq!(killed.status, Some(JobStatus::Killed));
    assert_eq!(poll(&process, &id, 0).await.retry_in_ms, None);
    assert!(gone("sleep 4.8765").await);
}
