//! The private control socket of a running `shellgate rpc` or `shellgate mcp` server, through which
//! `shellgate jobs` lists, polls and kills that server's background jobs and `shellgate approve`
//! decides its pending approvals.
//!
//! The socket is `<dir>/<pid>.sock`, where `<dir>` is `$XDG_RUNTIME_DIR/shellgate` (else
//! `/tmp/shellgate-<uid>`): a directory of mode 0700 owned by the user, holding sockets of mode 0600.
//! A directory that is a symlink, belongs to someone else or is open to others is refused, by the
//! server and by the client alike. The socket speaks the JSON-RPC line protocol of `shellgate rpc`, for
//! the `process` and `approve` methods only (never `bash`): one request per line, answered in order, one response per line.

use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use shellgate::{BashTool, ProcessTool};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use crate::control_paths::{ControlError, check_private, socket_dir, socket_path};
use crate::jsonrpc::{code, parse_request};

/// Create the socket directory (mode 0700) when missing, and check it.
fn ensure_private_dir(dir: &Path) -> Result<(), ControlError> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent).map_err(|source| ControlError::Dir {
            path: parent.to_owned(),
            source,
        })?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(source) => {
            return Err(ControlError::Dir {
                path: dir.to_owned(),
                source,
            });
        }
    }
    check_private(dir)
}

/// A listening control socket; the socket file is removed when it is dropped.
#[derive(Debug)]
pub struct ControlSocket {
    path: PathBuf,
    stop: CancellationToken,
}

impl ControlSocket {
    /// Listen on this process's socket in [`socket_dir`] and serve `process` calls on `process`.
    pub fn start(process: ProcessTool, tool: BashTool) -> Result<Self, ControlError> {
        Self::start_in(&socket_dir(), process, tool)
    }

    /// Listen on this process's socket in `dir`.
    pub fn start_in(dir: &Path, process: ProcessTool, tool: BashTool) -> Result<Self, ControlError> {
        ensure_private_dir(dir)?;
        let path = socket_path(dir, std::process::id());
        // A file left by an earlier process with our pid (it cannot be running: the pid is ours).
        let _ = std::fs::remove_file(&path);
        let bind_error = |source| ControlError::Bind {
            path: path.clone(),
            source,
        };
        let listener = UnixListener::bind(&path).map_err(bind_error)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(bind_error)?;
        let stop = CancellationToken::new();
        tokio::spawn(accept_loop(listener, process, tool, stop.clone()));
        Ok(Self { path, stop })
    }

    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ControlSocket {
    fn drop(&mut self) {
        self.stop.cancel();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Start the control socket of a server, or say on stderr why there is none (the server runs on).
pub fn start_or_warn(process: ProcessTool, tool: BashTool) -> Option<ControlSocket> {
    match ControlSocket::start(process, tool) {
        Ok(socket) => {
            tracing::debug!(path = %socket.path().display(), "control socket listening");
            Some(socket)
        }
        Err(e) => {
            eprintln!("shellgate: warning: no control socket for `shellgate jobs`: {e}");
            None
        }
    }
}

async fn accept_loop(listener: UnixListener, process: ProcessTool, tool: BashTool, stop: CancellationToken) {
    loop {
        let stream = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("control socket: accept failed: {e}");
                    continue;
                }
            },
        };
        if let Some(refusal) = refusal(&stream) {
            tracing::warn!("control socket: {refusal}");
            tokio::spawn(async move {
                let _ = refuse(stream, &refusal).await;
            });
            continue;
        }
        let (process, tool, stop) = (process.clone(), tool.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = serve_connection(stream, &process, &tool) => {}
            }
        });
    }
}

/// Why a connection must not be served: a peer of another user, or one of the engine's own
/// descendants — a command the engine runs (whatever it is named, copied or not) must never decide
/// its own approval or touch the engine's jobs.
fn refusal(stream: &UnixStream) -> Option<String> {
    use std::os::fd::AsFd as _;
    let me = rustix::process::getuid().as_raw();
    match rustix::net::sockopt::socket_peercred(stream) {
        Ok(cred) if cred.uid.as_raw() == me => {}
        Ok(cred) => return Some(format!("refused a peer of uid {}", cred.uid.as_raw())),
        Err(e) => return Some(format!("refused a peer whose credentials are unknown: {e}")),
    }
    match shellgate::executor::peer_is_descendant(stream.as_fd(), std::process::id()) {
        Ok(false) => None,
        Ok(true) => Some("refused a process the engine started (or one that is gone)".to_owned()),
        Err(e) => Some(format!("refused a peer whose ancestry is unknown: {e}")),
    }
}

/// Answer a refused peer's requests (a few, for a short while) with why, then close: a client that
/// writes its request first still reads the refusal.
async fn refuse(stream: UnixStream, why: &str) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let answer_each = async {
        for _ in 0..8 {
            let Ok(Some(line)) = lines.next_line().await else {
                break;
            };
            let id = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v.get("id").cloned());
            let message = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code::INVALID_REQUEST, "message": format!("the control socket {why}")}});
            write.write_all(format!("{message}\n").as_bytes()).await?;
        }
        Ok::<(), std::io::Error>(())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(5), answer_each).await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

/// Answer one connection's requests in order until it closes.
async fn serve_connection(stream: UnixStream, process: &ProcessTool, tool: &BashTool) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        let (id, outcome) = match parse_request(&line) {
            Err((id, error)) => (id, Err(error)),
            Ok((id, method, params)) => {
                // `approve` lets a person next to the server decide its pending approvals; nothing
                // else (no `bash`): the socket is for inspecting and answering, not running.
                let outcome = match method.as_str() {
                    "process" => crate::methods::process_call(process, params).await,
                    "approve" if !tool.config().approvals.socket_approve => Err((
                        code::METHOD_NOT_FOUND,
                        "deciding approvals through the control socket is off ([approvals] socket_approve = false)"
                            .to_owned(),
                    )),
                    "approve" => {
                        crate::methods::approve_call(tool, params, CancellationToken::new()).await
                    }
                    _ => Err((
                        code::METHOD_NOT_FOUND,
                        format!("the control socket serves only `process` and `approve`, not {method:?}"),
                    )),
                };
                (id.unwrap_or(Value::Null), outcome)
            }
        };
        let message = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        let mut text = message.to_string();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}
