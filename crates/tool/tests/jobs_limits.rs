//! Job retention, pruning, exit notifications, the graceful kill sequence and large outputs.

#[path = "jobs_common.rs"]
mod common;

use std::time::Duration;

use common::*;
use shellgate::{JobStatus, ProcessAction, ProcessParams, ToolConfig};

fn config(edit: impl FnOnce(&mut shellgate::JobConfig)) -> ToolConfig {
    let mut config = test_config();
    edit(&mut config.jobs);
    config
}

#[tokio::test]
async fn exit_is_notified_once_unless_a_waiting_poll_reports_it() {
    let (bash, process) = tools();
    let mut exits = bash.jobs().subscribe();
    let quiet = background(&bash, "echo bye; exit 4").await.job_id.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), exits.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event.job_id, quiet);
    assert_eq!(event.exit_code, Some(4));
    assert_eq!(event.message, format!("Job {quiet} failed (code 4) :: bye"));
    // Polls after the notification report the status but cause no second event.
    assert_eq!(poll(&process, &quiet, 0).await.exit_code, Some(4));

    // Silent until it exits, so the poll below is certainly waiting when it ends.
    let watched = background(&bash, "sleep 0.3; exit 5").await.job_id.unwrap();
    let last = poll(&process, &watched, 10_000).await;
    assert_eq!(last.status, Some(JobStatus::Completed));
    assert_eq!(last.exit_code, Some(5));
    let ok = background(&bash, "echo fine").await.job_id.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(10), exits.recv())
        .await
        .unwrap()
        .unwrap();
    // The job a waiting poll reported is skipped: the next event is the later job's.
    assert_eq!(event.job_id, ok, "{event:?}");
    assert_eq!(event.message, format!("Job {ok} completed (code 0) :: fine"));
    assert!(exits.try_recv().is_err());
}

#[tokio::test]
async fn graceful_kill_escalates_to_sigkill_over_the_whole_tree() {
    let (bash, process) = tools_with(config(|j| j.kill_grace = Duration::from_millis(200)));
    let id = background(
        &bash,
        "trap '' INT TERM; (trap '' INT TERM; sleep 13.579) & sleep 13.579; wait",
    )
    .await
    .job_id
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = act(&process, ProcessAction::Kill, &id).await;
    assert_eq!(r.status, Some(JobStatus::Killed), "{r:?}");
    assert!(gone("sleep 13.579").await, "tree survived");
}

#[tokio::test]
async fn running_jobs_are_capped_and_recent_ones_protected() {
    let (bash, process) = tools_with(config(|j| {
        j.max_running = 3;
        j.protected_recent = 1;
    }));
    let first = background(&bash, "sleep 8.642").await.job_id.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let second = background(&bash, "sleep 8.642").await.job_id.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let third = background(&bash, "sleep 8.642").await.job_id.unwrap();
    // Touch the first so the second is now the least recently used.
    poll(&process, &first, 0).await;
    let fourth = background(&bash, "sleep 8.642").await.job_id.unwrap();
    let (pruned, _) = poll_to_end(&process, &second).await;
    assert_eq!(pruned.status, Some(JobStatus::Killed));
    assert!(
        pruned.notices.iter().any(|n| n.contains("make room")),
        "{pruned:?}"
    );
    for id in [&first, &third, &fourth] {
        assert_eq!(poll(&process, id, 0).await.status, Some(JobStatus::Running));
        act(&process, ProcessAction::Remove, id).await;
    }
    assert!(gone("sleep 8.642").await);
}

#[tokio::test]
async fn finished_jobs_beyond_the_cap_are_forgotten_oldest_first() {
    let (bash, process) = tools_with(config(|j| j.max_finished = 2));
    let mut ids = Vec::new();
    for i in 0..4 {
        let id = background(&bash, &format!("echo {i}")).await.job_id.unwrap();
        poll_to_end(&process, &id).await;
        ids.push(id);
    }
    let listed: Vec<String> = process
        .call(ProcessParams::default())
        .await
        .jobs
        .unwrap()
        .into_iter()
        .map(|j| j.job_id)
        .collect();
    assert_eq!(listed, vec![ids[3].clone(), ids[2].clone()]);
}

