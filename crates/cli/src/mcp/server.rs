//! One MCP session's state and its tools: `bash` (with approvals asked through the client),
//! `process`, `artifact`, `approve`. The protocol methods are in `handler`.

use std::fmt::Write as _;
use std::sync::Arc;

use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, CreateTaskResult, DetailedTask, InputResponses, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shellgate::sink::ArtifactStore;
use shellgate::{
    BashParams, BashTool, CancellationToken, JobStatus, ProcessParams, ProcessResult, ProcessTool,
    ToolResult, ToolStatus,
};

use super::approval_rounds::ApprovalRounds;
use super::artifacts::{self, ArtifactParams};
use super::connection::Connection;
use super::era;
use super::job_resources;
use super::notes::collapsed_tail;
use super::progress::ProgressForwarder;
use super::tasks::{self, Tasks};
use super::tools;

mod approvals;
mod domains;

/// Characters of a cancelled call's output kept in the note for the next result.
const CANCELLED_TAIL_CHARS: usize = 200;

/// Everything one MCP session shares.
pub struct McpServer {
    tool: BashTool,
    process: ProcessTool,
    store: Result<Arc<ArtifactStore>, String>,
    pub(super) tools: Vec<Tool>,
    /// The client connection's events, log level and subscriptions.
    pub(super) connection: Connection,
    /// Seals and redeems the state of approvals asked in `input_required` results (`None` when no
    /// key could be drawn: modern clients then get `approval_pending`).
    rounds: Option<ApprovalRounds>,
    /// Foreground runs that outlived `auto_yield_ms` for clients with the tasks extension.
    tasks: Tasks,
}

/// What a `tools/call` retry after `input_required` carries.
#[derive(Debug, Clone, Copy, Default)]
pub struct Retry<'a> {
    /// The `requestState` echoed back.
    pub state: Option<&'a str>,
    /// The answers to the embedded input requests.
    pub responses: Option<&'a InputResponses>,
}

impl Retry<'_> {
    fn is_retry(&self) -> bool {
        self.state.is_some() || self.responses.is_some()
    }
}

impl McpServer {
    /// A server over `tool`.
    pub fn new(tool: BashTool) -> Self {
        let store = match &tool.config().artifacts {
            Some(store) => Ok(Arc::clone(store)),
            None => ArtifactStore::open_default().map(Arc::new).map_err(|e| {
                let cause = tool
                    .config()
                    .artifacts_error
                    .clone()
                    .unwrap_or_else(|| e.to_string());
                format!("the artifact store is not available: {cause}")
            }),
        };
        Self {
            tools: tools::list(tool.config()),
            process: ProcessTool::for_bash(&tool),
            tool,
            store,
            connection: Connection::default(),
            rounds: ApprovalRounds::new()
                .inspect_err(|e| tracing::warn!(%e, "no key for approval request state"))
                .ok(),
            tasks: Tasks::default(),
        }
    }

    /// The `bash` tool (its jobs and sessions are stopped at shutdown).
    pub fn tool(&self) -> &BashTool {
        &self.tool
    }

    /// An event outside any request (a job exit or a cancelled call): `text` for the next result,
    /// `data` for a log notification where the client hears them (see [`Connection::event`]).
    pub async fn event(&self, peer: &Peer<RoleServer>, job_id: Option<&str>, text: String, data: Value) {
        let data = self.redacted(data);
        self.connection.event(peer, job_id, text, data).await;
    }

