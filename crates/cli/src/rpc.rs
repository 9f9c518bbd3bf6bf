//! `shellgate rpc`: JSON-RPC 2.0 over stdin/stdout, one JSON object per line (SPEC T-8).
//!
//! Every request is served on its own task, so a slow `bash` never blocks the next request. Responses
//! carry the request id and are written whole, one per line, by a single writer task. On EOF the
//! requests in flight finish, then the server shuts down.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use shellgate::{BashParams, BashTool, CancellationToken, LiveFeed, ProcessTool, ToolConfig, ToolResult};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// Load the tool configuration (explicit file, or the default search path).
pub fn load_config(explicit: Option<&Path>) -> anyhow::Result<ToolConfig> {
    let config = shellgate::load_tool_config(explicit)?;
    // Skipped redirect rules (an invalid regular expression) are worth a word on stderr.
    for warning in config
        .policy
        .iter()
        .flat_map(shellgate::intercept::Policy::warnings)
    {
        eprintln!("shellgate: warning: {warning}");
    }
    Ok(config)
}

/// State shared by every request of one server.
struct Server {
    tool: BashTool,
    /// The `process` tool over `tool`'s jobs.
    process: ProcessTool,
    /// Cancellation tokens of running `bash` requests, by their JSON-encoded id.
    running: Mutex<HashMap<String, CancellationToken>>,
    /// Whole lines (one JSON message each, newline included) for the writer.
    out: mpsc::UnboundedSender<String>,
}

/// A failed request: JSON-RPC error code and message.
pub(crate) use crate::jsonrpc::{RpcError, code, parse_request};

/// The result of a request. A `bash` result is serialized straight into the response line, without a
/// `Value` tree in between.
enum Reply {
    Json(Value),
    Bash(Box<ToolResult>),
}

/// A `bash` result as sent: the structured fields, and the text a model should see (SPEC T-4) next to
/// them, as for `process`.
#[derive(Serialize)]
struct BashReply<'a> {
    #[serde(flatten)]
    result: &'a ToolResult,
    text: String,
}

impl Serialize for Reply {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Json(value) => value.serialize(serializer),
            Self::Bash(result) => BashReply {
                result,
                text: result.model_text(),
            }
            .serialize(serializer),
        }
    }
}

/// A JSON-RPC response: `result` or `error`.
#[derive(Serialize)]
struct Response<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Reply>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorBody<'a>>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i64,
    message: &'a str,
}

/// `message` as one line for the writer.
fn line_of(message: &impl Serialize) -> String {
    let mut line = serde_json::to_string(message).unwrap_or_else(|e| {
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": code::INVALID_REQUEST, "message": e.to_string()}})
            .to_string()
    });
    line.push('\n');
    line
}

impl Server {
    fn send(&self, message: &impl Serialize) {
        let mut line = line_of(message);
        // Whatever field it is in (output, notices, a job's command, an artifact read, an error),
        // a configured secret value never leaves the engine.
        if self.tool.redacts() {
            line = self.tool.redact_outgoing(&line);
        }
        // The writer only goes away at shutdown, when nobody is listening any more.
        let _ = self.out.send(line);
    }

    fn respond(&self, id: &Value, outcome: Result<Value, RpcError>) {
        self.reply(id, &outcome.map(Reply::Json));
    }

    fn reply(&self, id: &Value, outcome: &Result<Reply, RpcError>) {
        let response = match outcome {
            Ok(result) => Response {
                jsonrpc: "2.0",
                id,
                result: Some(result),
                error: None,
            },
            Err((code, message)) => Response {
                jsonrpc: "2.0",
                id,
                result: None,
                error: Some(ErrorBody { code: *code, message }),
            },
        };
        self.send(&response);
    }

    async fn dispatch(self: Arc<Self>, id: Option<Value>, method: String, params: Value) {
        let outcome = match method.as_str() {
            "bash" => self.bash(id.as_ref(), params).await,
            "abort" => self.abort(&params).map(Reply::Json),
            "process" => self.process(params).await.map(Reply::Json),
            "approve" => self.approve(id.as_ref(), params).await.map(Reply::Json),
            "artifact" => self
                .artifacts()
                .and_then(|store| crate::artifact_cmd::rpc_with(&store, &params))
                .map(Reply::Json)
                .map_err(|e| (code::INVALID_PARAMS, e)),
            other => Err((code::METHOD_NOT_FOUND, format!("unknown method {other:?}"))),
        };
        // Requests without an id are notifications: no response.
        if let Some(id) = id {
            self.reply(&id, &outcome);
        }
    }

