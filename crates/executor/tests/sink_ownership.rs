//! `Sink::finish` is called exactly once, by the sink's owner: an executor handed `&mut sink` only
//! writes to it (the caller finishes it), a spawned job owns its sink and finishes it itself.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use shellgate_executor::{
    CancellationToken, Executor, Flow, LaunchSpec, MockExecutor, PipeExecutor, SessionKey, SessionManager,
    Sink,
};

/// Counts writes and finishes.
#[derive(Clone, Default)]
struct Counting {
    bytes: Arc<AtomicUsize>,
    finishes: Arc<AtomicUsize>,
}

impl Sink for Counting {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.bytes.fetch_add(chunk.len(), Ordering::SeqCst);
        Flow::Continue
    }

    fn finish(&mut self) {
        self.finishes.fetch_add(1, Ordering::SeqCst);
    }
}

impl Counting {
    fn finishes(&self) -> usize {
        self.finishes.load(Ordering::SeqCst)
    }
}

fn sh(script: &str) -> LaunchSpec {
    LaunchSpec::new("sh", ["-c", script], "/")
}

#[tokio::test]
async fn the_pipe_executor_writes_into_a_borrowed_sink_but_never_finishes_it() {
    let mut sink = Counting::default();
    let outcome = PipeExecutor::default()
        .run(sh("echo hi"), &mut sink, CancellationToken::new())
        .await;
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(sink.bytes.load(Ordering::SeqCst), 3);
    assert_eq!(sink.finishes(), 0, "the caller finishes its own sink");
    let missing = LaunchSpec::new("/nonexistent/program", Vec::<String>::new(), "/");
    let failed = PipeExecutor::default()
        .run(missing, &mut sink, CancellationToken::new())
        .await;
    assert!(failed.exit_code.is_none(), "{failed:?}");
    assert_eq!(sink.finishes(), 0, "not on a failed start either");
}

#[tokio::test]
async fn the_mock_executor_never_finishes_the_callers_sink() {
    let mut sink = Counting::default();
    let mock = MockExecutor::new().with_output("out");
    mock.run(sh("x"), &mut sink, CancellationToken::new()).await;
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    mock.run(sh("x"), &mut sink, cancelled).await;
    assert_eq!(sink.bytes.load(Ordering::SeqCst), 3);
    assert_eq!(sink.finishes(), 0);
}

#[tokio::test]
async fn a_session_run_never_finishes_the_callers_sink() {
    let sessions = SessionManager::default();
    let key = SessionKey::new("sink-ownership");
    let mut sink = Counting::default();
    for _ in 0..2 {
        let outcome = sessions
            .run(
                &key,
                "echo hi",
                None,
                &BTreeMap::new(),
                Duration::from_secs(30),
                &mut sink,
                CancellationToken::new(),
            )
            .await;
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    }
    assert_eq!(sink.bytes.load(Ordering::SeqCst), 6);
    assert_eq!(sink.finishes(), 0);
    sessions.shutdown();
}

#[tokio::test]
async fn a_spawned_job_owns_its_sink_and_finishes_it_once() {
    let sink = Counting::default();
    let running = PipeExecutor::default()
        .spawn(sh("echo hi"), sink.clone())
        .unwrap();
    let outcome = running.handle().wait().await;
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(sink.bytes.load(Ordering::SeqCst), 3);
    assert_eq!(sink.finishes(), 1);
}
