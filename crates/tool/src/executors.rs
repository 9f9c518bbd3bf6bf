//! The executors a tool starts processes with: one for pipes, one for terminals. Every process a call
//! starts in the foreground — one-shot, terminal, on a host through its client — goes through one of
//! them, so an embedder's executor (`BashTool::with_executor`, `with_terminal_executor`) sees them all.

use std::sync::Arc;

use shellgate_executor::{DynExecutor, PipeExecutor};
use shellgate_pty::{PtyExecutor, PtyOptions};

/// The pipe and terminal executors of a tool.
#[derive(Clone)]
pub(crate) struct Executors {
    /// Runs commands with pipes.
    pub(crate) pipe: Arc<dyn DynExecutor>,
    /// Runs commands under a pseudo-terminal (a transcript: no screen emulation).
    pub(crate) terminal: Arc<dyn DynExecutor>,
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
    pub(crate) fn for_run(&self, pty: bool) -> Arc<dyn DynExecutor> {
        Arc::clone(if pty { &self.terminal } else { &self.pipe })
    }
}
