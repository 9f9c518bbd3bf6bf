//! Approvals per destination through `shellgate mcp`, spoken to as raw lines: a sandboxed run
//! whose proxy refused an unlisted name puts that `host:port` to the person — in an
//! `elicitation/create` request on a handshake-era connection, in an `input_required` result on
//! 2026-07-28 (the retry answers it and gets the run's result), and to a person next to the
//! server with `shellgate approve` where the client cannot ask — and after `allow-always` the next
//! run reaches it. A loopback server counts what reached it.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

mod common;

use common::{available, scratch};

fn usable() -> bool {
    let abi = shellgate_sandbox::landlock_abi();
    let curl = Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    available(
        abi >= 4,
        &format!("Landlock ABI 4 needed, the kernel offers {abi}"),
    ) && available(curl, "curl is not installed")
}

/// A loopback HTTP server answering every request with `hello`, counting them.
fn counting_server() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            counter.fetch_add(1, Ordering::SeqCst);
            let _ =
                stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n");
        }
    });
    (port, count)
}

const CONFIG: &str = "[policy]\nsecurity = \"full\"\nask = \"on-miss\"\n\
     [sandbox]\nmode = \"workspace-write\"\nnetwork = \"proxy\"\nallowed_domains = [\"pkg.test\"]\n\
     [sandbox.proxy]\nhosts = { \"pkg.test\" = \"127.0.0.1\", \"other.test\" = \"127.0.0.1\", \"more.test\" = \"127.0.0.1\" }\n\
     allow_local_addresses = true\n";

/// A `shellgate mcp` process over a scratch workspace, and its lines.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    root: PathBuf,
    /// The client's capabilities (in `_meta` on 2026-07-28).
    capabilities: Value,
    modern: bool,
}

