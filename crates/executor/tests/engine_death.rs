//! E-6: when the engine process is SIGKILLed while a command runs, the command's whole process
//! group goes with it (the guard's parent-death signal), for pipe runs and session shells alike, and
//! so do processes that left the group with `setsid` (found by the run marker).
//!
//! Each test re-executes this test binary as a stand-in engine (`ENGINE_MODE` set), which starts
//! `sleep <marker> & sleep <marker> & wait` and then blocks; the test SIGKILLs it and checks `/proc`.

mod common;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::zombie_leader::{self, wait_until};

use shellgate_executor::{
    CancellationToken, Executor, PipeExecutor, SessionKey, SessionManager, init_subreaper,
};
use shellgate_sink::Collect;

/// Set in the re-executed stand-in engine: `pipe` or `session`.
const ENGINE_MODE: &str = "SHELLGATE_TEST_ENGINE_MODE";
/// The command the stand-in engine runs.
const ENGINE_COMMAND: &str = "SHELLGATE_TEST_ENGINE_COMMAND";

/// In the stand-in engine: run the command and never return. Returns at once in the test itself.
fn act_as_engine() {
    let (Ok(mode), Ok(command)) = (std::env::var(ENGINE_MODE), std::env::var(ENGINE_COMMAND)) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        init_subreaper().unwrap();
        let mut out = Collect::default();
        if mode == "session" {
            let key = SessionKey::new("engine-death")
                .with_shell("/bin/bash")
                .with_env("HOME", std::env::temp_dir().to_string_lossy());
            SessionManager::default()
                .run(
                    &key,
                    &command,
                    None,
                    &BTreeMap::new(),
                    Duration::from_secs(60),
                    &mut out,
                    CancellationToken::new(),
                )
                .await;
        } else {
            let mut spec = common::bash(&command);
            spec.timeout = Some(Duration::from_secs(60));
            PipeExecutor::default()
                .run(spec, &mut out, CancellationToken::new())
                .await;
        }
    });
    // Not reached in practice: the test kills this process long before the 60 s timeout.
    std::process::exit(3)
}

/// Start this test binary as an engine running `command` in `mode`, filtered to test `name`.
fn start_engine(name: &str, mode: &str, command: &str) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(ENGINE_MODE, mode)
        .env(ENGINE_COMMAND, command)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

/// SIGKILL a stand-in engine while `sleep <a> & sleep <b> & wait` runs (with `escape`, the sleeps
/// leave the run's process group: one re-parented away, one a child of the shell); nothing with a
/// marker may survive it by more than 2 s.
fn engine_death_takes_the_run_down(name: &str, mode: &str, tag: u32, escape: bool) {
    let id = std::process::id();
    let markers = [format!("987.{id}{tag}1"), format!("987.{id}{tag}2")];
    let command = if escape {
        format!(
            "(setsid sleep {} &); setsid sleep {} & wait",
            markers[0], markers[1]
        )
    } else {
        format!("sleep {} & sleep {} & wait", markers[0], markers[1])
    };
    let mut engine = start_engine(name, mode, &command);
    let started = wait_until(Duration::from_secs(15), || {
        markers.iter().all(|m| !common::survivors(m).is_empty())
    });
    // SAFETY: kill on the pid of a child we have not reaped yet.
    unsafe {
        libc::kill(engine.id() as i32, libc::SIGKILL);
    }
    let _ = engine.wait();
    assert!(started, "the stand-in engine never started both sleeps");
    let gone = wait_until(Duration::from_secs(2), || {
        markers.iter().all(|m| common::survivors(m).is_empty())
    });
    let left: Vec<_> = markers.iter().flat_map(|m| common::survivors(m)).collect();
    for (pid, _) in &left {
        // SAFETY: kill on pids just read from /proc (cleanup after a failure).
        unsafe {
            libc::kill(*pid as i32, libc::SIGKILL);
        }
    }
    assert!(gone, "survived the engine's death: {left:?}");
}

#[test]
fn pipe_run_dies_with_the_engine() {
    act_as_engine();
    engine_death_takes_the_run_down("pipe_run_dies_with_the_engine", "pipe", 1, false);
}

#[test]
fn session_shell_dies_with_the_engine() {
    act_as_engine();
    engine_death_takes_the_run_down("session_shell_dies_with_the_engine", "session", 2, false);
}

#[test]
fn pipe_run_escapees_die_with_the_engine() {
    act_as_engine();
    engine_death_takes_the_run_down("pipe_run_escapees_die_with_the_engine", "pipe", 3, true);
}

#[test]
fn session_escapees_die_with_the_engine() {
    act_as_engine();
    engine_death_takes_the_run_down("session_escapees_die_with_the_engine", "session", 4, true);
}

/// SIGKILL a stand-in engine while a leftover that left the run's session has lost its main thread
/// (it reads as a zombie and shows no environment of its own; see `common::zombie_leader`): it and
/// its child die with the engine too.
fn engine_death_takes_a_zombie_leader_down(name: &str, mode: &str, tag: u32) {
    let Some(program) = zombie_leader::program() else {
        return;
    };
    let seconds = format!("987.{}{tag}5", std::process::id());
    let pid_file = std::env::temp_dir().join(format!("shellgate-zombie-leader-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_file(&pid_file);
    let start = zombie_leader::start_in_background(program, &seconds, true);
    let command = format!("{start} > '{}'; wait", pid_file.display());
    let mut engine = start_engine(name, mode, &command);
    let mut pid = None;
    let started = wait_until(Duration::from_secs(15), || {
        pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok());
        pid.is_some()
    });
    // SAFETY: kill on the pid of a child we have not reaped yet.
    unsafe {
        libc::kill(engine.id() as i32, libc::SIGKILL);
    }
    let _ = engine.wait();
    let _ = std::fs::remove_file(&pid_file);
    assert!(started, "the stand-in engine never started the leftover");
    let pid = pid.unwrap();
    assert!(
        zombie_leader::wait_dead(pid, Duration::from_secs(2)),
        "process {pid} survived the engine's death"
    );
    let child_gone = wait_until(Duration::from_secs(2), || common::survivors(&seconds).is_empty());
    assert!(
        child_gone,
        "survived the engine's death: {:?}",
        common::survivors(&seconds)
    );
}

#[test]
fn pipe_run_zombie_leader_dies_with_the_engine() {
    act_as_engine();
    engine_death_takes_a_zombie_leader_down("pipe_run_zombie_leader_dies_with_the_engine", "pipe", 5);
}

#[test]
fn session_zombie_leader_dies_with_the_engine() {
    act_as_engine();
    engine_death_takes_a_zombie_leader_down("session_zombie_leader_dies_with_the_engine", "session", 6);
}
