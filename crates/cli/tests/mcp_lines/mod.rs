//! A `shellgate mcp` process spoken to as raw JSON lines, in either protocol era, for the tests that
//! check the wire itself (what an SDK would hide: codes, hints, notifications and their absence).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single answer may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The client capabilities of a 2026-07-28 client that declares the tasks extension.
pub fn tasks_capability() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// The `_meta` of a 2026-07-28 request from a client with `capabilities`.
pub fn modern_meta(capabilities: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-lines", "version": "1"},
    })
}

/// A `shellgate mcp` process and what it sent.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
    /// Notifications (and answers to other ids) read while waiting for an answer.
    pub seen: Vec<Value>,
    pub dir: tempfile::TempDir,
}

impl Server {
    /// A server with an empty configuration.
    pub fn start() -> Self {
        Self::with_config("")
    }

    /// A server with `config` as its configuration file.
    pub fn with_config(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        std::fs::write(&file, config).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .arg("mcp")
            .arg("--config")
            .arg(&file)
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
            seen: Vec::new(),
            dir,
        }
    }

    /// The server's working directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write one message.
    pub fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string());
    }

    /// Write `line` as it is, with a line end.
    pub fn send_raw(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Send `method` with `params` without waiting; its id.
    pub fn start_request(&mut self, method: &str, params: &Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to request `id`; every other message read meanwhile is kept in `seen`.
    pub fn answer(&mut self, id: u64) -> Value {
        let give_up = Instant::now() + ANSWER_WITHIN;
        loop {
            let left = give_up.saturating_duration_since(Instant::now());
            let message = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to request {id}: {e}"));
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Send `method` with `params` and wait for its answer.
    pub fn request(&mut self, method: &str, params: &Value) -> Value {
        let id = self.start_request(method, params);
        self.answer(id)
    }

    /// `params` with the 2026-07-28 client context (and `extra` keys) in `_meta`.
    pub fn modern_params(params: &Value, capabilities: &Value, extra: &Value) -> Value {
        let mut params = params.clone();
        let mut meta = modern_meta(capabilities);
        if let (Some(meta), Some(extra)) = (meta.as_object_mut(), extra.as_object()) {
            meta.extend(extra.clone());
        }
        params["_meta"] = meta;
        params
    }

    /// A 2026-07-28 request: `params` with the client context in `_meta`.
    pub fn modern(&mut self, method: &str, params: &Value, capabilities: &Value) -> Value {
        self.request(method, &Self::modern_params(params, capabilities, &json!({})))
    }

    /// The handshake (protocol 2025-06-18) with `capabilities`.
    pub fn initialize_with(&mut self, capabilities: &Value) -> Value {
        let params = json!({
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "raw-lines", "version": "1"},
        });
        let answer = self.request("initialize", &params);
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// The handshake without capabilities.
    pub fn initialize(&mut self) -> Value {
        self.initialize_with(&json!({}))
    }

    /// Read messages for `within`, keeping them in `seen`.
    pub fn read_for(&mut self, within: Duration) {
        let until = Instant::now() + within;
        while let Some(left) = until.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(message) => self.seen.push(message),
                Err(_) => break,
            }
        }
    }

    /// The notifications of `method` seen so far, taken out of `seen`.
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.seen)
            .into_iter()
            .partition(|m| m["method"] == method && m.get("id").is_none());
        self.seen = kept;
        taken
    }

    /// How many lines the file `name` in the working directory has (0 when it does not exist):
    /// the tests' marker commands append one per run.
    pub fn lines_of(&self, name: &str) -> usize {
        std::fs::read_to_string(self.path().join(name)).map_or(0, |text| text.lines().count())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `condition` every 20 ms for up to 20 s; whether it became true.
pub fn eventually(mut condition: impl FnMut() -> bool) -> bool {
    let give_up = Instant::now() + Duration::from_secs(20);
    while Instant::now() < give_up {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}