    /// A `bash` call. On protocol 2026-07-28 a command that needs a person answers
    /// `input_required` (when the client can ask), and the retry carrying the answer resumes it.
    pub(super) async fn bash(
        &self,
        args: Value,
        retry: Retry<'_>,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResponse {
        if retry.is_retry() {
            return self.resume_approval(&args, retry, context).await;
        }
        let asked_with = args.clone();
        let params: BashParams = match parse(tools::BASH, args) {
            Ok(p) => p,
            Err(result) => return result.into(),
        };
        let command = params.command.clone();
        let yields = may_become_task(&params, context);
        let progress = progress_for(context);
        let cancel: CancellationToken = context.ct.clone();
        let feed = progress.as_ref().map(ProgressForwarder::feed);
        let mut result = self.tool.call_live(params, cancel.clone(), feed).await;
        if result.status == ToolStatus::ApprovalPending {
            if era::is_modern(context) {
                if let Some(asked) = self.ask_in_result(&asked_with, &result, context) {
                    if let Some(progress) = progress {
                        progress.finish().await;
                    }
                    return CallToolResponse::InputRequired(asked);
                }
            } else {
                // The run a person approves streams its output to the same progress token.
                result = self.ask_person(result, context, feed).await;
            }
        }
        if result.network_approvals.is_some() {
            if era::is_modern(context) {
                match self.ask_domains_in_result(&asked_with, &command, result, context) {
                    Ok(asked) => {
                        if let Some(progress) = progress {
                            progress.finish().await;
                        }
                        return CallToolResponse::InputRequired(asked);
                    }
                    Err(back) => result = *back,
                }
            } else {
                self.ask_about_domains(&mut result, &command, context).await;
            }
        }
        if let Some(progress) = progress {
            progress.finish().await;
        }
        if let Some(task) = self.as_task(yields, &result) {
            return CallToolResponse::Task(task);
        }
        if cancel.is_cancelled() && result.status == ToolStatus::Cancelled {
            // The client will not read this result: keep what the command printed where it will look.
            self.keep_cancelled(&command, &result, &context.peer).await;
        } else {
            result
                .notices
                .extend(self.connection.take_for(context, None).await);
        }
        tool_result(&result.model_text(), &result, result.is_error).into()
    }

    /// `result` as a task, when it is a run that went on as a job at `auto_yield_ms` and the call
    /// `yields` to a task (see [`may_become_task`]).
    fn as_task(&self, yields: bool, result: &ToolResult) -> Option<CreateTaskResult> {
        let job_id = result
            .job_id
            .as_deref()
            .filter(|_| yields && result.status == ToolStatus::Running)?;
        let output = self.tool.redact_outgoing(&result.output);
        Some(self.tasks.create(job_id, &output))
    }

    /// The state of task `task_id` (`None`: no such task). Its job's exit is reported by the task,
    /// so it is not noted again in the next result.
    pub(super) async fn task_state(&self, task_id: &str) -> Option<DetailedTask> {
        let finish = |polled: &ProcessResult, failed: bool| {
            let result = self.redacted(tool_result(&polled.model_text(), polled, failed));
            tasks::object(serde_json::to_value(result).unwrap_or_default())
        };
        let mut state = self.tasks.get(&self.process, task_id, &finish).await?;
        if state.status().is_terminal() {
            self.connection.forget_job(task_id);
        }
        if let Some(message) = state.task.status_message.take() {
            state.task.status_message = Some(self.tool.redact_outgoing(&message));
        }
        Some(state)
    }

    /// Tell a handshake-era client that subscribed to `job://<job_id>` that the job changed.
    pub async fn announce_subscribed(&self, peer: &Peer<RoleServer>, job_id: &str) {
        let uri = job_resources::uri(job_id);
        if era::is_handshake(peer) && self.connection.subscriptions.has(&uri) {
            let param = rmcp::model::ResourceUpdatedNotificationParam::new(uri);
            if let Err(e) = peer.notify_resource_updated(param).await {
                tracing::debug!(%e, "cannot send a resource update");
            }
        }
    }

    /// `resources/read` of a `job://` URI (`None`: no such job).
    pub(super) async fn read_job(&self, uri: &str) -> Option<Vec<rmcp::model::ResourceContents>> {
        let contents = job_resources::read(&self.process, uri).await?;
        Some(self.redacted(contents))
    }

    /// Cancel task `task_id` (`false`: no such task).
    pub(super) async fn cancel_task(&self, task_id: &str) -> bool {
        self.tasks.cancel(&self.process, task_id).await
    }

