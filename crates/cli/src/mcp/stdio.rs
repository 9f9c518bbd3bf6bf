//! The stdio transport: rmcp's non-blocking pipes and its writer, with a reader that parses the
//! one request an agent sends over and over — `tools/call` — straight into its type.
//!
//! rmcp reads a client message as an untagged union: the line is buffered, its shape checked, then
//! every request type is tried in turn until one fits. For a `bash` call that is about 45 000
//! instructions, most of a round trip's protocol cost (the whole JSON-RPC server spends about 6 000
//! parsing its request). Here a cheap first pass reads only the message's keys; a request whose
//! `method` is `tools/call` is then parsed straight into rmcp's `tools/call` types and assembled as
//! rmcp assembles it (a test holds the two equal). Every other line, and a `tools/call` that does
//! not parse that way, goes through rmcp's full union, so its errors are rmcp's.

use std::borrow::Cow;
use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest,
    ErrorData, JsonRpcRequest, JsonRpcVersion2_0, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use rmcp::transport::io::{StdioReader, StdioWriter};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt as _, BufReader};

/// A JSON-RPC message's keys, read without building any of their values.
#[derive(Deserialize)]
struct Keys<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}

/// What a line holds.
#[derive(Debug)]
enum Line {
    Message(Box<ClientJsonRpcMessage>),
    /// Not JSON, or a notification that is not one (no answer is owed).
    Ignored,
    /// Well-formed JSON that is no message: answered with Invalid Request.
    Invalid,
}

/// `line` (without its line end) as a client message.
fn parse(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if let Some(call) = parse_call(line) {
        return Line::Message(Box::new(call));
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(message) => Line::Message(Box::new(message)),
        Err(e) if e.is_syntax() || e.is_eof() => {
            tracing::debug!(%e, "ignoring a line that is not JSON");
            Line::Ignored
        }
        Err(e) => {
            let notification = serde_json::from_slice::<Keys>(line).is_ok_and(|k| k.id.is_none());
            tracing::debug!(%e, notification, "a message that is no MCP message");
            if notification {
                Line::Ignored
            } else {
                Line::Invalid
            }
        }
    }
}

/// A `tools/call` request as it is written.
#[derive(Deserialize)]
struct CallLine {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    /// Only `tools/call` parses.
    #[allow(dead_code, reason = "read to check it")]
    method: CallToolRequestMethod,
    params: CallToolRequestParams,
}

/// `line` as a `tools/call` request, when it is one that parses as such. It is built as rmcp's
/// `Deserialize` of `Request` builds it: the request's `_meta` goes to its extensions (where rmcp
/// reads a request's context from), not to `params.meta`.
fn parse_call(line: &[u8]) -> Option<ClientJsonRpcMessage> {
    let keys: Keys = serde_json::from_slice(line).ok()?;
    let is_call = keys.method.as_deref() == Some("tools/call")
        && keys.id.is_some()
        && keys.result.is_none()
        && keys.error.is_none();
    if !is_call {
        return None;
    }
    let CallLine {
        jsonrpc,
        id,
        mut params,
        ..
    } = serde_json::from_slice(line).ok()?;
    let meta = params.meta.take();
    let mut request = CallToolRequest::new(params);
    if let Some(meta) = meta {
        request.extensions.insert(meta);
    }
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc,
        id,
        request: ClientRequest::from(request),
    }))
}

/// The server's end of stdio.
pub struct Stdio {
    read: BufReader<StdioReader>,
    /// The line being read; kept across a cancelled `receive`, which resumes it.
    line: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    discarding: bool,
    /// rmcp's transport, used for writing only.
    out: AsyncRwTransport<RoleServer, tokio::io::Empty, StdioWriter>,
}

impl Stdio {
    /// This process's stdin and stdout, through rmcp's non-blocking pipe driver.
    pub fn open() -> Self {
        let (reader, writer) = rmcp::transport::stdio_pipes();
        Self {
            read: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            out: AsyncRwTransport::new(tokio::io::empty(), writer),
        }
    }

