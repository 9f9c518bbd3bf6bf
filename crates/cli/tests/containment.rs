//! Processes that try to outlive their run — a new session, an empty environment, a double fork —
//! are found and stopped at its end, and when the engine itself is killed.

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A command that leaves three processes behind, each shedding what ties it to the run: its
/// session (`setsid`), its environment (`env -i`, `execve` with none) and its parent (a double
/// fork), and its output (redirected). Each is a `sleep` of `seconds`.
fn escape(seconds: &str) -> String {
    format!(
        "setsid -f env -i sleep {seconds} >/dev/null 2>&1 </dev/null; \
         python3 -c 'import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execve(\"/bin/sleep\", [\"sleep\", \"{seconds}\"], {{}})\n' \
         >/dev/null 2>&1 </dev/null; echo left"
    )
}

/// Live `sleep SECONDS` processes (the shells whose scripts merely mention them do not count).
fn survivors(seconds: &str) -> Vec<u32> {
    let wanted = format!("sleep\0{seconds}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
            (!zombie && cmdline.ends_with(wanted.as_bytes()) && cmdline.starts_with(b"sleep")).then_some(pid)
        })
        .collect()
}

fn gone(seconds: &str, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    while !survivors(seconds).is_empty() {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn escaped_processes_end_with_their_run_sandboxed_or_not() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let landlock = shellgate_sandbox::landlock_abi() >= 4;
    for (n, sandbox) in [(1, None), (2, Some("workspace-write"))] {
        if sandbox.is_some() && !landlock {
            continue;
        }
        let seconds = format!("{}.{n}7", 700 + std::process::id() % 100);
        let mut args = vec!["run", "--json"];
        if let Some(mode) = sandbox {
            args.extend(["--sandbox", mode]);
        }
        let script = escape(&seconds);
        args.push(&script);
        let output = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
            .args(&args)
            .current_dir(dir.path())
            .env("SHELLGATE_ARTIFACT_DIR", dir.path().join("artifacts"))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(v["output"].as_str().unwrap_or_default().contains("left"), "{v}");
        // Both escapes did start (the run stopped them, and says so).
        let notices = v["notices"].to_string();
        assert!(
            notices.contains("Stopped ") && notices.matches("sleep (pid").count() == 2,
            "{v}"
        );
        let remaining = survivors(&seconds);
        common::kill_all(&remaining);
        assert!(
            remaining.is_empty(),
            "{sandbox:?}: {remaining:?} outlived the run: {v}"
        );
        if is_root() {
            assert_eq!(v["process_tracking"], "cgroup", "{v}");
        }
    }
}

#[test]
fn escaped_processes_end_with_a_killed_engine() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let seconds = format!("{}.93", 700 + std::process::id() % 100);
    let mut server = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
        .arg("rpc")
        .current_dir(dir.path())
        .env("SHELLGATE_ARTIFACT_DIR", dir.path().join("artifacts"))
        .env("XDG_RUNTIME_DIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "bash",
        "params": {"command": format!("{}; sleep 60", escape(&seconds)), "background": true}});
    writeln!(stdin, "{request}").unwrap();
    let answer = lines.next().unwrap().unwrap();
    assert!(answer.contains("running"), "{answer}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while survivors(&seconds).len() < 2 {
        assert!(Instant::now() < deadline, "the escapes never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once the escapes have settled (the double fork done).
    std::thread::sleep(Duration::from_millis(300));
    server.kill().unwrap();
    server.wait().unwrap();
    let stopped = gone(&seconds, Duration::from_secs(5));
    let remaining = survivors(&seconds);
    common::kill_all(&remaining);
    assert!(stopped, "{remaining:?} outlived the engine");
}
