//! Persistent sessions through `shellgate rpc`: state carried between calls, kept across `exit`, and
//! the `process` actions `sessions` / `close_session`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Rpc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Rpc {
    fn start() -> Self {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
            .arg("rpc")
            .current_dir(std::env::temp_dir())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
            next: 1,
        }
    }

    fn call(&mut self, method: &str, params: &Value) -> Value {
        let id = self.next;
        self.next += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "server closed");
            let reply: Value = serde_json::from_str(&line).unwrap();
            if reply["id"] == id {
                return reply["result"].clone();
            }
        }
    }

    fn bash(&mut self, command: &str) -> Value {
        self.call("bash", &json!({"command": command}))
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn state_carries_over_and_survives_exit() {
    let mut rpc = Rpc::start();
    let r = rpc.bash("cd /tmp && export V=1 && f(){ echo fn; } && alias a1='echo al'");
    assert_eq!(r["exit_code"], 0, "{r}");
    assert_eq!(r["cwd"], "/tmp");
    let r = rpc.bash("pwd; echo $V; f; a1");
    assert_eq!(r["output"], "/tmp\n1\nfn\nal\n", "{r}");
    let r = rpc.bash("exit 3");
    assert_eq!(r["exit_code"], 3);
    let r = rpc.bash("pwd; echo $V; f; a1");
    assert_eq!(r["output"], "/tmp\n1\nfn\nal\n", "{r}");
    assert!(
        !r["notices"].as_array().unwrap().is_empty(),
        "a respawn is reported: {r}"
    );
}

#[test]
fn sessions_are_listed_closed_and_independent() {
    let mut rpc = Rpc::start();
    rpc.call("bash", &json!({"command": "cd /usr && X=a", "session": "one"}));
    rpc.call("bash", &json!({"command": "cd /etc", "session": "two"}));
    let one = rpc.call(
        "bash",
        &json!({"command": "pwd; echo ${X:-unset}", "session": "one"}),
    );
    assert_eq!(one["output"], "/usr\na\n");
    let two = rpc.call(
        "bash",
        &json!({"command": "pwd; echo ${X:-unset}", "session": "two"}),
    );
    assert_eq!(two["output"], "/etc\nunset\n");
    let none = rpc.call("bash", &json!({"command": "echo ${X:-unset}", "session": "none"}));
    assert_eq!(none["output"], "unset\n");

    let listed = rpc.call("process", &json!({"action": "sessions"}));
    let names: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"one") && names.contains(&"two"), "{listed}");

    let closed = rpc.call("process", &json!({"action": "close_session", "session": "one"}));
    assert_eq!(closed["is_error"], false, "{closed}");
    let again = rpc.call("process", &json!({"action": "close_session", "session": "one"}));
    assert_eq!(again["is_error"], true);
    let fresh = rpc.call("bash", &json!({"command": "echo ${X:-unset}", "session": "one"}));
    assert_eq!(fresh["output"], "unset\n", "a closed session starts over");
}

/// Requests read from a file and responses written to one (no pipes: the server then reads and
/// writes through tokio's blocking handles) are all answered.
#[test]
fn requests_from_a_file_are_answered_into_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let requests = dir.path().join("requests.jsonl");
    let responses = dir.path().join("responses.jsonl");
    let lines: Vec<String> = ["echo one", "echo two"]
        .iter()
        .enumerate()
        .map(|(i, command)| {
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "bash",
                   "params": {"command": command, "session": "none"}})
            .to_string()
        })
        .collect();
    std::fs::write(&requests, lines.join("\n") + "\n").unwrap();
    let status = Command::new(assert_cmd::cargo::cargo_bin!("shellgate"))
        .arg("rpc")
        .current_dir(dir.path())
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(std::fs::File::create(&responses).unwrap())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&responses).unwrap();
    let answers: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|m| m.get("id").is_some())
        .collect();
    assert_eq!(answers.len(), 2, "{text}");
    for (id, want) in [(1, "one\n"), (2, "two\n")] {
        let answer = answers
            .iter()
            .find(|m| m["id"] == id)
            .expect("an answer per request");
        assert_eq!(answer["result"]["output"], want, "{answer}");
    }
}

/// The blocked-signal mask of thread `tid` of process `pid` (`SigBlk` in its status file).
fn blocked_signals(pid: u32, tid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigBlk:"))
        .unwrap()
        .trim();
    u64::from_str_radix(mask, 16).unwrap()
}

/// The end of a run signals the serving thread, never the main thread, which only waits for it.
#[test]
fn child_signals_go_to_the_serving_thread() {
    let mut rpc = Rpc::start();
    let result = rpc.call("bash", &json!({"command": "true", "session": "none"}));
    assert_eq!(result["exit_code"], 0, "{result}");
    let pid = rpc.child.id();
    let sigchld = 1u64 << (SIGCHLD - 1);
    assert_ne!(
        blocked_signals(pid, &pid.to_string()) & sigchld,
        0,
        "the main thread leaves SIGCHLD to the server"
    );
    let server = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|tid| {
            std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm"))
                .is_ok_and(|c| c.trim() == "shellgate-serve")
        })
        .expect("the server thread");
    assert_eq!(
        blocked_signals(pid, &server) & sigchld,
        0,
        "the server thread takes SIGCHLD"
    );
}

/// SIGCHLD's number on x86-64 and aarch64 Linux.
const SIGCHLD: u32 = 17;