    /// `process`: inspect and control background jobs (SPEC J-3). Failures such as an unknown job are
    /// results with `is_error: true`; only malformed parameters are JSON-RPC errors.
    async fn process(&self, params: Value) -> Result<Value, RpcError> {
        crate::methods::process_call(&self.process, params).await
    }

    async fn bash(&self, id: Option<&Value>, params: Value) -> Result<Reply, RpcError> {
        let params: BashParams = serde_json::from_value(params)
            .map_err(|e| (code::INVALID_PARAMS, format!("invalid bash params: {e}")))?;
        let cancel = CancellationToken::new();
        let key = id.map(Value::to_string);
        if let Some(key) = &key {
            self.running
                .lock()
                .expect("running map")
                .insert(key.clone(), cancel.clone());
        }
        // Live output goes out as `output` notifications while the request runs (not for notifications).
        let live = id.map(|_| LiveFeed::default());
        let call = self.tool.call_live(params, cancel, live.as_ref());
        let result = match (id, &live) {
            (Some(id), Some(feed)) => with_live_notifications(call, feed, id, &self.out).await,
            _ => call.await,
        };
        if let Some(key) = &key {
            self.running.lock().expect("running map").remove(key);
        }
        Ok(Reply::Bash(Box::new(result)))
    }

    /// `approve`: the approved run can be aborted like a `bash` request, by this request's id.
    async fn approve(&self, id: Option<&Value>, params: Value) -> Result<Value, RpcError> {
        let cancel = CancellationToken::new();
        let key = id.map(Value::to_string);
        if let Some(key) = &key {
            self.running
                .lock()
                .expect("running map")
                .insert(key.clone(), cancel.clone());
        }
        let outcome = crate::methods::approve_call(&self.tool, params, cancel).await;
        if let Some(key) = &key {
            self.running.lock().expect("running map").remove(key);
        }
        outcome
    }

    /// The engine's own artifact store (its project's).
    fn artifacts(&self) -> Result<std::sync::Arc<shellgate::sink::ArtifactStore>, String> {
        match &self.tool.config().artifacts {
            Some(store) => Ok(std::sync::Arc::clone(store)),
            None => Err(format!(
                "the artifact store is not available: {}",
                self.tool
                    .config()
                    .artifacts_error
                    .as_deref()
                    .unwrap_or("none is configured")
            )),
        }
    }

    fn abort(&self, params: &Value) -> Result<Value, RpcError> {
        let target = params.get("id").ok_or_else(|| {
            (
                code::INVALID_PARAMS,
                "abort needs {\"id\": <id of a running bash request>}".to_owned(),
            )
        })?;
        let token = self
            .running
            .lock()
            .expect("running map")
            .get(&target.to_string())
            .cloned();
        if let Some(token) = &token {
            token.cancel();
        }
        Ok(json!({"aborted": token.is_some()}))
    }
}

