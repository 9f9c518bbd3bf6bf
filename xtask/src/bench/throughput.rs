//! Output throughput: a flood of 80-byte lines through the whole tool (window + sanitizer + artifact
//! spill) against `bash -c '… > /dev/null'` and against raw Rust, Node and Python reading the same pipe.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Ctx;
use crate::measure::{self, Measured, flood_script};
use crate::report::{Section, Table, kib, ratio_cell};
use crate::stats::Summary;
use crate::workspace;

const MIB: u64 = 1 << 20;

/// One measured way of consuming the flood.
struct Subject {
    name: &'static str,
    walls: Vec<f64>,
    peak_rss_kib: Option<u64>,
    check: String,
}

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let (bytes, reps) = if ctx.options.quick {
        (256 * MIB, 1)
    } else {
        (1024 * MIB, 3)
    };
    let script = flood_script(bytes);
    let mut section = Section::new(
        "throughput",
        "Output throughput",
        format!(
            "{} MiB of 80-byte lines (`{script}`), consumed {reps}× per subject (median wall time shown; \
             peak RSS is the largest seen, measured with {}). shellgate runs it as `shellgate run --json` \
             — the whole tool: output window, sanitizer, artifact spill.",
            bytes / MIB,
            measure::rss_method()
        ),
    );
    let mut subjects = Vec::new();
    let work = ctx.work.clone();
    if let Some(binary) = super::need_shellgate(ctx, &mut section) {
        let args = [
            "run".to_owned(),
            "--json".to_owned(),
            "--timeout".to_owned(),
            "3600".to_owned(),
            script.clone(),
        ];
        subjects.push(measure_subject(
            "shellgate run (full tool)",
            reps,
            &mut section,
            || {
                let m = measure::run(&binary, &args, |c| {
                    c.current_dir(&work);
                })?;
                let check = check_tool(&m, bytes);
                Ok((m, check))
            },
        ));
    }
    let devnull = format!("{script} > /dev/null");
    subjects.push(measure_subject(
        "bash -c '… > /dev/null'",
        reps,
        &mut section,
        || {
            let m = measure::run("bash", &["-c", devnull.as_str()], |_| {})?;
            let check = if m.status.success() {
                "exit 0".to_owned()
            } else {
                format!("FAILED: {}", m.status)
            };
            Ok((m, check))
        },
    ));
    let readers = [
        ("rustc", "raw Rust pipe read", ctx.drivers.raw.clone()),
        ("node", "Node spawn pipe read", ctx.drivers.reader_js.clone()),
        ("python3", "Python Popen pipe read", ctx.drivers.reader_py.clone()),
    ];
    for (program, name, path) in readers {
        if !workspace::have(program) {
            section.note(format!("{program} is not installed: {name} skipped"));
            continue;
        }
        subjects.push(measure_subject(name, reps, &mut section, || {
            let m = if program == "rustc" {
                measure::run(&path, &["read", script.as_str()], |_| {})?
            } else {
                measure::run(program, &[path.as_os_str(), script.as_ref()], |_| {})?
            };
            let check = check_reader(&m, bytes);
            Ok((m, check))
        }));
    }
    let subjects: Vec<Subject> = subjects.into_iter().flatten().collect();

    let median = |s: &Subject| Summary::of(&s.walls).map(|x| x.median);
    let tool = subjects.iter().find(|s| s.name.starts_with("shellgate"));
    let mut table = Table::with_columns(&[
        "subject",
        "wall (median)",
        "MiB/s",
        "peak RSS",
        "time ÷ subject",
        "check",
    ]);
    let mut data = Vec::new();
    for s in &subjects {
        let Some(wall) = median(s) else { continue };
        let vs = tool.filter(|t| t.name != s.name).and_then(|t| {
            let tw = median(t)?;
            let r = ctx.ratio(
                "throughput",
                &format!("{} MiB wall", bytes / MIB),
                (t.name, tw),
                (s.name, wall),
            );
            if let (Some(a), Some(b)) = (t.peak_rss_kib, s.peak_rss_kib) {
                ctx.ratio("throughput", "peak RSS", (t.name, a as f64), (s.name, b as f64));
            }
            r
        });
        table.push(vec![
            s.name.to_owned(),
            format!("{wall:.2} s"),
            format!("{:.0}", bytes as f64 / MIB as f64 / wall),
            kib(s.peak_rss_kib),
            ratio_cell(vs),
            s.check.clone(),
        ]);
        data.push(
            json!({"subject": s.name, "walls_s": s.walls, "peak_rss_kib": s.peak_rss_kib, "check": s.check}),
        );
    }
    section.table = table;
    section.data = json!({"bytes": bytes, "subjects": data});
    section
}

fn measure_subject(
    name: &'static str,
    reps: usize,
    section: &mut Section,
    mut once: impl FnMut() -> anyhow::Result<(Measured, String)>,
) -> Option<Subject> {
    eprintln!("xtask: throughput: {name}");
    let mut subject = Subject {
        name,
        walls: Vec::new(),
        peak_rss_kib: None,
        check: String::new(),
    };
    for _ in 0..reps {
        match once() {
            Ok((m, check)) => {
                subject.walls.push(m.wall.as_secs_f64());
                subject.peak_rss_kib = subject.peak_rss_kib.max(m.peak_rss_kib);
                subject.check = check;
            }
            Err(e) => {
                section.note(format!("{name}: {e:#}"));
                return None;
            }
        }
    }
    Some(subject)
}

/// What the tool reported about the flood: exit, totals, truncation, artifact.
fn check_tool(m: &Measured, bytes: u64) -> String {
    let Ok(result) = serde_json::from_slice::<Value>(&m.stdout) else {
        let stderr = String::from_utf8_lossy(&m.stderr);
        return format!(
            "FAILED: no JSON result ({}): {}",
            m.status,
            stderr.lines().last().unwrap_or("")
        );
    };
    let status = result.get("status").and_then(Value::as_str).unwrap_or("?");
    let exit = result.get("exit_code").and_then(Value::as_i64);
    let mut check = format!(
        "{status}, exit {}",
        exit.map_or_else(|| "–".to_owned(), |c| c.to_string())
    );
    if let Some(t) = result.get("truncation").filter(|t| !t.is_null()) {
        let total = ["total_bytes", "bytes", "total"]
            .iter()
            .find_map(|k| t.get(*k).and_then(Value::as_u64));
        match total {
            Some(total) if total == bytes => check.push_str(", all bytes counted"),
            Some(total) => {
                let _ = write!(check, ", COUNTED {total} of {bytes} bytes");
            }
            None => {}
        }
    }
    match result.get("artifact").and_then(Value::as_str) {
        Some(artifact) => {
            let _ = write!(check, ", spilled to {artifact}");
        }
        None => check.push_str(", no artifact"),
    }
    let output_len = result.get("output").and_then(Value::as_str).map_or(0, str::len);
    let _ = write!(check, ", {output_len} B shown");
    check
}

fn check_reader(m: &Measured, bytes: u64) -> String {
    let parsed: Option<Value> = serde_json::from_slice(&m.stdout).ok();
    let got = parsed
        .as_ref()
        .and_then(|v| v.get("bytes"))
        .and_then(Value::as_u64);
    let lines = parsed
        .as_ref()
        .and_then(|v| v.get("lines"))
        .and_then(Value::as_u64);
    match (got, lines) {
        (Some(b), Some(l)) if b == bytes && l == bytes / 80 => format!("read {b} B, {l} lines"),
        _ => format!(
            "FAILED: read {got:?} B / {lines:?} lines of {bytes} ({})",
            m.status
        ),
    }
}
