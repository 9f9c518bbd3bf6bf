//! Per-command latency: shellgate (session and one-shot, through one long-lived `shellgate rpc`) against
//! a raw Rust spawn of `bash -c`, Node's `child_process.spawn` and Python's `subprocess.run(shell=True)`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;
use crate::workspace;

/// The commands compared.
pub const COMMANDS: [&str; 3] = ["true", "echo hi", "ls /usr/bin | wc -l"];
const WARMUP: usize = 20;
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Samples in microseconds, per command.
type Samples = BTreeMap<String, Vec<f64>>;

/// Named sample sets of the shellgate methods, and notes about them.
type Methods = (Vec<(&'static str, Samples)>, Vec<String>);

/// Run the comparison; also returns the raw-spawn median of `true` (µs), the yardstick of the parse
/// section.
pub fn run(ctx: &mut Ctx<'_>) -> (Section, Option<f64>) {
    let runs = ctx.options.runs;
    let mut section = Section::new(
        "latency",
        "Per-command latency",
        format!(
            "Each command run {runs} times per method after {WARMUP} warm-up runs, sequentially, output \
             captured. shellgate is driven through one long-lived `shellgate rpc` process (time = request \
             written → response read, so JSON-RPC is included); Node and Python loop inside one process \
             each and report their own timings. Python's `shell=True` runs `/bin/sh`, as Python agents do."
        ),
    );
    let mut methods: Vec<(&str, Samples)> = Vec::new();
    if let Some(binary) = need_shellgate(ctx, &mut section) {
        match shellgate_methods(&binary, &ctx.work, runs) {
            Ok((found, notes)) => {
                for note in notes {
                    section.note(note);
                }
                methods.extend(found);
            }
            Err(e) => section.note(format!("shellgate failed: {e:#}")),
        }
    }
    match raw_spawn(runs) {
        Ok(s) => methods.push(("raw Rust spawn bash -c", s)),
        Err(e) => section.note(format!("raw spawn failed: {e:#}")),
    }
    let config = json!({"commands": COMMANDS, "runs": runs, "warmup": WARMUP}).to_string();
    if workspace::have("node") {
        match driver("node", &ctx.drivers.latency_js, &config) {
            Ok(s) => methods.push(("Node child_process.spawn", s)),
            Err(e) => section.note(format!("node driver failed: {e:#}")),
        }
    } else {
        section.note("node is not installed: Node baseline skipped");
    }
    if workspace::have("python3") {
        match driver("python3", &ctx.drivers.latency_py, &config) {
            Ok(s) => methods.push(("Python subprocess.run(shell=True)", s)),
            Err(e) => section.note(format!("python driver failed: {e:#}")),
        }
    } else {
        section.note("python3 is not installed: Python baseline skipped");
    }

    let summaries: Vec<(&str, BTreeMap<&str, Summary>)> = methods
        .iter()
        .map(|(name, samples)| {
            let per_cmd = COMMANDS
                .iter()
                .filter_map(|&c| Some((c, Summary::of(samples.get(c)?)?)))
                .collect();
            (*name, per_cmd)
        })
        .collect();
    let find = |method: &str, cmd: &str| {
        summaries
            .iter()
            .find(|(m, _)| *m == method)
            .and_then(|(_, s)| s.get(cmd).copied())
    };
    let baselines = [
        "raw Rust spawn bash -c",
        "Node child_process.spawn",
        "Python subprocess.run(shell=True)",
    ];
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
        for (method, per_cmd) in &summaries {
            let Some(s) = per_cmd.get(cmd) else { continue };
            let is_subject = method.starts_with("shellgate");
            let mut cells = vec![
                cmd.to_owned(),
                (*method).to_owned(),
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
            let p99 = find(baselines[0], cmd).and_then(|b| {
                if is_subject {
                    ctx.ratio(
                        "latency",
                        &format!("{cmd} p99"),
                        (method, s.p99),
                        (baselines[0], b.p99),
                    )
                } else {
                    Some(s.p99 / b.p99)
                }
            });
            cells.push(ratio_cell(p99));
            table.push(cells);
        }
    }
    section.table = table;
    section.data = json!({
        "runs": runs,
        "summaries_us": summaries.iter().map(|(m, s)| (m.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
    });
    let raw_true = find(baselines[0], "true").map(|s| s.median);
    (section, raw_true)
}

/// Time shellgate over RPC: with a persistent session when sessions work, and one-shot.
fn shellgate_methods(binary: &Path, work: &Path, runs: usize) -> anyhow::Result<Methods> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.current_dir(work);
    })?;
    let mut notes = Vec::new();
    let mut found = Vec::new();
    if sessions_work(&mut client)? {
        found.push((
            "shellgate rpc bash (session)",
            time_rpc(&mut client, runs, Some("xtask-bench"))?,
        ));
    } else {
        notes.push(
            "persistent sessions are not available yet (state did not carry over): session column skipped"
                .to_owned(),
        );
    }
    found.push((
        "shellgate rpc bash (session: none)",
        time_rpc(&mut client, runs, Some("none"))?,
    ));
    let hwm = crate::procs::peak_rss_kib(client.pid());
    notes.push(format!(
        "shellgate rpc peak RSS after all latency runs: {}",
        crate::report::kib(hwm)
    ));
    client.close(Duration::from_secs(10))?;
    Ok((found, notes))
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

fn time_rpc(client: &mut RpcClient, runs: usize, session: Option<&str>) -> anyhow::Result<Samples> {
    let mut samples = Samples::new();
    for cmd in COMMANDS {
        let mut params = json!({"command": cmd});
        if let Some(session) = session {
            params["session"] = json!(session);
        }
        let check = client.call("bash", &params, CALL_TIMEOUT)?;
        let result = rpc::result(&check)?;
        if result.get("exit_code").and_then(Value::as_i64) != Some(0) {
            bail!("shellgate ran {cmd:?} without success: {result}");
        }
        for _ in 0..WARMUP {
            client.call("bash", &params, CALL_TIMEOUT)?;
        }
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let start = Instant::now();
            let response = client.call("bash", &params, CALL_TIMEOUT)?;
            times.push(start.elapsed().as_secs_f64() * 1e6);
            rpc::result(&response)?;
        }
        samples.insert(cmd.to_owned(), times);
    }
    Ok(samples)
}

fn raw_spawn(runs: usize) -> anyhow::Result<Samples> {
    let once = |cmd: &str| -> anyhow::Result<f64> {
        let start = Instant::now();
        let out = Command::new("bash")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::null())
            .output()?;
        let micros = start.elapsed().as_secs_f64() * 1e6;
        if !out.status.success() {
            bail!("bash -c {cmd:?} failed: {}", out.status);
        }
        Ok(micros)
    };
    let mut samples = Samples::new();
    for cmd in COMMANDS {
        for _ in 0..WARMUP {
            once(cmd)?;
        }
        samples.insert(
            cmd.to_owned(),
            (0..runs).map(|_| once(cmd)).collect::<anyhow::Result<_>>()?,
        );
    }
    Ok(samples)
}

fn driver(program: &str, script: &Path, config: &str) -> anyhow::Result<Samples> {
    let out = Command::new(program)
        .arg(script)
        .arg(config)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {program}"))?;
    if !out.status.success() {
        bail!(
            "{program} exited {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("parsing {program} driver output"))
}
