//! Keystroke round trip through the whole tool: a PTY background job running `cat` in raw mode, one
//! byte sent with `process` `write` with `wait_ms`, which returns once the echo comes back.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::rpc::{self, RpcClient};

const TIMEOUT: Duration = Duration::from_secs(30);

/// Round-trip samples in microseconds (`keys` of them), or `None` when the server has no `process`
/// method yet.
pub fn round_trips(binary: &Path, work: &Path, keys: usize) -> anyhow::Result<Option<Vec<f64>>> {
    let mut client = RpcClient::spawn(binary, |c| {
        c.current_dir(work);
    })?;
    let probe = client.call("process", &json!({"action": "list"}), TIMEOUT)?;
    if rpc::error_code(&probe) == Some(rpc::METHOD_NOT_FOUND) {
        return Ok(None);
    }
    let started = client.call(
        "bash",
        &json!({"command": "stty raw -echo; echo ready; exec cat", "pty": true, "background": true,
                "session": "none", "timeout": 300}),
        TIMEOUT,
    )?;
    let job = rpc::result(&started)?
        .get("job_id")
        .and_then(Value::as_str)
        .context("no job id for the PTY job")?
        .to_owned();
    let outcome = measure(&mut client, &job, keys);
    let _ = client.call("process", &json!({"action": "remove", "job_id": job}), TIMEOUT);
    client.close(Duration::from_secs(10))?;
    outcome.map(Some)
}

fn measure(client: &mut RpcClient, job: &str, keys: usize) -> anyhow::Result<Vec<f64>> {
    wait_for(client, job, "ready")?;
    let mut samples = Vec::with_capacity(keys);
    for i in 0..keys {
        let key = char::from(b'a' + (i % 26) as u8).to_string();
        let start = Instant::now();
        // One call: the write waits for the echo (`wait_ms`), as an agent would use it.
        let written = client.call(
            "process",
            &json!({"action": "write", "job_id": job, "data": key, "wait_ms": 1000}),
            TIMEOUT,
        )?;
        let result = rpc::result(&written)?;
        if result.get("is_error").and_then(Value::as_bool) == Some(true) {
            bail!("write refused: {written}");
        }
        let echoed = result.get("output").and_then(Value::as_str).unwrap_or("");
        if !echoed.contains(key.as_str()) {
            wait_for(client, job, &key)?;
        }
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    Ok(samples)
}

/// Poll until `needle` shows up in the job's new output.
fn wait_for(client: &mut RpcClient, job: &str, needle: &str) -> anyhow::Result<()> {
    let deadline = Instant::now() + TIMEOUT;
    let mut seen = String::new();
    while Instant::now() < deadline {
        let polled = client.call(
            "process",
            &json!({"action": "poll", "job_id": job, "wait_ms": 1000}),
            TIMEOUT,
        )?;
        let result = rpc::result(&polled)?;
        seen.push_str(result.get("output").and_then(Value::as_str).unwrap_or(""));
        if seen.contains(needle) {
            return Ok(());
        }
        if result
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(|s| s != "running")
        {
            bail!("the PTY job ended: {result}");
        }
    }
    bail!("{needle:?} never came back (saw {seen:?})")
}
