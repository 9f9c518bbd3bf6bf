//! Sandbox overhead through the tool: `true` as a one-shot `bash` call through one `shellgate rpc`,
//! unsandboxed and with `sandbox: "workspace-write"` (the helper, Landlock, seccomp and the denial
//! collector), taking turns so that load from elsewhere hits both.

use std::time::Duration;

use serde_json::json;

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

const RUNS: usize = 200;
const WARMUP: usize = 10;
const IO_RUNS: usize = 15;
const TIMEOUT: Duration = Duration::from_secs(30);

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let mut section = Section::new(
        "sandbox",
        "Sandbox overhead through the tool",
        format!(
            "`true` as a `bash` call with `session: \"none\"` through one `shellgate rpc`, {RUNS} times \
             each, alternating unsandboxed and `sandbox: \"workspace-write\"` (the `sandbox-exec` helper, \
             Landlock, seccomp, and the denial collector when the kernel's audit records are readable). \
             Time = request written → response read."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    let work = ctx.work.clone();
    // A workspace like a real one: with a `.git`, which the sandbox keeps read-only.
    let _ = std::fs::create_dir_all(work.join(".git"));
    let mut client = match RpcClient::spawn(&binary, |c| {
        c.current_dir(&work);
    }) {
        Ok(c) => c,
        Err(e) => {
            section.note(format!("shellgate failed to start: {e:#}"));
            return section;
        }
    };
    let plain = json!({"command": "true", "session": "none"});
    let boxed = json!({"command": "true", "session": "none", "sandbox": "workspace-write"});
    match client
        .call("bash", &boxed, TIMEOUT)
        .map(|r| rpc::result(&r).map(|v| v["status"].clone()).ok())
    {
        Ok(Some(status)) if status == "completed" => {}
        other => {
            section.note(format!(
                "skipped: a sandboxed call did not complete here ({other:?})"
            ));
            return section;
        }
    }
    let (mut plain_us, mut boxed_us) = (Vec::new(), Vec::new());
    for i in 0..WARMUP + RUNS {
        for (params, samples) in [(&plain, &mut plain_us), (&boxed, &mut boxed_us)] {
            match client.call_timed("bash", params, TIMEOUT) {
                Ok((_, took)) if i >= WARMUP => samples.push(took.as_secs_f64() * 1e6),
                Ok(_) => {}
                Err(e) => {
                    section.note(format!("a call failed: {e:#}"));
                    return section;
                }
            }
        }
    }
    let (Some(p), Some(b)) = (Summary::of(&plain_us), Summary::of(&boxed_us)) else {
        return section;
    };
    let ratio = ctx.ratio(
        "sandbox",
        "true, sandboxed vs unsandboxed (median)",
        ("workspace-write", b.median),
        ("unsandboxed", p.median),
    );
    let mut table = Table::with_columns(&["subject", "p50", "p99", "÷ unsandboxed"]);
    table.push(vec![
        "unsandboxed".into(),
        micros(p.median),
        micros(p.p99),
        "×1.00".into(),
    ]);
    table.push(vec![
        "sandbox: workspace-write".into(),
        micros(b.median),
        micros(b.p99),
        ratio_cell(ratio),
    ]);
    section.note(format!("median overhead: {}", micros(b.median - p.median)));
    // Heavy commands: 64 MiB written and read back in the workspace (few, large calls), and 1000
    // files created and removed (each a write call the denial supervisor is handed, since the
    // workspace has a `.git`).
    let workloads = [
        (
            "64 MiB write + read",
            "dd if=/dev/zero of=sg-io bs=1M count=64 status=none && cat sg-io >/dev/null && rm sg-io",
        ),
        (
            "1000 files created + removed",
            "mkdir -p sg-many && cd sg-many && for i in $(seq 1000); do : > f$i; done && cd .. && rm -r sg-many",
        ),
    ];
    let mut heavy = Vec::new();
    for (label, command) in workloads {
        let plain = json!({"command": command, "session": "none"});
        let boxed = json!({"command": command, "session": "none", "sandbox": "workspace-write"});
        let (mut p_us, mut b_us) = (Vec::new(), Vec::new());
        for _ in 0..IO_RUNS {
            for (params, samples) in [(&plain, &mut p_us), (&boxed, &mut b_us)] {
                if let Ok((_, took)) = client.call_timed("bash", params, TIMEOUT) {
                    samples.push(took.as_secs_f64() * 1e6);
                }
            }
        }
        if let (Some(ip), Some(ib)) = (Summary::of(&p_us), Summary::of(&b_us)) {
            let r = ctx.ratio(
                "sandbox",
                &format!("{label}, sandboxed vs unsandboxed (median)"),
                ("workspace-write", ib.median),
                ("unsandboxed", ip.median),
            );
            table.push(vec![
                format!("{label}, unsandboxed"),
                micros(ip.median),
                micros(ip.p99),
                "×1.00".into(),
            ]);
            table.push(vec![
                format!("{label}, workspace-write"),
                micros(ib.median),
                micros(ib.p99),
                ratio_cell(r),
            ]);
            heavy.push(json!({"workload": label, "unsandboxed_us": ip, "sandboxed_us": ib}));
        }
    }
    section.table = table;
    section.data = json!({"runs": RUNS, "unsandboxed_us": p, "sandboxed_us": b, "heavy": heavy});
    section
}
