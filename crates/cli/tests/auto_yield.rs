//! J-1 through the binary: a `shellgate rpc` call still running after `auto_yield_ms` answers
//! `running` and goes on as a job; `shellgate run` waits to the end.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("shellgate.toml");
    std::fs::write(&path, "auto_yield_ms = 1500\n").unwrap();
    path
}

#[test]
fn an_rpc_call_goes_on_as_a_job_after_the_auto_yield() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
        .args(["rpc", "--config"])
        .arg(config(dir.path()))
        .env("SHELLGATE_ARTIFACT_DIR", dir.path().join("artifacts"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |id: u64, method: &str, params: Value| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(stdin, "{request}").unwrap();
    };
    let mut answer = |id: u64| loop {
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if v["id"] == id {
            return v["result"].clone();
        }
    };
    send(
        1,
        "bash",
        json!({"command": "echo first; sleep 4; echo second", "session": "none"}),
    );
    let r = answer(1);
    // Running: the answer came at the yield, before the end.
    assert_eq!(r["status"], "running", "{r}");
    assert_eq!(r["output"], "first\n");
    let job = r["job_id"].as_str().unwrap().to_owned();
    send(
        2,
        "process",
        json!({"action": "poll", "job_id": job, "wait_ms": 5000}),
    );
    let mut seen = answer(2);
    if seen["status"] == "running" {
        send(
            3,
            "process",
            json!({"action": "poll", "job_id": job, "wait_ms": 5000}),
        );
        let more = answer(3);
        seen["output"] = json!(format!(
            "{}{}",
            seen["output"].as_str().unwrap_or(""),
            more["output"].as_str().unwrap_or("")
        ));
        seen["status"] = more["status"].clone();
    }
    assert_eq!(seen["output"], "second\n", "{seen}");
    assert_eq!(seen["status"], "completed");
    drop(stdin);
    let _ = child.wait();
}

#[test]
fn shellgate_run_waits_to_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_shellgate"))
        .args(["run", "--json", "--config"])
        .arg(config(dir.path()))
        .args(["--", "sleep 2; echo done"])
        .env("SHELLGATE_ARTIFACT_DIR", dir.path().join("artifacts"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["status"].clone(), v["output"].clone()),
        (json!("completed"), json!("done\n"))
    );
}
