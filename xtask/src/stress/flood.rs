//! Output floods through `shellgate run`: the engine's memory must stay bounded however much a command
//! prints, with or without newlines.

use serde_json::Value;

use super::{Check, Env};
use crate::measure;
use crate::report::kib;

/// The RSS ceiling for a flood (the default window keeps a few hundred KiB of text).
const RSS_LIMIT_KIB: u64 = 128 * 1024;

/// Run both floods.
pub fn run(env: &Env) -> Vec<Check> {
    let floods = [
        ("flood: yes for 3 s", "timeout 3 yes"),
        ("flood: /dev/zero (no newline) for 3 s", "timeout 3 cat /dev/zero"),
    ];
    floods
        .iter()
        .map(|(name, script)| one(env, name, script).unwrap_or_else(|e| Check::error(name, &e)))
        .collect()
}

fn one(env: &Env, name: &str, script: &str) -> anyhow::Result<Check> {
    let dir = env.fresh_dir("flood")?;
    let m = measure::run(
        &env.shellgate,
        &["run", "--json", "--timeout", "30", script],
        |c| super::isolate(c, &dir),
    )?;
    let result: Value = serde_json::from_slice(&m.stdout)
        .map_err(|e| anyhow::anyhow!("no JSON result ({}): {e}", m.status))?;
    let shown = result.get("output").and_then(Value::as_str).map_or(0, str::len);
    let status = result
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let rss_ok = m.peak_rss_kib.is_some_and(|k| k < RSS_LIMIT_KIB);
    let ok = rss_ok && status == "completed" && shown < 1 << 20;
    Ok(Check::of(
        name,
        ok,
        format!(
            "peak RSS {} (limit {}), {status}, {shown} B shown, {:.1} s",
            kib(m.peak_rss_kib),
            kib(Some(RSS_LIMIT_KIB)),
            m.wall.as_secs_f64()
        ),
    ))
}
