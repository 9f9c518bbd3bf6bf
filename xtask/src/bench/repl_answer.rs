//! Driving a REPL through one `shellgate rpc`: time from `process write` to the program's answer,
//! with one waiting `poll` (the settle rule) against a loop of non-waiting polls, in one Python REPL
//! session, rounds alternating.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

const TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between two polls of the loop.
const LOOP_PAUSE: Duration = Duration::from_millis(2);

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let rounds = if ctx.options.quick { 20 } else { 100 };
    let mut section = Section::new(
        "jobs-repl",
        "REPL answer: write → settled poll vs poll loop",
        format!(
            "`python3 -q -i` as a PTY job through one `shellgate rpc`; {rounds} rounds of each, alternating: \
             `process write` of `N+6*7\\n`, then either one `process poll` with `wait_ms: 10000` \
             (subject: returns once the program answered and waits for input again), or `poll` with \
             `wait_ms: 0` every {} ms until the answer's line is in (baseline). Time = write sent → \
             answer in hand. Same-poll = rounds whose first poll held the answer.",
            LOOP_PAUSE.as_millis()
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    if super::first_line("python3", &["--version"]).is_none() {
        section.note("skipped: python3 is not installed");
        return section;
    }
    let work = ctx.work.join("repl");
    if let Err(e) = std::fs::create_dir_all(&work) {
        section.note(format!("cannot create the working directory: {e}"));
        return section;
    }
    let measured = match measure(&binary, &work, rounds) {
        Ok(m) => m,
        Err(e) => {
            section.note(format!("the REPL rounds failed: {e:#}"));
            return section;
        }
    };
    let settled = Summary::of(&measured.settled_us);
    let looped = Summary::of(&measured.loop_us);
    let ratio = match (settled, looped) {
        (Some(s), Some(l)) => ctx.ratio(
            "jobs-repl",
            "write → answer, settled poll vs poll loop (median)",
            ("settled poll", s.median),
            ("poll loop", l.median),
        ),
        _ => None,
    };
    let mut table = Table::with_columns(&["subject", "p50", "p99", "calls / round", "same poll", "÷ loop"]);
    let cell = |s: Option<Summary>, f: fn(&Summary) -> f64| s.map_or_else(|| "–".into(), |s| micros(f(&s)));
    table.push(vec![
        "write + poll (wait_ms 10000, settle rule)".into(),
        cell(settled, |s| s.median),
        cell(settled, |s| s.p99),
        format!("{:.1}", measured.settled_calls as f64 / rounds as f64),
        format!("{} / {rounds}", measured.same_poll),
        ratio_cell(ratio),
    ]);
    table.push(vec![
        format!("write + poll (wait_ms 0) every {} ms", LOOP_PAUSE.as_millis()),
        cell(looped, |s| s.median),
        cell(looped, |s| s.p99),
        format!("{:.1}", measured.loop_calls as f64 / rounds as f64),
        "–".into(),
        "×1.00".into(),
    ]);
    section.table = table;
    section.data = json!({
        "rounds": rounds, "settled_us": settled, "loop_us": looped, "same_poll": measured.same_poll,
        "settled_calls": measured.settled_calls, "loop_calls": measured.loop_calls,
    });
    section
}

#[derive(Default)]
struct Measured {
    settled_us: Vec<f64>,
    loop_us: Vec<f64>,
    same_poll: usize,
    settled_calls: usize,
    loop_calls: usize,
}

fn measure(binary: &std::path::Path, work: &std::path::Path, rounds: usize) -> anyhow::Result<Measured> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.current_dir(work);
    })?;
    let started = client.call(
        "bash",
        &json!({"command": "python3 -q -i", "background": true, "pty": true}),
        TIMEOUT,
    )?;
    let job = rpc::result(&started)?
        .get("job_id")
        .and_then(Value::as_str)
        .context("no job id")?
        .to_owned();
    wait_for_prompt(&mut client, &job)?;
    let mut m = Measured::default();
    for round in 0..rounds {
        let (us, calls, same) = one_round(&mut client, &job, 2 * round, true)?;
        m.settled_us.push(us);
        m.settled_calls += calls;
        m.same_poll += usize::from(same);
        let (us, calls, _) = one_round(&mut client, &job, 2 * round + 1, false)?;
        m.loop_us.push(us);
        m.loop_calls += calls;
    }
    client.kill()?;
    Ok(m)
}

fn wait_for_prompt(client: &mut RpcClient, job: &str) -> anyhow::Result<()> {
    let poll = json!({"action": "poll", "job_id": job, "wait_ms": 500});
    let deadline = Instant::now() + TIMEOUT;
    let mut seen = String::new();
    while Instant::now() < deadline {
        let response = client.call("process", &poll, TIMEOUT)?;
        let result = rpc::result(&response)?;
        seen.push_str(result.get("output").and_then(Value::as_str).unwrap_or(""));
        if seen.trim_end().ends_with(">>>") && result.get("waiting_for_input") == Some(&json!(true)) {
            return Ok(());
        }
    }
    bail!("no prompt from python3: {seen:?}")
}

/// One write and the polls up to its answer: microseconds, calls made, whether the first poll had it.
fn one_round(
    client: &mut RpcClient,
    job: &str,
    n: usize,
    settle: bool,
) -> anyhow::Result<(f64, usize, bool)> {
    let answer = (n + 42).to_string();
    let start = Instant::now();
    let write = json!({"action": "write", "job_id": job, "data": format!("{n}+6*7\n")});
    rpc::result(&client.call("process", &write, TIMEOUT)?)?;
    let wait_ms = if settle { 10_000 } else { 0 };
    let poll = json!({"action": "poll", "job_id": job, "wait_ms": wait_ms});
    let mut seen = String::new();
    let mut calls = 1;
    loop {
        if start.elapsed() > TIMEOUT {
            bail!("no answer {answer} in {seen:?}");
        }
        let response = client.call("process", &poll, TIMEOUT)?;
        calls += 1;
        let result = rpc::result(&response)?;
        seen.push_str(result.get("output").and_then(Value::as_str).unwrap_or(""));
        if has_line(&seen, &answer) {
            return Ok((start.elapsed().as_secs_f64() * 1e6, calls, calls == 2));
        }
        if !settle {
            std::thread::sleep(LOOP_PAUSE);
        }
    }
}

/// Whether `text` has `line` as a whole line (after the REPL's prompts).
fn has_line(text: &str, line: &str) -> bool {
    text.lines()
        .map(|l| l.trim_end_matches('\r').trim_start_matches(">>> "))
        .any(|l| l == line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_whole_lines() {
        assert!(has_line(">>> 6*7\r\n42\r\n>>> ", "42"));
        assert!(!has_line(">>> 42*1\r\n", "42"));
        assert!(has_line(">>> 42\n", "42"));
    }
}
