//! Live output of a running `bash` call as MCP progress notifications.
//!
//! The command's clean output collects in a [`LiveFeed`]; every [`PROGRESS_INTERVAL`] whatever
//! arrived since the last notification goes out as one `notifications/progress` whose `message` is
//! that text and whose `progress` is the number of output bytes so far (it only grows, as the
//! protocol asks). A quiet command sends nothing; a chatty one sends at most one notification per
//! interval.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use shellgate::{CancellationToken, LiveFeed, LiveText};

/// Time between two progress notifications of one call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// Sends a call's live output as progress notifications until stopped.
pub struct ProgressForwarder {
    feed: LiveFeed,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl ProgressForwarder {
    /// Start forwarding to `peer` under `token`.
    pub fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let feed = LiveFeed::default();
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (feed, stop) = (feed.clone(), stop.clone());
            async move {
                let mut sent = 0u64;
                let mut tick = tokio::time::interval(PROGRESS_INTERVAL);
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    let last = tokio::select! {
                        () = stop.cancelled() => true,
                        _ = tick.tick() => false,
                    };
                    if let Some(live) = feed.take() {
                        let param = notification(&token, &mut sent, live);
                        // A client that went away ends the call through its cancellation anyway.
                        if peer.notify_progress(param).await.is_err() {
                            break;
                        }
                    }
                    if last {
                        break;
                    }
                }
            }
        });
        Self { feed, stop, task }
    }

    /// The feed the call writes its clean output into.
    pub fn feed(&self) -> &LiveFeed {
        &self.feed
    }

    /// Send what is still pending and stop; returns once the last notification is written, so none
    /// follows the call's result.
    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// The notification for `live`, advancing the byte count `sent`.
fn notification(token: &ProgressToken, sent: &mut u64, live: LiveText) -> ProgressNotificationParam {
    *sent += live.skipped + live.text.len() as u64;
    let message = if live.skipped > 0 {
        format!("[{} bytes of live output skipped]\n{}", live.skipped, live.text)
    } else {
        live.text
    };
    let mut param = ProgressNotificationParam::new(token.clone(), *sent as f64);
    param.message = Some(message);
    param
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    #[test]
    fn progress_counts_every_byte_and_names_skips() {
        let token = ProgressToken(NumberOrString::Number(7));
        let mut sent = 0;
        let first = notification(
            &token,
            &mut sent,
            LiveText {
                text: "abc\n".into(),
                skipped: 0,
            },
        );
        assert!((first.progress - 4.0).abs() < f64::EPSILON);
        assert_eq!(first.message.as_deref(), Some("abc\n"));
        let second = notification(
            &token,
            &mut sent,
            LiveText {
                text: "z\n".into(),
                skipped: 10,
            },
        );
        assert!((second.progress - 16.0).abs() < f64::EPSILON);
        assert_eq!(
            second.message.as_deref(),
            Some("[10 bytes of live output skipped]\nz\n")
        );
    }
}
