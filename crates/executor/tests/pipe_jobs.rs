//! Job handles: a process on its own task, with stdin, signals, cancel and its own timeout.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{assert_no_survivors, bash};
use shellgate_executor::{Flow, PipeExecutor, RunStatus, Signal, Sink, StdinMode, init_subreaper};
use tokio::io::AsyncWriteExt;

/// A sink whose bytes the test can read while the job writes.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Sink for Shared {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.0.lock().unwrap().extend_from_slice(chunk);
        Flow::Continue
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn piped_stdin_reaches_the_job() {
    init_subreaper().unwrap();
    let out = Shared::default();
    let mut spec = bash("read line; echo got:$line; cat");
    spec.stdin = StdinMode::Piped;
    let mut job = PipeExecutor::default().spawn(spec, out.clone()).unwrap();
    assert!(job.pid() > 0);
    let mut stdin = job.take_stdin().unwrap();
    stdin.write_all(b"hello\nmore\n").await.unwrap();
    drop(stdin);
    let outcome = job.wait().await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(out.text(), "got:hello\nmore\n");
    assert_eq!(job.handle().outcome(), Some(outcome));
}

#[tokio::test]
async fn cancel_stops_the_whole_tree_and_keeps_output() {
    init_subreaper().unwrap();
    let out = Shared::default();
    let spec = bash("setsid sleep 987.601 & echo started; sleep 987.602");
    let job = PipeExecutor::default().spawn(spec, out.clone()).unwrap();
    let handle = job.handle();
    drop(job); // the job outlives its first handle
    while !out.text().contains("started") {
        tokio::task::yield_now().await;
    }
    assert!(!handle.is_finished());
    handle.cancel();
    let outcome = handle.wait().await;
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert_eq!(out.text(), "started\n");
    assert_no_survivors("987.60");
}

#[tokio::test]
async fn signals_reach_the_tree_and_jobs_honour_their_own_timeout() {
    init_subreaper().unwrap();
    let out = Shared::default();
    let job = PipeExecutor::default()
        .spawn(bash("echo started; sleep 987.611"), out.clone())
        .unwrap();
    while !out.text().contains("started") {
        tokio::task::yield_now().await;
    }
    job.signal(Signal::SIGINT).unwrap();
    let outcome = job.wait().await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.signal.as_deref(), Some("SIGINT"));
    assert!(job.signal(Signal::SIGINT).is_err(), "nothing left to signal");

    let mut spec = bash("trap '' TERM; sleep 987.612");
    spec.timeout = Some(Duration::from_millis(200));
    spec.kill_grace = Duration::from_millis(100);
    let outcome = PipeExecutor::default()
        .spawn(spec, Shared::default())
        .unwrap()
        .wait()
        .await;
    assert_eq!(outcome.status, RunStatus::TimedOut);
    assert_no_survivors("987.61");
}
