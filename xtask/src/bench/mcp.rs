//! MCP against JSON-RPC: `bash` `true` through `shellgate mcp` with the Python `mcp` SDK client and
//! with a plain asyncio JSON-lines client, each on the handshake era and on protocol 2026-07-28, and
//! through `shellgate rpc` with the same plain client.
//! The clients all run in one Python process (`crates/cli/tests/mcp/bench_roundtrip.py`), so both
//! protocols pay the same language, event-loop and pipe costs; the script reports medians and the
//! CPU per call of the client and of each server.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{Ctx, need_shellgate};
use crate::report::{Section, Table, micros, ratio_cell};

/// The clients the script measures, in the order of the table (the first is the yardstick).
const CLIENTS: [&str; 6] = [
    "json-rpc, asyncio lines",
    "mcp, asyncio lines",
    "mcp 2026-07-28, asyncio lines",
    "mcp, python sdk",
    "mcp 2026-07-28, python sdk",
    "json-rpc, blocking lines",
];

/// The Python of a venv with the `mcp` package: `$SHELLGATE_MCP_PYTHON`, else
/// `<target>/mcp-venv/bin/python` (where `.ci/run` makes it).
fn python(target: &Path) -> Result<PathBuf, String> {
    let python = std::env::var_os("SHELLGATE_MCP_PYTHON")
        .map_or_else(|| target.join("mcp-venv/bin/python"), PathBuf::from);
    let probe = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if probe.status.success() {
        Ok(python)
    } else {
        Err(format!("{} cannot import mcp", python.display()))
    }
}

/// Run the comparison.
pub fn run(ctx: &mut Ctx<'_>) -> Section {
    let calls = if ctx.options.quick { 500 } else { 1000 };
    let mut section = Section::new(
        "mcp",
        "MCP against JSON-RPC (round trip of `true`)",
        format!(
            "`bash {{command: \"true\"}}` {calls} times per client after 20 warm-up calls, the clients \
             taking turns in 10 rounds, each on its own long-lived server in one scratch directory: \
             `shellgate rpc` and `shellgate mcp` through one plain asyncio JSON-lines client \
             (`asyncio.create_subprocess_exec`, `write` + `drain`, `readline`), on the `initialize` \
             handshake and on protocol 2026-07-28 (`_meta` on every request), `shellgate mcp` \
             through the Python `mcp` SDK (`ClientSession` after `initialize`, and \
             `Client(mode=\"2026-07-28\")`), and `shellgate rpc` through blocking \
             `readline` (no event loop). All clients live in one Python process, so the SDK is \
             compared with a client that pays the same event loop, pipes and JSON in Python. CPU per \
             call: the Python process (`time.process_time`) and the server with its shell \
             (`/proc/<pid>/stat`, user + system)."
        ),
    );
    let Some(binary) = need_shellgate(ctx, &mut section) else {
        return section;
    };
    let python = match python(&ctx.meta.target_directory) {
        Ok(p) => p,
        Err(why) => {
            section.note(format!(
                "skipped: no Python with the mcp SDK ({why}); run .ci/run or set SHELLGATE_MCP_PYTHON"
            ));
            return section;
        }
    };
    let script = crate::workspace::root().join("crates/cli/tests/mcp/bench_roundtrip.py");
    let out = match Command::new(&python)
        .arg(&script)
        .arg(&binary)
        .arg(calls.to_string())
        .arg("--json")
        .current_dir(&ctx.work)
        .output()
    {
        Ok(out) => out,
        Err(e) => {
            section.note(format!("{} did not start: {e}", script.display()));
            return section;
        }
    };
    let parsed: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let Some(data) = parsed.filter(|_| out.status.success()) else {
        section.note(format!(
            "the round-trip script failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
        return section;
    };
    let median_us = |name: &str| data["clients"][name]["median_ms"].as_f64().map(|ms| ms * 1e3);
    let Some(yardstick) = median_us(CLIENTS[0]) else {
        section.note("the round-trip script printed no figures");
        return section;
    };
    let mut table = Table::with_columns(&[
        "client → server",
        "p50",
        "p99",
        "client CPU/call",
        "server CPU/call",
        "÷ json-rpc (asyncio)",
    ]);
    for name in CLIENTS {
        let figures = &data["clients"][name];
        let ms = |key: &str| {
            figures[key]
                .as_f64()
                .map_or_else(|| "–".to_owned(), |v| micros(v * 1e3))
        };
        let ratio = median_us(name).and_then(|m| {
            if name == CLIENTS[0] {
                Some(1.0)
            } else {
                ctx.ratio(
                    "mcp",
                    "true round trip (median)",
                    (name, m),
                    (CLIENTS[0], yardstick),
                )
            }
        });
        table.push(vec![
            name.to_owned(),
            ms("median_ms"),
            ms("p99_ms"),
            ms("client_cpu_ms"),
            ms("server_cpu_ms"),
            ratio_cell(ratio),
        ]);
    }
    if let Some(ratios) = data["ratios"].as_object() {
        for (label, value) in ratios {
            if let Some(v) = value.as_f64() {
                section.note(format!("{label}: {v:.2}"));
            }
        }
    }
    section.table = table;
    section.data = data;
    section
}