impl Server {
    fn start(modern: bool, capabilities: Value) -> Self {
        let _ = shellgate_sandbox::enable_kernel_audit();
        let root = scratch();
        let workspace = root.join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(root.join("runtime")).unwrap();
        std::fs::write(root.join("shellgate.toml"), CONFIG).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .arg("mcp")
            .arg("--config")
            .arg(root.join("shellgate.toml"))
            .current_dir(&workspace)
            .env("HOME", root.join("home"))
            .env("XDG_CONFIG_HOME", root.join("xdg"))
            .env("XDG_RUNTIME_DIR", root.join("runtime"))
            .env("SHELLGATE_ARTIFACT_DIR", root.join("artifacts"))
            .env("SHELLGATE_APPROVALS_FILE", root.join("approvals.toml"))
            .env_remove("TMPDIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line).expect("stdout carries JSON-RPC only");
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut server = Self {
            stdin: child.stdin.take().unwrap(),
            child,
            lines: rx,
            next_id: 0,
            root,
            capabilities,
            modern,
        };
        if !modern {
            let params = json!({
                "protocolVersion": "2025-06-18",
                "capabilities": server.capabilities,
                "clientInfo": {"name": "raw-lines", "version": "1"},
            });
            let answer = server.send("initialize", &params, &mut |_| None);
            assert!(answer["result"].is_object(), "{answer}");
            server.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        }
        server
    }

    fn write(&mut self, line: &Value) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send `method` and wait for its answer; requests from the server on the way are answered by
    /// `answer` (an error reply when it has none).
    fn send(
        &mut self,
        method: &str,
        params: &Value,
        answer: &mut dyn FnMut(&Value) -> Option<Value>,
    ) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut params = params.clone();
        if self.modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "raw-lines", "version": "1"},
            });
        }
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            match line.get("method").and_then(Value::as_str) {
                Some(asked) if line.get("id").is_some() => {
                    let reply = match answer(&line) {
                        Some(result) => json!({"jsonrpc": "2.0", "id": line["id"], "result": result}),
                        None => json!({"jsonrpc": "2.0", "id": line["id"],
                            "error": {"code": -32601, "message": format!("{asked} not handled")}}),
                    };
                    self.write(&reply);
                }
                None if line["id"] == id => return line,
                // Notifications, and answers to nothing this test asked.
                _ => {}
            }
        }
    }

    fn fetch(&mut self, host: &str, port: u16, answer: &mut dyn FnMut(&Value) -> Option<Value>) -> Value {
        let command = format!("curl -sS -o /dev/null -w '%{{http_code}}\\n' http://{host}:{port}/");
        self.send(
            "tools/call",
            &json!({"name": "bash", "arguments": {"command": command}}),
            answer,
        )
    }

    fn stored(&self) -> String {
        std::fs::read_to_string(self.root.join("approvals.toml")).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

fn structured(answer: &Value) -> &Value {
    &answer["result"]["structuredContent"]
}

fn no_questions(_: &Value) -> Option<Value> {
    None
}

#[test]
fn a_handshake_client_is_asked_about_a_refused_destination_and_allow_always_holds() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut server = Server::start(false, json!({"elicitation": {}}));
    let mut questions = Vec::new();
    let mut allow = |request: &Value| {
        assert_eq!(request["method"], "elicitation/create", "{request}");
        questions.push(
            request["params"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
        );
        Some(json!({"action": "accept", "content": {"decision": "allow-always"}}))
    };
    let first = server.fetch("other.test", port, &mut allow);
    assert!(
        text(&first).contains("403"),
        "the run itself was refused: {first}"
    );
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains(&format!("other.test:{port}")),
        "{questions:?}"
    );
    assert!(
        text(&first).contains(&format!("other.test:{port} is allowed always")),
        "{first}"
    );
    assert!(
        structured(&first).get("network_approvals").is_none(),
        "decided, so no longer pending: {first}"
    );
    assert!(
        server
            .stored()
            .contains(&format!("address = \"other.test:{port}\"")),
        "{}",
        server.stored()
    );
    assert_eq!(requests.load(Ordering::SeqCst), 0, "approving ran nothing");

    let again = server.fetch("other.test", port, &mut no_questions);
    assert!(text(&again).contains("200"), "{again}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);

    // Declined: nothing is stored and the name stays refused.
    let mut decline = |_: &Value| Some(json!({"action": "decline"}));
    let declined = server.fetch("more.test", port, &mut decline);
    assert!(text(&declined).contains("403"), "{declined}");
    assert!(
        text(&declined).contains(&format!("denied network access to more.test:{port}")),
        "{declined}"
    );
    assert!(!server.stored().contains("more.test"), "{}", server.stored());
    let still = server.fetch("more.test", port, &mut |_| Some(json!({"action": "decline"})));
    assert!(text(&still).contains("403"), "{still}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[test]
fn a_2026_client_answers_in_the_retry_and_gets_the_runs_result() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut server = Server::start(true, json!({"elicitation": {}}));
    let command =
        format!("curl -sS -o /dev/null -w '%{{http_code}}\\n' http://other.test:{port}/; echo ran >> runs");
    let call = json!({"name": "bash", "arguments": {"command": command}});
    let first = server.send("tools/call", &call, &mut no_questions);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let asked = first["result"]["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(asked.len(), 1, "{first}");
    let (key, question) = asked.into_iter().next().unwrap();
    assert_eq!(question["method"], "elicitation/create", "{first}");
    assert!(
        question["params"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&format!("other.test:{port}")),
        "{first}"
    );
    let runs = |root: &Path| std::fs::read_to_string(root.join("ws/runs")).map_or(0, |t| t.lines().count());
    assert_eq!(runs(&server.root), 1, "the run happened before the question");

    let mut retry = call.clone();
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] =
        json!({key.clone(): {"action": "accept", "content": {"decision": "allow-always"}}});
    let done = server.send("tools/call", &retry, &mut no_questions);
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(text(&done).contains("403"), "the run's own result: {done}");
    assert!(
        text(&done).contains(&format!("other.test:{port} is allowed always")),
        "{done}"
    );
    assert_eq!(runs(&server.root), 1, "the retry ran nothing");
    // A replay is refused and runs nothing.
    let replay = server.send("tools/call", &retry, &mut no_questions);
    assert_eq!(structured(&replay)["status"], "refused", "{replay}");
    assert_eq!(runs(&server.root), 1);

    let again = server.fetch("other.test", port, &mut no_questions);
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    assert!(text(&again).contains("200"), "{again}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}

#[test]
fn where_the_client_cannot_ask_a_person_approves_with_shellgate_approve() {
    if !usable() {
        return;
    }
    let (port, requests) = counting_server();
    let mut server = Server::start(true, json!({}));
    let first = server.fetch("other.test", port, &mut no_questions);
    assert_eq!(first["result"]["resultType"], "complete", "{first}");
    let offered = &structured(&first)["network_approvals"][0];
    assert_eq!(offered["address"], format!("other.test:{port}"), "{first}");
    let id = offered["short_id"].as_str().unwrap().to_owned();
    assert!(
        text(&first).contains(&format!("approve {id} allow-always")),
        "{first}"
    );
    let approved = Command::new(env!("CARGO_BIN_EXE_shellgate"))
        .args(["approve", &id, "allow-always", "--server"])
        .arg(server.child.id().to_string())
        .env("XDG_RUNTIME_DIR", server.root.join("runtime"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&approved.stdout);
    assert!(
        approved.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&approved.stderr)
    );
    assert!(said.contains("is allowed always"), "{said}");
    let again = server.fetch("other.test", port, &mut no_questions);
    assert!(text(&again).contains("200"), "{again}");
    assert_eq!(requests.load(Ordering::SeqCst), 1);
}