#[tokio::test]
async fn expired_jobs_are_forgotten() {
    // Long enough that the new job is not forgotten too on a loaded machine before it is polled.
    let (bash, process) = tools_with(config(|j| j.finished_ttl = Duration::from_secs(2)));
    let old = background(&bash, "true").await.job_id.unwrap();
    poll_to_end(&process, &old).await;
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let new = background(&bash, "true").await.job_id.unwrap();
    poll_to_end(&process, &new).await;
    assert!(act(&process, ProcessAction::Poll, &old).await.is_error);
    assert!(!act(&process, ProcessAction::Poll, &new).await.is_error);
}

#[tokio::test]
async fn large_output_is_complete_through_poll_and_log() {
    let (bash, process) = tools_with(config(|j| {
        j.ring_bytes = 16 * 1024;
        j.poll_max_bytes = 8 * 1024;
    }));
    let id = background(&bash, "seq 1 20000").await.job_id.unwrap();
    // Poll to the end: each poll shows at most 8 KiB; anything skipped is reported with its range.
    let mut shown = 0u64;
    let mut skipped = 0u64;
    loop {
        let r = poll(&process, &id, 5000).await;
        shown += r.output.as_deref().unwrap_or("").len() as u64;
        skipped += r
            .notices
            .iter()
            .filter_map(|n| n.strip_prefix("Output bytes "))
            .filter_map(|n| n.split_once(' ').map(|(range, _)| range.to_owned()))
            .filter_map(|range| {
                range
                    .split_once("..")
                    .map(|(a, b)| (a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()))
            })
            .map(|(a, b)| b - a)
            .sum::<u64>();
        if r.status != Some(JobStatus::Running) {
            assert_eq!(r.total_lines, Some(20000));
            assert_eq!(shown + skipped, r.cursor.unwrap());
            break;
        }
    }
    // Every line is still readable through `log` (from the spill file).
    let mut p = ProcessParams::new(ProcessAction::Log, &id);
    p.offset = Some(0);
    p.limit = Some(20000);
    let all = process.call(p).await.output.unwrap();
    let mut expected = String::new();
    for i in 1..=20000 {
        expected.push_str(&i.to_string());
        expected.push('\n');
    }
    assert_eq!(all, expected);
}

#[tokio::test]
async fn output_beyond_memory_goes_to_an_artifact_that_outlives_the_job() {
    let dir = std::env::temp_dir().join(format!("sg-jobs-artifacts-{}", std::process::id()));
    let store = shellgate::sink::ArtifactStore::open(shellgate::sink::StoreConfig::new(&dir)).unwrap();
    let (bash, process) = tools_with(config(|j| {
        j.ring_bytes = 4096;
        j.artifacts = Some(std::sync::Arc::new(store));
    }));
    let id = background(&bash, "seq 1 5000").await.job_id.unwrap();
    let (last, _) = poll_to_end(&process, &id).await;
    let artifact = last.artifact.clone().expect("spilled to an artifact");
    assert!(artifact.starts_with("artifact://"), "{artifact}");
    let log = act(&process, ProcessAction::Log, &id).await;
    assert!(log.model_text().contains(&format!("[Full output: {artifact}]")));
    act(&process, ProcessAction::Remove, &id).await;
    let reopened = shellgate::sink::ArtifactStore::open(shellgate::sink::StoreConfig::new(&dir)).unwrap();
    let path = reopened.resolve(&artifact).unwrap();
    let mut expected = String::new();
    for i in 1..=5000 {
        expected.push_str(&i.to_string());
        expected.push('\n');
    }
    assert_eq!(std::fs::read_to_string(path).unwrap(), expected);
    let _ = std::fs::remove_dir_all(&dir);
}
