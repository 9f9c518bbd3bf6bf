//! `shellgate mcp` spoken to as raw JSON-RPC lines: the handshake, the tool list and its schemas, tool
//! results, progress, cancellation, resources, job exits and shutdown at EOF.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;

/// A running `shellgate mcp` after the handshake, with a reader thread.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    /// Notifications seen while waiting for responses.
    notifications: Vec<Value>,
    /// The `initialize` result.
    init: Value,
    /// The server's working directory (its artifact store is inside).
    dir: tempfile::TempDir,
}

impl Mcp {
    fn start() -> Self {
        Self::start_with("", &json!({}))
    }

    /// A server reading `config` (as its `--config` file), for a client declaring `capabilities`.
    fn start_with(config: &str, capabilities: &Value) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let artifacts = dir.path().join("artifacts");
        let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .arg("mcp")
            .arg("--config")
            .arg(&config_path)
            .current_dir(dir.path())
            .env("SHELLGATE_ARTIFACT_DIR", &artifacts)
            .env("SHELLGATE_APPROVALS_FILE", dir.path().join("approvals.toml"))
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
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC, got {line:?}: {e}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut mcp = Self {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            next_id: 0,
            notifications: Vec::new(),
            init: Value::Null,
            dir,
        };
        let init = mcp.request(
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "raw-lines", "version": "1"}
            }),
        );
        mcp.init = init["result"].clone();
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Send a request and return its id without waiting.
    fn start_request(&mut self, method: &str, params: &Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The response to `id` (notifications before it are kept).
    fn response(&mut self, id: u64, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no response to request {id} within {within:?}"));
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push(message);
        }
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.start_request(method, params);
        self.response(id, Duration::from_secs(60))
    }

    /// `tools/call` of `name`; the call's `result`.
    fn call(&mut self, name: &str, arguments: &Value) -> Value {
        let response = self.request("tools/call", &json!({"name": name, "arguments": arguments}));
        assert!(response.get("error").is_none(), "protocol error: {response}");
        response["result"].clone()
    }

    /// The next request the server sends the client with `method` (notifications before it are
    /// kept); `None` when none comes within `within`.
    fn server_request(&mut self, method: &str, within: Duration) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self.lines.recv_timeout(left).ok()?;
            if message["method"] == method && message.get("id").is_some() {
                return Some(message);
            }
            self.notifications.push(message);
        }
    }

    /// Answer the server's request `request` with `result`.
    fn reply(&mut self, request: &Value, result: &Value) {
        let id = request["id"].clone();
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Notifications with `method`, in arrival order, waiting up to `within` for at least one.
    fn wait_notification(&mut self, method: &str, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let found: Vec<Value> = self
                .notifications
                .iter()
                .filter(|n| n["method"] == method)
                .cloned()
                .collect();
            if !found.is_empty() {
                return found;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) => self.notifications.push(message),
                Err(_) => return Vec::new(),
            }
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Paths of nullable shapes (`type` with `null`, a `null` branch, `default: null`) in a schema.
fn nullable_shapes(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let nullable_type = match map.get("type") {
                Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
                Some(t) => t == "null",
                None => false,
            };
            if nullable_type || map.get("default").is_some_and(Value::is_null) {
                found.push(path.to_owned());
            }
            for (k, v) in map {
                nullable_shapes(v, &format!("{path}/{k}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                nullable_shapes(item, &format!("{path}/{i}"), found);
            }
        }
        _ => {}
    }
}

fn pid_alive(pid: u64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

#[test]
fn handshake_names_shellgate_and_tools_have_portable_schemas() {
    let mut mcp = Mcp::start();
    assert_eq!(mcp.init["serverInfo"]["name"], "shellgate");
    assert_eq!(mcp.init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(mcp.init["protocolVersion"], "2025-06-18");
    for capability in ["tools", "resources", "logging"] {
        assert!(mcp.init["capabilities"].get(capability).is_some(), "{}", mcp.init);
    }
    let listed = mcp.request("tools/list", &json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["bash", "process", "artifact"]);
    for tool in &tools {
        let schema = &tool["inputSchema"];
        let mut found = Vec::new();
        nullable_shapes(schema, "", &mut found);
        assert!(found.is_empty(), "{}: nullable shapes at {found:?}", tool["name"]);
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("anyOf"), "{text}");
        assert_eq!(schema["type"], "object");
    }
    let bash = &tools[0];
    assert_eq!(bash["inputSchema"]["properties"]["timeout"]["default"], 300);
    assert_eq!(bash["inputSchema"]["required"], json!(["command"]));
    let description = bash["description"].as_str().unwrap();
    assert!(
        description.contains("default 300, clamped to 1..3600"),
        "{description}"
    );
    assert!(
        description.contains("first 20 KiB and the last 50 KiB"),
        "{description}"
    );
}

#[test]
fn results_carry_text_structured_fields_and_is_error() {
    let mut mcp = Mcp::start();
    let ok = mcp.call("bash", &json!({"command": "echo hi"}));
    assert_eq!(ok["isError"], false, "{ok}");
    assert_eq!(text_of(&ok), "hi");
    assert_eq!(ok["structuredContent"]["status"], "completed");
    assert_eq!(ok["structuredContent"]["exit_code"], 0);
    assert_eq!(ok["structuredContent"]["output"], "hi\n");

    let failed = mcp.call("bash", &json!({"command": "echo out; exit 3"}));
    assert_eq!(failed["isError"], true, "{failed}");
    assert!(
        text_of(&failed).ends_with("Command exited with code 3"),
        "{failed}"
    );
    assert_eq!(failed["structuredContent"]["exit_code"], 3);

    let timed_out = mcp.call("bash", &json!({"command": "sleep 5", "timeout": 1}));
    assert_eq!(timed_out["isError"], true);
    assert_eq!(timed_out["structuredContent"]["status"], "timed_out");

    // Bad arguments are results the model can read and correct, not protocol errors.
    let bad = mcp.call("bash", &json!({"command": "true", "timout": 5}));
    assert_eq!(bad["isError"], true);
    assert!(text_of(&bad).contains("timout"), "{bad}");

    let unknown = mcp.request("tools/call", &json!({"name": "rm", "arguments": {}}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{unknown}"
    );
}

#[test]
fn progress_notifications_carry_live_output_before_the_result() {
    let mut mcp = Mcp::start();
    let id = mcp.start_request(
        "tools/call",
        &json!({
            "name": "bash",
            "arguments": {"command": "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.1; done"},
            "_meta": {"progressToken": "p-1"}
        }),
    );
    let response = mcp.response(id, Duration::from_secs(30));
    assert_eq!(response["result"]["isError"], false, "{response}");
    let progress: Vec<&Value> = mcp
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(
        progress.len() >= 3,
        "expected several progress notifications: {progress:?}"
    );
    let mut last = 0.0;
    let mut seen = String::new();
    for n in &progress {
        assert_eq!(n["params"]["progressToken"], "p-1");
        let value = n["params"]["progress"].as_f64().unwrap();
        assert!(value > last, "progress must grow: {progress:?}");
        last = value;
        seen.push_str(n["params"]["message"].as_str().unwrap());
    }
    let expected: String = (1..=10)
        .map(|i| "tick ".to_owned() + &i.to_string() + "\n")
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn cancellation_stops_the_command_and_keeps_its_output_for_the_next_result() {
    let mut mcp = Mcp::start();
    let id = mcp.start_request(
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": "echo started; sleep 30.25"}}),
    );
    common::wait_for_argument("30.25");
    let started = Instant::now();
    mcp.send(&json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "test"}
    }));
    // The cancelled request gets no response; the next result notes what it printed.
    let notes = mcp.wait_notification("notifications/message", Duration::from_secs(10));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let cancelled = notes
        .iter()
        .find(|n| n["params"]["data"]["event"] == "cancelled")
        .unwrap_or_else(|| panic!("{notes:?}"));
    assert_eq!(cancelled["params"]["data"]["result"]["output"], "started\n");
    let listed = mcp.call("process", &json!({"action": "list"}));
    let text = text_of(&listed);
    assert!(
        text.contains("Cancelled after") && text.contains("output so far: started"),
        "{text}"
    );
    assert!(
        !mcp.notifications.iter().any(|n| n.get("id") == Some(&json!(id))),
        "a cancelled request is not answered"
    );
    let check = mcp.call(
        "bash",
        &json!({"command": "pgrep -f 'sleep 30[.]25' || echo none"}),
    );
    assert!(text_of(&check).starts_with("none\n"), "{}", text_of(&check));
}

#[test]
fn artifacts_are_listed_and_read_as_resources_and_through_the_tool() {
    let mut mcp = Mcp::start();
    let big = mcp.call("bash", &json!({"command": "seq 1 300000"}));
    assert_eq!(big["isError"], false);
    let uri = big["structuredContent"]["artifact"]
        .as_str()
        .expect("artifact")
        .to_owned();
    assert!(
        text_of(&big).contains(&format!("Full output: {uri}")),
        "{}",
        text_of(&big)
    );

    let listed = mcp.request("resources/list", &json!({}));
    let resources = listed["result"]["resources"].as_array().expect("resources");
    let entry = resources
        .iter()
        .find(|r| r["uri"] == uri.as_str())
        .expect("listed");
    assert_eq!(entry["mimeType"], "text/plain");
    assert!(entry["size"].as_u64().unwrap() > 1_000_000);

    let templates = mcp.request("resources/templates/list", &json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "artifact://{id}"
    );

    let read = mcp.request("resources/read", &json!({"uri": uri}));
    let text = read["result"]["contents"][0]["text"].as_str().expect("text");
    assert!(text.starts_with("1\n2\n") && text.ends_with("\n299999\n300000\n"));
    assert_eq!(text.lines().count(), 300_000);

    let missing = mcp.request("resources/read", &json!({"uri": "artifact://999999"}));
    assert!(missing.get("error").is_some(), "{missing}");

    let page = mcp.call("artifact", &json!({"id": uri, "offset": 150_000, "limit": 2}));
    assert_eq!(page["isError"], false);
    assert_eq!(page["structuredContent"]["content"], "150000\n150001\n");
    assert!(
        text_of(&page).contains("continue with offset 150002"),
        "{}",
        text_of(&page)
    );
    let grep = mcp.call("artifact", &json!({"id": uri, "grep": "^29999[0-9]$"}));
    assert_eq!(grep["structuredContent"]["matches"].as_array().unwrap().len(), 10);
    let gone = mcp.call("artifact", &json!({"id": "artifact://999999"}));
    assert_eq!(gone["isError"], true);
}

#[test]
fn job_exits_are_notified_and_noted_in_the_next_process_result() {
    let mut mcp = Mcp::start();
    let started = mcp.call(
        "bash",
        &json!({"command": "sleep 0.3; echo finished; exit 4", "background": true}),
    );
    let job = started["structuredContent"]["job_id"]
        .as_str()
        .expect("job")
        .to_owned();
    let exits = mcp.wait_notification("notifications/message", Duration::from_secs(20));
    let exit = exits
        .iter()
        .find(|n| n["params"]["data"]["event"] == "job_exited")
        .unwrap_or_else(|| panic!("{exits:?}"));
    assert_eq!(exit["params"]["data"]["job_id"], job.as_str());
    assert_eq!(exit["params"]["data"]["exit_code"], 4);
    assert_eq!(exit["params"]["logger"], "shellgate");
    let listed = mcp.call("process", &json!({"action": "list"}));
    let notices = listed["structuredContent"]["notices"].as_array().unwrap();
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().is_some_and(|s| s.contains(&job))),
        "{listed}"
    );
    // Noted once.
    let again = mcp.call("process", &json!({"action": "list"}));
    assert!(
        again["structuredContent"]["notices"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{again}"
    );
}

