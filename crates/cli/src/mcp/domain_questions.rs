//! The question about a destination the sandbox's proxy refused (`ToolResult::network_approvals`):
//! allow that `host:port` always, or not. The run that met it has ended, so there is no "once".

use rmcp::model::{ElicitRequest, ElicitRequestParams, ElicitationSchema, EnumSchema};
use shellgate::{ApprovalDecision, NetworkApproval};

use super::elicit::DECISION_FIELD;

/// The question about `approval` as an `elicitation/create` request (sent to the client, or
/// embedded in an `input_required` result).
pub fn request(approval: &NetworkApproval, command: &str) -> ElicitRequest {
    ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(approval, command),
        requested_schema: schema(),
    })
}

/// The question shown to the person.
pub fn message(approval: &NetworkApproval, command: &str) -> String {
    use shellgate::approvals::{fenced, one_line};
    format!(
        "Allow sandboxed commands to reach {} from now on?\n\nThe sandbox's proxy refused it: it is not in \
         allowed_domains. The command that tried:\n{}\nAllowing stores exactly this host and port; the \
         command is not run again.\n\nApproval {} expires at {}.",
        one_line(&approval.address),
        fenced(command),
        approval.short_id,
        approval.expires_at
    )
}

/// The form: one required choice, `allow-always` or `deny`.
pub fn schema() -> ElicitationSchema {
    let choices = [
        (ApprovalDecision::AllowAlways, "Allow always (this host and port)"),
        (ApprovalDecision::Deny, "Deny"),
    ];
    let (values, titles): (Vec<String>, Vec<String>) = choices
        .into_iter()
        .map(|(d, title)| (d.as_str().to_owned(), title.to_owned()))
        .unzip();
    let choice = EnumSchema::builder(values)
        .enum_titles(titles)
        .expect("one title per value")
        .title("Decision")
        .description("allow-always lets later runs reach this destination; deny keeps it refused")
        .build();
    ElicitationSchema::builder()
        .required_enum_schema(DECISION_FIELD, choice)
        .title("Network destination approval")
        .build_unchecked()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_names_the_destination_and_offers_no_once() {
        let approval = NetworkApproval {
            address: "pypi.org:443".into(),
            id: "0123456789abcdef".into(),
            short_id: "01234567".into(),
            expires_at: "2030-01-01T00:00:00Z".into(),
        };
        let text = message(&approval, "pip install x");
        assert!(
            text.contains("reach pypi.org:443") && text.contains("pip install x"),
            "{text}"
        );
        let wire = serde_json::to_value(schema()).unwrap();
        let consts: Vec<&str> = wire["properties"][DECISION_FIELD]["oneOf"]
            .as_array()
            .expect("titled choices")
            .iter()
            .filter_map(|c| c["const"].as_str())
            .collect();
        assert_eq!(consts, ["allow-always", "deny"], "{wire:#}");
    }
}
