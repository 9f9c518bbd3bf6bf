//! Approvals per destination: a proxied run that met a name outside `allowed_domains` ends with
//! a pending approval for exactly that `host:port`; `allow-always` stores it in the approvals file,
//! so the next run's proxy lets it through (`denied_domains` still wins). The run itself is over:
//! approving runs nothing.

use std::path::Path;

use serde::{Deserialize, Serialize};

use shellgate_sandbox::Denial;

use crate::approvals::{ApprovalDecision, ApprovalState, Pending, one_line, rfc3339};
use crate::sandboxing::DomainOffer;
use crate::{BashParams, Blocked, ToolResult, ToolStatus};

use super::BashTool;

/// The rule name of a destination approval answered `allow-once` (a destination is allowed
/// always or not at all: the run that met it has ended).
pub const DOMAIN_ONCE_RULE: &str = "approval-domain-not-once";
/// The rule name of a denied destination approval.
pub const DOMAIN_DENIED_RULE: &str = "approval-domain-denied";

/// A destination the proxy refused, waiting for a person (`ToolResult::network_approvals`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkApproval {
    /// `host:port`, what `allow-always` allows.
    pub address: String,
    /// The id to answer with (`approve {id, decision: "allow-always"}`).
    pub id: String,
    /// Its first 8 characters.
    pub short_id: String,
    /// When it expires unanswered (RFC 3339, UTC).
    pub expires_at: String,
}

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

    /// A person's answer to a destination approval.
    pub(super) fn decide_domain(
        &self,
        pending: Pending,
        address: &str,
        decision: ApprovalDecision,
    ) -> ToolResult {
        let cwd = pending.cwd.display().to_string();
        match decision {
            ApprovalDecision::Deny => refusal(
                DOMAIN_DENIED_RULE,
                format!(
                    "A person denied network access to {address} (approval {}).",
                    pending.short_id
                ),
                cwd,
            ),
            ApprovalDecision::AllowOnce => {
                let short = pending.short_id.clone();
                self.approvals.broker.put_back(pending);
                refusal(
                    DOMAIN_ONCE_RULE,
                    format!(
                        "The run that met {address} has ended: a destination is allowed always or not at all. \
                         Approval {short} is still pending: reply with approve {short} allow-always|deny"
                    ),
                    cwd,
                )
            }
            ApprovalDecision::AllowAlways => {
                let saved = match &self.approvals.file {
                    Some(file) => match file.add_domain(address, &pending.params.command) {
                        Ok(_) => format!("(in {})", file.path().display()),
                        Err(e) => format!("(not saved: {e}; it applies in this server only)"),
                    },
                    None => "(no approvals file: it applies in this server only)".to_owned(),
                };
                self.approvals.add_domain(address);
                let message = format!(
                    "Network access to {address} is allowed always from now on {saved}. Nothing ran: run the \
                     command again to reach it."
                );
                let mut result = ToolResult::not_run(ToolStatus::Completed, message, cwd);
                result.is_error = false;
                result
            }
        }
    }
}

/// The notices and pending approvals for the destinations in `denied` refused as not allowed.
fn offer_domains(
    approvals: &ApprovalState,
    denied: &[Denial],
    params: &BashParams,
    cwd: &Path,
) -> (Vec<String>, Option<Vec<NetworkApproval>>) {
    if !approvals.asks() || params.allowed_domains.is_some() {
        return (Vec::new(), None);
    }
    let mut notices = Vec::new();
    let mut offered = Vec::new();
    let unlisted = denied
        .iter()
        .filter(|d| d.reason.as_deref() == Some("domain not allowed"))
        .filter_map(|d| d.address.clone());
    for address in unlisted {
        let (id, short_id, expires) = approvals
            .broker
            .register_domain(&address, params, cwd.to_path_buf());
        notices.push(format!(
            "The sandbox's proxy refused {}: it is not in allowed_domains. A person can allow it from \
             now on: approve {short_id} allow-always|deny (then run the command again).",
            one_line(&address)
        ));
        offered.push(NetworkApproval {
            address,
            id,
            short_id,
            expires_at: rfc3339(expires),
        });
    }
    (notices, (!offered.is_empty()).then_some(offered))
}

fn refusal(rule: &str, message: String, cwd: String) -> ToolResult {
    let mut result = ToolResult::not_run(ToolStatus::Blocked, message.clone(), cwd);
    result.blocked = Some(Blocked {
        rule: rule.to_owned(),
        message,
        suggested_tool: None,
    });
    result
}
