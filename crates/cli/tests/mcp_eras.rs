//! `shellgate mcp` spoken to as raw lines in both protocol eras: the era is fixed by a connection's
//! first message; 2026-07-28 results carry `resultType` and cache hints and an unknown resource is
//! `-32602`; and an approval asked in an `input_required` result cannot be resumed by a replayed,
//! altered or moved request state.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// A `shellgate mcp` process and its answers, by id.
struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    dir: tempfile::TempDir,
}

/// The `_meta` of a 2026-07-28 request from a client with `capabilities`.
fn modern_meta(capabilities: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-lines", "version": "1"},
    })
}

impl Server {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, "").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .arg("mcp")
            .arg("--config")
            .arg(&config)
            .current_dir(dir.path())
            .env("SHELLGATE_ARTIFACT_DIR", dir.path().join("artifacts"))
            .env("SHELLGATE_APPROVALS_FILE", dir.path().join("approvals.toml"))
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
        Self {
            stdin: child.stdin.take().unwrap(),
            child,
            lines: rx,
            next_id: 0,
            dir,
        }
    }

    /// Send `method` with `params` and wait for its answer (notifications are skipped).
    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        loop {
            let answer = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            if answer["id"] == id && answer.get("method").is_none() {
                return answer;
            }
        }
    }

    /// A 2026-07-28 request: `params` with the client context in `_meta`.
    fn modern(&mut self, method: &str, params: &Value, capabilities: &Value) -> Value {
        let mut params = params.clone();
        params["_meta"] = modern_meta(capabilities);
        self.request(method, &params)
    }

    fn initialize(&mut self) -> Value {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-lines", "version": "1"},
        });
        let answer = self.request("initialize", &params);
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        answer
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_connection_without_a_handshake_stays_on_2026_07_28() {
    let mut server = Server::start();
    let tools = server.modern("tools/list", &json!({}), &json!({}));
    assert_eq!(tools["result"]["resultType"], "complete", "{tools}");
    assert_eq!(tools["result"]["ttlMs"], 3_600_000, "{tools}");
    assert_eq!(tools["result"]["cacheScope"], "private", "{tools}");

    let late = server.initialize();
    assert!(
        late["error"].is_object(),
        "a late initialize was accepted: {late}"
    );
    // Still the same era: a request without `_meta` is refused.
    let bare = server.request("tools/list", &json!({}));
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
}

#[test]
fn results_are_shaped_for_the_era_of_the_connection() {
    let mut modern = Server::start();
    let listed = modern.modern("resources/list", &json!({}), &json!({}));
    assert_eq!(listed["result"]["ttlMs"], 0, "{listed}");
    let unknown = json!({"uri": "artifact://987654321"});
    let missing = modern.modern("resources/read", &unknown, &json!({}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let call = json!({"name": "bash", "arguments": {"command": "exit 3"}});
    let failed = modern.modern("tools/call", &call, &json!({}));
    assert_eq!(failed["result"]["resultType"], "complete", "{failed}");
    assert_eq!(failed["result"]["isError"], true, "{failed}");

    let mut legacy = Server::start();
    let init = legacy.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    let missing = legacy.request("resources/read", &unknown);
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let failed = legacy.request("tools/call", &call);
    assert!(failed["result"].get("resultType").is_none(), "{failed}");
    assert_eq!(failed["result"]["isError"], true, "{failed}");
}

/// How many times the marker command of the approval tests ran.
fn runs(server: &Server) -> usize {
    std::fs::read_to_string(server.dir.path().join("runs")).map_or(0, |text| text.lines().count())
}

#[test]
fn an_approval_state_resumes_once_and_only_for_its_own_arguments() {
    let mut server = Server::start();
    let asks = json!({"elicitation": {}});
    let call = json!({"name": "bash", "arguments": {"command": "echo run >> runs", "ask": "always"}});
    let first = server.modern("tools/call", &call, &asks);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let question = &first["result"]["inputRequests"]["approval"];
    assert_eq!(question["method"], "elicitation/create", "{first}");
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a state")
        .to_owned();
    let allow = json!({"approval": {"action": "accept", "content": {"decision": "allow-once"}}});
    let retry = |call: &Value, state: &str| {
        let mut retry = call.clone();
        retry["inputResponses"] = allow.clone();
        retry["requestState"] = json!(state);
        retry
    };

    // Moved to other arguments: refused, nothing runs, and the state is not spent.
    let other = json!({"name": "bash", "arguments": {"command": "echo other >> runs", "ask": "always"}});
    let moved = server.modern("tools/call", &retry(&other, &state), &asks);
    assert_eq!(
        moved["result"]["structuredContent"]["status"], "refused",
        "{moved}"
    );
    assert_eq!(runs(&server), 0);

    // Altered: refused.
    let mut altered = state.clone().into_bytes();
    let at = altered.len() / 2;
    altered[at] = if altered[at] == b'x' { b'y' } else { b'x' };
    let altered = String::from_utf8(altered).unwrap();
    let forged = server.modern("tools/call", &retry(&call, &altered), &asks);
    assert_eq!(
        forged["result"]["structuredContent"]["status"], "refused",
        "{forged}"
    );
    assert_eq!(runs(&server), 0);

    // The genuine retry runs the command once; its replay runs nothing.
    let done = server.modern("tools/call", &retry(&call, &state), &asks);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs(&server), 1);
    let replay = server.modern("tools/call", &retry(&call, &state), &asks);
    assert_eq!(replay["result"]["isError"], true, "{replay}");
    assert_eq!(
        replay["result"]["structuredContent"]["status"], "refused",
        "{replay}"
    );
    assert_eq!(runs(&server), 1);
}
