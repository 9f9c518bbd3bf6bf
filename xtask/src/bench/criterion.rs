//! Criterion benches of every workspace crate, discovered with `cargo metadata`; estimates are read from
//! each bench's own `CRITERION_HOME` so only this run's results are reported.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::Ctx;
use crate::report::{Section, Table, micros, ratio_cell};
use crate::workspace;

/// One criterion benchmark's result.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    /// Package that owns the bench.
    pub package: String,
    /// Bench target.
    pub bench: String,
    /// Criterion group.
    pub group: String,
    /// Criterion full id (`group/function/value`).
    pub id: String,
    /// Median time per iteration, ns.
    pub median_ns: f64,
    /// Mean time per iteration, ns.
    pub mean_ns: f64,
    /// Bytes or elements per iteration, when the bench declared a throughput.
    pub throughput: Option<(String, f64)>,
}

#[derive(Deserialize)]
struct Point {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct Estimates {
    mean: Point,
    median: Point,
}

#[derive(Deserialize)]
struct Benchmark {
    group_id: String,
    full_id: String,
    throughput: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Run every bench target briefly (`--quick`) or at the standard times.
pub fn run(ctx: &mut Ctx<'_>) -> (Section, Vec<Estimate>) {
    // Under --quick the sample count drops to criterion's minimum too: a few benches take a second per
    // iteration, and 100 samples of those alone would blow the time budget.
    let (warm, measure, samples) = if ctx.options.quick {
        ("0.5", "1", "10")
    } else {
        ("1", "3", "100")
    };
    let mut section = Section::new(
        "criterion",
        "Criterion benches",
        format!(
            "Every `[[bench]]` target of the workspace (`cargo bench -p PKG --bench NAME -- --warm-up-time {warm} \
             --measurement-time {measure} --sample-size {samples}`). Times are criterion's median per iteration. \
             Within a group, a function whose id contains `baseline`, or has a path segment starting with `raw` \
             or `memchr`, is the yardstick for the others."
        ),
    );
    let benches: Vec<(String, String)> = ctx
        .meta
        .targets("bench")
        .into_iter()
        .map(|(p, b)| (p.to_owned(), b.to_owned()))
        .collect();
    if benches.is_empty() {
        section.note("no crate has a criterion bench yet");
    }
    prebuild(&benches, &ctx.dir, &mut section);
    let mut all = Vec::new();
    for (package, bench) in &benches {
        let home = ctx.dir.join("criterion").join(package).join(bench);
        let _ = std::fs::remove_dir_all(&home);
        if let Err(e) = std::fs::create_dir_all(&home) {
            section.note(format!(
                "{package}/{bench}: cannot create {}: {e}",
                home.display()
            ));
            continue;
        }
        let log = home.join("bench.log");
        eprintln!(
            "xtask: cargo bench -p {package} --bench {bench} (log: {})",
            log.display()
        );
        let status = std::fs::File::create(&log).and_then(|file| {
            workspace::cargo()
                .args([
                    "bench",
                    "-p",
                    package,
                    "--bench",
                    bench,
                    "--",
                    "--warm-up-time",
                    warm,
                    "--measurement-time",
                    measure,
                    "--sample-size",
                    samples,
                ])
                .env("CRITERION_HOME", &home)
                .stdout(Stdio::from(file.try_clone()?))
                .stderr(Stdio::from(file))
                .status()
        });
        let found = collect(&home, package, bench);
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => section.note(format!(
                "{package}/{bench}: cargo bench failed ({s}); see {}",
                log.display()
            )),
            Err(e) => section.note(format!("{package}/{bench}: cannot run cargo bench: {e}")),
        }
        if found.is_empty() {
            section.note(format!("{package}/{bench}: no estimates produced"));
        }
        all.extend(found);
    }

