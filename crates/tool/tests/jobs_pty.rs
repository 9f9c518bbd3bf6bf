//! PTY jobs: keys, submit, screen, resize, waiting-for-input.

#[path = "jobs_common.rs"]
mod common;

use std::time::Duration;

use common::*;
use shellgate::{BashParams, CancellationToken, JobStatus, ProcessAction, ProcessParams};

fn pty_usable() -> bool {
    available_or_skip(
        shellgate_pty::pty_selected(true),
        "no pseudo-terminal is available (or SHELLGATE_NO_PTY=1)",
    )
}

#[tokio::test]
async fn a_pty_job_takes_keys_and_shows_its_screen() {
    if !pty_usable() {
        return;
    }
    let (bash, process) = tools();
    let mut params = BashParams::new("printf 'name? '; read n; echo \"hello $n\"; sleep 7.531");
    params.background = true;
    params.pty = true;
    let started = bash.call(params, CancellationToken::new()).await;
    assert!(started.notices.is_empty(), "{:?}", started.notices);
    let id = started.job_id.unwrap();

    let mut seen = String::new();
    let mut waiting = None;
    for _ in 0..50 {
        let r = poll(&process, &id, 200).await;
        seen.push_str(r.output.as_deref().unwrap_or(""));
        waiting = r.waiting_for_input;
        if seen.contains("name?") && waiting == Some(true) {
            break;
        }
    }
    assert!(seen.contains("name?"), "{seen:?}");
    assert_eq!(waiting, Some(true));

    let mut keys = ProcessParams::new(ProcessAction::SendKeys, &id);
    keys.keys = vec!["b".into(), "o".into()];
    keys.literal = Some("b".into());
    // Waiting returns the terminal's echo with the confirmation.
    keys.wait_ms = Some(10_000);
    let r = process.call(keys).await;
    assert!(!r.is_error, "{r:?}");
    assert!(r.output.as_deref().is_some_and(|o| o.starts_with('b')), "{r:?}");
    seen.push_str(r.output.as_deref().unwrap_or(""));
    let r = act(&process, ProcessAction::Submit, &id).await;
    assert!(r.message.contains("CR"), "{r:?}");
    for _ in 0..50 {
        let r = poll(&process, &id, 200).await;
        seen.push_str(r.output.as_deref().unwrap_or(""));
        if seen.contains("hello bob") {
            break;
        }
    }
    assert!(seen.contains("hello bob"), "{seen:?}");

    let screen = act(&process, ProcessAction::Screen, &id).await;
    assert!(!screen.is_error, "{screen:?}");
    assert!(screen.output.unwrap().contains("hello bob"));
    let mut resize = ProcessParams::new(ProcessAction::Resize, &id);
    resize.cols = Some(100);
    resize.rows = Some(30);
    let r = process.call(resize).await;
    assert!(r.message.contains("100x30"), "{r:?}");

    let killed = act(&process, ProcessAction::Kill, &id).await;
    assert_eq!(killed.status, Some(JobStatus::Killed));
    assert!(gone("sleep 7.531").await);
}

#[tokio::test]
async fn screen_on_a_pipe_job_is_a_clear_error() {
    let (bash, process) = tools();
    let id = background(&bash, "sleep 6.421").await.job_id.unwrap();
    let r = act(&process, ProcessAction::Screen, &id).await;
    assert!(r.is_error);
    assert!(r.message.contains("no terminal"), "{r:?}");
    act(&process, ProcessAction::Kill, &id).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(gone("sleep 6.421").await);
}
