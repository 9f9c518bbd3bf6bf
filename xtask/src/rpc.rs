//! A blocking client for `shellgate rpc` (JSON-RPC 2.0, one object per line on stdio).

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow, bail};
use serde_json::{Value, json};

/// The JSON-RPC code for "method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;

/// One running `shellgate rpc` server and the requests in flight.
pub struct RpcClient {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Responses with the instant their line arrived.
    responses: Receiver<(Instant, Value)>,
    next_id: u64,
    /// When each request in flight was written.
    sent_at: HashMap<u64, Instant>,
    /// Responses that arrived while waiting for another id.
    stash: HashMap<u64, (Instant, Value)>,
}

impl RpcClient {
    /// Start `binary rpc` with `configure` applied (working directory, environment).
    pub fn spawn(binary: &Path, configure: impl FnOnce(&mut Command)) -> anyhow::Result<Self> {
        let mut command = Command::new(binary);
        command
            .arg("rpc")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        configure(&mut command);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {} rpc", binary.display()))?;
        let stdout = child.stdout.take().expect("piped");
        let (tx, responses) = mpsc::channel();
        // A reader thread lets every wait have a deadline, so a wedged server fails a check instead of
        // hanging the harness.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Stamped before parsing, so round-trip times exclude this client's own JSON work.
                let arrived = Instant::now();
                // Notifications (live output, job events) are not needed here; skipping them unparsed keeps
                // this reader from throttling a chatty server.
                if line.starts_with(r#"{"jsonrpc":"2.0","method""#) {
                    continue;
                }
                let Ok(value) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                // Notifications (no id) carry live output and job events: not needed here.
                if value.get("id").is_some_and(|id| !id.is_null()) && tx.send((arrived, value)).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Ok(Self {
            child,
            stdin,
            responses,
            next_id: 1,
            sent_at: HashMap::new(),
            stash: HashMap::new(),
        })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Send a request without waiting; returns its id.
    pub fn send(&mut self, method: &str, params: &Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| anyhow!("server input already closed"))?;
        self.sent_at.insert(id, Instant::now());
        stdin
            .write_all(line.as_bytes())
            .context("writing to the server")?;
        stdin.flush().context("writing to the server")?;
        Ok(id)
    }

    /// Wait for the response to request `id` (the whole JSON-RPC response object).
    pub fn wait(&mut self, id: u64, timeout: Duration) -> anyhow::Result<Value> {
        self.wait_timed(id, timeout).map(|(response, _)| response)
    }

    /// Wait for the response to request `id`; also returns the time from writing the request to the
    /// arrival of the response line.
    pub fn wait_timed(&mut self, id: u64, timeout: Duration) -> anyhow::Result<(Value, Duration)> {
        let deadline = Instant::now() + timeout;
        let (arrived, response) = loop {
            if let Some(found) = self.stash.remove(&id) {
                break found;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.responses.recv_timeout(left) {
                Ok((arrived, response)) => {
                    if let Some(got) = response.get("id").and_then(Value::as_u64) {
                        self.stash.insert(got, (arrived, response));
                    }
                }
                Err(RecvTimeoutError::Timeout) => bail!("no response to request {id} within {timeout:?}"),
                Err(RecvTimeoutError::Disconnected) => bail!("the server closed its output"),
            }
        };
        let sent = self.sent_at.remove(&id).unwrap_or(arrived);
        Ok((response, arrived.saturating_duration_since(sent)))
    }

    /// Send a request and wait for its response, timed as in [`RpcClient::wait_timed`].
    pub fn call_timed(
        &mut self,
        method: &str,
        params: &Value,
        timeout: Duration,
    ) -> anyhow::Result<(Value, Duration)> {
        let id = self.send(method, params)?;
        self.wait_timed(id, timeout)
    }

    /// Send a request and wait for its response.
    pub fn call(&mut self, method: &str, params: &Value, timeout: Duration) -> anyhow::Result<Value> {
        let id = self.send(method, params)?;
        self.wait(id, timeout)
    }

    /// Close the server's input and wait (up to `timeout`) for it to exit; kill it past that.
    pub fn close(mut self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        drop(self.stdin.take());
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                bail!("server did not exit within {timeout:?} of end of input");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL the server (the crash test) and reap it.
    pub fn kill(mut self) -> anyhow::Result<()> {
        self.child.kill().context("killing the server")?;
        self.child.wait().context("reaping the server")?;
        Ok(())
    }
}

impl Drop for RpcClient {
    fn drop(&mut self) {
        drop(self.stdin.take());
        if matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(200));
            if matches!(self.child.try_wait(), Ok(None)) {
                let _ = self.child.kill();
                let _ = self.child.wait();
            }
        }
    }
}

/// The `result` of a response, or its error as an `Err`.
pub fn result(response: &Value) -> anyhow::Result<&Value> {
    if let Some(error) = response.get("error") {
        bail!("rpc error {error}");
    }
    response
        .get("result")
        .ok_or_else(|| anyhow!("response without result: {response}"))
}

/// The error code of a response, if it is an error.
pub fn error_code(response: &Value) -> Option<i64> {
    response.get("error")?.get("code")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// A stand-in server: reads two requests, then answers them out of order after a notification.
    fn fake_server() -> std::path::PathBuf {
        let path = crate::measure::scratch_file("fake-rpc");
        let script = r#"#!/bin/sh
read first
read second
printf '%s\n' '{"jsonrpc":"2.0","method":"output","params":{"id":1,"chunk":"x"}}'
printf '%s\n' '{"id":2,"jsonrpc":"2.0","error":{"code":-32601,"message":"unknown method"}}'
printf '%s\n' '{"id":1,"jsonrpc":"2.0","result":{"output":"hi\n"}}'
"#;
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn responses_are_matched_by_id_whatever_their_order() {
        let server = fake_server();
        let mut client = RpcClient::spawn(&server, |_| {}).unwrap();
        let first = client.send("bash", &json!({"command": "echo hi"})).unwrap();
        let second = client.send("process", &json!({"action": "list"})).unwrap();
        let (response, elapsed) = client.wait_timed(first, Duration::from_secs(10)).unwrap();
        assert_eq!(result(&response).unwrap()["output"], "hi\n");
        assert!(elapsed < Duration::from_secs(10));
        let response = client.wait(second, Duration::from_secs(10)).unwrap();
        assert_eq!(error_code(&response), Some(METHOD_NOT_FOUND));
        assert!(result(&response).is_err());
        assert!(client.close(Duration::from_secs(10)).unwrap().success());
        std::fs::remove_file(server).unwrap();
    }

    #[test]
    fn a_silent_server_times_out_instead_of_hanging() {
        let server = fake_server();
        let mut client = RpcClient::spawn(&server, |_| {}).unwrap();
        let id = client.send("bash", &json!({"command": "true"})).unwrap();
        let err = client.wait(id, Duration::from_millis(200)).unwrap_err();
        assert!(err.to_string().contains("no response"), "{err}");
        std::fs::remove_file(server).unwrap();
    }
}
