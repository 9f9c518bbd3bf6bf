//! `shellgate mcp`: a Model Context Protocol server on stdin/stdout (SPEC T-9), built on `rmcp`.
//!
//! One connection speaks one protocol era, fixed by its first message: the `initialize` handshake
//! (2025-03-26 to 2025-11-25) or protocol 2026-07-28 (`server/discover` and `_meta` on every
//! request). Tools `bash`, `process` and `artifact` (and `approve` when `[approvals]
//! mcp_approve_tool` is set), each with its behaviour hints; a pending approval is put to the person
//! through elicitation when the client supports it (`elicitation/create` on the handshake era, an
//! `input_required` result with sealed state on 2026-07-28); artifacts as resources
//! (`artifact://<id>`, template `artifact://{id}`); live output as progress notifications;
//! `notifications/cancelled` stops the command; background job exits in the next tool result, as
//! resource updates on `job://<id>` to a client that subscribed (`subscriptions/listen` on
//! 2026-07-28, `resources/subscribe` before), and as `notifications/message` (logger `shellgate`)
//! where the client asked for log messages (`logging/setLevel` on the handshake era, at once; the
//! request's `_meta` on 2026-07-28, with that request). Stdout carries only the protocol; logs go
//! to stderr (`RUST_LOG`). At EOF every job tree and shell session is stopped before the process
//! exits.

mod approval_rounds;
mod artifacts;
mod connection;
mod domain_questions;
mod elicit;
mod era;
mod handler;
mod job_resources;
mod logging;
mod notes;
mod progress;
mod schema;
mod server;
mod stdio;
mod tasks;
mod tools;

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use serde_json::json;

use server::McpServer;

/// Serve one MCP session on stdio until the client closes stdin.
pub async fn serve(config_file: Option<&Path>) -> anyhow::Result<()> {
    init_stderr_logging();
    let config = crate::rpc::load_config(config_file)?;
    let server = Arc::new(McpServer::new(shellgate::BashTool::new(config)));
    crate::approve_cmd::warn_about_approvals_file(server.tool());
    // `shellgate jobs` reaches this server's jobs through its private socket while it runs.
    let control = crate::control_socket::start_or_warn(
        shellgate::ProcessTool::for_bash(server.tool()),
        server.tool().clone(),
    );
    // The protocol handshake's future is large: keep it off the caller's stack.
    let running = match Box::pin(Arc::clone(&server).serve(stdio::Stdio::open())).await {
        Ok(running) => running,
        // A client that only probed (`server/discover`) and left ends the session normally.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(during)) => {
            tracing::info!(%during, "MCP client left before its first request");
            drop(control);
            server.tool().shutdown_hosts().await;
            return Ok(());
        }
        Err(e) => anyhow::bail!("MCP session did not start: {e}"),
    };
    let exits = spawn_exit_notifier(&server, running.peer().clone());
    let quit = running.waiting().await;
    tracing::info!(?quit, "MCP session ended");
    // The client is gone: no job outlives the server.
    drop(control);
    exits.abort();
    server.tool().jobs().shutdown().await;
    server.tool().sessions().shutdown();
    server.tool().shutdown_hosts().await;
    Ok(())
}

/// Logs to stderr only (stdout is the protocol), filtered by `RUST_LOG` (default: warnings).
fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Keep each background job's exit for the next result and announce it where the client hears
/// events (a `poll`/`kill`/`remove` already waiting on the job when it ends reports the exit
/// instead).
fn spawn_exit_notifier(
    server: &Arc<McpServer>,
    peer: rmcp::Peer<rmcp::RoleServer>,
) -> tokio::task::JoinHandle<()> {
    let mut exits = server.tool().jobs().subscribe();
    let server = Arc::clone(server);
    tokio::spawn(async move {
        loop {
            match exits.recv().await {
                Ok(exit) => {
                    let mut data = serde_json::to_value(&exit).unwrap_or_else(|_| json!({}));
                    data["event"] = json!("job_exited");
                    server
                        .event(&peer, Some(&exit.job_id), exit.message.clone(), data)
                        .await;
                    server.announce_subscribed(&peer, &exit.job_id).await;
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
            }
        }
    })
}
