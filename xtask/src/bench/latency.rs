//! Per-command latency: shellgate (session and one-shot, through one long-lived `shellgate rpc`) against
//! a raw Rust spawn of `bash -c`, Node's `child_process.spawn` and Python's `subprocess.run(shell=True)`.
//!
//! The methods take turns in rounds, so a burst of load from elsewhere on the machine hits all of them
//! rather than skewing one.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;
use crate::workspace;

/// The commands compared.
pub const COMMANDS: [&str; 3] = ["true", "echo hi", "ls /usr/bin | wc -l"];
const ROUNDS: usize = 20;
const FIRST_WARMUP: usize = 20;
const ROUND_WARMUP: usize = 3;
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

const SESSION: &str = "shellgate rpc bash (session)";
const ONE_SHOT: &str = "shellgate rpc bash (session: none)";
const RAW: &str = "raw Rust spawn bash -c";
const NODE: &str = "Node child_process.spawn";
const PYTHON: &str = "Python subprocess.run(shell=True)";

/// Samples in microseconds, per command.
type Samples = BTreeMap<String, Vec<f64>>;

/// Run the comparison; also returns the raw-spawn median of `true` (µs), the yardstick of the parse
/// section.
pub fn run(ctx: &mut Ctx<'_>) -> (Section, Option<f64>) {
    let runs = ctx.options.runs;
    let mut section = Section::new(
        "latency",
        "Per-command latency",
        format!(
            "Each command run {runs} times per method (after {FIRST_WARMUP} warm-up runs), sequentially, output \
             captured, the methods taking turns in {ROUNDS} rounds. shellgate is driven through one long-lived \
             `shellgate rpc` process (time = request written → response line read, so JSON-RPC is included); \
             the raw Rust (built with `rustc -O`), Node and Python drivers loop internally and report their \
             own timings. Python's `shell=True` runs `/bin/sh`, as Python agents do."
        ),
    );
    let mut client = None;
    let mut sessions = false;
    if let Some(binary) = need_shellgate(ctx, &mut section) {
        match start_client(&binary, &ctx.work) {
            Ok((c, s)) => {
                client = Some(c);
                sessions = s;
            }
            Err(e) => section.note(format!("shellgate failed to start: {e:#}")),
        }
        if client.is_some() && !sessions {
            section.note(
                "persistent sessions are not available yet (state did not carry over): session rows skipped",
            );
        }
    }
    let have_node = workspace::have("node");
    let have_python = workspace::have("python3");
    if !have_node {
        section.note("node is not installed: Node baseline skipped");
    }
    if !have_python {
        section.note("python3 is not installed: Python baseline skipped");
    }

    let mut methods: BTreeMap<&str, Samples> = BTreeMap::new();
    let mut failed: BTreeMap<&str, String> = BTreeMap::new();
    for round in 0..ROUNDS {
        let chunk = runs / ROUNDS + usize::from(round < runs % ROUNDS);
        let warmup = if round == 0 { FIRST_WARMUP } else { ROUND_WARMUP };
        eprintln!(
            "xtask: latency round {}/{ROUNDS} ({chunk} runs per command and method)",
            round + 1
        );
        let (skip_session, skip_one_shot) = (failed.contains_key(SESSION), failed.contains_key(ONE_SHOT));
        let mut take = |name: &'static str, outcome: anyhow::Result<Samples>| match outcome {
            Ok(samples) => {
                let all = methods.entry(name).or_default();
                for (cmd, s) in samples {
                    all.entry(cmd).or_default().extend(s);
                }
            }
            Err(e) => {
                failed.entry(name).or_insert_with(|| format!("{e:#}"));
            }
        };
        if let Some(c) = client.as_mut() {
            if sessions && !skip_session {
                take(SESSION, time_rpc(c, chunk, warmup, "xtask-bench"));
            }
            if !skip_one_shot {
                take(ONE_SHOT, time_rpc(c, chunk, warmup, "none"));
            }
        }
        let (n, w) = (chunk.to_string(), warmup.to_string());
        let mut raw_args = vec!["latency", n.as_str(), w.as_str()];
        raw_args.extend(COMMANDS);
        take(RAW, driver(&ctx.drivers.raw, &raw_args));
        let config = json!({"commands": COMMANDS, "runs": chunk, "warmup": warmup}).to_string();
        if have_node {
            take(
                NODE,
                driver(
                    Path::new("node"),
                    &[ctx.drivers.latency_js.to_str().unwrap_or_default(), &config],
                ),
            );
        }
        if have_python {
            take(
                PYTHON,
                driver(
                    Path::new("python3"),
                    &[ctx.drivers.latency_py.to_str().unwrap_or_default(), &config],
                ),
            );
        }
    }
    for (name, why) in &failed {
        section.note(format!("{name} failed: {why}"));
        methods.remove(name);
    }
    if let Some(c) = client {
        section.note(format!(
            "shellgate rpc peak RSS after all latency runs: {}",
            crate::report::kib(crate::procs::peak_rss_kib(c.pid()))
        ));
        if let Err(e) = c.close(Duration::from_secs(10)) {
            section.note(format!("shellgate rpc did not shut down cleanly: {e:#}"));
        }
    }

    let summaries: BTreeMap<&str, BTreeMap<&str, Summary>> = methods
        .iter()
        .map(|(name, samples)| {
            let per_cmd = COMMANDS
                .iter()
                .filter_map(|&c| Some((c, Summary::of(samples.get(c)?)?)))
                .collect();
            (*name, per_cmd)
        })
        .collect();
    let find = |method: &str, cmd: &str| summaries.get(method).and_then(|s| s.get(cmd).copied());
    let baselines = [RAW, NODE, PYTHON];
    let mut table = Table::with_columns(&[
        "command",
        "method",
        "n",
        "median",
        "p99",
        "median ÷ raw spawn",
        "median ÷ Node",
        "median ÷ Python",
        "p99 ÷ raw spawn",
    ]);
    for cmd in COMMANDS {
        for method in [SESSION, ONE_SHOT, RAW, NODE, PYTHON] {
            let Some(s) = find(method, cmd) else { continue };
            let is_subject = method.starts_with("shellgate");
            let mut cells = vec![
                cmd.to_owned(),
                method.to_owned(),
                s.n.to_string(),
                micros(s.median),
                micros(s.p99),
            ];
            for base in baselines {
                let r = find(base, cmd).and_then(|b| {
                    if is_subject {
                        ctx.ratio(
                            "latency",
                            &format!("{cmd} median"),
                            (method, s.median),
                            (base, b.median),
                        )
                    } else {
                        Some(s.median / b.median)
                    }
                });
                cells.push(ratio_cell(r));
            }
            let p99 = find(RAW, cmd).and_then(|b| {
                if is_subject {
                    ctx.ratio("latency", &format!("{cmd} p99"), (method, s.p99), (RAW, b.p99))
                } else {
                    Some(s.p99 / b.p99)
                }
            });
            cells.push(ratio_cell(p99));
            table.push(cells);
        }
    }
    section.table = table;
    section.data = json!({ "runs": runs, "rounds": ROUNDS, "summaries_us": summaries });
    let raw_true = find(RAW, "true").map(|s| s.median);
    (section, raw_true)
}