    let mut table = Table::with_columns(&["bench", "id", "median", "mean", "throughput", "÷ group baseline"]);
    for e in &all {
        let baseline = all.iter().find(|b| {
            b.package == e.package && b.bench == e.bench && b.group == e.group && is_baseline(&b.id)
        });
        let ratio = baseline.filter(|b| b.id != e.id).and_then(|b| {
            ctx.ratio(
                "criterion",
                &e.id,
                ("median", e.median_ns),
                (b.id.as_str(), b.median_ns),
            )
        });
        table.push(vec![
            format!("{}/{}", e.package, e.bench),
            e.id.clone(),
            micros(e.median_ns / 1e3),
            micros(e.mean_ns / 1e3),
            e.throughput.as_ref().map_or_else(
                || "–".to_owned(),
                |(kind, per_iter)| rate(kind, *per_iter, e.median_ns),
            ),
            ratio_cell(ratio),
        ]);
    }
    section.table = table;
    section.data = json!({ "estimates": all });
    (section, all)
}

/// Whether a benchmark id names a yardstick: `…baseline…`, or a path segment starting with `raw` (a raw
/// spawn, a raw pipe) or `memchr` (the floor of any line scan).
/// Build every bench in one cargo invocation first (both cores busy, one dependency resolution); a
/// failure here is only noted, since each bench then reports its own.
fn prebuild(benches: &[(String, String)], dir: &Path, section: &mut Section) {
    let mut packages: Vec<&str> = benches.iter().map(|(p, _)| p.as_str()).collect();
    packages.dedup();
    if packages.is_empty() {
        return;
    }
    let log = dir.join("criterion").join("build.log");
    eprintln!(
        "xtask: building {} bench target(s) (log: {})",
        benches.len(),
        log.display()
    );
    let status = std::fs::create_dir_all(dir.join("criterion"))
        .and_then(|()| std::fs::File::create(&log))
        .and_then(|file| {
            let mut command = workspace::cargo();
            command.args(["bench", "--no-run", "--benches"]);
            for package in &packages {
                command.args(["-p", package]);
            }
            command
                .stdout(Stdio::from(file.try_clone()?))
                .stderr(Stdio::from(file))
                .status()
        });
    if !status.is_ok_and(|s| s.success()) {
        section.note(format!(
            "building all benches at once failed (see {}); trying each on its own",
            log.display()
        ));
    }
}

fn is_baseline(id: &str) -> bool {
    let id = id.to_ascii_lowercase();
    id.contains("baseline")
        || id
            .split('/')
            .any(|seg| seg.starts_with("raw") || seg.starts_with("memchr"))
}

fn rate(kind: &str, per_iter: f64, median_ns: f64) -> String {
    let per_sec = per_iter / (median_ns / 1e9);
    if kind.starts_with("Bytes") {
        format!("{:.2} GiB/s", per_sec / f64::from(1u32 << 30))
    } else {
        format!("{:.2} M{}/s", per_sec / 1e6, kind.to_ascii_lowercase())
    }
}

/// Read every `new/estimates.json` (with its `benchmark.json`) under `home`.
pub fn collect(home: &Path, package: &str, bench: &str) -> Vec<Estimate> {
    let mut found = Vec::new();
    for dir in new_dirs(home) {
        let Ok(estimates) = std::fs::read(dir.join("estimates.json")) else {
            continue;
        };
        let Ok(benchmark) = std::fs::read(dir.join("benchmark.json")) else {
            continue;
        };
        let (Ok(estimates), Ok(benchmark)) = (
            serde_json::from_slice::<Estimates>(&estimates),
            serde_json::from_slice::<Benchmark>(&benchmark),
        ) else {
            continue;
        };
        let throughput = benchmark.throughput.and_then(|map| {
            let (kind, value) = map.into_iter().next()?;
            Some((kind, value.as_f64()?))
        });
        found.push(Estimate {
            package: package.to_owned(),
            bench: bench.to_owned(),
            group: benchmark.group_id,
            id: benchmark.full_id,
            median_ns: estimates.median.point_estimate,
            mean_ns: estimates.mean.point_estimate,
            throughput,
        });
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    found
}

fn new_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    out.push(path);
                } else {
                    stack.push(path);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_read_from_criterion_layout() {
        let home = crate::measure::scratch_file("criterion-test");
        let new = home.join("window").join("push_64k").join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::create_dir_all(home.join("window").join("push_64k").join("base")).unwrap();
        std::fs::write(
            new.join("estimates.json"),
            r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1500.0,"standard_error":1.0},
                "median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":1200.0,"standard_error":1.0},
                "median_abs_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":3.0,"standard_error":1.0},
                "slope":null,"std_dev":{"confidence_interval":{"confidence_level":0.95,"lower_bound":1.0,"upper_bound":2.0},"point_estimate":3.0,"standard_error":1.0}}"#,
        )
        .unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            r#"{"group_id":"window","function_id":"push_64k","value_str":null,"throughput":{"Bytes":65536},
                "full_id":"window/push_64k","directory_name":"window/push_64k","title":"window/push_64k"}"#,
        )
        .unwrap();
        let found = collect(&home, "shellgate-sink", "throughput");
        std::fs::remove_dir_all(&home).unwrap();
        assert_eq!(found.len(), 1);
        let e = &found[0];
        assert_eq!((e.group.as_str(), e.id.as_str()), ("window", "window/push_64k"));
        assert!((e.median_ns - 1200.0).abs() < 1e-9 && (e.mean_ns - 1500.0).abs() < 1e-9);
        assert_eq!(e.throughput, Some(("Bytes".to_owned(), 65536.0)));
        assert_eq!(rate("Bytes", 65536.0, 1200.0), "50.86 GiB/s");
    }

    #[test]
    fn baselines_are_found_by_name() {
        assert!(is_baseline("window/Baseline memcpy"));
        assert!(is_baseline("true/raw/bash_c_true"));
        assert!(is_baseline("sink_256MiB/memchr_line_count"));
        assert!(!is_baseline("window/push"));
        assert!(!is_baseline("true/executor/draw"));
    }
}
