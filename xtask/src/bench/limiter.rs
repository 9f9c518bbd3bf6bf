//! A lifted `| head` ends its producer as bash does: pipelines whose producer only the limiter stops,
//! through one long-lived `shellgate rpc` (one-shot and session), against the same pipeline in a plain
//! `bash -c` spawned from Rust, in the same run, taking turns.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

/// The pipelines compared.
pub const COMMANDS: [&str; 2] = [
    "find / -xdev 2>/dev/null | head -n 3",
    "seq 1 10000000 | head -n 5",
];
const ROUNDS: usize = 5;
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

const ONE_SHOT: &str = "shellgate rpc bash (session: none)";
const SESSION: &str = "shellgate rpc bash (session)";
const BASH: &str = "bash -c (Rust spawn)";

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let runs = if ctx.options.quick { 10 } else { 40 };
    let mut section = Section::new(
        "limiter",
        "Lifted `| head`: producers end at once",
        format!(
            "Each pipeline {runs} times per method in {ROUNDS} rounds, after 3 warm-up runs: through one \
             long-lived `shellgate rpc` (request written → response read), and as the same pipeline in a \
             plain `bash -c` spawned from Rust with its output captured. The tool lifts the `head`, closes \
             the output once the lines are in and reports the statuses bash would."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    let mut client = match RpcClient::spawn(&binary, |c| {
        c.current_dir(&ctx.work);
    }) {
        Ok(c) => c,
        Err(e) => {
            section.note(format!("shellgate failed to start: {e:#}"));
            return section;
        }
    };
    let mut samples: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    let mut failures = Vec::new();
    for round in 0..ROUNDS {
        let chunk = runs / ROUNDS + usize::from(round < runs % ROUNDS);
        eprintln!("xtask: limiter round {}/{ROUNDS}", round + 1);
        for cmd in COMMANDS {
            for (method, session) in [(ONE_SHOT, "none"), (SESSION, "xtask-limiter")] {
                match time_rpc(&mut client, cmd, session, chunk, usize::from(round == 0) * 3) {
                    Ok(t) => samples.entry((method, cmd)).or_default().extend(t),
                    Err(e) => failures.push(format!("{method} {cmd}: {e:#}")),
                }
            }
            match time_bash(cmd, chunk, usize::from(round == 0) * 3) {
                Ok(t) => samples.entry((BASH, cmd)).or_default().extend(t),
                Err(e) => failures.push(format!("{BASH} {cmd}: {e:#}")),
            }
        }
    }
    failures.dedup();
    for f in failures {
        section.note(f);
    }
    let _ = client.close(Duration::from_secs(10));
    let mut table = Table::with_columns(&["pipeline", "method", "n", "median", "p99", "median ÷ bash -c"]);
    for cmd in COMMANDS {
        let base = samples.get(&(BASH, cmd)).and_then(|s| Summary::of(s));
        for method in [ONE_SHOT, SESSION, BASH] {
            let Some(s) = samples.get(&(method, cmd)).and_then(|s| Summary::of(s)) else {
                continue;
            };
            let ratio = match base {
                Some(b) if method != BASH => ctx.ratio(
                    "limiter",
                    &format!("{cmd} median"),
                    (method, s.median),
                    (BASH, b.median),
                ),
                Some(_) => Some(1.0),
                None => None,
            };
            table.push(vec![
                cmd.to_owned(),
                method.to_owned(),
                s.n.to_string(),
                micros(s.median),
                micros(s.p99),
                ratio_cell(ratio),
            ]);
        }
    }
    section.table = table;
    section
}

fn time_rpc(
    client: &mut RpcClient,
    cmd: &str,
    session: &str,
    runs: usize,
    warmup: usize,
) -> anyhow::Result<Vec<f64>> {
    let params = json!({"command": cmd, "session": session});
    let mut times = Vec::with_capacity(runs);
    for i in 0..warmup + runs {
        let (response, elapsed) = client.call_timed("bash", &params, CALL_TIMEOUT)?;
        let result = rpc::result(&response)?;
        if result.get("exit_code").and_then(Value::as_i64) != Some(0) {
            bail!("not a clean end: {result}");
        }
        if i >= warmup {
            times.push(elapsed.as_secs_f64() * 1e6);
        }
    }
    Ok(times)
}

fn time_bash(cmd: &str, runs: usize, warmup: usize) -> anyhow::Result<Vec<f64>> {
    let mut times = Vec::with_capacity(runs);
    for i in 0..warmup + runs {
        let start = Instant::now();
        let out = Command::new("bash")
            .args(["-c", cmd])
            .stdin(Stdio::null())
            .output()?;
        let elapsed = start.elapsed();
        if !out.status.success() {
            bail!("bash -c exited {}", out.status);
        }
        if i >= warmup {
            times.push(elapsed.as_secs_f64() * 1e6);
        }
    }
    Ok(times)
}
