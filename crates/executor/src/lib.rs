//! Process execution for shellgate: launch specs and wrappers, the pipe executor, process trees, jobs.
//! A [`LaunchSpec`] says what to run; an [`Executor`] runs it into a [`Sink`] and returns an [`ExecOutcome`].
//!
//! ```
//! use shellgate_executor::{
//!     Executor, PipeExecutor, RunStatus, ShellConfig, init_subreaper, non_interactive, shell_spec,
//! };
//! use shellgate_sink::Collect;
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! init_subreaper().unwrap(); // once, at startup
//! let spec = non_interactive(shell_spec(&ShellConfig::default(), "echo hi | cat; exit 3", "/"));
//! let mut out = Collect::default();
//! let outcome = PipeExecutor::default().run(spec, &mut out, CancellationToken::new()).await;
//! assert_eq!(outcome.status, RunStatus::Completed);
//! assert_eq!(outcome.exit_code, Some(3));
//! assert_eq!(out.bytes, b"hi\n");
//! # });
//! ```
//!
//! Command failures (non-zero exit, signal, timeout, cancel, cannot start) are data in the outcome;
//! [`ExecError`] is only returned by [`PipeExecutor::spawn`], whose caller gets no outcome otherwise.
//!
//! # Pieces
//!
//! - **Specs and wrappers** (`LaunchSpec -> LaunchSpec`): [`shell_spec`] (SPEC E-2: configured shell,
//!   `$SHELL` if bash/zsh, bash on `PATH`, `sh`; login; prefix; a pipeline-status trailer for bash),
//!   [`non_interactive`] (E-3: pagers, editors and prompts neutralized, `TERM=dumb`, UTF-8 locale;
//!   explicit `spec.env` entries and inline `VAR=x cmd` assignments win).
//! - **Working directory and timeouts**: [`resolve_cwd`], [`validate_cwd`], [`fallback_cwd`] (E-4),
//!   [`clamp_timeout`] (E-5).
//! - **[`PipeExecutor`]**: stdin `/dev/null` (or a pipe for jobs), stdout+stderr on one pipe (E-9), a new
//!   process group without a controlling terminal, a parent-death signal, a guard process between the
//!   engine and the command (so `kill $PPID` cannot reach the engine), timeout/cancel → SIGTERM to the
//!   whole tree, SIGKILL after `kill_grace` (E-6, E-12), bounded drain after exit and no survivors
//!   (E-7), exit code / signal / per-stage pipeline statuses (E-8).
//! - **Jobs**: [`PipeExecutor::spawn`] → [`RunningProcess`] / [`ProcessHandle`]: the run on its own
//!   task with its own timeout and cancel, stdin writer, tree signals, awaitable outcome.
//! - **[`tree`]**: subreaper setup, finding every process of a run via `/proc` (process group, session,
//!   ancestry, run marker), signalling, killing and reaping it — reusable by other executors.
//!
//! # How a pipe run is started
//!
//! Nothing copies the engine. The engine starts a *guard* with `clone(CLONE_VM)`: a separate process
//! (own pid, descriptors, signal dispositions) that shares the engine's memory like a thread, runs
//! on its own stack with every signal blocked and makes only raw system calls. The guard makes itself
//! a process-group leader, drops the controlling terminal (`TIOCNOTTY`, so `/dev/tty` fails at once),
//! arms `PR_SET_PDEATHSIG` (re-checking `getppid` to close the fork/exec race), sets up descriptors and
//! the working directory, and starts the command with `clone(CLONE_VM | CLONE_VFORK)` + `execve` of an
//! argv/envp laid out beforehand. It then waits for the command and exits the same way (re-raising a
//! terminating signal), so `kill $PPID` from a command hits the guard, never the engine. Its
//! parent-death signal is SIGCHLD, blocked and awaited together with the command's exit: if the
//! engine dies, the guard SIGKILLs the command, every process carrying the run's marker (escapees
//! that left the group) and the run's whole process group. With
//! [`PipeExecutor::guard`] off, the engine starts the command itself the same way, without a guard.
//! On architectures without the raw system-call shims (other than x86-64 and aarch64) the guard is a
//! fork of the engine instead.
//!
//! A new process group rather than a new session: `setsid` also creates a scheduler autogroup per
//! command, which measurably slows every run on a busy machine.
//!
//! Tree membership does not depend on the group alone: the engine is a child subreaper, so a
//! descendant that calls `setsid`, double-forks or uses `nohup` is re-parented to the engine when its
//! parent exits, and is attributed to its run by process group, session or the `SHELLGATE_RUN_ID`
//! marker in its environment. Such adopted processes are reaped by pid; `waitpid(-1)` is never used.
#![deny(unsafe_code)]

