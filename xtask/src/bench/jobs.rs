//! 200 concurrent background jobs through one `shellgate rpc`: completion time, `process poll` latency,
//! peak RSS; against 200 concurrent raw `bash -c` spawns.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, kib, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

const JOBS: usize = 200;
const SLEEP: &str = "0.5";
const TIMEOUT: Duration = Duration::from_secs(60);

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let mut section = Section::new(
        "jobs",
        "200 concurrent background jobs",
        format!(
            "{JOBS} × `sleep {SLEEP}; echo job-N` started with `bash` `background: true` through one \
             `shellgate rpc` (with `max_jobs = 256` in its `--config` file: the default cap is 64), then \
             polled with `process` `poll` (`wait_ms: 0`) until every job ended. \
             Completion = first request → last job seen finished. Baseline: {JOBS} concurrent raw \
             `bash -c` spawns from Rust, waited for. Overhead = completion − {SLEEP} s."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    // The default cap is 64 live jobs (SPEC J-7); this bench measures 200 at once, so it raises the cap
    // through the project configuration file of its working directory.
    let work = ctx.work.join("jobs");
    let config = "max_jobs = 256\nmax_finished_jobs = 512\n";
    if let Err(e) =
        std::fs::create_dir_all(&work).and_then(|()| std::fs::write(work.join("jobs.toml"), config))
    {
        section.note(format!("cannot write the jobs configuration: {e}"));
        return section;
    }
    let tool = match through_rpc(&binary, &work) {
        Ok(Some(t)) => t,
        Ok(None) => {
            section.note(
                "skipped: the `process` RPC method is not there yet (background job registry not landed)",
            );
            return section;
        }
        Err(e) => {
            section.note(format!("shellgate jobs failed: {e:#}"));
            return section;
        }
    };
    let raw = match raw_concurrent() {
        Ok(d) => d,
        Err(e) => {
            section.note(format!("raw baseline failed: {e:#}"));
            return section;
        }
    };
    let sleep: f64 = SLEEP.parse().unwrap_or(0.0);
    let tool_over = tool.completion.as_secs_f64() - sleep;
    let raw_over = raw.as_secs_f64() - sleep;
    let ratio = ctx.ratio(
        "jobs",
        "200 jobs completion overhead",
        ("shellgate", tool_over),
        ("raw spawns", raw_over),
    );
    let poll = Summary::of(&tool.poll_us);
    let mut table = Table::with_columns(&[
        "subject",
        "completion",
        "overhead",
        "poll p50",
        "poll p99",
        "peak RSS",
        "overhead ÷ raw",
    ]);
    table.push(vec![
        "shellgate rpc (background + process poll)".into(),
        format!("{:.3} s", tool.completion.as_secs_f64()),
        format!("{tool_over:.3} s"),
        poll.map_or_else(|| "–".into(), |p| micros(p.median)),
        poll.map_or_else(|| "–".into(), |p| micros(p.p99)),
        kib(tool.peak_rss_kib),
        ratio_cell(ratio),
    ]);
    table.push(vec![
        "raw Rust: 200 × bash -c, waited".into(),
        format!("{:.3} s", raw.as_secs_f64()),
        format!("{raw_over:.3} s"),
        "–".into(),
        "–".into(),
        "–".into(),
        "×1.00".into(),
    ]);
    if tool.accepted < JOBS {
        section.note(format!(
            "only {} of {JOBS} jobs were accepted (job limit?): {}",
            tool.accepted, tool.rejection
        ));
    }
    let ended: Vec<String> = tool
        .ended
        .iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect();
    section.note(format!("jobs ended as: {}", ended.join(", ")));
    if tool.ended.keys().any(|s| s != "completed") {
        section.note("some jobs did not complete by themselves (pruned, killed or lost): the completion time is not comparable");
    }
    section.table = table;
    section.data = json!({
        "jobs": JOBS, "accepted": tool.accepted, "completion_s": tool.completion.as_secs_f64(),
        "raw_completion_s": raw.as_secs_f64(), "poll_us": poll, "peak_rss_kib": tool.peak_rss_kib,
        "polls": tool.poll_us.len(),
    });
    section
}

struct ToolJobs {
    completion: Duration,
    poll_us: Vec<f64>,
    peak_rss_kib: Option<u64>,
    accepted: usize,
    rejection: String,
    /// How the jobs ended, by final status (`lost` = the registry no longer knew the job).
    ended: std::collections::BTreeMap<String, usize>,
}

fn through_rpc(binary: &std::path::Path, work: &std::path::Path) -> anyhow::Result<Option<ToolJobs>> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.arg("--config").arg(work.join("jobs.toml")).current_dir(work);
    })?;
    let probe = client.call("process", &json!({"action": "list"}), TIMEOUT)?;
    if rpc::error_code(&probe) == Some(rpc::METHOD_NOT_FOUND) {
        return Ok(None);
    }
    let start = Instant::now();
    let ids: Vec<u64> = (0..JOBS)
        .map(|i| {
            client.send(
                "bash",
                &json!({"command": format!("sleep {SLEEP}; echo job-{i}"), "background": true}),
            )
        })
        .collect::<anyhow::Result<_>>()?;
    let mut pending = Vec::new();
    let mut rejection = String::new();
    for id in ids {
        let response = client.wait(id, TIMEOUT)?;
        match rpc::result(&response)
            .ok()
            .and_then(|r| r.get("job_id")?.as_str().map(str::to_owned))
        {
            Some(job) => pending.push(job),
            None => rejection = response.to_string(),
        }
    }
    let accepted = pending.len();
    let mut poll_us = Vec::new();
    let mut ended = std::collections::BTreeMap::new();
    while !pending.is_empty() {
        if start.elapsed() > TIMEOUT {
            bail!("{} jobs still running after {TIMEOUT:?}", pending.len());
        }
        let mut still = Vec::new();
        for job in pending {
            let (response, elapsed) = client.call_timed(
                "process",
                &json!({"action": "poll", "job_id": job, "wait_ms": 0}),
                TIMEOUT,
            )?;
            poll_us.push(elapsed.as_secs_f64() * 1e6);
            let result = rpc::result(&response)?;
            match final_status(result) {
                Some(status) => *ended.entry(status).or_default() += 1,
                None => still.push(job),
            }
        }
        pending = still;
        if !pending.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let completion = start.elapsed();
    let peak_rss_kib = crate::procs::peak_rss_kib(client.pid());
    client.close(Duration::from_secs(10))?;
    Ok(Some(ToolJobs {
        completion,
        poll_us,
        peak_rss_kib,
        accepted,
        rejection,
        ended,
    }))
}