    async fn keep_cancelled(&self, command: &str, result: &ToolResult, peer: &Peer<RoleServer>) {
        let mut text = format!(
            "Cancelled after {} ms: `{}`",
            result.duration_ms,
            collapsed_tail(command, 80)
        );
        match &result.artifact {
            Some(artifact) => {
                let _ = write!(text, "; full output so far: {artifact}");
            }
            None if !result.output.is_empty() => {
                let tail = collapsed_tail(&result.output, CANCELLED_TAIL_CHARS);
                let _ = write!(text, "; output so far: {tail}");
            }
            None => text.push_str("; no output"),
        }
        let data = json!({"event": "cancelled", "command": command, "result": result});
        self.event(peer, None, text, data).await;
    }

    pub(super) async fn process(&self, args: Value, context: &RequestContext<RoleServer>) -> CallToolResult {
        let params: ProcessParams = match parse(tools::PROCESS, args) {
            Ok(p) => p,
            Err(result) => return result,
        };
        let mut result: ProcessResult = tokio::select! {
            r = self.process.call(params) => r,
            // A long `poll` wait ends with the request (the client does not read the answer).
            () = context.ct.cancelled() => return CallToolResult::error(vec![ContentBlock::text("cancelled")]),
        };
        let reported = result
            .job_id
            .as_deref()
            .filter(|_| result.status.is_some_and(|s| s != JobStatus::Running));
        result
            .notices
            .extend(self.connection.take_for(context, reported).await);
        tool_result(&result.model_text(), &result, result.is_error)
    }

    pub(super) async fn approve(&self, args: Value) -> CallToolResult {
        let params: tools::ApproveToolParams = match parse(tools::APPROVE, args) {
            Ok(p) => p,
            Err(result) => return result,
        };
        let decision: shellgate::ApprovalDecision = match params.decision.parse() {
            Ok(d) => d,
            Err(e) => return CallToolResult::error(vec![ContentBlock::text(e)]),
        };
        let result = self
            .tool
            .approve(&params.id, decision, shellgate::CancellationToken::new())
            .await;
        tool_result(&result.model_text(), &result, result.is_error)
    }

    pub(super) fn artifact(&self, args: Value) -> CallToolResult {
        let params: ArtifactParams = match parse(tools::ARTIFACT, args) {
            Ok(p) => p,
            Err(result) => return result,
        };
        let answer = self
            .store
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|store| artifacts::call(store, &params));
        match answer {
            Ok(answer) => tool_result(&artifacts::model_text(&answer), &answer, false),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        }
    }

    pub(super) fn store(&self) -> Result<&ArtifactStore, McpError> {
        self.store
            .as_deref()
            .map_err(|e| McpError::internal_error(e.clone(), None))
    }
}

/// Whether a `bash` call with `params` answers a task when it outlives `auto_yield_ms`: a
/// foreground call (not `background`, no `yield_ms` of its own) on protocol 2026-07-28 from a
/// client that declared the tasks extension in this request.
fn may_become_task(params: &BashParams, context: &RequestContext<RoleServer>) -> bool {
    !params.background
        && params.yield_ms.is_none()
        && era::is_modern(context)
        && context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
}

/// Live output for the request's progress token, when it has one.
fn progress_for(context: &RequestContext<RoleServer>) -> Option<ProgressForwarder> {
    context
        .meta
        .get_progress_token()
        .map(|token| ProgressForwarder::start(context.peer.clone(), token))
}

/// Parameters of `tool` from `args`; bad arguments are an error result the model can act on.
fn parse<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, CallToolResult> {
    serde_json::from_value(args).map_err(|e| {
        CallToolResult::error(vec![ContentBlock::text(format!(
            "invalid arguments for `{tool}`: {e}"
        ))])
    })
}

impl McpServer {
    /// `value` with every configured secret value redacted from its text, whatever field holds it.
    pub(super) fn redacted<T: Serialize + serde::de::DeserializeOwned>(&self, value: T) -> T {
        if !self.tool.redacts() {
            return value;
        }
        let Ok(text) = serde_json::to_string(&value) else {
            return value;
        };
        serde_json::from_str(&self.tool.redact_outgoing(&text)).unwrap_or(value)
    }
}

/// A tool result: the model text as content and the result's fields as structured content.
fn tool_result(text: &str, fields: &impl Serialize, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = serde_json::to_value(fields).ok();
    result
}
