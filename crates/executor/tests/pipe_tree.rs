//! Process-tree control: background and escaped descendants, TERM-ignoring trees, cancellation, the
//! engine's own safety, zombies.

mod common;

use std::time::Duration;

use common::{assert_no_survivors, bash, run, run_spec, zombies_named};
use shellgate_executor::{Executor, Flow, PipeExecutor, RunStatus, Sink, init_subreaper};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn background_and_escaped_descendants_leave_no_survivor() {
    let cases = [
        ("sleep 987.401 & echo started", "987.401"),
        ("nohup sleep 987.402 >/dev/null 2>&1 & echo started", "987.402"),
        ("setsid sleep 987.403 & echo started", "987.403"),
        ("setsid -f sleep 987.404 >/dev/null 2>&1; echo started", "987.404"),
        ("(sleep 987.405 &); echo started", "987.405"),
        ("( (sleep 987.406 >/dev/null 2>&1 &) & ); echo started", "987.406"),
        (
            "env -i /bin/sleep 987.407 >/dev/null 2>&1 & echo started",
            "987.407",
        ),
    ];
    for (command, marker) in cases {
        // The 30 s timeout stands in for "promptly": the sleeps would last 987 s.
        let (outcome, out) = run(command).await;
        assert_eq!(outcome.status, RunStatus::Completed, "{command}");
        assert_eq!(outcome.exit_code, Some(0), "{command}");
        assert_eq!(out, "started\n", "{command}");
        assert!(
            outcome
                .notices
                .iter()
                .any(|n| n.starts_with("Stopped 1 background process")),
            "{command}: {:?}",
            outcome.notices
        );
        assert_no_survivors(marker);
    }
}

#[tokio::test]
async fn process_substitution_output_is_kept() {
    let (outcome, out) = run("exec > >(sed s/^/987.408:/); echo via-sed").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "987.408:via-sed\n");
    assert_no_survivors("987.408");

    // `exec -a` gives the `cat` a command line to look for.
    let (outcome, out) = run("exec > >(exec -a cat987.409 cat); echo via-cat").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "via-cat\n");
    assert_no_survivors("cat987.409");
}

#[tokio::test]
async fn term_ignoring_tree_is_killed_at_timeout() {
    let mut spec = bash("trap '' TERM; sleep 987.411 & setsid sleep 987.412 & sleep 987.413; echo never");
    // Long enough for a loaded machine to get past the `trap` before the timeout.
    spec.timeout = Some(Duration::from_secs(2));
    spec.kill_grace = Duration::from_millis(200);
    let (outcome, out) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert!(!out.contains("never"));
    assert_eq!(outcome.signal.as_deref(), Some("SIGKILL"));
    assert_no_survivors("987.41");
}

#[tokio::test]
async fn tree_whose_leader_exited_first() {
    let (outcome, _) = run("(trap '' TERM HUP; exec sleep 987.421) & exit 5").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(5));
    assert_no_survivors("987.421");

    // At a timeout the shell dies of SIGTERM first; its TERM-ignoring child is killed after the grace.
    let mut spec = bash("(trap '' TERM; sleep 987.422 >/dev/null) & sleep 987.423");
    spec.timeout = Some(Duration::from_millis(300));
    spec.kill_grace = Duration::from_millis(200);
    let (outcome, _) = run_spec(spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert_no_survivors("987.42");
}

#[tokio::test]
async fn commands_cannot_kill_the_engine() {
    for signal in ["TERM", "INT", "HUP", "QUIT", "USR1", "CHLD"] {
        let (outcome, out) = run(&format!("kill -{signal} $PPID; echo alive-$?")).await;
        assert_eq!(outcome.status, RunStatus::Completed);
        assert_eq!(out, "alive-0\n", "SIG{signal}");
    }
    // SIGKILL cannot be ignored: the guard dies, and its parent-death signal takes the shell with it.
    let (outcome, _) = run("kill -KILL $PPID; sleep 987.451").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.signal.as_deref(), Some("SIGKILL"));
    assert_no_survivors("987.451");
    let (outcome, out) = run("kill 0; echo never").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(out, "");
    // Still here: this test process is the engine.
}

#[tokio::test]
async fn many_short_background_children_leave_no_zombies() {
    let dir = tempfile::tempdir().unwrap();
    let name = "sgz987";
    let program = dir.path().join(name);
    std::os::unix::fs::symlink("/bin/true", &program).unwrap();
    let p = program.display();
    let command =
        format!("for i in $(seq 250); do {p} & done; for i in $(seq 250); do ({p} &); done; wait; echo ok");
    let (outcome, out) = run(&command).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "ok\n");
    assert_eq!(zombies_named(name), Vec::<u32>::new());
}

