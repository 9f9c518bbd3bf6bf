//! The MCP request handler: tools, resources, logging level.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

#[allow(deprecated, reason = "`logging/setLevel` is served for clients of 2025-11-25")]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use shellgate::sink::ArtifactStore;
use shellgate::{
    BashParams, BashTool, CancellationToken, JobStatus, ProcessParams, ProcessResult, ProcessTool,
    ToolResult, ToolStatus,
};

use super::artifacts::{self, ArtifactParams, ReadFailure};
use super::elicit;
use super::logging::{self, LogFilter};
use super::notes::{PendingNotes, collapsed_tail};
use super::progress::ProgressForwarder;
use super::tools;

/// The newest protocol revision this server implements (progress, logging and cancellation as
/// notifications on the stdio session).
const MAX_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Characters of a cancelled call's output kept in the note for the next result.
const CANCELLED_TAIL_CHARS: usize = 200;

/// Everything one MCP session shares.
pub struct McpServer {
    tool: BashTool,
    process: ProcessTool,
    store: Result<Arc<ArtifactStore>, String>,
    tools: Vec<Tool>,
    notes: PendingNotes,
    /// What the client wants to hear (`logging/setLevel`).
    log_filter: LogFilter,
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
            notes: PendingNotes::default(),
            log_filter: LogFilter::default(),
        }
    }

    /// The `bash` tool (its jobs and sessions are stopped at shutdown).
    pub fn tool(&self) -> &BashTool {
        &self.tool
    }

    /// Keep `text` for the next result (a job exit or a cancelled call).
    pub fn note(&self, job_id: Option<&str>, text: impl Into<String>) {
        self.notes.push(job_id, text);
    }

    /// Send `data` as a `notifications/message` at level `notice`, when the client wants it.
    pub async fn notify(&self, peer: &Peer<RoleServer>, data: Value) {
        self.log_filter.notice(peer, self.redacted(data)).await;
    }

    async fn bash(&self, args: Value, context: &RequestContext<RoleServer>) -> CallToolResult {
        let params: BashParams = match parse(tools::BASH, args) {
            Ok(p) => p,
            Err(result) => return result,
        };
        let command = params.command.clone();
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| ProgressForwarder::start(context.peer.clone(), token));
        let cancel: CancellationToken = context.ct.clone();
        let feed = progress.as_ref().map(ProgressForwarder::feed);
        let mut result = self.tool.call_live(params, cancel.clone(), feed).await;
        if result.status == ToolStatus::ApprovalPending {
            // The run a person approves streams its output to the same progress token.
            result = self.ask_person(result, context, feed).await;
        }
        if let Some(progress) = progress {
            progress.finish().await;
        }
        if cancel.is_cancelled() && result.status == ToolStatus::Cancelled {
            // The client will not read this result: keep what the command printed where it will look.
            self.keep_cancelled(&command, &result, &context.peer).await;
        } else {
            result.notices.extend(self.notes.take(None));
        }
        tool_result(&result.model_text(), &result, result.is_error)
    }

    /// Put a pending approval to the person at the client (elicitation), when the client can ask
    /// and the configuration allows it; the decision is applied like an `approve` request. Any
    /// failure to get an answer leaves `pending` as it is, with a notice saying why.
    async fn ask_person(
        &self,
        pending: ToolResult,
        context: &RequestContext<RoleServer>,
        live: Option<&shellgate::LiveFeed>,
    ) -> ToolResult {
        let timeout = self.tool.config().approvals.elicitation_timeout;
        let Some(approval) = pending.approval.as_ref() else {
            return pending;
        };
        if timeout.is_zero() || !elicit::supports_form(&context.peer) {
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
        self.note(None, text);
        let data = json!({"event": "cancelled", "command": command, "result": result});
        self.notify(peer, data).await;
    }

    async fn process(&self, args: Value, context: &RequestContext<RoleServer>) -> CallToolResult {
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
        result.notices.extend(self.notes.take(reported));
        tool_result(&result.model_text(), &result, result.is_error)
    }

    async fn approve(&self, args: Value) -> CallToolResult {
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

    fn artifact(&self, args: Value) -> CallToolResult {
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

    fn store(&self) -> Result<&ArtifactStore, McpError> {
        self.store
            .as_deref()
            .map_err(|e| McpError::internal_error(e.clone(), None))
    }
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
    fn redacted<T: Serialize + serde::de::DeserializeOwned>(&self, value: T) -> T {
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

/// The server's own name and version (never the SDK's).
pub fn implementation() -> Implementation {
    Implementation::new("shellgate", env!("CARGO_PKG_VERSION"))
        .with_title("shellgate")
        .with_description("Runs shell commands for a model: bounded output, artifacts, background jobs")
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(logging::capabilities())
            .with_server_info(implementation())
            .with_protocol_version(MAX_PROTOCOL)
            .with_instructions(
                "Use `bash` to run shell commands, `process` to follow background jobs, and `artifact` \
                 to read the full output of a truncated result.",
            )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&MAX_PROTOCOL))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            // Boxed: rmcp moves each request's future into its task several times, and the
            // whole run of a command is many kilobytes of state.
            tools::BASH => Box::pin(self.bash(args, &context)).await,
            tools::PROCESS => self.process(args, &context).await,
            tools::ARTIFACT => self.artifact(args),
            tools::APPROVE if self.tool.config().approvals.mcp_approve_tool => self.approve(args).await,
            other => {
                let offered: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
                return Err(McpError::invalid_params(
                    format!("unknown tool `{other}` ({})", offered.join(", ")),
                    None,
                ));
            }
        };
        Ok(self.redacted(result).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = artifacts::resources(self.store()?).map_err(|e| McpError::internal_error(e, None))?;
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            artifacts::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match artifacts::read(self.store()?, &request.uri) {
            Ok(contents) => Ok(self.redacted(ReadResourceResult::new(contents)).into()),
            Err(ReadFailure::NotFound(message)) => Err(McpError::resource_not_found(
                message,
                Some(json!({"uri": request.uri})),
            )),
            Err(ReadFailure::Store(message)) => Err(McpError::internal_error(message, None)),
        }
    }

    #[allow(deprecated, reason = "`logging/setLevel` is served for clients of 2025-11-25")]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.log_filter.set(request.level);
        Ok(())
    }
}
