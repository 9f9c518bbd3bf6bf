//! PTY: throughput of the same flood under `pty: true` against the pipe path of the same tool, plus the
//! figures of the pty crate's own bench example (keystroke round trip and raw PTY throughput).

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::measure::flood_script;
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::workspace;

const MIB: u64 = 1 << 20;

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let bytes = if ctx.options.quick { 16 * MIB } else { 64 * MIB };
    let mut section = Section::new(
        "pty",
        "PTY throughput and keystroke round trip",
        format!(
            "{} MiB of 80-byte lines through `shellgate rpc` `bash` with `pty: true` against the same call \
             with pipes (both `session: \"none\"`). Then the pty crate's bench example (any example of `shellgate-pty` whose name \
             contains `bench`), which prints its figures as one JSON object (its PTY throughputs are charted as cost against its pipe throughput).",
            bytes / MIB
        ),
    );
    let mut table = Table::with_columns(&["measure", "value", "÷ baseline"]);
    if let Some(binary) = need_shellgate(ctx, &mut section) {
        match tool_pty_vs_pipe(&binary, &ctx.work, bytes) {
            Ok(None) => section.note("PTY execution not available yet (`tty` under `pty: true` is not a terminal): tool PTY throughput skipped"),
            Ok(Some((pty, pipe))) => {
                let r = ctx.ratio("pty", &format!("{} MiB wall", bytes / MIB), ("tool pty: true", pty), ("tool pipes", pipe));
                table.push(vec!["tool, pty: true".into(), format!("{pty:.2} s ({:.0} MiB/s)", bytes as f64 / MIB as f64 / pty), ratio_cell(r)]);
                table.push(vec!["tool, pipes".into(), format!("{pipe:.2} s ({:.0} MiB/s)", bytes as f64 / MIB as f64 / pipe), "×1.00".into()]);
            }
            Err(e) => section.note(format!("tool PTY throughput failed: {e:#}")),
        }
    }
    let keys = if ctx.options.quick { 200 } else { 500 };
    let mut tool_keys = None;
    if let Some(binary) = ctx.shellgate.clone() {
        match super::keystroke::round_trips(&binary, &ctx.work, keys) {
            Ok(None) => {
                section.note("no `process` RPC method yet: keystroke round trip through the tool skipped");
            }
            Ok(Some(samples)) => tool_keys = crate::stats::Summary::of(&samples),
            Err(e) => section.note(format!("keystroke round trip through the tool failed: {e:#}")),
        }
    }
    let examples: Vec<String> = ctx
        .meta
        .targets("example")
        .into_iter()
        .filter(|(p, e)| p.ends_with("-pty") && e.contains("bench"))
        .map(|(_, e)| e.to_owned())
        .collect();
    if examples.is_empty() {
        section.note("the pty crate has no bench example yet: keystroke round trip skipped");
    }
    let mut data = serde_json::Map::new();
    let args: &[&str] = if ctx.options.quick {
        &["--mb", "16", "--runs", "1", "--keys", "200"]
    } else {
        &["--mb", "64", "--runs", "3", "--keys", "500"]
    };
    for example in examples {
        eprintln!(
            "xtask: cargo run --release -p shellgate-pty --example {example} -- {}",
            args.join(" ")
        );
        let out = workspace::cargo()
            .args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "shellgate-pty",
                "--example",
                &example,
                "--",
            ])
            .args(args)
            .stdin(Stdio::null())
            .output();
        let figures = out
            .as_ref()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| json_figures(&o.stdout));
        if let Some(map) = figures {
            let flat = flatten(&map);
            for (key, value) in &flat {
                table.push(vec![format!("{example}: {key}"), value.clone(), "–".into()]);
            }
            ratios_from_example(ctx, &example, &map);
            data.insert(example, Value::Object(map));
        } else {
            let why = match &out {
                Ok(o) => format!(
                    "{}: {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")
                ),
                Err(e) => e.to_string(),
            };
            section.note(format!("example {example} gave no JSON figures ({why})"));
        }
    }
    if let Some(k) = tool_keys {
        let crate_median = data
            .values()
            .find_map(|figures| figures.get("keystroke_round_trip_us")?.get("median")?.as_f64());
        let r = crate_median.and_then(|base| {
            ctx.ratio(
                "pty",
                "keystroke round trip median",
                ("tool: process write with wait_ms", k.median),
                ("pty crate", base),
            )
        });
        table.push(vec![
            format!(
                "tool keystroke round trip (process write with wait_ms, {} keys)",
                k.n
            ),
            format!("median {}, p99 {}", micros(k.median), micros(k.p99)),
            ratio_cell(r),
        ]);
    }
    section.table = table;
    section.data = json!({"bytes": bytes, "examples": data});
    section
}

