//! Background jobs through `shellgate rpc`: `bash` with `background`, the `process` method and
//! `job_exited` notifications.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::processes_with;

/// A running `shellgate rpc` with a reader thread.
struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    notifications: Vec<Value>,
}

impl Rpc {
    fn start() -> Self {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
            .arg("rpc")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line).expect("every line is JSON");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 0,
            notifications: Vec::new(),
        }
    }

    fn call(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        loop {
            let message = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .expect("response in time");
            if message.get("id") == Some(&json!(id)) {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
            self.notifications.push(message);
        }
    }

    fn background(&mut self, command: &str) -> String {
        let r = self.call("bash", &json!({"command": command, "background": true}));
        assert_eq!(r["status"], "running", "{r}");
        r["job_id"].as_str().unwrap().to_owned()
    }

    fn process(&mut self, action: &str, job_id: &str, extra: &Value) -> Value {
        let mut params = json!({"action": action, "job_id": job_id});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        self.call("process", &params)
    }

    /// Wait for notifications (bounded) and return those seen so far.
    fn drain_notifications(&mut self, wait: Duration) -> Vec<Value> {
        let end = Instant::now() + wait;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(message) => self.notifications.push(message),
                Err(_) => break,
            }
        }
        self.notifications.clone()
    }

    fn close(mut self) {
        drop(self.stdin.take());
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            if self.child.try_wait().unwrap().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        panic!("shellgate rpc did not exit after EOF");
    }
}

fn gone(marker: &str) -> bool {
    for _ in 0..250 {
        if processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn have(program: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()));
    if !found {
        assert!(
            std::env::var_os("SHELLGATE_REQUIRE_ALL").is_none_or(|v| v != "1"),
            "SHELLGATE_REQUIRE_ALL=1 but {program} is not installed"
        );
        eprintln!("skipped: {program} is not installed");
    }
    found
}

#[test]
fn python_job_is_polled_then_killed_without_survivors() {
    if !have("python3") {
        return;
    }
    let mut rpc = Rpc::start();
    let id = rpc.background("python3 -c 'import time;print(\"ready\", flush=True);time.sleep(1000.4321)'");
    let mut seen = String::new();
    for _ in 0..10 {
        let r = rpc.process("poll", &id, &json!({"wait_ms": 5000}));
        seen.push_str(r["output"].as_str().unwrap());
        // The interpreter may write the text and its newline separately; poll returns at the first.
        if seen.contains("ready\n") {
            break;
        }
    }
    assert_eq!(seen, "ready\n");
    assert!(!processes_with("time.sleep(1000.4321)").is_empty());
    let r = rpc.process("kill", &id, &json!({}));
    assert_eq!(r["status"], "killed", "{r}");
    assert!(gone("time.sleep(1000.4321)"), "the job survived kill");
    rpc.close();
}

#[test]
fn exit_status_and_output_are_reported_idempotently() {
    let mut rpc = Rpc::start();
    let id = rpc.background("sleep 0.5; echo x; exit 3");
    // Wait for the end through `list`, which leaves the output to the polls.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let list = rpc.call("process", &json!({"action": "list"}));
        let job = &list["jobs"][0];
        assert_eq!(job["job_id"], id.as_str(), "{list}");
        if job["status"] != "running" || std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let first = rpc.process("poll", &id, &json!({}));
    assert_eq!(first["status"], "completed", "{first}");
    assert_eq!(first["exit_code"], 3);
    assert_eq!(first["output"], "x\n");
    assert!(
        first["text"].as_str().unwrap().contains("Job exited with code 3"),
        "{first}"
    );
    let again = rpc.process("poll", &id, &json!({}));
    assert_eq!(again["status"], "completed");
    assert_eq!(again["exit_code"], 3);
    assert_eq!(again["output"], "");
    assert_eq!(again["cursor"], first["cursor"]);
    rpc.close();
}

#[test]
fn a_waiting_poll_returns_when_output_arrives() {
    let mut rpc = Rpc::start();
    let id = rpc.background("sleep 1; echo later; sleep 29.753");
    let start = Instant::now();
    let r = rpc.process("poll", &id, &json!({"wait_ms": 60000}));
    let waited = start.elapsed();
    eprintln!("poll with wait_ms=60000 returned after {waited:?}");
    assert_eq!(r["output"], "later\n");
    assert_eq!(r["status"], "running");
    // Woken by the output, far before its deadline.
    assert!(waited < Duration::from_secs(30), "{waited:?}");
    rpc.process("kill", &id, &json!({}));
    assert!(gone("sleep 29.753"));
    rpc.close();
}

