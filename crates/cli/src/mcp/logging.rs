//! Log notifications (`notifications/message`, logger `shellgate`) for events outside a request:
//! background job exits and cancelled calls.
//!
//! rmcp marks MCP logging deprecated (SEP-2577) in favour of the 2026 subscription model, but it is
//! how clients of protocol 2025-11-25 hear of such events, so this file alone uses it, and only on
//! handshake-era connections.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// Name of the logger of shellgate's notifications.
pub const LOGGER: &str = "shellgate";

/// The server's capabilities: tools, resources (artifacts), logging, and the tasks extension
/// (used only for requests that declare it too).
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities::builder()
        .enable_logging()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_tools()
        .enable_tasks()
        .build()
}

/// The least severe level a client wants (`logging/setLevel`; default `info`).
#[derive(Debug)]
pub struct LogFilter(AtomicU8);

impl Default for LogFilter {
    fn default() -> Self {
        Self(AtomicU8::new(LoggingLevel::Info as u8))
    }
}

impl LogFilter {
    /// Apply a `logging/setLevel` request.
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(level as u8, Ordering::Relaxed);
    }

    /// Send `data` at level `notice` to `peer`, unless the client asked for less or its
    /// connection speaks 2026-07-28 (where log messages only go with a request that opted in, and
    /// these events belong to no request: such clients read them in the next result).
    pub async fn notice(&self, peer: &Peer<RoleServer>, data: Value) {
        if !super::era::is_handshake(peer) || (LoggingLevel::Notice as u8) < self.0.load(Ordering::Relaxed) {
            return;
        }
        let mut param = LoggingMessageNotificationParam::new(LoggingLevel::Notice, data);
        param.logger = Some(LOGGER.to_owned());
        if let Err(e) = peer.notify_logging_message(param).await {
            tracing::debug!(%e, "cannot send a log notification");
        }
    }
}
