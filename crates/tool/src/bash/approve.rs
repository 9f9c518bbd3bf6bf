//! Pending approvals of a [`BashTool`] and a person's decisions on them.

use std::path::Path;

use crate::approvals::{ApprovalBroker, ApprovalDecision, Lookup, rfc3339, rules_for};
use crate::{BashParams, Blocked, ToolResult, ToolStatus};
use shellgate_sink::LiveFeed;
use tokio_util::sync::CancellationToken;

use super::BashTool;

/// The rule name of a denied approval.
pub const DENIED_RULE: &str = "approval-denied";
/// The rule name of an answer to an expired approval.
pub const EXPIRED_RULE: &str = "approval-expired";
/// The rule name of an answer to an id that is not pending.
pub const UNKNOWN_RULE: &str = "approval-unknown";
/// The rule name of a refused `allow-always`.
pub const NOT_ALWAYS_RULE: &str = "approval-not-always";

impl BashTool {
    /// The approvals pending on this tool.
    pub fn approvals(&self) -> &ApprovalBroker {
        &self.approvals.broker
    }

    /// Why the approvals file is not used (corrupt or unreadable), if it is not.
    pub fn approvals_file_error(&self) -> Option<&str> {
        self.approvals.load_error.as_deref()
    }

    /// Keep the request of an `approval_pending` result until a person decides.
    pub(super) fn pending(&self, mut result: ToolResult, params: &BashParams, cwd: &Path) -> ToolResult {
        if let Some(e) = &self.approvals.load_error {
            result
                .notices
                .push(format!("The approvals file is not used: {e}"));
        }
        self.approvals.broker.register(result, params, cwd.to_path_buf())
    }

    /// Decide the pending approval `id` (the full or the short id): `allow-once` runs exactly that
    /// request and returns its result; `allow-always` also persists the narrowest rules (the exact
    /// argv of each segment that missed) and then runs it; `deny` returns a blocked result. An id
    /// that is not pending, or expired, gives a blocked result that says so.
    pub async fn approve(
        &self,
        id: &str,
        decision: ApprovalDecision,
        cancel: CancellationToken,
    ) -> ToolResult {
        self.approve_live(id, decision, cancel, None).await
    }

    /// [`BashTool::approve`], with the approved run's output also sent to `live` as it arrives
    /// (like [`BashTool::call_live`]).
    pub async fn approve_live(
        &self,
        id: &str,
        decision: ApprovalDecision,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
    ) -> ToolResult {
        let base_cwd = self.config.cwd.display().to_string();
        let pending = match self.approvals.broker.take(id) {
            Lookup::Found(p) => *p,
            Lookup::Expired { id, expired_at } => {
                return refusal(
                    EXPIRED_RULE,
                    format!(
                        "Approval {id} expired at {} and was denied (fallback \"deny\"): the command did not run. \
                         Run it again to ask anew.",
                        rfc3339(expired_at)
                    ),
                    base_cwd,
                );
            }
            Lookup::Unknown => {
                return refusal(
                    UNKNOWN_RULE,
                    format!("No approval `{id}` is pending (unknown, already decided, or dropped)."),
                    base_cwd,
                );
            }
        };
        if let Some(address) = pending.domain.clone() {
            return self.decide_domain(pending, &address, decision);
        }
        let cwd = pending.cwd.display().to_string();
        match decision {
            ApprovalDecision::Deny => refusal(
                DENIED_RULE,
                format!(
                    "Blocked: a person denied approval {}.\nCommand: {}",
                    pending.short_id, pending.params.command
                ),
                cwd,
            ),
            ApprovalDecision::AllowOnce => {
                let mut result = self.run_call(pending.params.clone(), cancel, live, true).await;
                result.notices.insert(
                    0,
                    format!("Approved once by a person (approval {}).", pending.short_id),
                );
                self.env_gate.redacted(result)
            }
            ApprovalDecision::AllowAlways => {
                let rules = if pending.always_approvable {
                    rules_for(&pending.segments).map_err(|e| e.to_string())
                } else {
                    Err(format!(
                        "`{}` cannot be allowed always (it is dangerous, unjudgeable or not an allowlist miss); \
                         approve it with allow-once instead",
                        pending.params.command
                    ))
                };
                let rules = match rules {
                    Ok(rules) => rules,
                    Err(why) => {
                        let short = pending.short_id.clone();
                        self.approvals.broker.put_back(pending);
                        return refusal(
                            NOT_ALWAYS_RULE,
                            format!(
                                "{why}. Approval {short} is still pending: reply with approve {short} allow-once|deny"
                            ),
                            cwd,
                        );
                    }
                };
                let mut notices = Vec::new();
                match &self.approvals.file {
                    Some(file) => match file.add(&rules, &pending.params.command) {
                        Ok(_) => notices.push(format!(
                            "Allowed always from now on: {} (in {}).",
                            rules.iter().map(|r| format!("`{}`", r.join(" "))).collect::<Vec<_>>().join(", "),
                            file.path().display()
                        )),
                        Err(e) => notices.push(format!(
                            "The rule could not be saved ({e}); it applies in this server only."
                        )),
                    },
                    None => notices.push(
                        "No approvals file (neither XDG_CONFIG_HOME nor HOME is set): the rule applies in this server only."
                            .into(),
                    ),
                }
                self.approvals.add_rules(&rules);
                let mut result = self.run_call(pending.params.clone(), cancel, live, true).await;
                notices.append(&mut result.notices);
                result.notices = notices;
                self.env_gate.redacted(result)
            }
        }
    }
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
