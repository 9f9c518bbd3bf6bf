//! The JSON-RPC 2.0 wire format both servers read (`shellgate rpc` on stdio, the control socket):
//! error codes and a request line split into its id, method and params.

use serde_json::{Value, json};

/// An error response: its code and message.
pub(crate) type RpcError = (i64, String);

/// JSON-RPC error codes.
pub(crate) mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
}

/// Split a line into (id, method, params), or the error response to send.
pub(crate) fn parse_request(line: &str) -> Result<(Option<Value>, String, Value), (Value, RpcError)> {
    let value: Value = serde_json::from_str(line)
        .map_err(|e| (Value::Null, (code::PARSE_ERROR, format!("parse error: {e}"))))?;
    let Value::Object(mut obj) = value else {
        return Err((
            Value::Null,
            (
                code::INVALID_REQUEST,
                "a request must be a JSON object".to_owned(),
            ),
        ));
    };
    let id = obj.remove("id");
    let err_id = id.clone().unwrap_or(Value::Null);
    if let Some(bad) = id
        .as_ref()
        .filter(|v| !(v.is_string() || v.is_number() || v.is_null()))
    {
        return Err((Value::Null, (code::INVALID_REQUEST, format!("invalid id {bad}"))));
    }
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            err_id,
            (code::INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"".to_owned()),
        ));
    }
    let Some(Value::String(method)) = obj.remove("method") else {
        return Err((
            err_id,
            (code::INVALID_REQUEST, "\"method\" must be a string".to_owned()),
        ));
    };
    let params = obj.remove("params").unwrap_or_else(|| json!({}));
    if !(params.is_object() || params.is_array()) {
        return Err((
            err_id,
            (code::INVALID_PARAMS, "\"params\" must be an object".to_owned()),
        ));
    }
    Ok((id, method, params))
}
