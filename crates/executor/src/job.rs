//! Handles on processes started with [`crate::PipeExecutor::spawn`] (background jobs).

use std::io;

use nix::sys::signal::Signal;
use tokio::process::ChildStdin;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::tree::ProcessTree;
use crate::{ExecOutcome, RunStatus};

/// A process running on its own task: its pid, its stdin (when piped), and control over its tree.
///
/// Dropping it does not stop the process; keep a [`ProcessHandle`] (cheap to clone) to control and await
/// it from elsewhere.
#[derive(Debug)]
pub struct RunningProcess {
    stdin: Option<ChildStdin>,
    handle: ProcessHandle,
}

/// A cloneable handle on a [`RunningProcess`]: signal, cancel, await its outcome.
#[derive(Debug, Clone)]
pub struct ProcessHandle {
    pid: u32,
    tree: ProcessTree,
    cancel: CancellationToken,
    outcome: watch::Receiver<Option<ExecOutcome>>,
}

impl RunningProcess {
    pub(crate) fn new(
        pid: u32,
        stdin: Option<ChildStdin>,
        tree: ProcessTree,
        cancel: CancellationToken,
        outcome: watch::Receiver<Option<ExecOutcome>>,
    ) -> Self {
        Self {
            stdin,
            handle: ProcessHandle {
                pid,
                tree,
                cancel,
                outcome,
            },
        }
    }

    /// Process id of the run's leader (also its session and process group id).
    pub fn pid(&self) -> u32 {
        self.handle.pid
    }

    /// Take the write end of the process's stdin (present once, with [`crate::StdinMode::Piped`]).
    /// Dropping it sends EOF.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// A cloneable handle for control and waiting.
    pub fn handle(&self) -> ProcessHandle {
        self.handle.clone()
    }

    /// See [`ProcessHandle::signal`].
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        self.handle.signal(signal)
    }

    /// See [`ProcessHandle::cancel`].
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// See [`ProcessHandle::wait`].
    pub async fn wait(&self) -> ExecOutcome {
        self.handle.wait().await
    }
}

impl ProcessHandle {
    /// Process id of the run's leader (also its session and process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The process tree, for inspection ([`ProcessTree::members`]).
    pub fn tree(&self) -> &ProcessTree {
        &self.tree
    }

    /// Send `signal` to every process of the tree now (for example SIGINT for a polite stop). The
    /// outcome's status stays `Completed` unless the job is also [cancelled](Self::cancel). Errors with
    /// `ESRCH` when no process of the tree was left to receive it.
    pub fn signal(&self, signal: Signal) -> io::Result<()> {
        if self.tree.signal(signal).is_empty() {
            Err(io::Error::from_raw_os_error(libc::ESRCH))
        } else {
            Ok(())
        }
    }

    /// Stop the job: SIGTERM to its tree, SIGKILL after its `kill_grace`; the outcome says `Cancelled`.
    /// Output written so far is kept.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Whether the job has finished (its outcome is available).
    pub fn is_finished(&self) -> bool {
        self.outcome.borrow().is_some()
    }

    /// The outcome, once finished.
    pub fn outcome(&self) -> Option<ExecOutcome> {
        self.outcome.borrow().clone()
    }

    /// Wait for the job to finish (output drained, tree stopped) and return its outcome.
    pub async fn wait(&self) -> ExecOutcome {
        let mut rx = self.outcome.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone().unwrap_or_else(lost),
            Err(_) => lost(),
        }
    }
}

/// The job's task ended without a result (its runtime shut down); its tree was killed on the way.
fn lost() -> ExecOutcome {
    let mut outcome = ExecOutcome::new(RunStatus::Cancelled, std::time::Duration::ZERO);
    outcome.error = Some("the job's task ended before the job finished".to_owned());
    outcome
}
