//! The end of a run, shared by the pipe executor and session shells (SPEC E-7): what to tell the
//! reader about descendants that were stopped, and the last bytes they had written.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::unix::pipe;

use crate::SendSink;
use crate::tree::ProcInfo;

/// How many stopped processes a notice names before summarising the rest.
const NOTICE_NAMES: usize = 5;

/// Notices for a completed run: output held open after the command exited, background processes
/// stopped.
pub(crate) fn completion_notices(held_open: bool, killed: &[ProcInfo]) -> Vec<String> {
    let mut notices = Vec::new();
    if held_open {
        notices.push(
            "Output was still held open by a background process after the command exited; reading stopped."
                .to_owned(),
        );
    }
    if !killed.is_empty() {
        notices.push(killed_notice(killed));
    }
    notices
}

fn killed_notice(killed: &[ProcInfo]) -> String {
    let mut names: Vec<String> = killed
        .iter()
        .take(NOTICE_NAMES)
        .map(|p| format!("{} (pid {})", p.comm, p.pid))
        .collect();
    if killed.len() > NOTICE_NAMES {
        names.push(format!("and {} more", killed.len() - NOTICE_NAMES));
    }
    let plural = if killed.len() == 1 { "process" } else { "processes" };
    format!(
        "Stopped {} background {plural} still running after the command exited: {}.",
        killed.len(),
        names.join(", ")
    )
}

/// How a drain ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DrainEnd {
    /// Every writer closed the output.
    Eof,
    /// Reading the output failed: nothing more can be read, but whether writers remain is unknown.
    Failed,
    /// No output for the idle time, or the time ran out: a descendant still holds the output open.
    HeldOpen,
    /// The sink needs no more output.
    SinkStopped,
}

/// After the main process exited, read what its tree still writes: until EOF, until no output arrived for
/// `idle`, until `max` has passed, or until the sink has seen enough. While a stop is in progress
/// (`kill_at`), the tree instead gets the rest of its grace period to exit on its own.
pub(crate) async fn drain(
    output: &mut pipe::Receiver,
    buf: &mut [u8],
    sink: &mut SendSink<'_>,
    kill_at: Option<tokio::time::Instant>,
    idle: Duration,
    max: Duration,
) -> DrainEnd {
    // Usually the stream has ended already (the last writer closed it as it exited): then no timer is
    // armed (each one armed costs the runtime a wake-up).
    match take_ready(output, buf, sink, true) {
        Ready::Ended => return DrainEnd::Eof,
        Ready::Failed => return DrainEnd::Failed,
        Ready::SinkStopped => return DrainEnd::SinkStopped,
        Ready::Taken => {}
    }
    let drain_end = kill_at.unwrap_or_else(|| tokio::time::Instant::now() + max);
    loop {
        let idle_end = if kill_at.is_some() {
            drain_end
        } else {
            (tokio::time::Instant::now() + idle).min(drain_end)
        };
        tokio::select! {
            read = output.read(buf) => match read {
                Ok(0) => return DrainEnd::Eof,
                Err(_) => return DrainEnd::Failed,
                Ok(n) => if sink.write(&buf[..n]).is_stop() {
                    return DrainEnd::SinkStopped;
                },
            },
            () = tokio::time::sleep_until(idle_end) => return DrainEnd::HeldOpen,
        }
    }
}

/// The sink has seen enough: give it what is already buffered in the pipe (without waiting, so the
/// counts reach as far as the producer got), then close our end by dropping `output` — the producer
/// meets a closed pipe on its next write, as under a real `head`. Returns whether the stream had in
/// fact ended (every writer gone), in which case nothing was cut short.
#[allow(clippy::needless_pass_by_value)] // Taking it by value is the point: it is closed on return.
pub(crate) fn close_for_sink(output: pipe::Receiver, buf: &mut [u8], sink: &mut SendSink<'_>) -> bool {
    matches!(take_ready(&output, buf, sink, false), Ready::Ended)
}

/// What [`take_ready`] found.
enum Ready {
    /// Every writer is gone.
    Ended,
    /// Taken what was there (or the budget): the stream is still open.
    Taken,
    /// The sink said it has seen enough (only when asked to heed it).
    SinkStopped,
    /// The read failed.
    Failed,
}

/// Give the sink what is already in the pipe, without waiting: at most [`CLOSE_READ_BUDGET`] bytes, as
/// a fast producer refills the pipe as quickly as it is read. With `heed_stop`, a sink's `Stop` ends it.
///
/// The pipe itself is asked (a plain non-blocking `read`), not the runtime's record of its readiness:
/// the end of the stream usually comes just before the event that leads here (the shell closes its
/// output, then reports the command done), and the runtime learns of it only on its next turn, after
/// a timer had been armed for nothing.
fn take_ready(output: &pipe::Receiver, buf: &mut [u8], sink: &mut SendSink<'_>, heed_stop: bool) -> Ready {
    let mut budget = CLOSE_READ_BUDGET;
    while budget > 0 {
        match nix::unistd::read(output, buf) {
            Ok(0) => return Ready::Ended,
            Ok(n) => {
                budget = budget.saturating_sub(n);
                if sink.write(&buf[..n]).is_stop() && heed_stop {
                    return Ready::SinkStopped;
                }
            }
            Err(nix::errno::Errno::EAGAIN) => return Ready::Taken,
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return Ready::Failed,
        }
    }
    Ready::Taken
}

/// Most bytes [`take_ready`] takes from the pipe at once (a few pipe buffers).
const CLOSE_READ_BUDGET: usize = 256 * 1024;

/// After the processes holding the output were killed, catch what they had already written.
pub(crate) async fn read_what_is_left<R: AsyncRead + Unpin>(
    output: &mut R,
    buf: &mut [u8],
    sink: &mut SendSink<'_>,
) {
    while let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(20), output.read(buf)).await {
        if n == 0 {
            break;
        }
        // The processes are gone already: what they wrote is recorded whatever the sink answers.
        let _ = sink.write(&buf[..n]);
    }
}

/// Read from the output while it is open (callers only poll this while it is).
pub(crate) async fn read_open(output: Option<&mut pipe::Receiver>, buf: &mut [u8]) -> std::io::Result<usize> {
    match output {
        Some(output) => output.read(buf).await,
        None => Ok(0),
    }
}

/// Sleep until `at`, or forever when there is no deadline.
pub(crate) async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
