//! The `shellgate` command-line program: run one command, or serve JSON-RPC or MCP on stdio.
#![forbid(unsafe_code)]

mod approve_cmd;
mod artifact_cmd;
mod check_cmd;
#[cfg(test)]
mod cli_tests;
mod completions;
mod config_cmd;
mod control_client;
mod control_paths;
mod control_socket;
mod help;
mod jobs_cmd;
mod jsonrpc;
mod live_view;
mod mcp;
mod methods;
mod render;
mod rpc;
mod run_cmd;
mod stdio_pipes;

use clap::{Parser, Subcommand};

/// The engine under an AI agent's bash tool.
#[derive(Debug, Parser)]
#[command(name = "shellgate", version, about, after_help = help::MAIN)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one command and print its result.
    #[command(after_help = help::RUN)]
    Run(run_cmd::RunArgs),
    /// Serve JSON-RPC 2.0 on stdin/stdout (one JSON object per line).
    #[command(after_help = help::RPC)]
    Rpc {
        /// Configuration file (TOML).
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
    },
    /// Serve the Model Context Protocol on stdin/stdout (tools `bash`, `process`, `artifact`).
    #[command(after_help = help::MCP)]
    Mcp {
        /// Configuration file (TOML).
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
    },
    /// Read and list spilled outputs (`artifact://<id>`).
    #[command(subcommand, after_help = help::ARTIFACT)]
    Artifact(artifact_cmd::ArtifactCommand),
    /// List, read, poll and kill the background jobs of a running `rpc` or `mcp` server.
    #[command(after_help = help::JOBS)]
    Jobs(jobs_cmd::JobsArgs),
    /// Print a shell completion script (bash, zsh or fish) to stdout.
    #[command(after_help = help::COMPLETIONS)]
    Completions {
        /// The shell to complete for.
        shell: clap_complete::Shell,
    },
    /// Print the effective configuration (defaults, then the configuration file) as TOML.
    #[command(after_help = help::CONFIG)]
    Config(config_cmd::ConfigArgs),
    /// Print the policy's verdict for a command without running it (exit 0 allow, 1 ask, 2 deny).
    #[command(after_help = help::CHECK)]
    Check(check_cmd::CheckArgs),
    /// Decide a pending approval of a running `shellgate rpc`/`mcp` server (allow-once, allow-always, deny).
    #[command(after_help = help::APPROVE)]
    Approve(approve_cmd::ApproveArgs),
    /// List or revoke the rules allowed always (the approvals file).
    #[command(after_help = help::APPROVALS)]
    Approvals(approve_cmd::ApprovalsArgs),
    /// Trust a project's configuration file as it is now, so all of it applies (not only what makes
    /// the configuration stricter).
    #[command(after_help = help::TRUST)]
    Trust {
        /// The file (default `./.shellgate.toml`).
        path: Option<std::path::PathBuf>,
    },
}

fn main() -> std::process::ExitCode {
    // The sandbox helper mode (`shellgate sandbox-exec --policy JSON -- argv…`), reached only through the
    // sandbox launch layer: it confines itself and execs the command, before any runtime or thread
    // exists.
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == "sandbox-exec") {
        let code = shellgate_sandbox::helper_main(std::env::args_os().skip(2));
        return std::process::ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(255));
    }
    // Inherited secrets stay in the engine's memory, not in its `/proc/<pid>/environ` (nor its
    // guards', which are forks of it): any command could read that file. Single-threaded here.
    if let Err(e) = shellgate::executor::move_environment_to_heap() {
        eprintln!("shellgate: warning: the inherited environment stays readable in /proc ({e})");
    }
    let cli = Cli::parse();
    // Cgroups of engines that died (empty by now) go; this engine's own go at its end.
    shellgate::executor::sweep_stale();
    // Descendants that detach (setsid, double fork, nohup) stay ours, so a run can always stop its tree.
    if let Err(e) = shellgate::executor::init_subreaper() {
        eprintln!(
            "shellgate: warning: cannot become a child subreaper ({e}); detached descendants may escape"
        );
    }
    // The servers answer one request after another, each mostly waiting on its command: on one thread
    // every wake-up (a request read, a command's output, the response written) stays on that thread,
    // where a pool of workers would wake an idle one for each spawned task and timer — a thread hop
    // that, on a busy machine, shows in the tail of the round trip. That thread is not the main one:
    // orphans re-parented to the engine (a subreaper) land on the main thread, and the process-tree
    // scans find them among its children alone, apart from the runs the engine started. Everything
    // else keeps the pool.
    let outcome = if matches!(cli.command, Command::Rpc { .. } | Command::Mcp { .. }) {
        let server = std::thread::Builder::new()
            .name("shellgate-server".into())
            // As much stack as the main thread has (deeply nested commands parse recursively).
            .stack_size(8 << 20)
            .spawn(move || run_on(tokio::runtime::Builder::new_current_thread(), cli.command));
        // From here on this thread only waits: the end of every run signals the server thread.
        let _ = shellgate::executor::leave_child_signals_to_other_threads();
        match server.map(std::thread::JoinHandle::join) {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Some(Err(anyhow::anyhow!("the server thread panicked"))),
            Err(e) => Some(Err(anyhow::anyhow!("cannot start the server thread: {e}"))),
        }
    } else {
        run_on(tokio::runtime::Builder::new_multi_thread(), cli.command)
    };
    let Some(outcome) = outcome else {
        return std::process::ExitCode::from(70);
    };
    match outcome {
        Ok(code) => std::process::ExitCode::from(u8::try_from(code.clamp(0, 255)).unwrap_or(255)),
        Err(e) => {
            eprintln!("shellgate: {e:#}");
            std::process::ExitCode::from(70)
        }
    }
}

/// Run `command` on a runtime built by `builder`; `None` when the runtime cannot start (said on
/// stderr).
fn run_on(mut builder: tokio::runtime::Builder, command: Command) -> Option<anyhow::Result<i32>> {
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("shellgate: cannot start the runtime: {e}");
            return None;
        }
    };
    let outcome = runtime.block_on(async {
        match command {
            Command::Run(args) => run_cmd::run(args).await,
            Command::Rpc { config } => rpc::serve(config.as_deref()).await.map(|()| 0),
            Command::Mcp { config } => mcp::serve(config.as_deref()).await.map(|()| 0),
            Command::Completions { shell } => completions::print(shell),
            Command::Jobs(args) => Ok(jobs_cmd::run(args)),
            Command::Artifact(cmd) => artifact_cmd::run(cmd),
            Command::Config(args) => config_cmd::run(&args),
            Command::Check(args) => check_cmd::run(&args),
            Command::Approve(args) => Ok(approve_cmd::run_approve(&args)),
            Command::Approvals(args) => Ok(approve_cmd::run_approvals(&args)),
            Command::Trust { path } => config_cmd::trust(path.as_deref()),
        }
    });
    // Do not wait for stray blocking reads (stdin) at shutdown.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    shellgate::executor::remove_engine_cgroups();
    Some(outcome)
}
