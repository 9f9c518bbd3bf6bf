//! `shellgate jobs`: list, read, poll and kill the background jobs of a running `shellgate rpc` or
//! `shellgate mcp` server, through its private control socket (see [`crate::control_socket`]).

use std::path::Path;

use serde_json::Value;
use shellgate::{ProcessAction, ProcessParams};

use crate::control_client::server_socket;

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

/// One `process` request over the socket at `path`; the result, or the server's error.
fn call(path: &Path, params: &Value) -> anyhow::Result<Value> {
    crate::control_client::call_method(path, "process", params)
}