#[test]
fn write_feeds_a_pipe_job_reading_stdin() {
    let mut rpc = Rpc::start();
    let id = rpc.background("read line; echo \"got $line\"");
    let w = rpc.process("write", &id, &json!({"data": "a line\n"}));
    assert_eq!(w["is_error"], false, "{w}");
    let mut seen = String::new();
    for _ in 0..10 {
        let r = rpc.process("poll", &id, &json!({"wait_ms": 5000}));
        seen.push_str(r["output"].as_str().unwrap());
        if r["status"] != "running" {
            assert_eq!(r["exit_code"], 0);
            break;
        }
    }
    assert_eq!(seen, "got a line\n");
    rpc.close();
}

#[test]
fn exits_are_notified_once_and_not_for_jobs_a_waiting_poll_reported() {
    let mut rpc = Rpc::start();
    let unwatched = rpc.background("echo done here; exit 7");
    let watched = rpc.background("sleep 0.5; exit 0");
    let r = rpc.process("poll", &watched, &json!({"wait_ms": 20000}));
    assert_eq!(r["status"], "completed", "{r}");
    let notes = rpc.drain_notifications(Duration::from_millis(1500));
    let exits: Vec<&Value> = notes.iter().filter(|n| n["method"] == "job_exited").collect();
    assert_eq!(exits.len(), 1, "{notes:?}");
    let event = exits[0];
    assert!(event.get("id").is_none());
    assert_eq!(event["params"]["job_id"], unwatched.as_str());
    assert_eq!(
        event["params"]["message"],
        format!("Job {unwatched} failed (code 7) :: done here")
    );
    rpc.close();
}

#[test]
fn process_errors_are_results_and_bad_params_are_rpc_errors() {
    let mut rpc = Rpc::start();
    let r = rpc.process("poll", "no-such-job", &json!({}));
    assert_eq!(r["is_error"], true);
    let list = rpc.call("process", &json!({"action": "list"}));
    assert_eq!(list["jobs"], json!([]));
    assert!(
        list["text"]
            .as_str()
            .unwrap()
            .contains("No running or recent jobs")
    );
    // An unknown action is malformed input: a JSON-RPC error.
    let stdin = rpc.stdin.as_mut().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":"bad","method":"process","params":{{"action":"explode"}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let reply = rpc.lines.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(reply["id"], "bad");
    assert_eq!(reply["error"]["code"], -32602);
    rpc.close();
}

#[test]
fn end_of_input_kills_every_job_tree() {
    let mut rpc = Rpc::start();
    rpc.background("sleep 25.8147 & sleep 25.8147; wait");
    rpc.background("sleep 25.8147");
    // A background job answers before its command has necessarily started.
    common::wait_for_argument("25.8147");
    assert!(!processes_with("sleep 25.8147").is_empty());
    rpc.close();
    assert!(gone("sleep 25.8147"), "jobs survived the server");
}

#[test]
fn many_concurrent_jobs_account_for_every_line() {
    // The 200-job run lives in `cargo xtask stress --only jobs`; this is its small twin.
    const JOBS: usize = 20;
    const LINES: usize = 10_000;
    let mut rpc = Rpc::start();
    let ids: Vec<String> = (0..JOBS)
        .map(|j| {
            rpc.background(&format!(
                "for i in $(seq 1 {LINES}); do echo \"job{j} line $i\"; done"
            ))
        })
        .collect();
    for (j, id) in ids.iter().enumerate() {
        let mut last = Value::Null;
        for _ in 0..200 {
            last = rpc.process("poll", id, &json!({"wait_ms": 10000}));
            if last["status"] != "running" {
                break;
            }
        }
        assert_eq!(last["status"], "completed", "{last}");
        assert_eq!(last["exit_code"], 0);
        assert_eq!(last["total_lines"], LINES as u64);
        let log = rpc.process("log", id, &json!({"offset": 0, "limit": LINES}));
        let text = log["output"].as_str().unwrap();
        let mut count = 0;
        for (i, line) in text.lines().enumerate() {
            assert_eq!(line, format!("job{j} line {}", i + 1));
            count += 1;
        }
        assert_eq!(count, LINES);
    }
    rpc.close();
}

#[test]
fn a_lifted_head_in_the_default_session_ends_its_producer_and_the_session_goes_on() {
    let mut rpc = Rpc::start();
    let r = rpc.call("bash", &json!({"command": "export KEPT=1; cd /tmp"}));
    assert_eq!(r["exit_code"], 0, "{r}");
    let started = Instant::now();
    let r = rpc.call("bash", &json!({"command": "yes | cat | head -n 3"}));
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        (r["exit_code"].clone(), r["output"].clone()),
        (json!(0), json!("y\ny\ny\n")),
        "{r}"
    );
    assert_eq!(r["pipeline_status"], json!([141, 141, 0]));
    let r = rpc.call(
        "bash",
        &json!({"command": "while :; do echo 1; done | head -n 2"}),
    );
    assert_eq!(r["pipeline_status"], json!([141, 0]), "{r}");
    let r = rpc.call("bash", &json!({"command": "echo $KEPT $PWD"}));
    assert_eq!(r["output"], "1 /tmp\n", "{r}");
    assert!(!r["notices"].to_string().contains("restarted"), "{r}");
    rpc.close();
}

