//! The denials of a sandboxed run, read back from the kernel, and the helper's own refusal.

use std::sync::{Arc, Mutex, PoisonError};

use shellgate_executor::{CancellationToken, DynExecutor, ExecOutcome, Executor, LaunchSpec, SendSink};
use shellgate_sandbox::{DenialCollector, DenialReport, HelperFailure};

use super::{SANDBOX_ERROR, SANDBOX_UNAVAILABLE};
use crate::{ResultError, ToolResult, ToolStatus};

/// Watches one sandboxed run: records the pids it spawned and collects its denials.
pub(crate) struct DenialWatch {
    collector: Option<DenialCollector>,
    pids: Arc<Mutex<Vec<u32>>>,
}

impl DenialWatch {
    /// Start watching a sandboxed run (a notice when the kernel cannot report its denials).
    pub(crate) fn start(notices: &mut Vec<String>) -> Self {
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
    pub(crate) fn pids(&self) -> Arc<Mutex<Vec<u32>>> {
        Arc::clone(&self.pids)
    }

    /// `executor`, recording the pid of what it starts.
    pub(crate) fn recording(&self, executor: Arc<dyn DynExecutor>) -> Arc<dyn DynExecutor> {
        Arc::new(PidRecorder {
            inner: executor,
            pids: Arc::clone(&self.pids),
        })
    }

    /// After the run: map the helper's refusal to `failed_to_start`, add the denials of the run's
    /// processes (`pids`: those not started through [`DenialWatch::recording`], such as a session's
    /// shell or a job) to `result`.
    pub(crate) async fn finish(self, result: &mut ToolResult, pids: &[u32]) {
        map_helper_failure(result);
        let Some(collector) = self.collector else { return };
        let all = all_pids(&self.pids, pids.iter().copied().chain(result.pid));
        // It waits for the kernel's barrier record: off the async threads, which serve other calls.
        let Ok(report) = tokio::task::spawn_blocking(move || collector.finish(&all)).await else {
            return;
        };
        result.notices.extend(report_notices(&report));
        // A run that goes on as a job may still be denied things: an empty list would claim too much.
        if !report.network.is_empty() {
            result.network = Some(report.network);
        }
        if result.status != ToolStatus::Running || !report.denials.is_empty() {
            result.sandbox_denied = Some(report.denials);
        }
    }

    /// For a run that goes on as `job`: its denials are read when it ends (with those of
    /// `shells`, processes not recorded here such as a session's shell) and given to the job's
    /// final result (`process poll`): `sandbox_denied`, `network`, and what `offer` makes of the
    /// denials (approval notices and `network_approvals`).
    pub(crate) fn finish_when_job_ends(
        self,
        result: &mut ToolResult,
        job: &Arc<crate::jobs::Job>,
        shells: Vec<u32>,
        offer: DomainOffer,
    ) {
        let Some(collector) = self.collector else { return };
        let recorded = self.pids;
        // Weak: the job holds its hook until it ends.
        let job_ref = Arc::downgrade(job);
        job.on_end(Box::new(move || {
            let all = all_pids(&recorded, shells.into_iter());
            let report = collector.finish(&all);
            let mut notices = report_notices(&report);
            if report.denials.is_empty() && report.complete {
                notices.push("The sandbox denied nothing.".to_owned());
            }
            let (offered, approvals) = offer(&report.denials);
            notices.extend(offered);
            if let Some(job) = job_ref.upgrade() {
                job.state().attachment = Some(Arc::new(crate::sandboxing::SandboxEnd {
                    denied: report.denials,
                    network: report.network,
                    approvals,
                }));
            }
            notices
        }));
        result
            .notices
            .push("The sandbox's denials of this job are listed when it ends (process poll).".to_owned());
    }
}

/// What a run's denials lead to once it ended: notices and the destinations put to a person.
pub(crate) type DomainOffer = Box<
    dyn FnOnce(&[shellgate_sandbox::Denial]) -> (Vec<String>, Option<Vec<crate::NetworkApproval>>) + Send,
>;

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
fn report_notices(report: &DenialReport) -> Vec<String> {
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

/// The helper's one line (exit 125) at the start of the output → `failed_to_start` with the reason.
fn map_helper_failure(result: &mut ToolResult) {
    if result.exit_code != Some(shellgate_sandbox::helper::EXIT_SANDBOX_FAILED) {
        return;
    }
    let first = result.output.lines().next().unwrap_or_default();
    let (kind, reason) = match HelperFailure::parse(first) {
        Some(HelperFailure::Unavailable { reason }) => (SANDBOX_UNAVAILABLE, reason),
        Some(HelperFailure::Invalid { message }) => (SANDBOX_ERROR, message),
        _ => return,
    };
    result.status = ToolStatus::FailedToStart;
    result.is_error = true;
    result.error = Some(ResultError {
        kind: kind.to_owned(),
        reason,
    });
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
    fn the_helpers_refusal_becomes_failed_to_start() {
        let mut result = ToolResult::not_run(
            ToolStatus::Completed,
            "shellgate-sandbox: unavailable: Landlock: no\n",
            "/",
        );
        result.exit_code = Some(125);
        map_helper_failure(&mut result);
        assert_eq!(result.status, ToolStatus::FailedToStart);
        assert_eq!(result.error.as_ref().unwrap().reason, "Landlock: no");
        let mut ordinary = ToolResult::not_run(ToolStatus::Completed, "unavailable: x\n", "/");
        ordinary.exit_code = Some(125);
        map_helper_failure(&mut ordinary);
        assert_eq!(ordinary.status, ToolStatus::Completed);
        assert!(ordinary.error.is_none());
    }
}
