//! A background job without the tool: start a command, poll its output, answer its prompt, and
//! stop another one: `cargo run -p shellgate-jobs --example background`.

use std::time::Duration;

use shellgate_executor::{LaunchSpec, StdinMode};
use shellgate_jobs::{JobConfig, JobRegistry, OutputPlan};

#[tokio::main]
async fn main() {
    let jobs = JobRegistry::new(JobConfig::default());
    let mut spec = LaunchSpec::new("sh", ["-c", "echo ready; read name; echo hello $name"], ".");
    spec.stdin = StdinMode::Piped;
    let mut notices = Vec::new();
    let job = jobs
        .start(
            &spec,
            "greeter",
            true,
            false,
            &OutputPlan::default(),
            &mut notices,
        )
        .expect("the job starts");
    println!("started {} (pid {:?})", job.id, job.pid());

    // Wait for the prompt (the settle rule ends the wait once it is blocked reading its input).
    let first = job.poll(jobs.config(), None, Some(5_000)).await;
    println!(
        "{:?} {:?}: {}",
        first.settled,
        first.waiting_for_input,
        first.text.trim()
    );

    // Answer it; the next poll waits for the answer, not the echo.
    job.write_input(b"world\n", false, Duration::from_secs(5))
        .await
        .expect("written");
    let answer = job.poll(jobs.config(), None, Some(5_000)).await;
    println!("{} ({})", answer.text.trim(), answer.message);

    // A job that would run for long is stopped: SIGINT, SIGTERM, then SIGKILL to its tree.
    let mut sleeper = LaunchSpec::new("sleep", ["30"], ".");
    sleeper.stdin = StdinMode::Piped;
    let long = jobs
        .start(
            &sleeper,
            "sleep 30",
            true,
            false,
            &OutputPlan::default(),
            &mut notices,
        )
        .expect("the job starts");
    let stopped = long.stop(None, Duration::from_millis(500)).await;
    println!("{stopped:?}");
    jobs.shutdown().await;
}
