//! The end of a run, shared by the pipe executor and session shells (SPEC E-7): what to tell the
//! reader about descendants that were stopped, and the last bytes they had written.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

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

/// After the main process exited, read what its tree still writes: until EOF, until no output arrived for
/// `idle`, or until `max` has passed. While a stop is in progress (`kill_at`), the tree instead gets the
/// rest of its grace period to exit on its own. Returns whether EOF was reached.
pub(crate) async fn drain<R: AsyncRead + Unpin>(
    output: &mut R,
    buf: &mut [u8],
    sink: &mut SendSink<'_>,
    kill_at: Option<tokio::time::Instant>,
    idle: Duration,
    max: Duration,
) -> bool {
    let drain_end = kill_at.unwrap_or_else(|| tokio::time::Instant::now() + max);
    loop {
        let idle_end = if kill_at.is_some() {
            drain_end
        } else {
            (tokio::time::Instant::now() + idle).min(drain_end)
        };
        tokio::select! {
            read = output.read(buf) => match read {
                Ok(0) | Err(_) => return true,
                Ok(n) => sink.write(&buf[..n]),
            },
            () = tokio::time::sleep_until(idle_end) => return false,
        }
    }
}

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
        sink.write(&buf[..n]);
    }
}

/// Sleep until `at`, or forever when there is no deadline.
pub(crate) async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
