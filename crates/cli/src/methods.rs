//! The engine's methods any of its servers answer (`shellgate rpc` on stdio and the control
//! socket alike): `approve` and `process`, their params checked, their results with the `text`.

use serde::Deserialize;
use serde_json::Value;
use shellgate::{ApprovalDecision, BashTool, CancellationToken, ProcessParams, ProcessTool};

use crate::jsonrpc::code;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveParams {
    id: String,
    decision: String,
}

/// An `approve {id, decision}` request: the result of the approved run, or the blocked result of
/// a denial or of an id that is not pending, with its `text`.
pub async fn approve_call(
    tool: &BashTool,
    params: Value,
    cancel: CancellationToken,
) -> Result<Value, (i64, String)> {
    let params: ApproveParams = serde_json::from_value(params).map_err(|e| {
        (
            code::INVALID_PARAMS,
            format!("invalid approve params: {e} (expected {{\"id\": ..., \"decision\": \"allow-once\"|\"allow-always\"|\"deny\"}})"),
        )
    })?;
    let decision: ApprovalDecision = params.decision.parse().map_err(|e| (code::INVALID_PARAMS, e))?;
    let result = tool.approve(&params.id, decision, cancel).await;
    let text = result.model_text();
    let mut value = serde_json::to_value(result).map_err(|e| (code::INVALID_REQUEST, e.to_string()))?;
    value["text"] = Value::String(text);
    Ok(value)
}

/// A `process` call, answered as `shellgate rpc` answers it: the result's fields and its `text`.
pub async fn process_call(process: &ProcessTool, params: Value) -> Result<Value, (i64, String)> {
    let params: ProcessParams = serde_json::from_value(params)
        .map_err(|e| (code::INVALID_PARAMS, format!("invalid process params: {e}")))?;
    let result = process.call(params).await;
    let text = result.model_text();
    let mut value = serde_json::to_value(result).map_err(|e| (code::INVALID_REQUEST, e.to_string()))?;
    value["text"] = Value::String(text);
    Ok(value)
}
