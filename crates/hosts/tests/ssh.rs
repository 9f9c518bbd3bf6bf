//! The host contract against a real sshd on loopback (`.ci/hosts.sh up`; a skip is a failure under
//! `SHELLGATE_REQUIRE_ALL=1`).

mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use shellgate_hosts::{ClientSettings, HostTarget, RemoteHost, RemoteSessions};
use support::contract;

fn host() -> Option<(tempfile::TempDir, RemoteHost)> {
    let dir = tempfile::tempdir().unwrap();
    let host = support::ssh_host(dir.path())?;
    Some((dir, host))
}

#[tokio::test]
async fn one_shot_basics() {
    let Some((_dir, host)) = host() else { return };
    contract::one_shot_basics(&host).await;
    host.shutdown();
}

#[tokio::test]
async fn a_timeout_leaves_no_remote_process() {
    let Some((_dir, host)) = host() else { return };
    contract::one_shot_timeout_leaves_nothing(&host).await;
    host.shutdown();
}

#[tokio::test]
async fn a_terminal_timeout_leaves_no_remote_process() {
    let Some((_dir, host)) = host() else { return };
    contract::terminal_timeout_leaves_nothing(&host).await;
    host.shutdown();
}

#[tokio::test]
async fn ten_megabytes_pass_bounded() {
    let Some((_dir, host)) = host() else { return };
    contract::one_shot_large_output(&host).await;
    host.shutdown();
}

#[tokio::test]
async fn a_persistent_remote_session_keeps_state() {
    let Some((_dir, host)) = host() else { return };
    contract::session_keeps_state(&host).await;
    host.shutdown();
}

#[tokio::test]
async fn fifty_commands_reuse_one_connection() {
    let Some((_dir, host)) = host() else { return };
    let mut connections = std::collections::BTreeSet::new();
    for _ in 0..50 {
        let (outcome, out) = contract::one_shot(&host, contract::shell("echo \"$SSH_CONNECTION\"", "")).await;
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?} {out}");
        connections.insert(out);
    }
    assert_eq!(connections.len(), 1, "{connections:?}");
    // The session's shell goes through the same connection.
    let sessions = RemoteSessions::default();
    let (_, out) = contract::in_session(
        &sessions,
        &host,
        "echo \"$SSH_CONNECTION\"",
        None,
        &BTreeMap::new(),
        Duration::from_secs(20),
    )
    .await;
    assert!(connections.contains(&out), "{out} vs {connections:?}");
    sessions.shutdown().await;
    host.shutdown();
}

#[tokio::test]
async fn an_unreachable_host_fails_to_start() {
    let Some((dir, host)) = host() else { return };
    // The same configuration, a destination no sshd answers.
    let clients = ClientSettings {
        ssh: shellgate_hosts::SshSettings {
            options: vec!["Port=1".into(), "ConnectTimeout=3".into()],
            ..host.clients().ssh.clone()
        },
        ..host.clients().clone()
    };
    let target = HostTarget::parse("ssh:127.0.0.1").unwrap();
    contract::unreachable(&RemoteHost::new(target, clients, dir.path())).await;
}
