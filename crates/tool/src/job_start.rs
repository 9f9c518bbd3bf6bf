//! `bash` with `background` or `yield_ms`: the jobs crate starts the command as a job and waits
//! ([`JobRegistry::start_call`]); here its answer becomes the call's result.

use std::path::Path;
use std::time::Duration;

use shellgate_executor::LaunchSpec;
use tokio_util::sync::CancellationToken;

use crate::jobs::{JobRegistry, JobRequest, Started};
use crate::shape::{StreamFacts, shape};
use crate::{ToolResult, ToolStatus};

/// The follow-up actions named in a running result.
pub const FOLLOW_UP: &str = "list/poll/log/write/send_keys/submit/paste/kill/clear/remove";

/// Run `spec` as a job per `request`; `facts` shape the result of a job that ended in the wait.
#[allow(clippy::too_many_arguments, reason = "the parts of one call, each used once")]
pub(crate) async fn run_as_job(
    registry: &JobRegistry,
    spec: LaunchSpec,
    request: JobRequest<'_>,
    mut facts: StreamFacts,
    cwd: &Path,
    timeout: Duration,
    mut notices: Vec<String>,
    cancel: CancellationToken,
) -> ToolResult {
    match registry.start_call(spec, request, &mut notices, cancel).await {
        Started::Refused(message) => {
            let mut result =
                ToolResult::not_run(ToolStatus::FailedToStart, message, cwd.display().to_string());
            result.notices = notices;
            result
        }
        Started::Running { job, output } => {
            let mut result = crate::runners::running(&job, output, timeout);
            result.notices = notices;
            result
        }
        Started::Ended { job, outcome } => {
            let st = job.state();
            facts.stream = st.stream;
            let mut result = shape(outcome, st.output.window(), &facts, cwd, timeout, notices);
            if let Some(artifact) = st.output.artifact() {
                result.artifact = Some(artifact);
            }
            result
        }
    }
}
