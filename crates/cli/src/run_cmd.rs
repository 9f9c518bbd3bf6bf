//! `shellgate run`: one command, printed as model text (exit code mirrors the command) or as JSON; on a
//! terminal, with a live view while it runs and a collapsed preview and footer after.

use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use std::io::{IsTerminal as _, Write as _};

use shellgate::{BashParams, BashTool, CancellationToken, LiveFeed, ToolResult, ToolStatus};

use crate::live_view::{LiveView, REDRAW_INTERVAL};
use crate::render::{self, Style};

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
    /// Run sandboxed: read-only, workspace-write or full (only stricter than the configured
    /// `[sandbox] mode`).
    #[arg(long, value_name = "MODE", value_parser = parse_sandbox_mode)]
    sandbox: Option<shellgate::sandbox::SandboxMode>,
    /// Where to run: local, auto (the configured sandbox, else local), sandbox, ssh:DEST,
    /// docker:CONTAINER, podman:CONTAINER, k8s:POD[/CONTAINER][@NAMESPACE] or a host named in the
    /// configuration (`[hosts.NAME]`).
    #[arg(long, value_name = "HOST")]
    host: Option<String>,
    /// Configuration file (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// On a terminal, print every line of the output at the end instead of the last 20.
    #[arg(long)]
    full: bool,
    /// The command; several words are joined with spaces. Options go before it; everything from its
    /// first word on belongs to the command (`--` first when it starts with `-`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        value_name = "COMMAND",
        value_hint = clap::ValueHint::CommandWithArguments
    )]
    command: Vec<String>,
}

impl RunArgs {
    /// The command as given: one word, or several to be joined with spaces.
    pub fn command_words(&self) -> &[String] {
        &self.command
    }
}

/// A `--sandbox` value (the error names the value and the accepted ones).
fn parse_sandbox_mode(value: &str) -> Result<shellgate::sandbox::SandboxMode, String> {
    value
        .parse()
        .map_err(|e: shellgate::sandbox::UnknownMode| e.to_string())
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
    let mut config = crate::rpc::load_config(args.config.as_deref()).context("loading configuration")?;
    // This process exits with the command's result, so a foreground run is waited for to its end.
    config.auto_yield = None;
    let tool = BashTool::new(config);
    let params = BashParams {
        command: args.command_words().join(" "),
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
        sandbox: args.sandbox,
        host: args.host,
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
        tool.shutdown_hosts().await;
        println!("{}", serde_json::to_string(&result)?);
        return Ok(0);
    }
    if !std::io::stdout().is_terminal() {
        let result = tool.call(params, cancel).await;
        tool.shutdown_hosts().await;
        println!("{}", result.model_text());
        return Ok(exit_status(&result));
    }
    // A person is watching: the live view on stderr while it runs, then the collapsed preview, the
    // trailer and the footer.
    let result = if std::io::stderr().is_terminal() && cursor_motion_allowed() {
        run_with_live_view(&tool, params, cancel).await
    } else {
        tool.call_live(params, cancel, None).await
    };
    tool.shutdown_hosts().await;
    print!(
        "{}",
        render::final_text(&result, args.full, Style::new(render::colors_wanted(true)))
    );
    let _ = std::io::stdout().flush();
    eprintln!(
        "{}",
        render::footer(
            &result,
            Style::new(render::colors_wanted(std::io::stderr().is_terminal()))
        )
    );
    Ok(exit_status(&result))
}

/// A `dumb` terminal cannot move the cursor, so it gets no live view.
fn cursor_motion_allowed() -> bool {
    std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Run with the live view drawn on stderr every [`REDRAW_INTERVAL`], erased before returning.
async fn run_with_live_view(tool: &BashTool, params: BashParams, cancel: CancellationToken) -> ToolResult {
    let feed = LiveFeed::default();
    let stop = CancellationToken::new();
    let drawer = tokio::spawn({
        let (feed, stop) = (feed.clone(), stop.clone());
        async move {
            let mut view = LiveView::new(Style::new(render::colors_wanted(true)));
            let mut tick = tokio::time::interval(REDRAW_INTERVAL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = tick.tick() => {}
                }
                if let Some(live) = feed.take() {
                    view.push(&live);
                }
                view.draw();
            }
            view.clear();
        }
    });
    let result = tool.call_live(params, cancel, Some(&feed)).await;
    stop.cancel();
    let _ = drawer.await;
    result
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
