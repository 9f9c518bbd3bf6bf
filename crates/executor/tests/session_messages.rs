//! What a session command prints is its own: no job notices about processes the engine stopped after an
//! earlier command, and error messages that read like those of a one-shot `bash -c` / `zsh -c`.

mod common;

use std::path::PathBuf;

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

fn key(name: &str, shell: PathBuf) -> SessionKey {
    SessionKey::new(name)
        .with_shell(shell)
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

/// Session keys for bash and (when installed) zsh.
fn keys(name: &str) -> Vec<SessionKey> {
    let mut keys = vec![key(&format!("{name}-bash"), "/bin/bash".into())];
    if common::require("zsh")
        && let Some(zsh) = shellgate_executor::find_on_path("zsh")
    {
        keys.push(key(&format!("{name}-zsh"), zsh));
    }
    keys
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

#[tokio::test]
async fn background_jobs_stopped_after_a_command_leave_no_notices() {
    let m = SessionManager::default();
    for k in keys("jobs") {
        let marker = "sleep 987.6141";
        let (o, out) = run(&m, &k, &format!("{marker} & echo started")).await;
        assert_eq!(out, "started\n", "{o:?}");
        assert!(
            o.notices.iter().any(|n| n.contains("sleep (pid")),
            "the engine reports what it killed: {:?}",
            o.notices
        );
        common::assert_no_survivors(marker);
        let (o, out) = run(&m, &k, "echo next; jobs").await;
        assert_eq!(out, "next\n", "{}: {o:?}", k.name);
        let (o, out) = run(&m, &k, "echo again").await;
        assert_eq!(out, "again\n", "{}: {o:?}", k.name);
    }
    m.shutdown();
}
