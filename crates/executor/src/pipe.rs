//! The pipe executor: a process group, stdin from `/dev/null`, stdout and stderr merged into one pipe.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio_util::sync::CancellationToken;

use crate::{ExecOutcome, Executor, LaunchSpec, RunStatus, SendSink, StdinMode, signal_name};

/// Runs commands with pipes (no terminal).
#[derive(Debug, Clone)]
pub struct PipeExecutor {
    /// After the main process exits, stop reading once no output arrived for this long.
    pub drain_idle: Duration,
    /// After the main process exits, stop reading after this long in any case.
    pub drain_max: Duration,
}

impl Default for PipeExecutor {
    fn default() -> Self {
        Self {
            drain_idle: Duration::from_millis(250),
            drain_max: Duration::from_secs(2),
        }
    }
}

const READ_CHUNK: usize = 64 * 1024;

impl Executor for PipeExecutor {
    fn run<'a>(
        &'a self,
        spec: LaunchSpec,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
    ) -> impl std::future::Future<Output = ExecOutcome> + Send + 'a {
        run_piped(self, spec, sink, cancel)
    }
}

async fn run_piped(
    exec: &PipeExecutor,
    spec: LaunchSpec,
    sink: &mut SendSink<'_>,
    cancel: CancellationToken,
) -> ExecOutcome {
    let start = Instant::now();
    let (reader, writer) = match std::io::pipe() {
        Ok(pair) => pair,
        Err(e) => {
            return ExecOutcome::failed_to_start(format!("cannot create output pipe: {e}"), start.elapsed());
        }
    };
    let mut child = {
        let mut cmd = tokio::process::Command::new(&spec.program);
        cmd.args(&spec.args).current_dir(&spec.cwd);
        if spec.env_clear {
            cmd.env_clear();
        }
        for key in &spec.env_remove {
            cmd.env_remove(key);
        }
        cmd.envs(&spec.env);
        cmd.stdin(match spec.stdin {
            StdinMode::Null => Stdio::null(),
            StdinMode::Piped => Stdio::piped(),
        });
        let stderr_writer = match writer.try_clone() {
            Ok(w) => w,
            Err(e) => {
                return ExecOutcome::failed_to_start(
                    format!("cannot duplicate output pipe: {e}"),
                    start.elapsed(),
                );
            }
        };
        cmd.stdout(Stdio::from(OwnedFd::from(writer)));
        cmd.stderr(Stdio::from(OwnedFd::from(stderr_writer)));
        cmd.process_group(0);
        cmd.kill_on_drop(true);
        match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                return ExecOutcome::failed_to_start(
                    format!("cannot start {}: {e}", spec.program),
                    start.elapsed(),
                );
            }
        }
        // `cmd` (holding our copies of the write end) is dropped here, so EOF arrives when the
        // process tree closes its copies.
    };
    let pid = child.id();
    let pgid = pid.map(|p| Pid::from_raw(p as i32));
    let mut reader = match pipe::Receiver::from_owned_fd(OwnedFd::from(reader)) {
        Ok(r) => r,
        Err(e) => {
            if let Some(pg) = pgid {
                let _ = killpg(pg, Signal::SIGKILL);
            }
            return ExecOutcome::failed_to_start(format!("cannot watch output pipe: {e}"), start.elapsed());
        }
    };

    let mut buf = vec![0u8; READ_CHUNK];
    let mut status = RunStatus::Completed;
    let mut notices = Vec::new();
    let deadline = spec.timeout.map(|t| tokio::time::Instant::from_std(start + t));
    let mut kill_at: Option<tokio::time::Instant> = None;
    let mut eof = false;
    let exit_status;

    // Phase 1: until the main process exits.
    loop {
        tokio::select! {
            read = reader.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => sink.write(&buf[..n]),
            },
            waited = child.wait() => {
                exit_status = waited.ok();
                break;
            }
            () = sleep_until_opt(deadline), if status == RunStatus::Completed && deadline.is_some() => {
                status = RunStatus::TimedOut;
                kill_at = Some(signal_tree(pgid, spec.kill_grace));
            }
            () = cancel.cancelled(), if status == RunStatus::Completed => {
                status = RunStatus::Cancelled;
                kill_at = Some(signal_tree(pgid, spec.kill_grace));
            }
            () = sleep_until_opt(kill_at), if kill_at.is_some() => {
                if let Some(pg) = pgid {
                    let _ = killpg(pg, Signal::SIGKILL);
                }
                kill_at = None;
            }
        }
    }

    // Phase 2: bounded drain of what the tree still writes.
    if !eof {
        let drain_end = tokio::time::Instant::now() + exec.drain_max;
        loop {
            let idle_end = (tokio::time::Instant::now() + exec.drain_idle).min(drain_end);
            tokio::select! {
                read = reader.read(&mut buf) => match read {
                    Ok(0) | Err(_) => { eof = true; break; }
                    Ok(n) => sink.write(&buf[..n]),
                },
                () = tokio::time::sleep_until(idle_end) => break,
            }
        }
    }
    // Nothing of a foreground run outlives it.
    if let Some(pg) = pgid
        && killpg(pg, Signal::SIGKILL).is_ok()
        && status == RunStatus::Completed
    {
        notices.push(if eof {
            "Background processes left by the command were stopped.".to_owned()
        } else {
            "Output was still held open by a background process after the command exited; it was stopped."
                .to_owned()
        });
    }
    sink.finish();

    let (exit_code, signal) = match exit_status {
        Some(st) => (st.code(), st.signal().map(signal_name)),
        None => (None, None),
    };
    ExecOutcome {
        status,
        exit_code,
        signal,
        pipeline_status: Vec::new(),
        cwd_after: None,
        duration: start.elapsed(),
        pid,
        notices,
        error: None,
    }
}

/// Send SIGTERM to the group and return when SIGKILL is due.
fn signal_tree(pgid: Option<Pid>, grace: Duration) -> tokio::time::Instant {
    if let Some(pg) = pgid {
        let _ = killpg(pg, Signal::SIGTERM);
    }
    tokio::time::Instant::now() + grace
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
