//! A bounded fork bomb (~2000 processes) under a 5 s timeout, unsandboxed and in the
//! `workspace-write` sandbox: the timeout must take down every process.
//!
//! RLIMIT_NPROC does not bind root, so the bomb limits itself: `f N` starts two copies of `f N-1` in the
//! background and sleeps, which makes 2^(N+1) − 2 shells plus as many sleeps. The bomb is a script
//! file, so the command the policy judges (`sh ./bomb.sh`) is an ordinary one: the policy's own
//! fork-bomb check is not what is tested here, the process tree's containment is — and a check
//! that sees fewer than [`MIN_PEAK`] processes fails, so the bomb cannot be switched off unnoticed.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Check, Env};
use crate::procs;

const DEPTH: u32 = 9;
const TIMEOUT_SECS: u32 = 5;
/// Fewer live processes than this at the peak means the bomb never really went off.
const MIN_PEAK: usize = 500;

/// Run the check.
pub fn run(env: &Env) -> Vec<Check> {
    [
        ("fork bomb killed by the timeout", None, 1),
        (
            "fork bomb in the sandbox killed by the timeout",
            Some("workspace-write"),
            2,
        ),
    ]
    .into_iter()
    .map(|(name, sandbox, n)| one(env, name, sandbox, n).unwrap_or_else(|e| Check::error(name, &e)))
    .collect()
}

fn one(env: &Env, name: &str, sandbox: Option<&str>, n: u32) -> anyhow::Result<Check> {
    let dir = env.fresh_dir(&format!("forkbomb-{n}"))?;
    // A unique sleep length marks every process of this bomb (the shells carry it in their script).
    let marker = format!("603.{}{n}", std::process::id());
    let script = format!(
        "f(){{ [ $1 -gt 0 ] && {{ f $(( $1 - 1 )) & f $(( $1 - 1 )) & }}; sleep {marker}; }}; f {DEPTH}\n"
    );
    std::fs::write(dir.join("bomb.sh"), script)?;
    let start = Instant::now();
    let mut args = vec!["run", "--json", "--timeout"];
    let timeout = TIMEOUT_SECS.to_string();
    args.push(&timeout);
    if let Some(mode) = sandbox {
        args.extend(["--sandbox", mode]);
    }
    args.push("sh ./bomb.sh");
    let mut child = Command::new(&env.shellgate)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .current_dir(&dir)
        .spawn()?;
    let engine = child.id();
    let mut peak = 0;
    while child.try_wait()?.is_none() {
        let live = procs::matching(&marker)
            .into_iter()
            .filter(|&p| p != engine)
            .count();
        peak = peak.max(live);
        if start.elapsed() > Duration::from_secs(u64::from(TIMEOUT_SECS) + 30) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = child.wait_with_output()?;
    let returned = start.elapsed();
    let survivors = procs::wait_gone(&marker, Duration::from_secs(3));
    procs::kill_all(&survivors);
    let status = serde_json::from_slice::<Value>(&output.stdout)
        .ok()
        .and_then(|v| v.get("status").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "no result".to_owned());
    let ok = survivors.is_empty() && peak >= MIN_PEAK && status == "timed_out";
    Ok(Check::of(
        name,
        ok,
        format!(
            "peak {peak} processes (need ≥ {MIN_PEAK}), status {status}, returned after {:.1} s, {} survived",
            returned.as_secs_f64(),
            survivors.len()
        ),
    ))
}