/// The final status of a job from a `process poll` result, or `None` while it runs. A job the registry
/// no longer knows (an error result without a status) counts as `lost`.
pub fn final_status(result: &Value) -> Option<String> {
    match result.get("status").and_then(Value::as_str) {
        Some("running" | "starting" | "pending") => None,
        Some(status) => Some(status.to_owned()),
        None if result.get("is_error").and_then(Value::as_bool) == Some(true) => Some("lost".to_owned()),
        None => result
            .get("exit_code")
            .filter(|c| !c.is_null())
            .map(|_| "completed".to_owned()),
    }
}

fn raw_concurrent() -> anyhow::Result<Duration> {
    let start = Instant::now();
    let children: Vec<_> = (0..JOBS)
        .map(|i| {
            Command::new("bash")
                .arg("-c")
                .arg(format!("sleep {SLEEP}; echo job-{i}"))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    for child in children {
        child.wait_with_output()?;
    }
    Ok(start.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_results_are_classified() {
        assert_eq!(
            final_status(&json!({"status": "running", "exit_code": null})),
            None
        );
        assert_eq!(
            final_status(&json!({"status": "completed", "exit_code": 0})).as_deref(),
            Some("completed")
        );
        assert_eq!(
            final_status(&json!({"status": "killed"})).as_deref(),
            Some("killed")
        );
        let lost = json!({"status": null, "is_error": true, "message": "No job found with id x."});
        assert_eq!(final_status(&lost).as_deref(), Some("lost"));
        assert_eq!(
            final_status(&json!({"exit_code": 3})).as_deref(),
            Some("completed")
        );
        assert_eq!(final_status(&json!({"output": "x"})), None);
    }
}
