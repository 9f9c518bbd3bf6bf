//! The [`Runner`]s over the executor: a process through an executor (pipes or a terminal) and a
//! command in a persistent session.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shellgate_executor::{DynExecutor, LaunchSpec, SendSink, SessionCommand, SessionKey, SessionManager};
use tokio_util::sync::CancellationToken;

use crate::{RunFuture, Runner};

/// A process through an executor (pipes or a terminal).
pub struct ProcessRun(pub Arc<dyn DynExecutor>, pub LaunchSpec);

impl Runner for ProcessRun {
    fn run<'a>(
        self: Box<Self>,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
        _: Duration,
    ) -> RunFuture<'a> {
        Box::pin(async move { self.0.run_dyn(self.1, sink, cancel).await })
    }
}

/// A command in a persistent session.
pub struct SessionRun {
    /// The sessions it runs in.
    pub sessions: SessionManager,
    /// Its session.
    pub key: SessionKey,
    /// The text the session's shell runs.
    pub text: String,
    /// The directory to run in (`None`: where the session is).
    pub cwd: Option<PathBuf>,
    /// Variables for this command.
    pub env: BTreeMap<String, String>,
    /// Report the statuses of the command's pipeline.
    pub report_status: bool,
    /// Where the pid of the shell that ran the command goes (a sandboxed run's denials are found by
    /// it: a busy session's command runs in a fresh shell of its own).
    pub shell_pids: Option<Arc<Mutex<Vec<u32>>>>,
}

impl Runner for SessionRun {
    fn run<'a>(
        self: Box<Self>,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
        timeout: Duration,
    ) -> RunFuture<'a> {
        Box::pin(async move {
            let command = SessionCommand {
                text: &self.text,
                cwd: self.cwd.as_deref(),
                env: &self.env,
                timeout,
                report_status: self.report_status,
            };
            let outcome = self.sessions.run_command(&self.key, &command, sink, cancel).await;
            if let (Some(pids), Some(pid)) = (&self.shell_pids, outcome.pid) {
                pids.lock().unwrap_or_else(PoisonError::into_inner).push(pid);
            }
            outcome
        })
    }

    fn session_pid(&self) -> Option<u32> {
        self.sessions.info(&self.key.name).and_then(|s| s.pid)
    }
}
