//! Sessions are independent, and a busy session does not block a second command (SPEC E-10).

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

fn key(name: &str) -> SessionKey {
    SessionKey::new(name)
        .with_shell("/bin/bash")
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_at_once_see_only_their_own_state() {
    let m = SessionManager::default();
    let root = tempfile::tempdir().unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let m = m.clone();
        let dir = root.path().join(format!("d{i}"));
        std::fs::create_dir(&dir).unwrap();
        tasks.push(tokio::spawn(async move {
            let k = key(&format!("s{i}"));
            let (o, _) = run(
                &m,
                &k,
                &format!(
                    "cd '{}' && export MINE={i} && alias me='echo me{i}'",
                    dir.display()
                ),
            )
            .await;
            assert_eq!(o.exit_code, Some(0), "{o:?}");
            let (o, out) = run(&m, &k, "echo \"$MINE $(basename \"$PWD\")\"; me; echo out-$MINE").await;
            (i, dir, o, out)
        }));
    }
    for task in tasks {
        let (i, dir, o, out) = task.await.unwrap();
        assert_eq!(out, format!("{i} d{i}\nme{i}\nout-{i}\n"), "{o:?}");
        assert_eq!(o.cwd_after, Some(dir));
    }
    assert_eq!(m.list().len(), 20);
    m.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_session_runs_the_next_command_in_a_fresh_shell_from_its_state() {
    let m = SessionManager::default();
    let k = key("busy");
    let (o, _) = run(&m, &k, "cd / && export BUSY=state && bf(){ echo bfn; }").await;
    assert_eq!(o.exit_code, Some(0));
    let slow = {
        let (m, k) = (m.clone(), k.clone());
        tokio::spawn(async move {
            let (o, out) = run(&m, &k, "sleep 5.1357; echo slow").await;
            (Instant::now(), o, out)
        })
    };
    // The session is busy once its shell runs the sleep.
    let give_up = Instant::now() + Duration::from_secs(20);
    while common::survivors("5.1357").is_empty() && Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let (o, out) = run(&m, &k, "echo $BUSY; bf; pwd; cd /tmp").await;
    let fast_done = Instant::now();
    assert_eq!(out, "state\nbfn\n/\n", "{o:?}");
    assert!(o.notices.iter().any(|n| n.contains("busy")), "{:?}", o.notices);
    assert_eq!(o.cwd_after, Some(PathBuf::from("/tmp")));
    let (slow_done, o, out) = slow.await.unwrap();
    assert_eq!(out, "slow\n", "{o:?}");
    assert!(
        fast_done < slow_done,
        "the second command did not wait for the first"
    );
    // The fresh shell's changes do not leak into the session.
    let (_, out) = run(&m, &k, "pwd").await;
    assert_eq!(out, "/\n");
    m.shutdown();
}
