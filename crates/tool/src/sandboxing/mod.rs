//! Sandboxed calls in the tool's result: the sandbox crate decides which sandbox a call gets,
//! confines its launches and reads its denials back ([`shellgate_sandbox::Sandboxing`],
//! [`shellgate_sandbox::DenialWatch`]); here its refusals become `failed_to_start` results, its
//! reports the result's `sandbox_denied` and `network`, and a job's report its final poll's.

mod engine_files;
mod sandbox_end;

use std::path::Path;
use std::sync::Arc;

use shellgate_sandbox::{
    CallRefusal, Denial, DenialWatch, SANDBOX_UNAVAILABLE, helper_refusal, report_notices,
};

pub use engine_files::engine_files;
pub use sandbox_end::SandboxAccount;

use crate::{ResultError, ToolResult, ToolStatus};

/// What a run's denials lead to once it ended: notices and the destinations put to a person.
pub(crate) type DomainOffer =
    Box<dyn FnOnce(&[Denial]) -> (Vec<String>, Option<Vec<crate::NetworkApproval>>) + Send>;

/// The result of a call that must not run (in `workspace`).
pub(crate) fn refused(refusal: &CallRefusal, workspace: &Path) -> ToolResult {
    let mut result = ToolResult::not_run(
        ToolStatus::FailedToStart,
        refusal.to_string(),
        workspace.display().to_string(),
    );
    if let Some(reason) = refusal.unavailable_reason() {
        result.error = Some(ResultError {
            kind: SANDBOX_UNAVAILABLE.to_owned(),
            reason: reason.to_owned(),
        });
    }
    result
}

/// After a sandboxed run: the helper's refusal becomes `failed_to_start`; the denials of the run's
/// processes (those recorded, and `pids` such as a session's shell) go into `result`.
pub(crate) async fn finish(watch: DenialWatch, result: &mut ToolResult, pids: &[u32]) {
    map_helper_failure(result);
    let Some(report) = watch.finish(pids.iter().copied().chain(result.pid)).await else {
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

/// For a run that goes on as `job`: its denials are read when it ends (with those of `shells`,
/// processes not recorded by the watch such as a session's shell) and given to the job's final
/// result (`process poll`): `sandbox_denied`, `network`, and what `offer` makes of the denials
/// (approval notices and `network_approvals`).
pub(crate) fn finish_when_job_ends(
    watch: DenialWatch,
    result: &mut ToolResult,
    job: &Arc<crate::jobs::Job>,
    shells: Vec<u32>,
    offer: DomainOffer,
) {
    let Some(read_report) = watch.at_end(shells) else {
        return;
    };
    // Weak: the job holds its hook until it ends.
    let job_ref = Arc::downgrade(job);
    job.on_end(Box::new(move || {
        let report = read_report();
        let mut notices = report_notices(&report);
        if report.denials.is_empty() && report.complete {
            notices.push("The sandbox denied nothing.".to_owned());
        }
        let (offered, approvals) = offer(&report.denials);
        notices.extend(offered);
        if let Some(job) = job_ref.upgrade() {
            job.state().attachment = Some(Arc::new(SandboxAccount {
                network: Some(report.network).filter(|traffic| !traffic.is_empty()),
                sandbox_denied: Some(report.denials),
                network_approvals: approvals,
            }));
        }
        notices
    }));
    result
        .notices
        .push("The sandbox's denials of this job are listed when it ends (process poll).".to_owned());
}

/// The helper's one line (exit 125) at the start of the output → `failed_to_start` with the reason.
fn map_helper_failure(result: &mut ToolResult) {
    let Some((kind, reason)) = helper_refusal(result.exit_code, &result.output) else {
        return;
    };
    result.status = ToolStatus::FailedToStart;
    result.is_error = true;
    result.error = Some(ResultError {
        kind: kind.to_owned(),
        reason,
    });
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
