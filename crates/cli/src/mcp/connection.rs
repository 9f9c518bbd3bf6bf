//! What the client connection accumulates between its requests — events it has not seen, the log
//! level it set, the job resources it subscribed to — and how each era's client hears of them.
//!
//! A stdio server serves exactly one connection, and one connection speaks one era, so one
//! `Connection` lives beside the engine for the life of the process. What a request says about
//! itself is read from that request, never kept here: its capabilities (elicitation, tasks), and on
//! 2026-07-28 whether it wants log messages (`_meta` `io.modelcontextprotocol/logLevel`, as the
//! protocol asks: no `notifications/message` for a request that did not).

use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::job_resources::Subscriptions;
use super::logging::{self, LogFilter};
use super::notes::{Note, PendingNotes};

/// One client connection's state.
#[derive(Debug, Default)]
pub struct Connection {
    /// Events for the next result.
    notes: PendingNotes,
    /// What a handshake-era client wants to hear (`logging/setLevel`).
    pub log_filter: LogFilter,
    /// The `job://` resources a handshake-era client subscribed to.
    pub subscriptions: Subscriptions,
}

impl Connection {
    /// An event outside any request (a job's exit, a cancelled call), already redacted: `text` is
    /// kept for the next result; a handshake-era client whose level lets it through hears `data` at
    /// once as a log notification, a 2026-07-28 one with its next request that asks for them.
    pub async fn event(&self, peer: &Peer<RoleServer>, job_id: Option<&str>, text: String, data: Value) {
        if self.log_filter.lets_out(peer) {
            logging::send(peer, data.clone()).await;
        }
        self.notes.push(Note::new(job_id, text, data));
    }

    /// The events for the result of `context`'s request, except those about `reported_job`, a job
    /// whose end that result reports itself. A 2026-07-28 request that asked for log messages
    /// hears each first as a notification (a handshake-era client heard them when they happened).
    pub async fn take_for(
        &self,
        context: &RequestContext<RoleServer>,
        reported_job: Option<&str>,
    ) -> Vec<String> {
        let notes = self.notes.take(reported_job);
        if !notes.is_empty() && logging::request_wants_events(context) {
            for note in &notes {
                logging::send(&context.peer, note.data.clone()).await;
            }
        }
        notes.into_iter().map(|note| note.text).collect()
    }

    /// Forget the events about `job_id` (a task reports its job's end itself).
    pub fn forget_job(&self, job_id: &str) {
        self.notes.forget(job_id);
    }
}
