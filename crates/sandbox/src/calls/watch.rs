//! Watching one sandboxed run: the pids it spawned, and the denials the kernel reported for them.

use std::sync::{Arc, Mutex, PoisonError};

use shellgate_executor::{CancellationToken, DynExecutor, ExecOutcome, Executor, LaunchSpec, SendSink};

use crate::{DenialCollector, DenialReport, HelperFailure};

/// `error.kind` when the sandbox cannot be enforced.
pub const SANDBOX_UNAVAILABLE: &str = "sandbox_unavailable";
/// `error.kind` when the sandbox helper was invoked wrongly (an engine fault).
pub const SANDBOX_ERROR: &str = "sandbox_error";

/// Watches one sandboxed run: records the pids it spawned and collects its denials.
pub struct DenialWatch {
    collector: Option<DenialCollector>,
    pids: Arc<Mutex<Vec<u32>>>,
}

impl DenialWatch {
    /// Start watching a sandboxed run (a notice when the kernel cannot report its denials).
    pub fn start(notices: &mut Vec<String>) -> Self {
        let collector = match DenialCollector::start() {
            Ok(collector) => Some(collector),
            Err(off) => {
                notices.push(format!("sandbox {off}"));
                None
            }
        };
        Self {
            collector,
            pids: Arc::default(),
        }
    }

    /// Where pids of the run's processes are recorded (a job's, once it started).
    pub fn pids(&self) -> Arc<Mutex<Vec<u32>>> {
        Arc::clone(&self.pids)
    }

    /// `executor`, recording the pid of what it starts.
    pub fn recording(&self, executor: Arc<dyn DynExecutor>) -> Arc<dyn DynExecutor> {
        Arc::new(PidRecorder {
            inner: executor,
            pids: Arc::clone(&self.pids),
        })
    }

    /// After the run: the denials of its processes — those recorded, and `more` (processes not
    /// started through [`DenialWatch::recording`], such as a session's shell). `None` when the
    /// kernel cannot report them. It waits for the kernel's barrier record, off the async threads.
    pub async fn finish(self, more: impl IntoIterator<Item = u32>) -> Option<DenialReport> {
        let collector = self.collector?;
        let all = all_pids(&self.pids, more.into_iter());
        tokio::task::spawn_blocking(move || collector.finish(&all))
            .await
            .ok()
    }

    /// For a run that goes on as a job: what reads its denials once it has ended (blocking),
    /// with those of `shells` besides the recorded pids. `None` when the kernel cannot report them.
    pub fn at_end(self, shells: Vec<u32>) -> Option<impl FnOnce() -> DenialReport + Send + 'static> {
        let collector = self.collector?;
        let recorded = self.pids;
        Some(move || collector.finish(&all_pids(&recorded, shells.into_iter())))
    }
}

/// The recorded pids and `more`, without zeros or duplicates.
fn all_pids(recorded: &Mutex<Vec<u32>>, more: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut all = recorded.lock().unwrap_or_else(PoisonError::into_inner).clone();
    all.extend(more);
    all.retain(|&pid| pid != 0);
    all.sort_unstable();
    all.dedup();
    all
}

/// The notices a report gives: whether it may be short, and the denials in a line.
pub fn report_notices(report: &DenialReport) -> Vec<String> {
    let mut notices = Vec::new();
    if !report.complete {
        notices.push(
            "The sandbox denial list may be incomplete: the kernel dropped audit records or did not \
             answer in time."
                .to_owned(),
        );
    }
    if !report.denials.is_empty() {
        let listed: Vec<String> = report
            .denials
            .iter()
            .map(|d| {
                let kind = serde_json::to_value(d.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let object = d.path.as_deref().or(d.address.as_deref()).unwrap_or("?");
                format!("{kind} {object} ({}×)", d.count)
            })
            .collect();
        notices.push(format!("The sandbox denied: {}.", listed.join(", ")));
    }
    notices
}

/// The helper's refusal, from a run's exit code and the first line of its output (exit 125,
/// `shellgate-sandbox: unavailable: …`): the error kind ([`SANDBOX_UNAVAILABLE`] or
/// [`SANDBOX_ERROR`]) and the reason. `None` for any other run, a command's own exit 125 included.
pub fn helper_refusal(exit_code: Option<i32>, output: &str) -> Option<(&'static str, String)> {
    if exit_code != Some(crate::helper::EXIT_SANDBOX_FAILED) {
        return None;
    }
    match HelperFailure::parse(output.lines().next().unwrap_or_default()) {
        Some(HelperFailure::Unavailable { reason }) => Some((SANDBOX_UNAVAILABLE, reason)),
        Some(HelperFailure::Invalid { message }) => Some((SANDBOX_ERROR, message)),
        _ => None,
    }
}

/// An executor that remembers the pid of every run it starts.
struct PidRecorder {
    inner: Arc<dyn DynExecutor>,
    pids: Arc<Mutex<Vec<u32>>>,
}

impl Executor for PidRecorder {
    async fn run(&self, spec: LaunchSpec, sink: &mut SendSink<'_>, cancel: CancellationToken) -> ExecOutcome {
        let outcome = self.inner.run_dyn(spec, sink, cancel).await;
        if let Some(pid) = outcome.pid {
            self.pids.lock().unwrap_or_else(PoisonError::into_inner).push(pid);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helpers_refusal_is_told_from_a_commands_own_exit_125() {
        let refusal = helper_refusal(Some(125), "shellgate-sandbox: unavailable: Landlock: no\n");
        assert_eq!(refusal, Some((SANDBOX_UNAVAILABLE, "Landlock: no".to_owned())));
        assert_eq!(helper_refusal(Some(125), "unavailable: x\n"), None);
        assert_eq!(
            helper_refusal(Some(1), "shellgate-sandbox: unavailable: x\n"),
            None
        );
    }
}
