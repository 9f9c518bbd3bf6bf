//! Input actions of the `process` tool: `submit` with text.

#[path = "jobs_common.rs"]
mod common;

use common::*;
use shellgate::{JobStatus, ProcessAction, ProcessParams};

#[tokio::test]
async fn submit_types_its_data_before_enter() {
    let (bash, process) = tools();
    let id = background(&bash, "read a; echo got:$a; read b; echo got:$b")
        .await
        .job_id
        .unwrap();
    let mut submit = ProcessParams::new(ProcessAction::Submit, &id);
    submit.data = Some("hello".into());
    submit.wait_ms = Some(10_000);
    let r = process.call(submit).await;
    assert!(!r.is_error, "{r:?}");
    assert!(
        r.message
            .starts_with(&format!("Submitted job {id} (5 bytes, then LF).")),
        "{r:?}"
    );
    assert_eq!(r.output.as_deref(), Some("got:hello\n"));
    // Without data, only Enter: an empty line.
    let r = act(&process, ProcessAction::Submit, &id).await;
    assert_eq!(r.message, format!("Submitted job {id} (sent LF)."));
    let (last, rest) = poll_to_end(&process, &id).await;
    assert_eq!(rest, "got:\n");
    assert_eq!(last.status, Some(JobStatus::Completed));
}
