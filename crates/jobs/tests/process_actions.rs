//! The `process` tool's actions over a registry, without the rest of the engine: what a job's end
//! hook attaches comes back with the poll that sees it ended, beside the result's own fields.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use shellgate_executor::{LaunchSpec, StdinMode};
use shellgate_jobs::{
    JobActions, JobConfig, JobRegistry, JobStatus, NoAttachment, OutputPlan, ProcessAction, ProcessParams,
};

/// An account of a run, as a caller's end hook might attach it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
struct Account {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    checked: Option<u32>,
}

fn start(jobs: &JobRegistry, script: &str) -> Arc<shellgate_jobs::Job> {
    let mut spec = LaunchSpec::new("sh", ["-c", script], ".");
    spec.stdin = StdinMode::Piped;
    jobs.start(
        &spec,
        script,
        true,
        false,
        &OutputPlan::default(),
        &mut Vec::new(),
    )
    .expect("the job starts")
}

async fn poll_until_ended<E: Clone + Default + Send + Sync + 'static>(
    actions: &JobActions<E>,
    id: &str,
) -> shellgate_jobs::ProcessResult<E> {
    let mut poll = ProcessParams::new(ProcessAction::Poll, id);
    poll.wait_ms = Some(5_000);
    for _ in 0..20 {
        let result = actions.call(poll.clone()).await;
        if result.status != Some(JobStatus::Running) {
            return result;
        }
    }
    panic!("job {id} did not end");
}

#[tokio::test]
async fn an_end_hooks_attachment_comes_back_with_the_final_poll_beside_the_results_fields() {
    let jobs = JobRegistry::new(JobConfig::default());
    let job = start(&jobs, "echo done");
    let attached = Arc::downgrade(&job);
    job.on_end(Box::new(move || {
        if let Some(job) = attached.upgrade() {
            job.state().attachment = Some(Arc::new(Account { checked: Some(3) }));
        }
        vec!["checked 3 things".to_owned()]
    }));
    let actions: JobActions<Account> = JobActions::new(jobs.clone());
    let ended = poll_until_ended(&actions, &job.id).await;
    assert_eq!(ended.ended, Account { checked: Some(3) });
    assert!(
        ended.notices.iter().any(|n| n == "checked 3 things"),
        "{:?}",
        ended.notices
    );
    let json = serde_json::to_value(&ended).unwrap();
    assert_eq!(json["checked"], 3, "{json}");
    assert_eq!(json["action"], "poll", "{json}");
    assert_eq!(
        serde_json::from_value::<shellgate_jobs::ProcessResult<Account>>(json).unwrap(),
        ended
    );

    // An attachment of another type is not this caller's: the result has none.
    let other: JobActions<NoAttachment> = JobActions::new(jobs.clone());
    let job = start(&jobs, "true");
    let attached = Arc::downgrade(&job);
    job.on_end(Box::new(move || {
        if let Some(job) = attached.upgrade() {
            job.state().attachment = Some(Arc::new(Account { checked: Some(1) }));
        }
        Vec::new()
    }));
    let ended = poll_until_ended(&other, &job.id).await;
    assert_eq!(ended.ended, NoAttachment {});
    assert!(serde_json::to_value(&ended).unwrap().get("checked").is_none());
    jobs.shutdown().await;
}

#[tokio::test]
async fn the_sessions_actions_and_unknown_jobs_are_errors_that_say_why() {
    let jobs = JobRegistry::new(JobConfig::default());
    let actions: JobActions = JobActions::new(jobs.clone());
    let sessions = actions
        .call(ProcessParams {
            action: ProcessAction::Sessions,
            ..ProcessParams::default()
        })
        .await;
    assert!(sessions.is_error);
    assert!(
        sessions.message.contains("no persistent sessions"),
        "{}",
        sessions.message
    );
    let unknown = actions
        .call(ProcessParams::new(ProcessAction::Poll, "no-such-job"))
        .await;
    assert!(unknown.is_error);
    assert_eq!(unknown.model_text(), "No job found with id no-such-job.");
    let missing = actions
        .call(ProcessParams {
            action: ProcessAction::Kill,
            ..ProcessParams::default()
        })
        .await;
    assert_eq!(missing.message, "job_id is required for this action.");

    let job = start(&jobs, "sleep 30");
    let killed = actions
        .call(ProcessParams::new(ProcessAction::Kill, &job.id))
        .await;
    assert!(!killed.is_error, "{}", killed.message);
    assert_ne!(killed.status, Some(JobStatus::Running));
    let listed = actions.call(ProcessParams::default()).await;
    assert_eq!(listed.jobs.as_ref().map(Vec::len), Some(1));
    jobs.shutdown().await;
}
