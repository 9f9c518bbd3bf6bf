//! The pipe executor: a new session, stdin from `/dev/null`, stdout and stderr merged into one pipe,
//! the whole process tree stopped on timeout, cancel and completion.

use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::chunks::Chunk;
use crate::completion::{
    DrainEnd, close_for_sink, completion_notices, drain, read_open, read_what_is_left, sleep_until_opt,
};
use crate::error::ExecError;
use crate::job::RunningProcess;
use crate::launch::{Launched, launch, read_status};
use crate::tree::ProcessTree;
use crate::{ExecOutcome, Executor, LaunchSpec, RunStatus, SendSink, Sink, signal_name};

/// Runs commands with pipes (no terminal).
///
/// Each run gets its own session (no controlling terminal: opening `/dev/tty` fails at once), one pipe
/// for stdout and stderr (arrival order kept), a run marker in its environment, and a guard process
/// between the engine and the command (so `kill $PPID` cannot reach the engine). When the command's
/// shell exits, output is drained for at most [`drain_idle`](Self::drain_idle) of silence or
/// [`drain_max`](Self::drain_max) in all; then every process left in its tree is killed and reported.
#[derive(Debug, Clone)]
pub struct PipeExecutor {
    /// After the main process exits, stop reading once no output arrived for this long.
    pub drain_idle: Duration,
    /// After the main process exits, stop reading after this long in any case.
    pub drain_max: Duration,
    /// Put a guard process between the engine and the command (default `true`), so a command's
    /// `kill $PPID` reaches the guard (which ignores catchable signals) instead of the engine. Without
    /// it each command costs one process wake-up less, but must be trusted not to signal its parent.
    pub guard: bool,
}

impl Default for PipeExecutor {
    fn default() -> Self {
        Self {
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_secs(2),
            guard: true,
        }
    }
}

impl Executor for PipeExecutor {
    async fn run(&self, spec: LaunchSpec, sink: &mut SendSink<'_>, cancel: CancellationToken) -> ExecOutcome {
        let start = Instant::now();
        match launch(&spec, self.guard) {
            Ok(launched) => Box::pin(self.drive(launched, &spec, sink, cancel)).await,
            Err(e) => ExecOutcome::failed_to_start(e.to_string(), start.elapsed()),
        }
    }
}

/// After the output was closed for the sink, how long the stages still holding it get to meet the
/// closed pipe by writing, before they are sent the SIGPIPE that write would have raised.
pub(crate) const SIGPIPE_AFTER: Duration = Duration::from_millis(50);

/// How long a guarded run goes before its command is watched directly even without EOF.
const WATCH_WITHOUT_EOF_AFTER: std::time::Duration = std::time::Duration::from_millis(50);

impl PipeExecutor {
    /// Start `spec` as a job that runs on its own tokio task, writing its output into `sink`, and return
    /// a handle at once. Must be called inside a tokio runtime.
    ///
    /// The job honours `spec.timeout` and `spec.kill_grace`, and stops only through its handle
    /// ([`RunningProcess::cancel`], [`RunningProcess::signal`]) — not when the caller's own work is
    /// cancelled. With [`crate::StdinMode::Piped`], its stdin is [`RunningProcess::take_stdin`]. If the
    /// runtime shuts down, the task is dropped and the job's whole tree is killed. The job owns `sink`
    /// and calls [`Sink::finish`] on it once the run has ended.
    pub fn spawn<S>(&self, spec: LaunchSpec, sink: S) -> Result<RunningProcess, ExecError>
    where
        S: Sink + Send + 'static,
    {
        let mut launched = launch(&spec, self.guard)?;
        let stdin = launched.stdin.take();
        let cancel = CancellationToken::new();
        let (tx, rx) = tokio::sync::watch::channel(None);
        let tree = launched.tree.clone();
        let pid = launched.pid;
        let exec = self.clone();
        let task_cancel = cancel.clone();
        tokio::spawn(async move {
            let mut sink = sink;
            let outcome = Box::pin(exec.drive(launched, &spec, &mut sink, task_cancel)).await;
            // The job owns its sink: the stream has ended.
            sink.finish();
            let _ = tx.send(Some(outcome));
        });
        Ok(RunningProcess::new(pid, stdin, tree, cancel, rx))
    }

