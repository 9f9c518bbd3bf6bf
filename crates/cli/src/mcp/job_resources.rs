//! Background jobs as resources one can subscribe to: `job://<id>`.
//!
//! Reading `job://<id>` answers the job's status and its latest output lines (the `process log`
//! view, which does not move the `poll` cursor). A job's exit is announced as
//! `notifications/resources/updated` for its URI: on 2026-07-28 to a `subscriptions/listen` that
//! named it (the only way such a client hears of an event outside its requests), on the handshake
//! era to a client that sent `resources/subscribe` for it.

use std::collections::HashSet;
use std::sync::Mutex;

use rmcp::ErrorData as McpError;
use rmcp::model::{ResourceContents, ResourceTemplate, SubscriptionFilter};
use rmcp::service::SubscriptionContext;
use shellgate::{ProcessAction, ProcessParams, ProcessTool};

/// The scheme of job resources.
pub const SCHEME: &str = "job://";

/// The URI of job `job_id`.
pub fn uri(job_id: &str) -> String {
    format!("{SCHEME}{job_id}")
}

/// The job a `job://` URI names.
pub fn job_id(uri: &str) -> Option<&str> {
    uri.strip_prefix(SCHEME).filter(|id| !id.is_empty())
}

/// The template of job resources.
pub fn template() -> ResourceTemplate {
    ResourceTemplate::new("job://{id}", "job")
        .with_title("Background job")
        .with_description("A background job's status and latest output; subscribe to hear when it ends.")
        .with_mime_type("text/plain")
}

/// The part of a `subscriptions/listen` filter this server honours: job URIs.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let jobs = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|uri| job_id(uri).is_some());
    jobs.fold(SubscriptionFilter::builder(), |filter, uri| {
        filter.resource_subscription(uri.clone())
    })
    .build()
}

/// `resources/read` of `job://<id>`: `None` when no such job exists.
pub async fn read(process: &ProcessTool, uri: &str) -> Option<Vec<ResourceContents>> {
    let id = job_id(uri)?;
    let logged = process
        .call(ProcessParams {
            action: ProcessAction::Log,
            job_id: Some(id.to_owned()),
            ..ProcessParams::default()
        })
        .await;
    if logged.is_error {
        return None;
    }
    let status = logged.status.map_or("unknown", |s| s.as_str());
    let text = format!("status: {status}\n{}", logged.model_text());
    Some(vec![ResourceContents::text(text, uri)])
}

/// Send each end of a job on `context`'s `subscriptions/listen` stream as a resource update of its
/// URI (the stream refuses the jobs it did not name), until the client cancels the stream.
pub async fn forward_exits(
    jobs: &shellgate::JobRegistry,
    context: &SubscriptionContext,
) -> Result<(), McpError> {
    use tokio::sync::broadcast::error::RecvError;
    let mut exits = jobs.subscribe();
    loop {
        tokio::select! {
            () = context.cancelled() => return Ok(()),
            exit = exits.recv() => match exit {
                Ok(exit) => {
                    let _ = context.sink().notify_resource_updated(uri(&exit.job_id)).await;
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return Ok(()),
            },
        }
    }
}

/// The job URIs a handshake-era client subscribed to.
#[derive(Debug, Default)]
pub struct Subscriptions(Mutex<HashSet<String>>);

impl Subscriptions {
    /// Subscribe to `uri`; `false` when it is not a job URI.
    pub fn add(&self, uri: &str) -> bool {
        if job_id(uri).is_none() {
            return false;
        }
        self.lock().insert(uri.to_owned());
        true
    }

    /// Unsubscribe from `uri`.
    pub fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    /// Whether `uri` is subscribed to.
    pub fn has(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_job_uris_are_accepted() {
        let requested = SubscriptionFilter::builder()
            .resource_subscription("job://calm-reef")
            .resource_subscription("artifact://3")
            .resource_subscription("job://")
            .build();
        assert_eq!(
            accepted(&requested).resource_subscriptions,
            Some(vec!["job://calm-reef".to_owned()])
        );
        assert_eq!(accepted(&SubscriptionFilter::new()).resource_subscriptions, None);
        let subs = Subscriptions::default();
        assert!(!subs.add("artifact://3"));
        assert!(subs.add("job://calm-reef"));
        assert!(subs.has("job://calm-reef"));
        subs.remove("job://calm-reef");
        assert!(!subs.has("job://calm-reef"));
    }
}
