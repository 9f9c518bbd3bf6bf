//! The MCP protocol methods over [`McpServer`], for both eras on one stdio connection: the
//! handshake (`initialize`, protocols 2025-03-26 to 2025-11-25) and protocol 2026-07-28 (no
//! handshake; `server/discover` and `_meta` on every request). rmcp fixes the era per connection
//! from the first message and shapes results for it (`resultType`, cache hints, the error code of
//! an unknown resource); what differs for the tools is decided per request (`era`).
//!
//! Every method that runs engine work awaits it boxed: rmcp keeps the future of each request in a
//! task it spawns, and that future is as large as the largest method's. Unboxed, one `process` poll
//! or `approve` run made every request's future kilobytes long, copied several times per request.

use std::borrow::Cow;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult, Implementation,
    InitializeRequestParams, InitializeResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ServerConfig, Tool, UpdateTaskParams,
};
#[allow(deprecated, reason = "`logging/setLevel` is served for clients of 2025-11-25")]
use rmcp::model::{SetLevelRequestMethod, SetLevelRequestParams};
#[allow(
    deprecated,
    reason = "`resources/subscribe` is served for clients of 2025-11-25"
)]
use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::artifacts::{self, ReadFailure};
use super::era;
use super::job_resources;
use super::logging;
use super::server::{McpServer, Retry};
use super::tools;

/// The newest protocol revision this server implements.
const MAX_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The revision a handshake answers when the client asks for one this server does not know.
const NEWEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// How long a client may keep the tool list and the resource templates: they are fixed for the
/// life of the server process.
const TOOLS_TTL_MS: u64 = 60 * 60 * 1000;

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
            .with_protocol_version(NEWEST_HANDSHAKE)
            .with_instructions(
                "Use `bash` to run shell commands, `process` to follow background jobs, and `artifact` \
                 to read the full output of a truncated result.",
            )
    }

    /// The handshake, on a connection that opened with it. A connection whose first request came
    /// without one speaks 2026-07-28 for good: a later `initialize` is refused rather than turning
    /// it into a handshake-era connection halfway.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if context.peer.peer_info().is_none() {
            return Err(McpError::invalid_request(
                "this connection speaks protocol 2026-07-28 (its first request came without \
                 `initialize`); open a new connection for the handshake",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&MAX_PROTOCOL))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()).with_ttl_ms(TOOLS_TTL_MS))
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
        if request.name == tools::BASH {
            let retry = Retry {
                state: request.request_state.as_deref(),
                responses: request.input_responses.as_ref(),
            };
            return Ok(match Box::pin(self.bash(args, retry, &context)).await {
                CallToolResponse::Complete(result) => self.redacted(result).into(),
                other => other,
            });
        }
        let result = match request.name.as_ref() {
            tools::PROCESS => Box::pin(self.process(args, &context)).await,
            tools::ARTIFACT => self.artifact(args),
            tools::APPROVE if self.tool().config().approvals.mcp_approve_tool => {
                Box::pin(self.approve(args)).await
            }
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
        // The templates are as fixed as the tools. The list of resources grows with every spilled
        // output and a read of a running job changes, so those keep rmcp's hints for 2026-07-28:
        // `ttlMs: 0`, `cacheScope: "private"` (one person's output).
        let templates = vec![artifacts::template(), job_resources::template()];
        Ok(ListResourceTemplatesResult::with_all_items(templates).with_ttl_ms(TOOLS_TTL_MS))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if job_resources::job_id(&request.uri).is_some() {
            return match Box::pin(self.read_job(&request.uri)).await {
                Some(contents) => Ok(ReadResourceResult::new(contents).into()),
                None => Err(McpError::resource_not_found(
                    format!("{} is not a job of this server", request.uri),
                    Some(json!({"uri": request.uri})),
                )),
            };
        }
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
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // 2026-07-28 removed the method: such a request asks for log messages in its own `_meta`.
        if era::is_modern(&context) {
            return Err(McpError::method_not_found::<SetLevelRequestMethod>());
        }
        self.connection.log_filter.set(request.level);
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(job_resources::accepted(requested))
    }

    /// A 2026-07-28 client's `subscriptions/listen`: each end of a job it named is sent as a
    /// resource update on the stream, until the client cancels it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        Box::pin(job_resources::forward_exits(self.tool().jobs(), &context)).await
    }

    #[allow(
        deprecated,
        reason = "`resources/subscribe` is served for clients of 2025-11-25"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if self.connection.subscriptions.add(&request.uri) {
            Ok(())
        } else {
            Err(McpError::invalid_params(
                format!(
                    "only job resources (job://<id>) can be subscribed to, not {}",
                    request.uri
                ),
                None,
            ))
        }
    }

    #[allow(
        deprecated,
        reason = "`resources/unsubscribe` is served for clients of 2025-11-25"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.connection.subscriptions.remove(&request.uri);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        match Box::pin(self.task_state(&request.task_id)).await {
            Some(state) => Ok(GetTaskResult::new(state)),
            None => Err(unknown_task(&request.task_id)),
        }
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if Box::pin(self.cancel_task(&request.task_id)).await {
            Ok(())
        } else {
            Err(unknown_task(&request.task_id))
        }
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // shellgate's tasks never ask for input; input to the job is `process write`.
        Err(McpError::invalid_params(
            format!(
                "task {} has no input requests (write to its job with the `process` tool)",
                request.task_id
            ),
            None,
        ))
    }
}

fn unknown_task(task_id: &str) -> McpError {
    McpError::invalid_params(
        format!("unknown task {task_id}"),
        Some(json!({"taskId": task_id})),
    )
}
