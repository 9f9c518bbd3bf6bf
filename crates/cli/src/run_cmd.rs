//! `shellgate run`: one command, printed as model text (exit code mirrors the command) or as JSON.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use std::io::{IsTerminal as _, Write as _};

use shellgate::{BashParams, BashTool, CancellationToken, LiveFeed, LiveText, ToolResult, ToolStatus};

/// Arguments of `shellgate run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Print the result as one JSON object (exit status 0 unless the engine failed).
    #[arg(long)]
    json: bool,
    /// Working directory.
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
    /// Extra environment variable (repeatable).
    #[arg(long = "env", value_name = "K=V")]
    env: Vec<String>,
    /// Timeout in seconds (default 300, clamped to 1..=3600).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Show only the first N lines.
    #[arg(long, value_name = "N")]
    head: Option<u64>,
    /// Show only the last N lines (after --head).
    #[arg(long, value_name = "N")]
    tail: Option<u64>,
    /// Run under a pseudo-terminal.
    #[arg(long)]
    pty: bool,
    /// Start as a background job.
    #[arg(long)]
    background: bool,
    /// Become a background job after this many milliseconds.
    #[arg(long, value_name = "MS")]
    yield_ms: Option<u64>,
    /// Persistent shell session name (default `none`: a fresh shell; sessions live as long as the process).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// Configuration file (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// The command; several words are joined with spaces.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<String>,
}

/// Parse `K=V` pairs.
pub fn parse_env(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--env expects K=V, got {pair:?}");
        };
        if key.is_empty() {
            bail!("--env expects a non-empty name, got {pair:?}");
        }
        env.insert(key.to_owned(), value.to_owned());
    }
    Ok(env)
}

/// Run the command and return the process exit status.
pub async fn run(args: RunArgs) -> anyhow::Result<i32> {
    let config = crate::rpc::load_config(args.config.as_deref()).context("loading configuration")?;
    let tool = BashTool::new(config);
    let params = BashParams {
        command: args.command.join(" "),
        cwd: args.cwd,
        env: parse_env(&args.env)?,
        timeout: args.timeout,
        head: args.head,
        tail: args.tail,
        pty: args.pty,
        background: args.background,
        yield_ms: args.yield_ms,
        // One command per process: a persistent session only when one is named.
        session: Some(args.session.unwrap_or_else(|| shellgate::NO_SESSION.to_owned())),
        ..BashParams::default()
    };
    let cancel = CancellationToken::new();
    let on_interrupt = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_interrupt.cancel();
        }
    });
    if args.json {
        let result = tool.call(params, cancel).await;
        println!("{}", serde_json::to_string(&result)?);
        return Ok(0);
    }
    if !std::io::stdout().is_terminal() {
        let result = tool.call(params, cancel).await;
        println!("{}", result.model_text());
        return Ok(exit_status(&result));
    }
    // A person is watching: stream the clean output as it comes, then the trailer and a footer.
    let feed = LiveFeed::default();
    let stop = CancellationToken::new();
    let printer = tokio::spawn({
        let (feed, stop) = (feed.clone(), stop.clone());
        async move {
            let mut tick = tokio::time::interval(shellgate::sink::DEFAULT_INTERVAL);
            loop {
                let stopping = tokio::select! {
                    () = stop.cancelled() => true,
                    _ = tick.tick() => false,
                };
                if let Some(live) = feed.take() {
                    print_live(&live);
                }
                if stopping {
                    break;
                }
            }
        }
    });
    let result = tool.call_live(params, cancel, Some(&feed)).await;
    stop.cancel();
    let _ = printer.await;
    if result.job_id.is_none() && result.output.is_empty() {
        println!("(no output)");
    }
    if result.job_id.is_some() {
        println!("{}", result.model_text());
    } else {
        print!("{}", result.trailer_text());
    }
    eprintln!("{}", footer(&result));
    Ok(exit_status(&result))
}

fn print_live(live: &LiveText) {
    let mut stdout = std::io::stdout().lock();
    if live.skipped > 0 {
        let _ = writeln!(stdout, "[… {} bytes not shown live …]", live.skipped);
    }
    let _ = stdout.write_all(live.text.as_bytes());
    let _ = stdout.flush();
}

/// The human footer: `Wall | Timeout | Artifact | Exit`.
pub fn footer(result: &ToolResult) -> String {
    let exit = match (result.status, result.exit_code, &result.signal) {
        (ToolStatus::Completed, Some(code), _) => code.to_string(),
        (ToolStatus::Completed, None, Some(sig)) => sig.clone(),
        (status, _, _) => serde_json::to_value(status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    };
    format!(
        "Wall {:.1}s | Timeout {}s | Artifact {} | Exit {exit}",
        result.duration_ms as f64 / 1000.0,
        result.timeout_secs,
        result.artifact.as_deref().unwrap_or("-"),
    )
}

/// The exit status `shellgate run` mirrors for a result.
pub fn exit_status(result: &ToolResult) -> i32 {
    match result.status {
        ToolStatus::TimedOut => 124,
        ToolStatus::Cancelled => 130,
        ToolStatus::Blocked | ToolStatus::ApprovalPending => 126,
        ToolStatus::FailedToStart => 127,
        ToolStatus::Running => 0,
        ToolStatus::Completed => result.exit_code.unwrap_or_else(|| {
            result
                .signal
                .as_deref()
                .and_then(|name| (1..65).find(|&n| shellgate::executor::signal_name(n) == name))
                .map_or(1, |n| 128 + n)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_pairs_parse_and_reject_garbage() {
        let env = parse_env(&["A=1".into(), "B=x=y".into(), "C=".into()]).unwrap();
        assert_eq!(env["B"], "x=y");
        assert_eq!(env["C"], "");
        assert!(parse_env(&["NOEQUALS".into()]).is_err());
        assert!(parse_env(&["=v".into()]).is_err());
    }

    #[test]
    fn footer_names_wall_timeout_artifact_and_exit() {
        let mut r = ToolResult::not_run(ToolStatus::Completed, "", "/");
        r.exit_code = Some(2);
        r.duration_ms = 1500;
        r.timeout_secs = 300;
        r.artifact = Some("artifact://4".into());
        assert_eq!(
            footer(&r),
            "Wall 1.5s | Timeout 300s | Artifact artifact://4 | Exit 2"
        );
        r.status = ToolStatus::TimedOut;
        assert!(footer(&r).ends_with("Exit timed_out"));
    }

    #[test]
    fn exit_status_mirrors_the_command() {
        let mut r = ToolResult::not_run(ToolStatus::Completed, "", "/");
        r.exit_code = Some(4);
        assert_eq!(exit_status(&r), 4);
        r.exit_code = None;
        r.signal = Some("SIGKILL".into());
        assert_eq!(exit_status(&r), 137);
        r.status = ToolStatus::TimedOut;
        assert_eq!(exit_status(&r), 124);
    }
}
