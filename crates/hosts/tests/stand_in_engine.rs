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