mod cgroup;
#[allow(unsafe_code)] // clone3 into a cgroup, between clone and exec
mod cgroup_entry;
mod chunks;
mod completion;
mod cwd;
mod decimal;
#[allow(unsafe_code)] // fork/exec without the C library's process state, waitpid, pidfd
mod direct;
mod env;
mod environ_block;
mod error;
#[allow(unsafe_code)] // the pre-exec guard: signal masks, exec, writes between fork and exec
mod guard;
#[allow(unsafe_code)] // the block shared with a guard: volatile reads, Send and Sync for its pointers
mod guard_block;
mod job;
mod launch;
mod layer;
mod marked;
mod mock;
mod outcome;
mod peer;
mod pipe;
#[allow(unsafe_code)] // inline system calls
mod rawsys;
mod remote_stop;
mod session;
mod spec;
pub mod tree;
#[allow(unsafe_code)] // the guard process sharing the engine's memory
mod vmguard;

use std::future::Future;
use std::pin::Pin;

pub use cgroup::{CgroupLimits, RunCgroup, Tracking, remove_engine_cgroups, sweep_stale};
pub use cwd::{
    CwdError, DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT, clamp_timeout, fallback_cwd, resolve_cwd,
    resolve_written_cwd, validate_cwd,
};
pub use env::{NON_INTERACTIVE_ENV, PIPE_TERM, UTF8_LOCALE, is_utf8_locale, non_interactive};
pub use environ_block::move_environment_to_heap;
pub use error::ExecError;
pub use job::{ProcessHandle, RunningProcess};
pub use layer::{LaunchLayer, LayerStack, NamedLayers, PrefixLayer};
pub use mock::MockExecutor;
pub use nix::sys::signal::Signal;
pub use outcome::{ExecOutcome, RunStatus, SIGPIPE_STATUS, signal_name};
pub use peer::peer_is_descendant;
pub use pipe::PipeExecutor;
pub use remote_stop::run as run_remote_stop;
pub use session::{
    SessionCommand, SessionInfo, SessionKey, SessionManager, SessionOptions, SessionState, SessionsNamed,
    ShellKind, StateFile, cannot_change_state,
};
pub use shellgate_sink::{Flow, Sink};
pub use spec::{
    LaunchSpec, STATUS_FD, ShellConfig, StdinMode, find_on_path, sh_quote, shell_spec,
    shell_spec_reporting_status,
};
pub use tokio_util::sync::CancellationToken;
pub use tree::{init_subreaper, leave_child_signals_to_other_threads};

/// A sink an executor can write to from any thread.
pub type SendSink<'a> = dyn Sink + Send + 'a;

/// Runs a [`LaunchSpec`] to completion.
///
/// Executors hold only configuration and reusable resources; the sink and the cancellation token are
/// passed per call.
pub trait Executor: Send + Sync {
    /// Run `spec`, writing its merged stdout/stderr to `sink`, until it ends, times out or `cancel` fires.
    ///
    /// The sink stays the caller's: the executor only writes to it and never calls [`Sink::finish`],
    /// which the caller does once, after the run (so a sink shared by several runs, or wrapped by the
    /// caller, is finished exactly once).
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
