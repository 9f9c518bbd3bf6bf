//! Sessions can be listed and closed, close when idle, and stop at shutdown.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use shellgate_executor::{CancellationToken, ExecOutcome, SessionKey, SessionManager, SessionOptions};
use shellgate_sink::Collect;

fn key(name: &str) -> SessionKey {
    SessionKey::new(name)
        .with_shell("/bin/bash")
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str, cwd: Option<&Path>) -> (ExecOutcome, String) {
    let (o, out) = common::session_run(m, k, cmd, cwd, Duration::from_secs(20)).await;
    (o, String::from_utf8_lossy(&out).into_owned())
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

async fn wait_dead(pid: u32) -> bool {
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn list_and_close() {
    let m = SessionManager::default();
    run(&m, &key("one"), "cd /", None).await;
    run(&m, &key("two"), "true", None).await;
    let list = m.list();
    assert_eq!(
        list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
        ["one", "two"]
    );
    assert_eq!(list[0].cwd, Path::new("/"));
    assert_eq!(list[0].commands, 1);
    let pid = list[0].pid.unwrap();
    assert!(alive(pid));
    assert!(m.close("one"));
    assert!(!m.close("one"));
    assert!(wait_dead(pid).await);
    assert_eq!(m.list().len(), 1);
    let pid = m.list()[0].pid.unwrap();
    m.shutdown();
    assert!(m.list().is_empty());
    assert!(wait_dead(pid).await);
}

#[tokio::test]
async fn idle_sessions_are_closed() {
    let m = SessionManager::new(SessionOptions {
        idle_timeout: Duration::from_millis(200),
        ..SessionOptions::default()
    });
    run(&m, &key("idle"), "true", None).await;
    let pid = m.list()[0].pid.unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(m.list().is_empty());
    assert!(wait_dead(pid).await);
}

#[tokio::test]
async fn dropping_the_manager_stops_its_shells() {
    let m = SessionManager::default();
    run(&m, &key("drop"), "true", None).await;
    let pid = m.list()[0].pid.unwrap();
    drop(m);
    assert!(wait_dead(pid).await);
}

#[tokio::test]
async fn working_directory_and_call_env() {
    let m = SessionManager::default();
    let k = key("cwd");
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let (o, out) = run(&m, &k, "pwd", Some(dir.path())).await;
    assert_eq!(out, format!("{}\n", dir.path().display()), "{o:?}");
    let (o, out) = run(&m, &k, "pwd", Some(Path::new("sub"))).await;
    assert_eq!(
        out,
        format!("{}\n", sub.display()),
        "relative to the session cwd: {o:?}"
    );
    let (o, _) = run(&m, &k, "pwd", Some(Path::new("missing"))).await;
    assert_eq!(
        o.error.as_deref(),
        Some(
            format!(
                "Working directory does not exist: {}",
                sub.join("missing").display()
            )
            .as_str()
        )
    );
    std::fs::remove_dir(&sub).unwrap();
    let (o, out) = run(&m, &k, "pwd", None).await;
    assert_eq!(out, format!("{}\n", dir.path().display()), "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("no longer exists")),
        "{:?}",
        o.notices
    );
    let mut env = BTreeMap::new();
    env.insert("CALL_VAR".to_owned(), "it's".to_owned());
    env.insert("bad name".to_owned(), "x".to_owned());
    let mut out = Collect::default();
    let o = m
        .run(
            &k,
            "echo \"$CALL_VAR\"",
            None,
            &env,
            Duration::from_secs(20),
            &mut out,
            CancellationToken::new(),
        )
        .await;
    assert_eq!(out.bytes, b"it's\n");
    assert!(
        o.notices.iter().any(|n| n.contains("bad name")),
        "{:?}",
        o.notices
    );
    m.shutdown();
}
