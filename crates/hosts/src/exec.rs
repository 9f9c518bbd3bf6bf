//! [`HostExecutor`]: a one-shot run on a host through any local executor.

use shellgate_executor::{
    CancellationToken, ExecOutcome, Executor, LaunchLayer, LaunchSpec, PipeExecutor, SendSink,
};

use crate::{HostLayer, RemoteHost};

/// Runs specs on a host: checks that the host answers, moves the spec there with a [`HostLayer`],
/// runs the client with the inner executor, and tells a client that could not reach the host from
/// a command that failed.
#[derive(Debug, Clone)]
pub struct HostExecutor<E = PipeExecutor> {
    host: RemoteHost,
    inner: E,
}

impl HostExecutor {
    /// Runs on `host` through a [`PipeExecutor`].
    pub fn new(host: RemoteHost) -> Self {
        Self::with_executor(host, PipeExecutor::default())
    }
}

impl<E> HostExecutor<E> {
    /// Runs on `host` through `inner`.
    pub fn with_executor(host: RemoteHost, inner: E) -> Self {
        Self { host, inner }
    }
}

impl<E: Executor> Executor for HostExecutor<E> {
    async fn run(&self, spec: LaunchSpec, sink: &mut SendSink<'_>, cancel: CancellationToken) -> ExecOutcome {
        let start = std::time::Instant::now();
        if let Err(e) = self.host.ensure_reachable().await {
            return ExecOutcome::failed_to_start(e.to_string(), start.elapsed());
        }
        let spec = HostLayer::new(self.host.clone()).wrap(spec);
        let outcome = self.inner.run(spec, sink, cancel).await;
        if self.host.is_client_failure(outcome.exit_code)
            && let Err(e) = self.host.recheck().await
        {
            return ExecOutcome::failed_to_start(e.to_string(), start.elapsed());
        }
        outcome
    }
}
