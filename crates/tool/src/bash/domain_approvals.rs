//! Approvals per destination: a proxied run that met a name outside `allowed_domains` ends with
//! a pending approval for exactly that `host:port`; `allow-always` stores it in the approvals file,
//! so the next run's proxy lets it through (`denied_domains` still wins). The run itself is over:
//! approving runs nothing.

use std::path::Path;

use shellgate_sandbox::Denial;

use crate::approvals::{ApprovalState, NetworkApproval};
use crate::sandboxing::DomainOffer;
use crate::{BashParams, ToolResult};

use super::BashTool;

impl BashTool {
    /// After a sandboxed run: with asking on, one pending approval per destination the proxy
    /// refused as not allowed (a denied domain or a local address is never asked about, nor what
    /// a call's own narrower `allowed_domains` left out).
    pub(super) fn offer_domain_approvals(&self, result: &mut ToolResult, params: &BashParams, cwd: &Path) {
        let denied = result.sandbox_denied.clone().unwrap_or_default();
        let (notices, offered) = offer_domains(&self.approvals, &denied, params, cwd);
        result.notices.extend(notices);
        if offered.is_some() {
            result.network_approvals = offered;
        }
    }

    /// The same offer, made when a job's run has ended.
    pub(super) fn domain_offer(&self, params: &BashParams, cwd: &Path) -> DomainOffer {
        let (approvals, params, cwd) = (self.approvals.clone(), params.clone(), cwd.to_path_buf());
        Box::new(move |denied| offer_domains(&approvals, denied, &params, &cwd))
    }
}

/// The notices and pending approvals for the destinations in `denied` refused as not allowed.
fn offer_domains(
    approvals: &ApprovalState<BashParams>,
    denied: &[Denial],
    params: &BashParams,
    cwd: &Path,
) -> (Vec<String>, Option<Vec<NetworkApproval>>) {
    if params.allowed_domains.is_some() {
        return (Vec::new(), None);
    }
    let unlisted = denied
        .iter()
        .filter(|d| d.reason.as_deref() == Some("domain not allowed"))
        .filter_map(|d| d.address.clone());
    approvals.offer_domains(unlisted, params, &params.command, cwd)
}
