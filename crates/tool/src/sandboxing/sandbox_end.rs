//! What a sandboxed job's run was denied and reached, read when it ended, for its final result.

use shellgate_sandbox::{Denial, Traffic};

use crate::NetworkApproval;

/// The sandbox's account of a job, set by its end hook before the end is published.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SandboxEnd {
    /// Everything the sandbox denied the job's processes.
    pub denied: Vec<Denial>,
    /// The destinations it reached through the engine's proxy.
    pub network: Vec<Traffic>,
    /// Destinations the proxy refused as not allowed, each pending a person's answer.
    pub approvals: Option<Vec<NetworkApproval>>,
}
