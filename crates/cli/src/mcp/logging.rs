//! Log notifications (`notifications/message`, logger `shellgate`) for events outside a request:
//! background job exits and cancelled calls.
//!
//! rmcp marks MCP logging deprecated (SEP-2577), but it is how clients hear of such events, so this
//! file alone uses it, by the rule of each era: on the handshake era the connection's level
//! (`logging/setLevel`, default `info`) lets an event out as it happens; on 2026-07-28 a log message
//! may only go with a request whose `_meta` asks for one (`io.modelcontextprotocol/logLevel`), so the
//! events go out with the next request that asked, before its result.
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ServerCapabilities};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

/// Name of the logger of shellgate's notifications.
pub const LOGGER: &str = "shellgate";

/// The level of every event shellgate logs.
const EVENT_LEVEL: LoggingLevel = LoggingLevel::Notice;

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

/// The least severe level a handshake-era connection wants (`logging/setLevel`; default `info`).
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

    /// Whether the connection to `peer` hears events as they happen: it opened with the handshake
    /// and its level lets `notice` through.
    pub fn lets_out(&self, peer: &Peer<RoleServer>) -> bool {
        super::era::is_handshake(peer) && (EVENT_LEVEL as u8) >= self.0.load(Ordering::Relaxed)
    }
}

/// Whether `context`'s request asked to hear events with it: on 2026-07-28, its `_meta` carries a
/// log level that lets `notice` through. Checked only when there is an event to send.
pub fn request_wants_events(context: &RequestContext<RoleServer>) -> bool {
    super::era::is_modern(context)
        && context
            .meta
            .log_level()
            .is_some_and(|level| EVENT_LEVEL as u8 >= level as u8)
}

/// Send `data` as a `notice` from logger `shellgate` to `peer`.
pub async fn send(peer: &Peer<RoleServer>, data: Value) {
    let mut param = LoggingMessageNotificationParam::new(EVENT_LEVEL, data);
    param.logger = Some(LOGGER.to_owned());
    if let Err(e) = peer.notify_logging_message(param).await {
        tracing::debug!(%e, "cannot send a log notification");
    }
}