#[test]
fn eof_stops_every_job_tree_and_exits() {
    let mut mcp = Mcp::start();
    let started = mcp.call(
        "bash",
        &json!({"command": "sleep 60 & echo $! > child; wait", "background": true}),
    );
    let pid = started["structuredContent"]["pid"].as_u64().expect("pid");
    assert_eq!(started["structuredContent"]["status"], "running");
    let child_file = mcp.dir.path().join("child");
    let written = || std::fs::read_to_string(&child_file).unwrap_or_default();
    // The redirection creates the file before `echo` writes to it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !written().ends_with('\n') && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let grandchild: u64 = written().trim().parse().unwrap();
    assert!(pid_alive(pid) && pid_alive(grandchild));
    drop(mcp.stdin.take());
    let ended = Instant::now();
    loop {
        if let Some(status) = mcp.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(
            ended.elapsed() < Duration::from_secs(15),
            "server still running after EOF"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pid_alive(grandchild), "job tree survived the server");
}

#[test]
fn the_approve_tool_runs_or_denies_a_pending_call_when_configured() {
    let mut mcp = Mcp::start_with("[approvals]\nmcp_approve_tool = true\n", &json!({}));
    let listed = mcp.request("tools/list", &json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["bash", "process", "artifact", "approve"]);
    let pending = mcp.call("bash", &json!({"command": "echo approved", "ask": "always"}));
    assert_eq!(
        pending["structuredContent"]["status"], "approval_pending",
        "{pending}"
    );
    let id = pending["structuredContent"]["approval"]["short_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        text_of(&pending).contains(&format!("Reply with: approve {id}")),
        "{pending}"
    );
    let ran = mcp.call("approve", &json!({"id": id, "decision": "allow-once"}));
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(ran["structuredContent"]["output"], "approved\n");

    let pending = mcp.call("bash", &json!({"command": "echo never", "ask": "always"}));
    let id = pending["structuredContent"]["approval"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let denied = mcp.call("approve", &json!({"id": id, "decision": "deny"}));
    assert_eq!(denied["isError"], true);
    assert_eq!(denied["structuredContent"]["blocked"]["rule"], "approval-denied");
    let bad = mcp.call("approve", &json!({"id": id, "decision": "perhaps"}));
    assert_eq!(bad["isError"], true);
    assert!(text_of(&bad).contains("perhaps"), "{bad}");
}

#[test]
fn the_model_is_not_offered_the_approve_tool_by_default() {
    let mut mcp = Mcp::start();
    let pending = mcp.call("bash", &json!({"command": "echo mine", "ask": "always"}));
    assert_eq!(
        pending["structuredContent"]["status"], "approval_pending",
        "{pending}"
    );
    let id = pending["structuredContent"]["approval"]["id"].clone();
    let refused = mcp.request(
        "tools/call",
        &json!({"name": "approve", "arguments": {"id": id, "decision": "allow-once"}}),
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown tool `approve`"), "{refused}");
    assert!(
        !message.contains("approve)"),
        "the refusal lists only offered tools: {refused}"
    );
}

/// Start a `bash` call needing approval and return its request id and the elicitation it caused.
fn elicited_call(mcp: &mut Mcp, command: &str) -> (u64, Value) {
    let call = mcp.start_request(
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": command, "ask": "always"}}),
    );
    let asked = mcp
        .server_request("elicitation/create", Duration::from_secs(30))
        .unwrap_or_else(|| panic!("no elicitation for {command:?}: {:?}", mcp.notifications));
    (call, asked)
}

#[test]
fn elicitation_asks_the_person_and_runs_or_blocks_the_call() {
    let mut mcp = Mcp::start_with("", &json!({"elicitation": {}}));
    let marker = mcp.dir.path().join("ran-once");
    let command = format!("touch '{}'; echo elicited", marker.display());
    let (call, asked) = elicited_call(&mut mcp, &command);
    let params = &asked["params"];
    let message = params["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("Command:\n```\n{command}\n```")),
        "{asked}"
    );
    assert!(
        message.contains("Directory: ") && message.contains("Host: local"),
        "{asked}"
    );
    assert!(message.contains("Reason: "), "{asked}");
    let choices: Vec<&str> = params["requestedSchema"]["properties"]["decision"]["oneOf"]
        .as_array()
        .expect("choices")
        .iter()
        .filter_map(|c| c["const"].as_str())
        .collect();
    assert!(
        choices.contains(&"allow-once") && choices.contains(&"deny"),
        "{asked}"
    );
    assert!(!marker.exists(), "the command ran before the person answered");
    mcp.reply(
        &asked,
        &json!({"action": "accept", "content": {"decision": "allow-once"}}),
    );
    let ran = mcp.response(call, Duration::from_secs(30));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert_eq!(ran["result"]["structuredContent"]["status"], "completed", "{ran}");
    assert_eq!(
        ran["result"]["structuredContent"]["output"], "elicited\n",
        "{ran}"
    );
    assert!(marker.exists());

    for refusal in [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        json!({"action": "accept", "content": {"decision": "deny"}}),
    ] {
        let marker = mcp.dir.path().join("never");
        let (call, asked) = elicited_call(&mut mcp, &format!("touch '{}'", marker.display()));
        mcp.reply(&asked, &refusal);
        let blocked = mcp.response(call, Duration::from_secs(30));
        let fields = &blocked["result"]["structuredContent"];
        assert_eq!(blocked["result"]["isError"], true, "{refusal}: {blocked}");
        assert_eq!(fields["status"], "blocked", "{refusal}: {blocked}");
        assert_eq!(
            fields["blocked"]["rule"], "approval-denied",
            "{refusal}: {blocked}"
        );
        assert!(!marker.exists(), "{refusal} ran the command");
    }
}

#[test]
fn an_unanswered_elicitation_leaves_the_approval_pending() {
    let config = "[approvals]\nelicitation_timeout_secs = 0.5\n";
    let mut mcp = Mcp::start_with(config, &json!({"elicitation": {"form": {}}}));
    let (call, asked) = elicited_call(&mut mcp, "echo unanswered");
    let started = Instant::now();
    mcp.reply(
        &asked,
        &json!({"action": "accept", "content": {"decision": "perhaps"}}),
    );
    let unusable = mcp.response(call, Duration::from_secs(30));
    assert_eq!(
        unusable["result"]["structuredContent"]["status"], "approval_pending",
        "{unusable}"
    );
    // An error answer and no answer at all (the timeout) leave it pending too.
    let (call, asked) = elicited_call(&mut mcp, "echo refused-by-client");
    let id = asked["id"].clone();
    mcp.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": "no UI"}}));
    let errored = mcp.response(call, Duration::from_secs(30));
    let fields = &errored["result"]["structuredContent"];
    assert_eq!(fields["status"], "approval_pending", "{errored}");
    assert!(
        fields["notices"]
            .to_string()
            .contains("Could not ask through the client"),
        "{errored}"
    );
    let (call, _ignored) = elicited_call(&mut mcp, "echo ignored");
    let timed_out = mcp.response(call, Duration::from_secs(30));
    assert_eq!(
        timed_out["result"]["structuredContent"]["status"], "approval_pending",
        "{timed_out}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // The approval is still answerable by a person through the usual ways (here: it expires only
    // after the configured 30 minutes, so it is listed as pending).
    let id = timed_out["result"]["structuredContent"]["approval"]["id"].clone();
    assert!(id.as_str().is_some_and(|i| !i.is_empty()), "{timed_out}");
}

#[test]
fn a_client_without_elicitation_gets_the_pending_result() {
    let mut mcp = Mcp::start();
    let call = mcp.start_request(
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": "echo unasked", "ask": "always"}}),
    );
    let pending = mcp.response(call, Duration::from_secs(30));
    assert_eq!(
        pending["result"]["structuredContent"]["status"], "approval_pending",
        "{pending}"
    );
    assert!(
        !mcp.notifications
            .iter()
            .any(|m| m["method"] == "elicitation/create"),
        "{:?}",
        mcp.notifications
    );
}
