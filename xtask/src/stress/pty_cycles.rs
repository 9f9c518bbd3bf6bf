//! 10 000 PTY open/close cycles through one `shellgate rpc` (`bash` with `pty: true`): no descriptor,
//! process or memory may leak.

use std::fmt::Write as _;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Check, Env};
use crate::procs;
use crate::rpc::{self, RpcClient};

const CYCLES: usize = 10_000;
/// Requests kept in flight, so the run takes seconds rather than minutes on two cores.
const IN_FLIGHT: usize = 4;

/// Run the check.
pub fn run(env: &Env) -> Vec<Check> {
    let name = "10000 PTY open/close cycles";
    vec![one(env, name).unwrap_or_else(|e| Check::error(name, &e))]
}

fn one(env: &Env, name: &str) -> anyhow::Result<Check> {
    let dir = env.fresh_dir("pty")?;
    let mut client = RpcClient::spawn(&env.shellgate, |c| super::isolate(c, &dir))?;
    if !crate::bench::pty_works(&mut client)? {
        return Ok(Check::skipped(
            name,
            "PTY execution not available yet (`tty` under `pty: true` is not a terminal)",
        ));
    }
    let pid = client.pid();
    let (fds_before, rss_before) = (
        procs::fd_count(pid).unwrap_or(0),
        procs::rss_kib(pid).unwrap_or(0),
    );
    let pts_before = pts_count();
    let params = json!({"command": "true", "pty": true});
    let start = Instant::now();
    let mut in_flight = std::collections::VecDeque::new();
    let mut bad = 0usize;
    let mut first_bad = String::new();
    for i in 0..CYCLES + IN_FLIGHT {
        if i < CYCLES {
            in_flight.push_back(client.send("bash", &params)?);
        }
        if in_flight.len() >= IN_FLIGHT || i >= CYCLES {
            let Some(id) = in_flight.pop_front() else { break };
            let response = client.wait(id, Duration::from_secs(60))?;
            let ok =
                rpc::result(&response).is_ok_and(|r| r.get("exit_code").and_then(Value::as_i64) == Some(0));
            if !ok {
                bad += 1;
                if first_bad.is_empty() {
                    first_bad = response.to_string().chars().take(200).collect();
                }
            }
        }
    }
    let elapsed = start.elapsed();
    std::thread::sleep(Duration::from_millis(300));
    let (fds_after, rss_after) = (
        procs::fd_count(pid).unwrap_or(0),
        procs::rss_kib(pid).unwrap_or(0),
    );
    let leftovers = procs::children(pid);
    let pts_after = pts_count();
    client.close(Duration::from_secs(30))?;
    let rss_growth = rss_after.saturating_sub(rss_before);
    let ok = bad == 0
        && fds_after <= fds_before + 8
        && leftovers.is_empty()
        && rss_growth < 32 * 1024
        && pts_after <= pts_before + 2;
    let mut detail = format!(
        "{}/{CYCLES} ok in {:.1} s, fds {fds_before} → {fds_after}, RSS +{} KiB, /dev/pts {pts_before} → {pts_after}, {} children left",
        CYCLES - bad,
        elapsed.as_secs_f64(),
        rss_growth,
        leftovers.len()
    );
    if !first_bad.is_empty() {
        let _ = write!(detail, "; first failure: {first_bad}");
    }
    Ok(Check::of(name, ok, detail))
}

fn pts_count() -> usize {
    std::fs::read_dir("/dev/pts").map_or(0, |d| {
        d.filter_map(Result::ok)
            .filter(|e| e.file_name() != "ptmx")
            .count()
    })
}
