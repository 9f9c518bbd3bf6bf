//! What a sandboxed job's run was denied and reached, read when it ended, for its final poll.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shellgate_sandbox::{Denial, Traffic};

use crate::NetworkApproval;

/// The sandbox's account of a job, attached by its end hook before the end is published; its
/// fields sit beside the `process` result's own.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxAccount {
    /// A sandboxed job that ended: what the sandbox denied it (as `bash` reports it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub sandbox_denied: Option<Vec<Denial>>,
    /// A sandboxed job that ended: the destinations it reached through the engine's proxy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<serde_json::Value>>")]
    pub network: Option<Vec<Traffic>>,
    /// A sandboxed job that ended: destinations its proxy refused as not allowed, each pending a
    /// person's `allow-always` (with asking on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_approvals: Option<Vec<NetworkApproval>>,
}
