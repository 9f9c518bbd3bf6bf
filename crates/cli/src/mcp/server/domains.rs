//! Destinations a sandboxed run's proxy refused (`network_approvals`), put to the person at the
//! client: by `elicitation/create` after the run on protocols up to 2025-11-25, in an
//! `input_required` result on 2026-07-28 (the retry carries the answers and gets the run's result,
//! held meanwhile). The run is over either way: an answer only decides whether later runs reach
//! the destination. Where the client cannot ask, the approvals stay pending for `shellgate
//! approve` or the `approve` tool.

use rmcp::RoleServer;
use rmcp::model::InputRequiredResult;
use rmcp::service::RequestContext;
use serde_json::Value;
use shellgate::{ApprovalDecision, CancellationToken, ToolResult};

use super::super::domain_questions;
use super::super::elicit::{self, Answer};
use super::super::tools;
use super::McpServer;

impl McpServer {
    /// Handshake era: ask about each destination of `result` that waits for a person, when the
    /// client can ask and the configuration allows it, and apply the answers to `result`.
    pub(super) async fn ask_about_domains(
        &self,
        result: &mut ToolResult,
        command: &str,
        context: &RequestContext<RoleServer>,
    ) {
        let timeout = self.tool.config().approvals.elicitation_timeout;
        if timeout.is_zero() || !elicit::supports_form(context.client_capabilities().as_ref()) {
            return;
        }
        let Some(offered) = result.network_approvals.take() else {
            return;
        };
        let mut answers = Vec::new();
        for approval in &offered {
            let question = domain_questions::request(approval, command);
            let answer = tokio::select! {
                answer = elicit::ask_with(&context.peer, question, timeout) => answer,
                () = context.ct.cancelled() => Answer::Unanswered("the call was cancelled".to_owned()),
            };
            answers.push((approval.id.clone(), answer));
        }
        result.network_approvals = Some(offered);
        self.apply_domain_answers(result, answers).await;
    }

    /// 2026-07-28: the `input_required` result asking about `result`'s destinations, when the
    /// request says the client can ask and the configuration allows it; otherwise `result` back.
    pub(super) fn ask_domains_in_result(
        &self,
        args: &Value,
        command: &str,
        result: ToolResult,
        context: &RequestContext<RoleServer>,
    ) -> Result<InputRequiredResult, Box<ToolResult>> {
        let ttl = self.tool.config().approvals.elicitation_timeout;
        let Some(rounds) = self.rounds.as_ref() else {
            return Err(Box::new(result));
        };
        let can_ask = elicit::supports_form(context.client_capabilities().as_ref());
        if !can_ask || ttl.is_zero() || result.network_approvals.is_none() {
            return Err(Box::new(result));
        }
        Ok(rounds.ask_domains((tools::BASH, args), command, result, ttl))
    }

    /// Apply the person's answers (approval id → answer) to the destinations of `result`: a
    /// decided one is no longer pending and its outcome becomes a notice; an unanswered one stays
    /// pending, with a notice saying why.
    pub(super) async fn apply_domain_answers(&self, result: &mut ToolResult, answers: Vec<(String, Answer)>) {
        let mut pending = result.network_approvals.take().unwrap_or_default();
        for (id, answer) in answers {
            let Some(at) = pending.iter().position(|a| a.id == id) else {
                continue;
            };
            match answer {
                Answer::Decided(decision) => {
                    let decided = self.tool.approve(&id, decision, CancellationToken::new()).await;
                    // `allow-once` leaves it pending: the run that met it has ended.
                    if decision != ApprovalDecision::AllowOnce {
                        let stale = format!("approve {} ", pending.remove(at).short_id);
                        result.notices.retain(|notice| !notice.contains(&stale));
                    }
                    result.notices.push(decided.output.trim_end().to_owned());
                }
                Answer::Unanswered(why) => {
                    tracing::info!(%why, "destination approval left pending");
                    result.notices.push(format!(
                        "Could not ask through the client about {}: {why}.",
                        pending[at].address
                    ));
                }
            }
        }
        result.network_approvals = (!pending.is_empty()).then_some(pending);
    }
}
