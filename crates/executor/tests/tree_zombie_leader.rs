//! A leftover whose main thread has exited while another thread (and that thread's child) runs on
//! reads as a zombie and shows no environment of its own. It is still stopped at the end of the run
//! that started it, in a pipe run and in a session, inside the run's group or out of it (`setsid`).

mod common;

use std::time::Duration;

use common::zombie_leader;
use shellgate_executor::{RunStatus, SessionKey, SessionManager};

fn leftover_pid(out: &str) -> u32 {
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid printed: {out:?}"))
}

#[tokio::test]
async fn a_pipe_run_stops_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    for (setsid, seconds) in [(false, "987.501"), (true, "987.502")] {
        let command = zombie_leader::start_in_background(program, seconds, setsid);
        let (outcome, out) = common::run(&command).await;
        assert_eq!(
            outcome.status,
            RunStatus::Completed,
            "setsid {setsid}: {outcome:?}"
        );
        let pid = leftover_pid(&out);
        assert!(
            outcome.notices.iter().any(|n| n.starts_with("Stopped ")),
            "setsid {setsid}: {:?}",
            outcome.notices
        );
        assert!(
            zombie_leader::wait_dead(pid, Duration::from_secs(2)),
            "setsid {setsid}: process {pid} outlived its run"
        );
        common::assert_no_survivors(seconds);
    }
}

#[tokio::test]
async fn a_session_stops_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    let manager = SessionManager::default();
    let key = SessionKey::new("zombie-leader")
        .with_shell("/bin/bash")
        .with_env("HOME", std::env::temp_dir().to_string_lossy());
    for (setsid, seconds) in [(false, "987.503"), (true, "987.504")] {
        let command = zombie_leader::start_in_background(program, seconds, setsid);
        let (outcome, out) =
            common::session_run(&manager, &key, &command, None, Duration::from_secs(30)).await;
        let out = String::from_utf8_lossy(&out);
        assert_eq!(
            outcome.status,
            RunStatus::Completed,
            "setsid {setsid}: {outcome:?}"
        );
        let pid = leftover_pid(&out);
        assert!(
            zombie_leader::wait_dead(pid, Duration::from_secs(2)),
            "setsid {setsid}: process {pid} outlived its command"
        );
        common::assert_no_survivors(seconds);
    }
}
