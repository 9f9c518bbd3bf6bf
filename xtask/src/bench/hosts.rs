//! Remote hosts through the tool: `true` through one `shellgate rpc` in a local session, in a
//! persistent session on an ssh host (loopback sshd), as one-shot ssh runs over the shared
//! connection and over a new connection each, and through `docker exec` / `podman exec` — taking
//! turns so that load from elsewhere hits all alike. Needs the hosts of `.ci/hosts.sh up` (its
//! `hosts.env` variables); without them the section says so and is skipped.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};
use crate::rpc::{self, RpcClient};
use crate::stats::Summary;

const RUNS: usize = 100;
/// New ssh connections are slow; fewer of them.
const NEW_CONNECTION_RUNS: usize = 20;
const WARMUP: usize = 5;
const TIMEOUT: Duration = Duration::from_secs(60);

struct Subject {
    label: &'static str,
    params: Value,
    samples: Vec<f64>,
}

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let mut section = Section::new(
        "hosts",
        "Remote hosts through the tool",
        format!(
            "`true` as a `bash` call through one `shellgate rpc`, {RUNS} times each in turn: in the local \
             default session; in the persistent session on an ssh host (OpenSSH on loopback, one shared \
             connection); as one-shot ssh runs (`session: \"none\"`) through the shared connection; and in \
             Docker and Podman containers (session and one-shot). New ssh connections ({NEW_CONNECTION_RUNS} \
             runs) come from a second server with `[ssh] multiplex = false`. Time = request written → \
             response read."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let (Some(ssh_config), Some(dest)) = (var("SHELLGATE_TEST_SSH_CONFIG"), var("SHELLGATE_TEST_SSH_DEST"))
    else {
        section.note("skipped: no test hosts (run `.ci/hosts.sh up` and source target/ci-hosts/hosts.env)");
        return section;
    };
    let config = ctx.work.join("hosts-bench.toml");
    let plain_config = ctx.work.join("hosts-bench-no-mux.toml");
    let written =
        std::fs::write(&config, format!("[ssh]\nconfig_file = \"{ssh_config}\"\n")).and_then(|()| {
            std::fs::write(
                &plain_config,
                format!("[ssh]\nconfig_file = \"{ssh_config}\"\nmultiplex = false\n"),
            )
        });
    if let Err(e) = written {
        section.note(format!("cannot write the configuration: {e}"));
        return section;
    }
    let ssh = format!("ssh:{dest}");
    let mut subjects = vec![
        Subject {
            label: "local session",
            params: json!({"command": "true"}),
            samples: Vec::new(),
        },
        Subject {
            label: "ssh: remote session",
            params: json!({"command": "true", "host": ssh}),
            samples: Vec::new(),
        },
        Subject {
            label: "ssh: one-shot, shared connection",
            params: json!({"command": "true", "host": ssh, "session": "none"}),
            samples: Vec::new(),
        },
    ];
    for (engine, var_name) in [
        ("docker", "SHELLGATE_TEST_DOCKER"),
        ("podman", "SHELLGATE_TEST_PODMAN"),
    ] {
        if let Some(container) = var(var_name) {
            let host = format!("{engine}:{container}");
            subjects.push(Subject {
                label: if engine == "docker" {
                    "docker: session"
                } else {
                    "podman: session"
                },
                params: json!({"command": "true", "host": host}),
                samples: Vec::new(),
            });
            subjects.push(Subject {
                label: if engine == "docker" {
                    "docker: one-shot exec"
                } else {
                    "podman: one-shot exec"
                },
                params: json!({"command": "true", "host": host, "session": "none"}),
                samples: Vec::new(),
            });
        }
    }
    let work = ctx.work.clone();
    let spawn = |file: &std::path::Path| {
        RpcClient::spawn(&binary, |c| {
            c.current_dir(&work).arg("--config").arg(file);
        })
    };
    let (mut client, mut plain) = match (spawn(&config), spawn(&plain_config)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            section.note(format!("shellgate failed to start: {e:#}"));
            return section;
        }
    };
    for subject in &subjects {
        if let Err(note) = check(&mut client, &subject.params) {
            section.note(format!(
                "skipped: {} did not complete here ({note})",
                subject.label
            ));
            return section;
        }
    }
    for i in 0..WARMUP + RUNS {
        for subject in &mut subjects {
            match client.call_timed("bash", &subject.params, TIMEOUT) {
                Ok((_, took)) if i >= WARMUP => subject.samples.push(took.as_secs_f64() * 1e6),
                Ok(_) => {}
                Err(e) => {
                    section.note(format!("a call failed: {e:#}"));
                    return section;
                }
            }
        }
    }
    let new_connection = json!({"command": "true", "host": ssh, "session": "none"});
    let mut fresh = Vec::new();
    for _ in 0..NEW_CONNECTION_RUNS {
        match plain.call_timed("bash", &new_connection, TIMEOUT) {
            Ok((_, took)) => fresh.push(took.as_secs_f64() * 1e6),
            Err(e) => section.note(format!("a new-connection call failed: {e:#}")),
        }
    }
    let summaries: Vec<(&str, Summary)> = subjects
        .iter()
        .filter_map(|s| Summary::of(&s.samples).map(|sum| (s.label, sum)))
        .chain(Summary::of(&fresh).map(|s| ("ssh: one-shot, new connection", s)))
        .collect();
    let find = |label: &str| summaries.iter().find(|(l, _)| *l == label).map(|(_, s)| s.median);
    let local = find("local session");
    let mut table = Table::with_columns(&["subject", "p50", "p99", "÷ local session"]);
    for (label, summary) in &summaries {
        let ratio = local.and_then(|l| {
            let label_text = format!("{label} vs local session (median)");
            ctx.ratio(
                "hosts",
                &label_text,
                (label, summary.median),
                ("local session", l),
            )
        });
        table.push(vec![
            (*label).into(),
            micros(summary.median),
            micros(summary.p99),
            ratio_cell(ratio),
        ]);
    }
    if let (Some(mux), Some(new)) = (
        find("ssh: one-shot, shared connection"),
        find("ssh: one-shot, new connection"),
    ) {
        ctx.ratio(
            "hosts",
            "ssh one-shot: shared vs new connection (median)",
            ("shared connection", mux),
            ("new connection", new),
        );
    }
    if let (Some(remote), Some(l)) = (find("ssh: remote session"), local) {
        section.note(format!(
            "remote session over ssh: {} median against a bar of 2 × local + 1 ms = {}",
            micros(remote),
            micros(2.0 * l + 1000.0)
        ));
    }
    section.table = table;
    section.data = json!({
        "runs": RUNS,
        "subjects": summaries.iter().map(|(l, s)| json!({"subject": l, "us": s})).collect::<Vec<_>>(),
    });
    section
}

/// One call, which must complete.
fn check(client: &mut RpcClient, params: &Value) -> Result<(), String> {
    match client
        .call("bash", params, TIMEOUT)
        .map(|r| rpc::result(&r).cloned().ok())
    {
        Ok(Some(result)) if result["status"] == "completed" => Ok(()),
        other => Err(format!("{other:?}")),
    }
}
