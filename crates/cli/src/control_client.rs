//! Calling a running server through its control socket: which server, and one request.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use crate::control_paths::{check_private, socket_dir, socket_path};

/// The control socket of the server with pid `server`, or of the only running server.
pub(crate) fn server_socket(server: Option<u32>) -> anyhow::Result<PathBuf> {
    let dir = socket_dir();
    if !dir.exists() {
        bail!(
            "no running shellgate rpc/mcp server found ({} does not exist)",
            dir.display()
        );
    }
    // Only a directory of ours: a socket elsewhere could be anyone's listener.
    check_private(&dir)?;
    let path = match server {
        Some(pid) => {
            let path = socket_path(&dir, pid);
            if !path.exists() {
                bail!(
                    "no shellgate server with pid {pid} has a control socket (no {})",
                    path.display()
                );
            }
            path
        }
        None => only_server(&dir)?,
    };
    Ok(path)
}

/// The socket of the one running server; an error naming the choices when there are several.
fn only_server(dir: &Path) -> anyhow::Result<PathBuf> {
    let servers = running_servers(dir);
    match servers.as_slice() {
        [] => bail!(
            "no running shellgate rpc/mcp server found (no control socket in {})",
            dir.display()
        ),
        [(_, path)] => Ok(path.clone()),
        several => {
            let pids: Vec<String> = several.iter().map(|(pid, _)| pid.to_string()).collect();
            bail!(
                "{} shellgate servers are running (pids {}); choose one with --server PID",
                several.len(),
                pids.join(", ")
            )
        }
    }
}

/// The servers with a control socket in `dir` that accepts connections, by pid. Sockets of servers
/// that are gone (killed before they could remove them) are removed.
fn running_servers(dir: &Path) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut servers: Vec<(u32, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let pid: u32 = path.file_name()?.to_str()?.strip_suffix(".sock")?.parse().ok()?;
            if UnixStream::connect(&path).is_ok() {
                return Some((pid, path));
            }
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_file(&path);
            }
            None
        })
        .collect();
    servers.sort_unstable();
    servers
}

/// One `method` request over the socket at `path`; the result, or the server's error.
pub(crate) fn call_method(path: &Path, method: &str, params: &Value) -> anyhow::Result<Value> {
    let mut stream =
        UnixStream::connect(path).with_context(|| format!("connecting to {}", path.display()))?;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    writeln!(stream, "{request}").context("sending the request")?;
    let mut line = String::new();
    BufReader::new(&stream)
        .read_line(&mut line)
        .context("reading the answer")?;
    if line.is_empty() {
        bail!("the server closed the connection without answering");
    }
    let mut answer: Value = serde_json::from_str(&line).context("the answer is not JSON")?;
    if let Some(error) = answer.get("error") {
        bail!(
            "the server refused the request: {}",
            error["message"].as_str().unwrap_or("unknown error")
        );
    }
    Ok(answer["result"].take())
}