#[tokio::test]
async fn back_to_back_runs_leave_neither_guards_nor_commands_unreaped() {
    let dir = tempfile::tempdir().unwrap();
    let name = "sgq987";
    let program = dir.path().join(name);
    std::os::unix::fs::symlink("/bin/true", &program).unwrap();
    let mut leaders = Vec::new();
    for _ in 0..60 {
        let (outcome, _) = run(&program.display().to_string()).await;
        assert_eq!(outcome.exit_code, Some(0));
        leaders.extend(outcome.pid);
    }
    // Guards that were still finishing are reaped on the runtime shortly after their run returned.
    // One still running counts too: it may become a zombie only after a first look found none.
    let me = std::process::id();
    let unreaped = || {
        leaders
            .iter()
            .filter_map(|&pid| shellgate_executor::tree::read_proc(pid))
            .filter(|p| p.ppid == me)
            .count()
    };
    let give_up = std::time::Instant::now() + Duration::from_secs(3);
    let settled = || unreaped() == 0 && zombies_named(name).is_empty();
    while !settled() && std::time::Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(unreaped(), 0, "guards left behind");
    assert_eq!(zombies_named(name), Vec::<u32>::new(), "commands left as zombies");
}

#[tokio::test]
async fn a_stopped_guard_is_not_left_behind() {
    let (outcome, out) = run("kill -STOP $PPID; echo hi").await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out, "hi\n");
    let guard = outcome.pid.unwrap();
    // Killed at the end of the run, or, when it stopped only after that, a second later.
    let give_up = std::time::Instant::now() + Duration::from_secs(15);
    let gone = || shellgate_executor::tree::read_proc(guard).is_none() && zombies_in_group(guard).is_empty();
    while !gone() && std::time::Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        shellgate_executor::tree::read_proc(guard),
        None,
        "the stopped guard is still there"
    );
    assert_eq!(
        zombies_in_group(guard),
        Vec::<u32>::new(),
        "its command was not reaped"
    );
}

/// Zombie children of this process in process group `group`.
fn zombies_in_group(group: u32) -> Vec<u32> {
    let me = std::process::id();
    shellgate_executor::tree::children_of(me)
        .into_iter()
        .filter_map(shellgate_executor::tree::read_proc)
        .filter(|p| p.is_zombie() && p.pgid == group)
        .map(|p| p.pid)
        .collect()
}

/// Cancels a token once the output contains a word; keeps everything written.
struct CancelOn {
    word: &'static str,
    token: CancellationToken,
    bytes: Vec<u8>,
}

impl Sink for CancelOn {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.bytes.extend_from_slice(chunk);
        if String::from_utf8_lossy(&self.bytes).contains(self.word) {
            self.token.cancel();
        }
        Flow::Continue
    }
}

#[tokio::test]
async fn cancellation_keeps_partial_output_and_stops_the_tree() {
    init_subreaper().unwrap();
    let token = CancellationToken::new();
    let mut sink = CancelOn {
        word: "started",
        token: token.clone(),
        bytes: Vec::new(),
    };
    let spec = bash("setsid sleep 987.431 & echo started; sleep 987.432");
    let outcome = PipeExecutor::default().run(spec, &mut sink, token).await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(sink.bytes, b"started\n");
    assert_no_survivors("987.43");
}

#[tokio::test]
async fn dropping_a_run_kills_its_tree() {
    init_subreaper().unwrap();
    let token = CancellationToken::new();
    let seen = token.clone();
    let mut sink = CancelOn {
        word: "started",
        token: token.clone(),
        bytes: Vec::new(),
    };
    let spec = bash("setsid sleep 987.441 & echo started; sleep 987.442");
    let exec = PipeExecutor::default();
    tokio::select! {
        _ = exec.run(spec, &mut sink, CancellationToken::new()) => panic!("the run cannot end by itself"),
        () = seen.cancelled() => {}
    }
    assert_no_survivors("987.44");
}

#[tokio::test]
async fn unguarded_runs_still_control_their_tree() {
    init_subreaper().unwrap();
    let exec = PipeExecutor {
        guard: false,
        ..PipeExecutor::default()
    };
    let mut out = shellgate_sink::Collect::default();
    let spec = bash("setsid sleep 987.461 & echo ppid-is-engine=$((PPID == $1))");
    let mut spec = spec;
    spec.args.push("sh".into());
    spec.args.push(std::process::id().to_string());
    let outcome = exec.run(spec, &mut out, CancellationToken::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(out.bytes, b"ppid-is-engine=1\n");
    assert_no_survivors("987.461");

    let mut out = shellgate_sink::Collect::default();
    let outcome = exec
        .run(bash("kill -USR1 $$"), &mut out, CancellationToken::new())
        .await;
    assert_eq!(outcome.signal.as_deref(), Some("SIGUSR1"));
}
