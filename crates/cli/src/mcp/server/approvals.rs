//! Approvals put to the person at the client: in the call's result on protocol 2026-07-28
//! (`input_required`, resumed by the retry), through `elicitation/create` before it.

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult};
use rmcp::service::RequestContext;
use serde_json::{Value, json};
use shellgate::{BashParams, ToolResult};

use super::super::approval_rounds::{Refused, Resumed};
use super::super::elicit;
use super::super::progress::ProgressForwarder;
use super::super::tools;
use super::{McpServer, Retry, may_become_task, progress_for, tool_result};

impl McpServer {
    /// The `input_required` result putting `pending`'s approval to the person, when the request
    /// says the client can ask (form elicitation in its `_meta` capabilities) and the
    /// configuration allows asking.
    pub(super) fn ask_in_result(
        &self,
        args: &Value,
        pending: &ToolResult,
        context: &RequestContext<RoleServer>,
    ) -> Option<InputRequiredResult> {
        let ttl = self.tool.config().approvals.elicitation_timeout;
        let rounds = self.rounds.as_ref()?;
        let approval = pending.approval.as_ref()?;
        let can_ask = elicit::supports_form(context.client_capabilities().as_ref());
        (can_ask && !ttl.is_zero()).then(|| rounds.ask(tools::BASH, args, approval, ttl))
    }

    /// The retry of a call that answered `input_required`: the person's decision is applied to the
    /// approval its sealed state names. A state that does not verify or was used before runs
    /// nothing; a good state that came without an answer gets its question back, unspent. An
    /// approved run still going at `auto_yield_ms` becomes a task for a client with the tasks
    /// extension, as the first call would have.
    pub(super) async fn resume_approval(
        &self,
        args: &Value,
        retry: Retry<'_>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let Some(rounds) = &self.rounds else {
            return refusal(&Refused::Invalid(
                "this server issues no request state".to_owned(),
            ))
            .into();
        };
        let (id, decision) = match rounds.resume(tools::BASH, args, retry.state, retry.responses) {
            Ok(Resumed::Command(id, decision)) => (id, decision),
            Ok(Resumed::Domains { held, answers }) => {
                let mut result = *held;
                self.apply_domain_answers(&mut result, answers).await;
                result
                    .notices
                    .extend(self.connection.take_for(context, None).await);
                return tool_result(&result.model_text(), &result, result.is_error).into();
            }
            Err(Refused::NoAnswer(why)) => match rounds.ask_again(tools::BASH, args, retry.state) {
                Some(again) => {
                    tracing::info!(%why, "approval retry without an answer: asked again");
                    return CallToolResponse::InputRequired(again);
                }
                None => return refusal(&Refused::NoAnswer(why)).into(),
            },
            Err(refused) => return refusal(&refused).into(),
        };
        let progress = progress_for(context);
        let feed = progress.as_ref().map(ProgressForwarder::feed);
        let mut result = self
            .tool
            .approve_live(&id, decision, context.ct.clone(), feed)
            .await;
        if let Some(progress) = progress {
            progress.finish().await;
        }
        let yields = serde_json::from_value::<BashParams>(args.clone())
            .is_ok_and(|params| may_become_task(&params, context));
        if let Some(task) = self.as_task(yields, &result) {
            return CallToolResponse::Task(task);
        }
        result
            .notices
            .extend(self.connection.take_for(context, None).await);
        tool_result(&result.model_text(), &result, result.is_error).into()
    }

    /// Put a pending approval to the person at the client (elicitation), when the client can ask
    /// and the configuration allows it; the decision is applied like an `approve` request. Any
    /// failure to get an answer leaves `pending` as it is, with a notice saying why.
    pub(super) async fn ask_person(
        &self,
        pending: ToolResult,
        context: &RequestContext<RoleServer>,
        live: Option<&shellgate::LiveFeed>,
    ) -> ToolResult {
        let timeout = self.tool.config().approvals.elicitation_timeout;
        let Some(approval) = pending.approval.as_ref() else {
            return pending;
        };
        if timeout.is_zero() || !elicit::supports_form(context.client_capabilities().as_ref()) {
            return pending;
        }
        let answer = tokio::select! {
            answer = elicit::ask(&context.peer, approval, timeout) => answer,
            // The call itself was cancelled: nobody reads its result, the approval stays pending.
            () = context.ct.cancelled() => return pending,
        };
        match answer {
            elicit::Answer::Decided(decision) => {
                let id = approval.id.clone();
                self.tool
                    .approve_live(&id, decision, context.ct.clone(), live)
                    .await
            }
            elicit::Answer::Unanswered(why) => {
                tracing::info!(%why, "approval left pending");
                let mut pending = pending;
                pending
                    .notices
                    .push(format!("Could not ask through the client: {why}."));
                pending
            }
        }
    }
}

/// The result of a retry that resumes nothing.
fn refusal(refused: &Refused) -> CallToolResult {
    tracing::warn!(%refused, "approval retry refused");
    let text = format!(
        "Not run: {refused}. A pending approval stays pending; a person can still decide it \
         with `shellgate approve ID allow-once|allow-always|deny`."
    );
    let fields = json!({"status": "refused", "reason": refused.to_string()});
    tool_result(&text, &fields, true)
}