/// The JSON object an example printed: all of its output, or else its last line.
fn json_figures(stdout: &[u8]) -> Option<serde_json::Map<String, Value>> {
    let text = String::from_utf8_lossy(stdout);
    let whole = serde_json::from_str::<Value>(text.trim()).ok();
    let last = || {
        text.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
    };
    match whole.or_else(last)? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Nested figures as `a.b = value` pairs.
fn flatten(map: &serde_json::Map<String, Value>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, value) in map {
        match value {
            Value::Object(inner) => {
                out.extend(flatten(inner).into_iter().map(|(k, v)| (format!("{key}.{k}"), v)));
            }
            // Raw sample lists stay in report.json; the table shows their summaries.
            Value::Array(_) => {}
            Value::Number(n) => out.push((
                key.clone(),
                n.as_f64().map_or_else(|| n.to_string(), |f| format!("{f:.2}")),
            )),
            other => out.push((key.clone(), other.to_string())),
        }
    }
    out
}

/// Chart the example's throughputs against its pipe throughput (as cost: pipes ÷ subject), and any
/// `<name>` / `<name>_baseline` pairs.
fn ratios_from_example(ctx: &mut Ctx<'_>, example: &str, map: &serde_json::Map<String, Value>) {
    if let Some(Value::Object(rates)) = map.get("throughput_mb_s")
        && let Some(pipes) = rates.get("pipes").and_then(Value::as_f64)
    {
        for (key, rate) in rates {
            if let (false, Some(rate)) = (key == "pipes", rate.as_f64()) {
                ctx.ratio(
                    "pty",
                    &format!("{example} time per MB"),
                    (key, pipes),
                    ("pipes", rate),
                );
            }
        }
    }
    // Newer layout: {"vs_pipes": {"<subject>": {"ratio_median": throughput ÷ pipes, …}}}.
    if let Some(Value::Object(subjects)) = map.get("vs_pipes") {
        for (subject, figures) in subjects {
            let ratio = figures
                .get("ratio_median")
                .or_else(|| figures.get("ratio_best"))
                .and_then(Value::as_f64);
            if let Some(ratio) = ratio.filter(|r| *r > 0.0) {
                ctx.ratio(
                    "pty",
                    &format!("{example} time per MB"),
                    (subject, 1.0),
                    ("pipes", ratio),
                );
            }
        }
    }
    for (key, value) in map {
        let Some(base_key) = key.strip_suffix("_baseline") else {
            continue;
        };
        if let (Some(subject), Some(baseline)) = (map.get(base_key).and_then(Value::as_f64), value.as_f64()) {
            ctx.ratio(
                "pty",
                &format!("{example} {base_key}"),
                (base_key, subject),
                (key, baseline),
            );
        }
    }
}

/// Seconds for the flood with `pty: true` and with pipes, or `None` when PTYs are not available.
fn tool_pty_vs_pipe(
    binary: &std::path::Path,
    work: &std::path::Path,
    bytes: u64,
) -> anyhow::Result<Option<(f64, f64)>> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.current_dir(work);
    })?;
    if !pty_works(&mut client)? {
        return Ok(None);
    }
    let script = flood_script(bytes);
    let mut time = |pty: bool| -> anyhow::Result<f64> {
        let start = Instant::now();
        let response = client.call(
            "bash",
            &json!({"command": script, "pty": pty, "timeout": 600, "session": "none"}),
            Duration::from_secs(900),
        )?;
        let elapsed = start.elapsed().as_secs_f64();
        let result = rpc::result(&response)?;
        anyhow::ensure!(
            result.get("status").and_then(Value::as_str) == Some("completed"),
            "flood did not complete: {result}"
        );
        Ok(elapsed)
    };
    let pty = time(true)?;
    let pipe = time(false)?;
    client.close(Duration::from_secs(10))?;
    Ok(Some((pty, pipe)))
}

/// Whether `pty: true` really runs under a terminal.
pub fn pty_works(client: &mut RpcClient) -> anyhow::Result<bool> {
    let response = client.call(
        "bash",
        &json!({"command": "tty", "pty": true}),
        Duration::from_secs(30),
    )?;
    Ok(rpc::result(&response).is_ok_and(|r| super::latency::output(r).trim_start().starts_with("/dev/")))
}
