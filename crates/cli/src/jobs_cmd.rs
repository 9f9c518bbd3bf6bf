//! `shellgate jobs`: list, read, poll and kill the background jobs of a running `shellgate rpc` or
//! `shellgate mcp` server, through its private control socket (see [`crate::control_socket`]).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};
use shellgate::{ProcessAction, ProcessParams};

use crate::control_socket::{check_private, socket_dir, socket_path};

/// Arguments of `shellgate jobs`.
#[derive(Debug, clap::Args)]
pub struct JobsArgs {
    /// The server's process id (needed when several servers run).
    #[arg(long, value_name = "PID", global = true)]
    server: Option<u32>,
    /// Print the `process` result as one JSON object.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    action: JobsAction,
}

/// What to do with the jobs.
#[derive(Debug, clap::Subcommand)]
pub enum JobsAction {
    /// The server's jobs: id, status, runtime and command, newest first.
    #[command(after_help = crate::help::JOBS_LIST)]
    List,
    /// A job's status and its latest lines (leaves the server's own poll cursor alone).
    #[command(after_help = crate::help::JOBS_LOG)]
    Log {
        /// The job id.
        id: String,
        /// First line to show, 0-based (default: the last `--limit` lines).
        #[arg(long, value_name = "N")]
        offset: Option<u64>,
        /// Number of lines (default 200).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
    },
    /// A job's output since the last poll, waiting up to `--wait-ms` for news. The poll cursor is the
    /// job's own, shared with the server's client: what this shows, its next poll does not.
    #[command(after_help = crate::help::JOBS_POLL)]
    Poll {
        /// The job id.
        id: String,
        /// Wait up to this many milliseconds for new output or the exit.
        #[arg(long, value_name = "MS")]
        wait_ms: Option<u64>,
    },
    /// Stop a job's whole process tree (SIGINT, then SIGTERM, then SIGKILL), or send one signal.
    #[command(after_help = crate::help::JOBS_KILL)]
    Kill {
        /// The job id.
        id: String,
        /// Send this signal instead (`SIGTERM`, `TERM`, `15`).
        #[arg(long, value_name = "SIG")]
        signal: Option<String>,
    },
}

impl JobsAction {
    fn params(self) -> ProcessParams {
        match self {
            Self::List => ProcessParams::default(),
            Self::Log { id, offset, limit } => ProcessParams {
                offset,
                limit,
                ..ProcessParams::new(ProcessAction::Log, id)
            },
            Self::Poll { id, wait_ms } => ProcessParams {
                wait_ms,
                ..ProcessParams::new(ProcessAction::Poll, id)
            },
            Self::Kill { id, signal } => ProcessParams {
                signal,
                ..ProcessParams::new(ProcessAction::Kill, id)
            },
        }
    }
}

/// Run `shellgate jobs`; exit status 1 when no server answers or it reports a failure (an unknown
/// job, …).
pub fn run(args: JobsArgs) -> i32 {
    ask_server(args).unwrap_or_else(|e| {
        eprintln!("shellgate: {e:#}");
        1
    })
}

fn ask_server(args: JobsArgs) -> anyhow::Result<i32> {
    let path = server_socket(args.server)?;
    let params = serde_json::to_value(args.action.params())?;
    let mut result = call(&path, &params)?;
    let failed = result["is_error"].as_bool().unwrap_or(false);
    if args.json {
        if let Some(map) = result.as_object_mut() {
            map.remove("text");
        }
        println!("{result}");
    } else {
        let text = result["text"].as_str().unwrap_or_default();
        println!("{}", if text.is_empty() { "(nothing)" } else { text });
    }
    Ok(i32::from(failed))
}

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

/// One `process` request over the socket at `path`; the result, or the server's error.
fn call(path: &Path, params: &Value) -> anyhow::Result<Value> {
    call_method(path, "process", params)
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