/// Start `shellgate rpc`; also says whether persistent sessions work.
fn start_client(binary: &Path, work: &Path) -> anyhow::Result<(RpcClient, bool)> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.current_dir(work);
    })?;
    let sessions = sessions_work(&mut client)?;
    Ok((client, sessions))
}

/// Whether a session keeps exported variables and the working directory between calls.
pub fn sessions_work(client: &mut RpcClient) -> anyhow::Result<bool> {
    let first = json!({"command": "export XTASK_PROBE=kept; cd /", "session": "xtask-probe"});
    let response = client.call("bash", &first, CALL_TIMEOUT)?;
    if rpc::result(&response).is_err() {
        return Ok(false);
    }
    let second = json!({"command": "echo \"$XTASK_PROBE:$PWD\"", "session": "xtask-probe"});
    let response = client.call("bash", &second, CALL_TIMEOUT)?;
    Ok(rpc::result(&response).is_ok_and(|r| output(r).trim() == "kept:/"))
}

/// The `output` text of a bash result.
pub fn output(result: &Value) -> &str {
    result.get("output").and_then(Value::as_str).unwrap_or("")
}

fn time_rpc(client: &mut RpcClient, runs: usize, warmup: usize, session: &str) -> anyhow::Result<Samples> {
    let mut samples = Samples::new();
    for cmd in COMMANDS {
        let params = json!({"command": cmd, "session": session});
        for _ in 0..warmup {
            let response = client.call("bash", &params, CALL_TIMEOUT)?;
            let result = rpc::result(&response)?;
            if result.get("exit_code").and_then(Value::as_i64) != Some(0) {
                bail!("shellgate ran {cmd:?} without success: {result}");
            }
        }
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let (response, elapsed) = client.call_timed("bash", &params, CALL_TIMEOUT)?;
            rpc::result(&response)?;
            times.push(elapsed.as_secs_f64() * 1e6);
        }
        samples.insert(cmd.to_owned(), times);
    }
    Ok(samples)
}

fn driver(program: &Path, args: &[&str]) -> anyhow::Result<Samples> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    if !out.status.success() {
        bail!(
            "{} exited {}: {}",
            program.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout)
        .with_context(|| format!("parsing {} driver output", program.display()))
}