#[test]
fn a_poll_after_input_to_a_pty_repl_returns_its_answer_and_says_it_settled() {
    if !have("python3") || !shellgate_pty_usable() {
        return;
    }
    let mut rpc = Rpc::start();
    let r = rpc.call(
        "bash",
        &json!({"command": "python3 -q -i", "background": true, "pty": true}),
    );
    let id = r["job_id"].as_str().unwrap().to_owned();
    let mut seen = String::new();
    for _ in 0..100 {
        let r = rpc.process("poll", &id, &json!({"wait_ms": 500}));
        seen.push_str(r["output"].as_str().unwrap_or(""));
        if seen.trim_end().ends_with(">>>") && r["waiting_for_input"] == true {
            break;
        }
    }
    assert!(seen.trim_end().ends_with(">>>"), "{seen:?}");
    let w = rpc.process("write", &id, &json!({"data": "6*7\n"}));
    assert_eq!(w["is_error"], false, "{w}");
    assert!(
        w.get("settled").is_none(),
        "a write without wait_ms does not wait: {w}"
    );
    let r = rpc.process("poll", &id, &json!({"wait_ms": 20000}));
    let answered = r["output"]
        .as_str()
        .unwrap()
        .lines()
        .any(|l| l.trim_end() == "42");
    assert!(answered, "{r}");
    assert_eq!(r["settled"], "waiting_for_input", "{r}");
    let r = rpc.process("submit", &id, &json!({"data": "exit()", "wait_ms": 20000}));
    assert_eq!(r["settled"], "exited", "{r}");
    rpc.close();
}

/// Whether a pseudo-terminal can be opened here (a skip is a failure with SHELLGATE_REQUIRE_ALL=1).
fn shellgate_pty_usable() -> bool {
    let usable = std::path::Path::new("/dev/ptmx").exists();
    assert!(
        usable || std::env::var_os("SHELLGATE_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "SHELLGATE_REQUIRE_ALL=1 but no pseudo-terminal is available"
    );
    usable
}

/// Both cores busy while it lives: `stress-ng --cpu N`, or `sh` busy loops without it, each in a
/// process group of its own, killed as a whole on drop.
struct Load(Vec<Child>);

impl Load {
    fn start() -> Self {
        use std::os::unix::process::CommandExt as _;
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        let stress = Command::new("stress-ng")
            .args(["--cpu", &cores.to_string(), "--timeout", "600s", "--quiet"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        if let Ok(child) = stress {
            return Self(vec![child]);
        }
        // Without stress-ng (CI installs it) the load is the same busy loops.
        eprintln!("stress-ng is not installed: busy loops load the cores instead");
        Self(
            (0..cores)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .process_group(0)
                        .spawn()
                        .expect("a busy loop")
                })
                .collect(),
        )
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = Command::new("kill")
                .args(["-9", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
        }
    }
}

#[test]
fn the_python_repl_answers_in_the_same_poll_every_round_under_load() {
    if !have("python3") || !shellgate_pty_usable() {
        return;
    }
    let _load = Load::start();
    let mut rpc = Rpc::start();
    // The sequence a new user tries: a REPL as a terminal job, a write, a poll of 3 s.
    let r = rpc.call(
        "bash",
        &json!({"command": "python3 -q -i", "background": true, "pty": true}),
    );
    let id = r["job_id"].as_str().unwrap().to_owned();
    let mut seen = String::new();
    for _ in 0..100 {
        let r = rpc.process("poll", &id, &json!({"wait_ms": 500}));
        seen.push_str(r["output"].as_str().unwrap_or(""));
        if seen.trim_end().ends_with(">>>") && r["waiting_for_input"] == true {
            break;
        }
    }
    assert!(seen.trim_end().ends_with(">>>"), "{seen:?}");
    for round in 0..50 {
        let w = rpc.process("write", &id, &json!({"data": "6*7\n"}));
        assert_eq!(w["is_error"], false, "round {round}: {w}");
        let r = rpc.process("poll", &id, &json!({"wait_ms": 3000}));
        let answered = r["output"]
            .as_str()
            .unwrap_or("")
            .lines()
            .any(|l| l.trim_end().trim_start_matches(">>> ") == "42");
        assert!(answered, "round {round}: {r}");
        assert_eq!(r["settled"], "waiting_for_input", "round {round}: {r}");
    }
    rpc.close();
}
