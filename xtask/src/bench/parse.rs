//! Parse + normalize + intercept cost per command, taken from the normalize and intercept crates'
//! criterion benches and set against the cost of spawning `bash -c true` measured in the same run.

use serde_json::json;

use super::Ctx;
use super::criterion::Estimate;
use crate::report::{Section, Table, micros, ratio_cell};

/// Build the section from this run's criterion estimates.
pub fn run(ctx: &mut Ctx<'_>, estimates: &[Estimate], spawn_true_us: Option<f64>) -> Section {
    let mut section = Section::new(
        "parse",
        "Parse + normalize + intercept per command",
        "Criterion medians of the `shellgate-normalize` and `shellgate-intercept` benches (this run), \
         divided by the median raw Rust spawn of `bash -c true` from the latency section: the share of a \
         bare process spawn that understanding and judging a command costs.",
    );
    let front: Vec<&Estimate> = estimates
        .iter()
        .filter(|e| e.package.ends_with("normalize") || e.package.ends_with("intercept"))
        .collect();
    if front.is_empty() {
        section.note(if ctx.options.wants("criterion") {
            "no normalize/intercept criterion estimates in this run (benches not there yet or failed)"
        } else {
            "needs the criterion section (run without --only, or with --only criterion,latency,parse)"
        });
    }
    if spawn_true_us.is_none() {
        section.note("no raw spawn baseline (the latency section did not run): ratios omitted");
    }
    let mut table = Table::with_columns(&["bench", "id", "median", "÷ raw spawn of bash -c true"]);
    for e in &front {
        let per_op_us = e.median_ns / 1e3;
        let r = spawn_true_us.and_then(|spawn| {
            ctx.ratio(
                "parse",
                &e.id,
                ("median", per_op_us),
                ("raw spawn bash -c true", spawn),
            )
        });
        table.push(vec![
            format!("{}/{}", e.package, e.bench),
            e.id.clone(),
            micros(per_op_us),
            ratio_cell(r),
        ]);
    }
    section.table = table;
    section.data = json!({"estimates": front, "spawn_true_us": spawn_true_us});
    section
}
