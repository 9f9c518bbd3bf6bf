//! 1000 concurrent short commands through one `shellgate rpc`: every answer right, nothing left behind.

use std::fmt::Write as _;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Check, Env};
use crate::procs;
use crate::rpc::{self, RpcClient};

const COUNT: usize = 1000;

/// Run the check.
pub fn run(env: &Env) -> Vec<Check> {
    let name = "1000 concurrent commands (one rpc server)";
    vec![one(env, name).unwrap_or_else(|e| Check::error(name, &e))]
}

fn one(env: &Env, name: &str) -> anyhow::Result<Check> {
    let dir = env.fresh_dir("concurrent")?;
    let mut client = RpcClient::spawn(&env.shellgate, |c| super::isolate(c, &dir))?;
    let warm = client.call("bash", &json!({"command": "true"}), Duration::from_secs(30))?;
    rpc::result(&warm)?;
    let fds_before = procs::fd_count(client.pid()).unwrap_or(0);
    // Children alive before the burst (a persistent session shell, say) are the server's own business.
    let before = procs::children(client.pid());
    let start = Instant::now();
    let ids: Vec<u64> = (0..COUNT)
        .map(|i| {
            client.send(
                "bash",
                &json!({"command": format!("echo c-{i}"), "session": "none"}),
            )
        })
        .collect::<anyhow::Result<_>>()?;
    let mut wrong = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        let response = client.wait(id, Duration::from_secs(120))?;
        let ok = rpc::result(&response).is_ok_and(|r| {
            r.get("exit_code").and_then(Value::as_i64) == Some(0)
                && r.get("output").and_then(Value::as_str) == Some(format!("c-{i}\n").as_str())
        });
        if !ok && wrong.len() < 3 {
            wrong.push(response.to_string().chars().take(200).collect::<String>());
        } else if !ok {
            wrong.push(String::new());
        }
    }
    let elapsed = start.elapsed();
    // Give the last reaps a moment, then nothing of the commands may remain.
    let new_children = |pid| -> Vec<u32> {
        procs::children(pid)
            .into_iter()
            .filter(|c| !before.contains(c))
            .collect()
    };
    let mut leftovers = new_children(client.pid());
    for _ in 0..40 {
        if leftovers.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        leftovers = new_children(client.pid());
    }
    let fds_after = procs::fd_count(client.pid()).unwrap_or(0);
    let peak = procs::peak_rss_kib(client.pid());
    client.close(Duration::from_secs(30))?;
    let ok = wrong.is_empty() && leftovers.is_empty() && fds_after <= fds_before + 8;
    let mut detail = format!(
        "{}/{COUNT} right in {:.2} s, {} child processes left, fds {fds_before} → {fds_after}, peak RSS {}",
        COUNT - wrong.len(),
        elapsed.as_secs_f64(),
        leftovers.len(),
        crate::report::kib(peak)
    );
    if let Some(first) = wrong.first() {
        let _ = write!(detail, "; first wrong answer: {first}");
    }
    Ok(Check::of(name, ok, detail))
}
