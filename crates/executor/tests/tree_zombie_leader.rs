//! A leftover whose main thread has exited while another thread (and that thread's child) runs on
//! shows `Z` in `/proc/<pid>/stat` and no environment or descriptors of its own. The process tree reads
//! it as alive, with its marker and descriptors, so it is stopped at the end of the run that started
//! it, in a pipe run and in a session, inside the run's group or out of it (`setsid`).

mod common;

use std::time::Duration;

use common::zombie_leader;
use shellgate_executor::{ExecOutcome, RunStatus, SessionKey, SessionManager};

/// The run completed and stopped the leftover whose pid it printed and that leftover's child
/// (`sleep <seconds>`), and its notice names the leftover among what it stopped.
fn assert_stopped(outcome: &ExecOutcome, out: &str, seconds: &str, setsid: bool) {
    assert_eq!(
        outcome.status,
        RunStatus::Completed,
        "setsid {setsid}: {outcome:?}"
    );
    let pid: u32 = out
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("setsid {setsid}: no pid printed: {out:?}"));
    let named = format!("zombie_leader (pid {pid})");
    assert!(
        outcome
            .notices
            .iter()
            .any(|n| n.starts_with("Stopped ") && n.contains(&named)),
        "setsid {setsid}: {:?}",
        outcome.notices
    );
    assert!(
        zombie_leader::wait_dead(pid, Duration::from_secs(2)),
        "setsid {setsid}: process {pid} outlived its run"
    );
    let gone = zombie_leader::wait_until(Duration::from_secs(2), || common::survivors(seconds).is_empty());
    assert!(gone, "setsid {setsid}: {:?}", common::survivors(seconds));
}

#[tokio::test]
async fn a_pipe_run_stops_a_leftover_whose_main_thread_has_exited() {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    for (setsid, seconds) in [(false, "987.521"), (true, "987.522")] {
        let command = zombie_leader::start_in_background(program, seconds, setsid);
        let (outcome, out) = common::run(&command).await;
        assert_stopped(&outcome, &out, seconds, setsid);
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
    for (setsid, seconds) in [(false, "987.523"), (true, "987.524")] {
        let command = zombie_leader::start_in_background(program, seconds, setsid);
        let (outcome, out) =
            common::session_run(&manager, &key, &command, None, Duration::from_secs(30)).await;
        assert_stopped(&outcome, &String::from_utf8_lossy(&out), seconds, setsid);
    }
}

#[test]
fn such_a_process_reads_as_alive_with_its_marker_and_descriptors() {
    use std::os::fd::AsRawFd;
    use std::process::{Command, Stdio};

    use shellgate_executor::tree;

    let Some(program) = zombie_leader::program() else {
        return;
    };
    let (reader, writer) = std::io::pipe().unwrap();
    let link = tree::own_fd_link(writer.as_raw_fd()).unwrap();
    let mut child = Command::new(program)
        .arg("987.525")
        .env(tree::RUN_MARKER_VAR, "zombie-leader-525")
        .stdin(Stdio::null())
        .stdout(writer)
        .spawn()
        .unwrap();
    let pid = child.id();
    let main_thread_gone = (0..500).any(|_| {
        std::thread::sleep(Duration::from_millis(10));
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
    });
    let info = tree::read_proc(pid);
    let marked = info
        .as_ref()
        .is_some_and(|i| tree::has_run_marker(i, "zombie-leader-525"));
    let other_marker = info
        .as_ref()
        .is_some_and(|i| tree::has_run_marker(i, "zombie-leader-526"));
    let holds = tree::holds_open(pid, &link);
    let _ = child.kill();
    let _ = child.wait();
    for (leftover, _) in common::survivors("sleep 987.525") {
        let _ = Command::new("kill")
            .args(["-KILL", &leftover.to_string()])
            .status();
    }
    drop(reader);

    assert!(main_thread_gone, "the main thread never exited");
    assert!(info.is_some_and(|i| !i.is_zombie()), "read as a zombie");
    assert!(marked, "the marker is read through the live thread");
    assert!(!other_marker);
    assert!(holds, "the output is held, as the live thread's descriptors show");
}
