//! The executors foreground runs start processes with ([`ProcessRun`](crate::ProcessRun)): one for
//! pipes, one for terminals. A tool that sends every process it starts in the foreground through
//! one of them lets an embedder's executor see them all.

use std::sync::Arc;

use shellgate_executor::{DynExecutor, PipeExecutor};
use shellgate_pty::{PtyExecutor, PtyOptions};

/// The pipe and terminal executors of a tool.
#[derive(Clone)]
pub struct Executors {
    /// Runs commands with pipes.
    pub pipe: Arc<dyn DynExecutor>,
    /// Runs commands under a pseudo-terminal (a transcript: no screen emulation).
    pub terminal: Arc<dyn DynExecutor>,
}

impl Default for Executors {
    fn default() -> Self {
        let options = PtyOptions {
            emulate_screen: false,
            ..PtyOptions::default()
        };
        Self {
            pipe: Arc::new(PipeExecutor::default()),
            terminal: Arc::new(PtyExecutor::with_options(options)),
        }
    }
}

impl Executors {
    /// The executor of a run with (`pty`) or without a terminal.
    pub fn for_run(&self, pty: bool) -> Arc<dyn DynExecutor> {
        Arc::clone(if pty { &self.terminal } else { &self.pipe })
    }
}
