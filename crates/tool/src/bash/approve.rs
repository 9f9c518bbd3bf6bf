//! Pending approvals of a [`BashTool`] and a person's decisions on them.

use std::path::Path;

use crate::approvals::{ApprovalDecision, Decided};
use crate::{ApprovalBroker, BashParams, Blocked, ToolResult, ToolStatus};
use shellgate_sink::LiveFeed;
use tokio_util::sync::CancellationToken;

use super::BashTool;
use crate::gate::Redacting as _;

impl BashTool {
    /// The approvals pending on this tool.
    pub fn approvals(&self) -> &ApprovalBroker {
        &self.approvals.broker
    }

    /// Why the approvals file is not used (corrupt or unreadable), if it is not.
    pub fn approvals_file_error(&self) -> Option<&str> {
        self.approvals.load_error.as_deref()
    }

    /// Keep the request of an `approval_pending` result until a person decides, and give the
    /// result the approval's id, host, expiry and the prompt the model reads.
    pub(super) fn pending(&self, mut result: ToolResult, params: &BashParams, cwd: &Path) -> ToolResult {
        if let Some(e) = &self.approvals.load_error {
            result
                .notices
                .push(format!("The approvals file is not used: {e}"));
        }
        let mut request = params.clone();
        request.cwd = Some(cwd.display().to_string());
        let (segments, always) = result
            .approval
            .as_ref()
            .map(|a| (a.segments_missing.clone(), a.always_approvable))
            .unwrap_or_default();
        let ticket =
            self.approvals
                .broker
                .register(request, &params.command, cwd.to_path_buf(), segments, always);
        if let Some(approval) = &mut result.approval {
            let text = approval.ticketed(&ticket);
            result.output.clone_from(&text);
            if let Some(blocked) = &mut result.blocked {
                blocked.message = text;
            }
        }
        for short in ticket.dropped {
            result.notices.push(format!(
                "Approval {short} was dropped: more than {} approvals were pending.",
                self.config.approvals.max_pending.max(1)
            ));
        }
        result
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
        match self.approvals.decide(id, decision, &self.config.cwd) {
            Decided::Run { request, mut notices } => {
                let mut result = self.run_call(request, cancel, live, true).await;
                notices.append(&mut result.notices);
                result.notices = notices;
                self.env_gate.redacted(result)
            }
            Decided::Refused { rule, message, cwd } => {
                let mut result =
                    ToolResult::not_run(ToolStatus::Blocked, message.clone(), cwd.display().to_string());
                result.blocked = Some(Blocked {
                    rule: rule.to_owned(),
                    message,
                    suggested_tool: None,
                });
                result
            }
            Decided::DomainAllowed { message, cwd } => {
                let mut result =
                    ToolResult::not_run(ToolStatus::Completed, message, cwd.display().to_string());
                result.is_error = false;
                result
            }
        }
    }
}