    /// The next whole line into `self.line` (with its `\n`); `false` at the end of input.
    async fn next_line(&mut self) -> std::io::Result<bool> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let end = available.iter().position(|&b| b == b'\n');
            let take = end.map_or(available.len(), |at| at + 1);
            if self.discarding {
                self.discarding = end.is_none();
            } else if self.line.len() + take > DEFAULT_MAX_LINE_LENGTH {
                tracing::error!("a message longer than {DEFAULT_MAX_LINE_LENGTH} bytes was dropped");
                self.line.clear();
                self.discarding = end.is_none();
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if end.is_some() && !self.discarding && !self.line.is_empty() {
                return Ok(true);
            }
        }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.out.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.next_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!(%e, "cannot read stdin");
                    return None;
                }
            }
            let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let parsed = if text.is_empty() {
                Line::Ignored
            } else {
                parse(text)
            };
            self.line.clear();
            match parsed {
                Line::Message(message) => return Some(*message),
                Line::Ignored => {}
                Line::Invalid => {
                    let answer = TxJsonRpcMessage::<RoleServer>::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    if self.out.send(answer).await.is_err() {
                        return None;
                    }
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.out.close()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::RequestMetaObject;

    use super::*;

    /// What rmcp's own parse makes of `line`.
    fn by_rmcp(line: &str) -> serde_json::Value {
        let message: ClientJsonRpcMessage = serde_json::from_str(line).expect("rmcp parses it");
        serde_json::to_value(message).unwrap()
    }

    fn fast(line: &str) -> serde_json::Value {
        serde_json::to_value(parse_call(line.as_bytes()).expect("parsed directly")).unwrap()
    }

    /// Where the request's `_meta` ended up: its params, its extensions.
    fn context_of(message: &ClientJsonRpcMessage) -> (Option<RequestMetaObject>, Option<RequestMetaObject>) {
        let ClientJsonRpcMessage::Request(request) = message else {
            panic!("not a request: {message:?}")
        };
        let ClientRequest::CallToolRequest(call) = &request.request else {
            panic!("not a call: {message:?}")
        };
        (
            call.params.meta.clone(),
            call.extensions.get::<RequestMetaObject>().cloned(),
        )
    }

    #[test]
    fn a_tools_call_comes_out_as_rmcp_makes_it() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p-1"}"#;
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true"}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{{{meta},"name":"bash","arguments":{{"command":"ls","timeout":1.5}}}}}}"#),
            format!(r#"{{"method":"tools/call","jsonrpc":"2.0","params":{{"name":"bash","arguments":{{"command":"x"}},"inputResponses":{{"approval":{{"action":"accept"}}}},"requestState":"rs1.x",{meta}}},"id":3}}"#),
        ] {
            assert_eq!(fast(&line), by_rmcp(&line), "{line}");
            let rmcps: ClientJsonRpcMessage = serde_json::from_str(&line).unwrap();
            let ours = parse_call(line.as_bytes()).unwrap();
            assert_eq!(context_of(&ours), context_of(&rmcps), "{line}");
        }
    }

    #[test]
    fn other_lines_take_rmcps_path() {
        let result = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{},"params":{"name":"bash"}}"#;
        assert!(parse_call(result.as_bytes()).is_none());
        let notification = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"bash"}}"#;
        assert!(parse_call(notification.as_bytes()).is_none());
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
        assert!(parse_call(list.as_bytes()).is_none());
        assert!(matches!(parse(list.as_bytes()), Line::Message(_)));
        assert!(matches!(parse(b"{not json"), Line::Ignored));
        // A notification gets no answer, even one that does not parse.
        let progress = br#"{"jsonrpc":"1.0","method":"notifications/progress"}"#;
        assert!(matches!(parse(progress), Line::Ignored));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"nothing":true}"#),
            Line::Invalid
        ));
    }
}
