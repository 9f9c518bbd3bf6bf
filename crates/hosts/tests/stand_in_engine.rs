//! The whole host contract against a stand-in container engine that runs on this machine, so the
//! scripts, stops and sessions are tested wherever the tests run.

mod support;

use support::contract;

#[tokio::test]
async fn one_shot_basics() {
    let dir = tempfile::tempdir().unwrap();
    contract::one_shot_basics(&support::fake_host(dir.path())).await;
}

#[tokio::test]
async fn one_shot_timeout_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    contract::one_shot_timeout_leaves_nothing(&support::fake_host(dir.path())).await;
}

#[tokio::test]
async fn terminal_timeout_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    contract::terminal_timeout_leaves_nothing(&support::fake_host(dir.path())).await;
}

#[tokio::test]
async fn one_shot_large_output() {
    let dir = tempfile::tempdir().unwrap();
    contract::one_shot_large_output(&support::fake_host(dir.path())).await;
}

#[tokio::test]
async fn a_missing_container_fails_to_start() {
    let dir = tempfile::tempdir().unwrap();
    contract::unreachable(&support::fake_missing_host(dir.path())).await;
}

#[tokio::test]
async fn session_keeps_state() {
    let dir = tempfile::tempdir().unwrap();
    contract::session_keeps_state(&support::fake_host(dir.path())).await;
}

#[tokio::test]
async fn an_idle_session_is_closed_and_starts_afresh() {
    use std::collections::BTreeMap;
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let host = support::fake_host(dir.path());
    let sessions = shellgate_hosts::RemoteSessions::new(shellgate_hosts::RemoteSessionOptions {
        idle_timeout: Duration::from_millis(300),
        ..shellgate_hosts::RemoteSessionOptions::default()
    });
    let none = BTreeMap::new();
    let t = Duration::from_secs(10);
    let (o, _) = contract::in_session(&sessions, &host, "export KEPT=1; echo $$", None, &none, t).await;
    assert_eq!(o.exit_code, Some(0));
    let (_, kept) = contract::in_session(&sessions, &host, "echo ${KEPT-gone}", None, &none, t).await;
    assert_eq!(kept, "1\n");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, after) = contract::in_session(&sessions, &host, "echo ${KEPT-gone}", None, &none, t).await;
    assert_eq!(after, "gone\n", "an idle session was not closed");
    sessions.shutdown().await;
}