    /// Follow a launched process to its end: the loop shared by [`Executor::run`] and [`Self::spawn`].
    pub(crate) async fn drive(
        &self,
        launched: Launched,
        spec: &LaunchSpec,
        sink: &mut (dyn Sink + Send + '_),
        cancel: CancellationToken,
    ) -> ExecOutcome {
        let Launched {
            mut child,
            output,
            mut status,
            stdin,
            tree,
            pid,
            start,
        } = launched;
        // A pipe stdin not handed out (run() with StdinMode::Piped) is closed now: EOF for the command.
        drop(stdin);
        let mut guard = KillOnDrop {
            tree: &tree,
            remote_stop: spec.remote_stop.as_deref(),
            armed: true,
        };
        let mut buf = Chunk::take();
        let mut run_status = RunStatus::Completed;
        let mut notices = Vec::new();
        let deadline = spec.timeout.map(|t| tokio::time::Instant::from_std(start + t));
        let mut kill_at: Option<tokio::time::Instant> = None;
        // Dropped (closing our end) once the sink has seen enough; `eof` is then set too.
        let mut output = Some(output);
        // While the output is closed but the command runs on: when to SIGPIPE the stages still holding it.
        let mut sigpipe_at: Option<tokio::time::Instant> = None;
        // The output's `/proc` link text, read when the sink stops (not on every run).
        let mut output_link = None;
        let mut eof = false;
        let mut stopped = false;
        let exit_status;
        // Set when the command's status came before its guard exited; the guard is then reaped later.
        let mut leader_pending = false;
        let watch = child.command_watch();
        // One future for the whole loop: it holds the command's pidfd once it has opened it.
        let command_exit = watch_command(watch.as_ref());
        tokio::pin!(command_exit);
        // Watched from EOF on, or once the run is this old even without EOF (see below).
        let watch_from = tokio::time::sleep(WATCH_WITHOUT_EOF_AFTER);
        tokio::pin!(watch_from);
        let mut watch_armed = false;
        // Armed once for the whole run (a timer made anew in every turn of the loop is registered with
        // the runtime's timer anew each time).
        let timeout_timer = sleep_until_opt(deadline);
        tokio::pin!(timeout_timer);

        // Phase 1: until the leader exits.
        loop {
            tokio::select! {
                read = read_open(output.as_mut(), &mut buf), if !eof => match read {
                    Ok(0) | Err(_) => eof = true,
                    Ok(n) => if sink.write(&buf[..n]).is_stop() {
                        eof = true;
                        output_link = output.as_ref().and_then(|o| crate::tree::own_fd_link(o.as_raw_fd()));
                        stopped = output.take().is_some_and(|o| !close_for_sink(o, &mut buf, sink));
                        sigpipe_at = Some(tokio::time::Instant::now() + SIGPIPE_AFTER);
                    },
                },
                () = sleep_until_opt(sigpipe_at), if sigpipe_at.is_some() => {
                    if let Some(link) = &output_link {
                        tree.sigpipe_output_holders(link, None);
                    }
                    sigpipe_at = Some(tokio::time::Instant::now() + SIGPIPE_AFTER);
                }
                waited = child.wait() => {
                    exit_status = waited.ok();
                    break;
                }
                // The command's own exit, before its guard's. Usually from EOF on (the command closes
                // the pipe as it exits); after a while also without EOF, for a guard that cannot
                // report the exit: stopped by its command (`kill -STOP $PPID`), perhaps before it let
                // go of the output pipe.
                status = &mut command_exit, if watch.is_some() && (eof || watch_armed) => {
                    exit_status = Some(status);
                    leader_pending = true;
                    break;
                }
                () = &mut watch_from, if watch.is_some() && !eof && !watch_armed => {
                    watch_armed = true;
                }
                () = &mut timeout_timer, if run_status == RunStatus::Completed && deadline.is_some() => {
                    run_status = RunStatus::TimedOut;
                    tree.terminate();
                    kill_at = Some(tokio::time::Instant::now() + spec.kill_grace);
                }
                () = cancel.cancelled(), if run_status == RunStatus::Completed => {
                    run_status = RunStatus::Cancelled;
                    tree.terminate();
                    kill_at = Some(tokio::time::Instant::now() + spec.kill_grace);
                }
                () = sleep_until_opt(kill_at), if kill_at.is_some() => {
                    tree.kill_all();
                    kill_at = None;
                }
            }
        }
        // Remember orphans that are still alive now, so they are recognised even after they exit during
        // the drain. Without a drain (EOF came already) the kill below looks at once anyway.
        if !eof {
            let _ = tree.members();
        }

        // Phase 2: bounded drain of what the tree still writes. While a stop is in progress, the rest of
        // the tree gets the remainder of its grace period to exit (and close the pipe) on its own.
        let mut held_open = false;
        if !eof && let Some(mut open) = output.take() {
            match drain(
                &mut open,
                &mut buf,
                sink,
                kill_at,
                self.drain_idle,
                self.drain_max,
            )
            .await
            {
                DrainEnd::Eof | DrainEnd::Failed => {}
                DrainEnd::HeldOpen => {
                    held_open = true;
                    output = Some(open);
                }
                DrainEnd::SinkStopped => stopped = !close_for_sink(open, &mut buf, sink),
            }
        }
        // Nothing of a run outlives it.
        let killed = if leader_pending {
            tree.kill_all_but_exiting_leader()
        } else {
            tree.kill_all()
        };
        guard.armed = false;
        if run_status != RunStatus::Completed
            && let Some(stop) = &spec.remote_stop
        {
            crate::remote_stop::run(stop).await;
        }
        if leader_pending {
            child.reap_later();
        }
        if run_status == RunStatus::Completed {
            notices.extend(completion_notices(held_open, &killed));
        }
        if let Some(open) = output.as_mut().filter(|_| held_open) {
            read_what_is_left(open, &mut buf, sink).await;
        }

        let (exit_code, signal) = match exit_status {
            Some(st) => (st.code(), st.signal().map(signal_name)),
            None => (None, None),
        };
        let mut outcome = ExecOutcome::new(run_status, start.elapsed());
        outcome.exit_code = exit_code;
        outcome.signal = signal;
        let report = read_status(status.as_mut());
        outcome.pipeline_status = report.stages;
        outcome.pipefail = report.pipefail;
        outcome.output_stopped = stopped;
        outcome.pid = Some(pid);
        outcome.notices = notices;
        outcome.tracking = Some(tree.tracking());
        outcome
    }
}

/// Kills the tree if the run is abandoned (its future dropped) before it finished.
struct KillOnDrop<'a> {
    tree: &'a ProcessTree,
    /// Stops what the run started elsewhere (see [`LaunchSpec::remote_stop`]).
    remote_stop: Option<&'a LaunchSpec>,
    armed: bool,
}

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.tree.kill_all();
            if let Some(stop) = self.remote_stop {
                crate::remote_stop::run_detached(stop);
            }
        }
    }
}

async fn watch_command(watch: Option<&crate::direct::CommandWatch>) -> std::process::ExitStatus {
    match watch {
        Some(w) => w.exited().await,
        None => std::future::pending().await,
    }
}
