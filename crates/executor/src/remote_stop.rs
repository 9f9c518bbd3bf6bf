//! Running a launch's [`LaunchSpec::remote_stop`]: the command that stops what a run started on
//! another host once the local client was killed.

use std::process::Stdio;
use std::time::Duration;

use crate::LaunchSpec;

/// The limit of a stop command without a timeout of its own.
const DEFAULT_LIMIT: Duration = Duration::from_secs(10);

fn command(stop: &LaunchSpec) -> std::process::Command {
    let mut cmd = stop.command();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Run `stop` (a [`LaunchSpec::remote_stop`]) to its end, or kill it at its limit: what an
/// executor does when a run it started on another host timed out or was cancelled.
pub async fn run(stop: &LaunchSpec) {
    let mut cmd = tokio::process::Command::from(command(stop));
    cmd.kill_on_drop(true);
    let Ok(mut child) = cmd.spawn() else {
        return;
    };
    let limit = stop.timeout.unwrap_or(DEFAULT_LIMIT);
    if tokio::time::timeout(limit, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

/// Start `stop` from a context that cannot wait (a dropped run); a thread reaps it.
pub(crate) fn run_detached(stop: &LaunchSpec) {
    let Ok(mut child) = command(stop).spawn() else {
        return;
    };
    let limit = stop.timeout.unwrap_or(DEFAULT_LIMIT);
    std::thread::spawn(move || {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if !matches!(child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    });
}