/// Runs `call`, sending what it printed meanwhile as `output` notifications, coalesced every 50 ms.
///
/// The timer is polled next to the call on the request's own task (no task of its own), and armed only
/// once the call has printed something: most calls end before their first notification is due, and
/// every timer armed costs the runtime a wake-up. No notification can follow the call's end, so the
/// result comes after every `output` of its request.
async fn with_live_notifications<F: std::future::Future>(
    call: F,
    feed: &LiveFeed,
    id: &Value,
    out: &mpsc::UnboundedSender<String>,
) -> F::Output {
    let period = shellgate::sink::DEFAULT_INTERVAL;
    let first = tokio::time::Instant::now() + period;
    let mut tick: Option<tokio::time::Interval> = None;
    let mut call = std::pin::pin!(call);
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(result) = call.as_mut().poll(cx) {
            return std::task::Poll::Ready(result);
        }
        if tick.is_none() && !feed.is_empty() {
            let mut armed = tokio::time::interval_at(first, period);
            armed.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick = Some(armed);
        }
        if let Some(tick) = tick.as_mut() {
            // Until it is pending again, so the next tick wakes this task.
            while tick.poll_tick(cx).is_ready() {
                if let Some(live) = feed.take() {
                    let params = json!({"id": id, "text": live.text, "skipped_bytes": live.skipped});
                    let _ = out.send(line_of(
                        &json!({"jsonrpc": "2.0", "method": "output", "params": params}),
                    ));
                }
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// Serve until stdin ends and every request in flight has been answered.
pub async fn serve(config_file: Option<&Path>) -> anyhow::Result<()> {
    let config = load_config(config_file)?;
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = crate::stdio_pipes::output();
        while let Some(line) = out_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let tool = BashTool::new(config);
    crate::approve_cmd::warn_about_approvals_file(&tool);
    let server = Arc::new(Server {
        process: ProcessTool::for_bash(&tool),
        tool,
        running: Mutex::new(HashMap::new()),
        out: out_tx,
    });
    let exit_notifier = spawn_exit_notifier(&server);
    // `shellgate jobs` reaches this server's jobs through its private socket while it runs.
    let control = crate::control_socket::start_or_warn(server.process.clone(), server.tool.clone());

    // On a task of its own, as the requests' tasks are, not on the future that waits for the server to
    // end: on a pool of workers, each request then starts without waking another thread.
    let in_flight = tokio::spawn(read_requests(Arc::clone(&server))).await?;
    // The client is gone: no job outlives the server. Killing the jobs also ends polls waiting on them.
    drop(control);
    exit_notifier.abort();
    server.tool.jobs().shutdown().await;
    server.tool.sessions().shutdown();
    server.tool.shutdown_hosts().await;
    let mut in_flight = in_flight;
    while in_flight.join_next().await.is_some() {}
    drop(server);
    let _ = writer.await;
    Ok(())
}

/// Read requests until stdin ends, each served on its own task; returns the tasks still running.
async fn read_requests(server: Arc<Server>) -> JoinSet<()> {
    let mut lines = BufReader::new(crate::stdio_pipes::input()).lines();
    let mut in_flight = JoinSet::new();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => {
                // Not UTF-8 or unreadable: answer and keep going (the bad line is consumed).
                server.respond(
                    &Value::Null,
                    Err((code::PARSE_ERROR, format!("unreadable input: {e}"))),
                );
                if e.kind() == std::io::ErrorKind::InvalidData {
                    continue;
                }
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match parse_request(&line) {
            Ok((id, method, params)) => {
                // Boxed: the task then holds a pointer, not the request's whole (large) future, which
                // would be copied on every move into and out of the task.
                in_flight.spawn(Box::pin(Arc::clone(&server).dispatch(id, method, params)));
            }
            Err((id, error)) => server.respond(&id, Err(error)),
        }
        // Reap finished tasks so the set does not grow with the session.
        while in_flight.try_join_next().is_some() {}
    }
    in_flight
}

/// Forward each backgrounded job's exit as a `job_exited` notification (JSON-RPC, no id), once per job
/// (a `poll`/`kill`/`remove` already waiting on the job when it ends reports the exit instead).
fn spawn_exit_notifier(server: &Arc<Server>) -> tokio::task::JoinHandle<()> {
    let mut exits = server.tool.jobs().subscribe();
    let out = server.out.clone();
    tokio::spawn(async move {
        loop {
            match exits.recv().await {
                Ok(event) => {
                    let message = json!({"jsonrpc": "2.0", "method": "job_exited", "params": event});
                    let _ = out.send(line_of(&message));
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_are_classified() {
        assert_eq!(parse_request("{").unwrap_err().1.0, code::PARSE_ERROR);
        assert_eq!(parse_request("[1]").unwrap_err().1.0, code::INVALID_REQUEST);
        let (id, err) = parse_request(r#"{"jsonrpc":"1.0","id":4,"method":"bash"}"#).unwrap_err();
        assert_eq!((id, err.0), (json!(4), code::INVALID_REQUEST));
        let (id, method, params) =
            parse_request(r#"{"jsonrpc":"2.0","id":"a","method":"bash","params":{"command":"x"}}"#).unwrap();
        assert_eq!(
            (id, method.as_str(), params["command"].as_str()),
            (Some(json!("a")), "bash", Some("x"))
        );
    }
}
