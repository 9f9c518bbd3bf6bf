//! [`MockExecutor`]: an executor that runs nothing, for tests of code built on the [`Executor`] seam.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{ExecOutcome, Executor, LaunchSpec, RunStatus, SendSink};

/// Records every spec it is given, writes scripted output into the sink and reports a scripted exit.
/// Cheap to clone; clones share the record.
///
/// ```
/// use shellgate_executor::{Executor, LaunchSpec, MockExecutor};
/// use shellgate_sink::Collect;
/// use tokio_util::sync::CancellationToken;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mock = MockExecutor::new().with_output("hi\n").with_exit_code(3);
/// let mut out = Collect::default();
/// let outcome = mock.run(LaunchSpec::new("anything", ["-x"], "/"), &mut out, CancellationToken::new()).await;
/// assert_eq!((outcome.exit_code, out.bytes.as_slice()), (Some(3), &b"hi\n"[..]));
/// assert_eq!(mock.specs()[0].program, "anything");
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct MockExecutor {
    output: Vec<u8>,
    exit_code: i32,
    specs: Arc<Mutex<Vec<LaunchSpec>>>,
}

impl MockExecutor {
    /// A mock that writes nothing and exits 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Write `output` into the sink of every run.
    #[must_use]
    pub fn with_output(mut self, output: impl Into<Vec<u8>>) -> Self {
        self.output = output.into();
        self
    }

    /// Report `code` as the exit code of every run.
    #[must_use]
    pub fn with_exit_code(mut self, code: i32) -> Self {
        self.exit_code = code;
        self
    }

    /// The specs run so far, in order.
    pub fn specs(&self) -> Vec<LaunchSpec> {
        self.specs.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

impl Executor for MockExecutor {
    async fn run(&self, spec: LaunchSpec, sink: &mut SendSink<'_>, cancel: CancellationToken) -> ExecOutcome {
        self.specs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(spec);
        if cancel.is_cancelled() {
            return ExecOutcome::new(RunStatus::Cancelled, Duration::ZERO);
        }
        let stopped = !self.output.is_empty() && sink.write(&self.output).is_stop();
        let mut outcome = ExecOutcome::new(RunStatus::Completed, Duration::ZERO);
        outcome.exit_code = Some(self.exit_code);
        outcome.output_stopped = stopped;
        outcome
    }
}
