//! Process execution for shellgate.
//!
//! A [`LaunchSpec`] says what to run; an [`Executor`] runs it, streaming the merged output into a
//! [`Sink`] and returning an [`ExecOutcome`]. Command failures are data in the outcome, never errors.
//!
//! ```
//! use shellgate_executor::{Executor, PipeExecutor, RunStatus, shell_spec, ShellConfig};
//! use shellgate_sink::Collect;
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let spec = shell_spec(&ShellConfig::default(), "echo hi; exit 3", std::env::temp_dir());
//! let mut out = Collect::default();
//! let outcome = PipeExecutor::default().run(spec, &mut out, CancellationToken::new()).await;
//! assert_eq!(outcome.status, RunStatus::Completed);
//! assert_eq!(outcome.exit_code, Some(3));
//! assert_eq!(out.bytes, b"hi\n");
//! # });
//! ```

mod cwd;
mod env;
mod error;
mod guard;
mod job;
mod launch;
mod outcome;
mod pipe;
mod session;
mod spec;
pub mod tree;

use std::future::Future;
use std::pin::Pin;

pub use cwd::{
    CwdError, DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, clamp_timeout, fallback_cwd, resolve_cwd,
    validate_cwd,
};
pub use env::{NON_INTERACTIVE_ENV, PIPE_TERM, UTF8_LOCALE, is_utf8_locale, non_interactive};
pub use error::ExecError;
pub use job::{ProcessHandle, RunningProcess};
pub use nix::sys::signal::Signal;
pub use outcome::{ExecOutcome, RunStatus, SIGPIPE_STATUS, signal_name};
pub use pipe::PipeExecutor;
pub use session::{SessionInfo, SessionKey, SessionManager, SessionOptions, ShellKind};
pub use shellgate_sink::Sink;
pub use spec::{LaunchSpec, STATUS_FD, ShellConfig, StdinMode, find_on_path, shell_spec};
pub use tokio_util::sync::CancellationToken;
pub use tree::init_subreaper;

/// A sink an executor can write to from any thread.
pub type SendSink<'a> = dyn Sink + Send + 'a;

/// Runs a [`LaunchSpec`] to completion.
///
/// Executors hold only configuration and reusable resources; the sink and the cancellation token are
/// passed per call.
pub trait Executor: Send + Sync {
    /// Run `spec`, writing its merged stdout/stderr to `sink`, until it ends, times out or `cancel` fires.
    fn run<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> impl Future<Output = ExecOutcome> + Send + 'a;
}

/// A boxed future returned by [`DynExecutor`].
pub type BoxedOutcome<'a> = Pin<Box<dyn Future<Output = ExecOutcome> + Send + 'a>>;

/// Object-safe form of [`Executor`], for choosing an executor at run time.
pub trait DynExecutor: Send + Sync {
    /// See [`Executor::run`].
    fn run_dyn<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> BoxedOutcome<'a>;
}

impl<E: Executor> DynExecutor for E {
    fn run_dyn<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> BoxedOutcome<'a> {
        Box::pin(self.run(spec, sink, cancel))
    }
}
