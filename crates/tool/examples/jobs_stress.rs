//! Stress run of background jobs: N concurrent jobs each printing M lines, every line checked through
//! `log`, and the engine's memory reported.
//!
//! `cargo run --release -p shellgate --example jobs_stress -- [jobs] [lines]` (defaults 200 and 10000).

use std::time::Instant;

use shellgate::{
    BashParams, BashTool, CancellationToken, JobStatus, ProcessAction, ProcessParams, ProcessTool, ToolConfig,
};

/// `VmRSS` and `VmHWM` of this process, in KiB.
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let lines: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let mut config = ToolConfig::default();
    config.jobs.max_running = jobs + 8;
    config.jobs.max_finished = jobs + 8;
    let bash = BashTool::new(config);
    let process = ProcessTool::new(bash.jobs().clone());
    let (rss_before, _) = memory_kib();
    let start = Instant::now();

    let mut ids = Vec::new();
    for j in 0..jobs {
        let mut params = BashParams::new(format!(
            "for i in $(seq 1 {lines}); do echo \"job{j} line $i\"; done"
        ));
        params.background = true;
        let result = bash.call(params, CancellationToken::new()).await;
        ids.push(result.job_id.expect("job started"));
    }
    let started = start.elapsed();

    let mut waits = Vec::new();
    for id in &ids {
        let process = process.clone();
        let id = id.clone();
        waits.push(tokio::spawn(async move {
            loop {
                let mut poll = ProcessParams::new(ProcessAction::Poll, &id);
                poll.wait_ms = Some(60_000);
                let r = process.call(poll).await;
                if r.status != Some(JobStatus::Running) {
                    return r;
                }
            }
        }));
    }
    let mut finals = Vec::new();
    for w in waits {
        finals.push(w.await.expect("poll task"));
    }
    let finished = start.elapsed();
    let (rss_peak_now, hwm) = memory_kib();

    let mut bad = 0;
    for (j, (id, last)) in ids.iter().zip(&finals).enumerate() {
        if last.exit_code != Some(0) || last.total_lines != Some(lines) {
            bad += 1;
            eprintln!("job {id}: {last:?}");
            continue;
        }
        // `log` returns at most 256 KiB per call: page through every line.
        let mut next = 0u64;
        let mut ok = true;
        while next < lines {
            let mut log = ProcessParams::new(ProcessAction::Log, id);
            log.offset = Some(next);
            log.limit = Some(lines - next);
            let page = process.call(log).await;
            let text = page.output.unwrap_or_default();
            let count = text.lines().count() as u64;
            ok &= count > 0
                && page.first_line == Some(next)
                && text
                    .lines()
                    .enumerate()
                    .all(|(i, l)| l == format!("job{j} line {}", next + i as u64 + 1));
            if !ok {
                break;
            }
            next += count;
        }
        if !ok {
            bad += 1;
            eprintln!("job {id}: log does not match");
        }
    }
    println!(
        "{jobs} jobs x {lines} lines: started in {started:?}, all finished in {finished:?}, verified in {:?}",
        start.elapsed()
    );
    println!(
        "engine memory: RSS before {} MiB, after {} MiB, peak (VmHWM) {} MiB",
        rss_before / 1024,
        rss_peak_now / 1024,
        hwm / 1024
    );
    println!("jobs with missing or wrong lines: {bad}");
    std::process::exit(i32::from(bad > 0));
}
