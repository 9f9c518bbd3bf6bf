//! Asking the person at the client about a pending approval, through `elicitation/create` (a
//! request to the client on protocols up to 2025-11-25; embedded in an `input_required` result on
//! 2026-07-28, see `approval_rounds`).
//!
//! A `bash` call that ends `approval_pending` on a client that declared the form `elicitation`
//! capability shows the person the command, its working directory, host and the reason, with a
//! choice of `allow-once` / `allow-always` / `deny`. The answer is then applied like any other
//! decision (`BashTool::approve`), so the call's result is the approved run or the blocked result.
//! A client without the capability, an elicitation that fails or goes unanswered, leaves the
//! approval pending: the call returns `approval_pending` as it would without elicitation.
//!
//! The request goes out through `Peer::send_request_with_option`, the same call rmcp's
//! `create_elicitation_with_timeout` makes: that helper sits behind rmcp's `elicitation` feature,
//! which only adds URL-mode helpers (and the `url` crate with its IDNA tables) this server does
//! not use.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, EnumSchema, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use shellgate::Approval;
use shellgate::ApprovalDecision;

/// The property of the elicitation form that holds the decision.
pub const DECISION_FIELD: &str = "decision";

/// What came of asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The person chose this decision (`decline` and `cancel` are [`ApprovalDecision::Deny`]).
    Decided(ApprovalDecision),
    /// Nobody answered: the elicitation failed, timed out, or its answer was unusable (the
    /// reason, for the result's notices). The approval stays pending.
    Unanswered(String),
}

/// Whether the client declared form elicitation (a bare `elicitation: {}` means form): in the
/// request's `_meta` on protocol 2026-07-28, at `initialize` before it.
pub fn supports_form(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|caps| caps.elicitation.as_ref())
        .is_some_and(|cap| cap.form.is_some() || cap.url.is_none())
}

/// The question about `approval` as an `elicitation/create` request (sent to the client, or
/// embedded in an `input_required` result).
pub fn request(approval: &Approval) -> ElicitRequest {
    ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(approval),
        requested_schema: schema(approval.always_approvable),
    })
}

/// Ask the person at `peer` about `approval`, waiting at most `timeout`.
pub async fn ask(peer: &Peer<RoleServer>, approval: &Approval, timeout: Duration) -> Answer {
    ask_with(peer, request(approval), timeout).await
}

/// Send the question `request` to the person at `peer`, waiting at most `timeout`.
pub async fn ask_with(peer: &Peer<RoleServer>, request: ElicitRequest, timeout: Duration) -> Answer {
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(timeout);
    let sent = match peer
        .send_request_with_option(ServerRequest::ElicitRequest(request), options)
        .await
    {
        Ok(handle) => handle.await_response().await,
        Err(e) => Err(e),
    };
    match sent {
        Ok(ClientResult::ElicitResult(result)) => answer_of(&result),
        Ok(other) => Answer::Unanswered(format!("the client answered the elicitation with {other:?}")),
        Err(e) => Answer::Unanswered(format!("the elicitation got no answer: {e}")),
    }
}

/// The decision in the person's answer to the form.
pub fn answer_of(result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => decision_of(result.content.as_ref()),
        // Declining or dismissing the question is a "no": the command does not run.
        _ => Answer::Decided(ApprovalDecision::Deny),
    }
}

/// The decision in an accepted form's `content`.
fn decision_of(content: Option<&Value>) -> Answer {
    let chosen = content
        .and_then(|c| c.get(DECISION_FIELD))
        .and_then(Value::as_str);
    match chosen.map(str::parse::<ApprovalDecision>) {
        Some(Ok(decision)) => Answer::Decided(decision),
        Some(Err(e)) => Answer::Unanswered(format!("the elicitation answer is not a decision: {e}")),
        None => Answer::Unanswered(format!(
            "the elicitation answer has no `{DECISION_FIELD}`: {}",
            content.map_or_else(|| "no content".to_owned(), Value::to_string)
        )),
    }
}

/// The question shown to the person.
pub fn message(approval: &Approval) -> String {
    use shellgate::approvals::{fenced, one_line};
    format!(
        "Allow this command to run?\n\nCommand:\n{}\nDirectory: {}\nHost: {}\nReason: {}\n\n\
         Approval {} expires at {}.",
        fenced(&approval.command),
        one_line(&approval.cwd),
        one_line(&approval.host),
        one_line(&approval.reason),
        approval.short_id,
        approval.expires_at
    )
}

/// The form: one required single choice. `allow-always` is offered only where it may persist a
/// rule (never for a dangerous command).
pub fn schema(always_approvable: bool) -> ElicitationSchema {
    let mut choices = vec![(ApprovalDecision::AllowOnce, "Allow once")];
    if always_approvable {
        choices.push((
            ApprovalDecision::AllowAlways,
            "Allow always (this exact command from now on)",
        ));
    }
    choices.push((ApprovalDecision::Deny, "Deny"));
    let (values, titles): (Vec<String>, Vec<String>) = choices
        .into_iter()
        .map(|(d, title)| (d.as_str().to_owned(), title.to_owned()))
        .unzip();
    let choice = EnumSchema::builder(values)
        .enum_titles(titles)
        .expect("one title per value")
        .title("Decision")
        .description("allow-once runs exactly this request; deny does not run it")
        .build();
    ElicitationSchema::builder()
        .required_enum_schema(DECISION_FIELD, choice)
        .title("Command approval")
        .build_unchecked()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn approval(always: bool) -> Approval {
        Approval {
            command: "rm -rf build".into(),
            cwd: "/work/p".into(),
            rule: "dangerous".into(),
            reason: "recursive delete".into(),
            segments_missing: Vec::new(),
            always_approvable: always,
            id: "0123456789abcdef".into(),
            short_id: "01234567".into(),
            host: "local".into(),
            expires_at: "2030-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn the_message_names_command_directory_host_and_reason() {
        let text = message(&approval(true));
        for needle in [
            "Command:\n```\nrm -rf build\n```",
            "Directory: /work/p",
            "Host: local",
            "Reason: recursive delete",
            "01234567",
        ] {
            assert!(text.contains(needle), "{needle:?} missing in {text}");
        }
    }

    #[test]
    fn the_form_offers_allow_always_only_where_it_may_persist() {
        let wire = serde_json::to_value(schema(true)).unwrap();
        let choice = &wire["properties"][DECISION_FIELD];
        let consts: Vec<&str> = choice["oneOf"]
            .as_array()
            .expect("titled choices")
            .iter()
            .filter_map(|c| c["const"].as_str())
            .collect();
        assert_eq!(consts, ["allow-once", "allow-always", "deny"], "{wire:#}");
        assert_eq!(wire["required"], json!([DECISION_FIELD]));
        let narrow = serde_json::to_value(schema(false)).unwrap();
        assert!(!narrow.to_string().contains("allow-always"), "{narrow:#}");
    }

    #[test]
    fn accepted_content_gives_the_decision() {
        assert_eq!(
            decision_of(Some(&json!({"decision": "allow-once"}))),
            Answer::Decided(ApprovalDecision::AllowOnce)
        );
        assert!(matches!(
            decision_of(Some(&json!({"decision": "maybe"}))),
            Answer::Unanswered(why) if why.contains("maybe")
        ));
        assert!(matches!(decision_of(None), Answer::Unanswered(_)));
    }
}
