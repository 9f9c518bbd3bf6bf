//! Approvals from the command line and over the wire: the `approve` method of `shellgate rpc` and
//! of the control socket, `shellgate approve ID DECISION` (a person next to a running server), and
//! `shellgate approvals list|revoke` over the approvals file of "allow always" rules.

use std::path::PathBuf;

use anyhow::Context as _;

use serde_json::json;
use shellgate::approvals::ApprovalsFile;
use shellgate::{ApprovalDecision, BashTool};

/// Say on stderr that the approvals file is not used (a server then asks for what it would allow).
pub fn warn_about_approvals_file(tool: &BashTool) {
    if let Some(e) = tool.approvals_file_error() {
        eprintln!("shellgate: warning: the approvals file is not used: {e}");
    }
}

/// Arguments of `shellgate approve`.
#[derive(Debug, clap::Args)]
pub struct ApproveArgs {
    /// The approval id (full, or the short id of the `Approval required` message).
    id: String,
    /// `allow-once`, `allow-always` or `deny`.
    decision: String,
    /// The server's process id (needed when several servers run).
    #[arg(long, value_name = "PID")]
    server: Option<u32>,
    /// Print the result as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Run `shellgate approve`: exit status 0 when the approved command ran and succeeded, 1 otherwise
/// (denied, unknown or expired id, the command failed, no server).
pub fn run_approve(args: &ApproveArgs) -> i32 {
    let outcome = (|| -> anyhow::Result<i32> {
        let decision: ApprovalDecision = args.decision.parse().map_err(anyhow::Error::msg)?;
        let path = crate::control_client::server_socket(args.server)?;
        let params = json!({"id": args.id, "decision": decision.as_str()});
        let mut result = crate::control_client::call_method(&path, "approve", &params)?;
        let failed = result["is_error"].as_bool().unwrap_or(true);
        if args.json {
            if let Some(map) = result.as_object_mut() {
                map.remove("text");
            }
            println!("{result}");
        } else {
            println!("{}", result["text"].as_str().unwrap_or_default());
        }
        Ok(i32::from(failed))
    })();
    outcome.unwrap_or_else(|e| {
        eprintln!("shellgate: {e:#}");
        1
    })
}

/// Arguments of `shellgate approvals`.
#[derive(Debug, clap::Args)]
pub struct ApprovalsArgs {
    /// Configuration file (its `[approvals] file` names the approvals file).
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    action: ApprovalsAction,
}

/// What to do with the persisted rules.
#[derive(Debug, clap::Subcommand)]
pub enum ApprovalsAction {
    /// The rules allowed always, numbered, with when they were added and the approved command.
    #[command(after_help = crate::help::APPROVALS)]
    List,
    /// Remove a rule: its number in `list`, or its command line as `list` shows it.
    #[command(after_help = crate::help::APPROVALS)]
    Revoke {
        /// The rule.
        rule: String,
    },
}

/// Run `shellgate approvals`.
pub fn run_approvals(args: &ApprovalsArgs) -> i32 {
    let outcome = (|| -> anyhow::Result<i32> {
        let config = shellgate::load_tool_config(args.config.as_deref())?;
        let path = config
            .approvals
            .file_path()
            .context("no approvals file: neither XDG_CONFIG_HOME nor HOME is set")?;
        let file = ApprovalsFile::new(path);
        match &args.action {
            ApprovalsAction::List => {
                let rules = file.load()?;
                println!("# {}", file.path().display());
                if rules.is_empty() {
                    println!("(no rules)");
                }
                for (i, rule) in rules.iter().enumerate() {
                    println!(
                        "{:>3}  {}    # added {}, approving `{}`",
                        i + 1,
                        rule.display(),
                        rule.added,
                        rule.command
                    );
                }
            }
            ApprovalsAction::Revoke { rule } => {
                let removed = file.revoke(rule)?;
                println!("Revoked `{}` from {}", removed.display(), file.path().display());
            }
        }
        Ok(0)
    })();
    outcome.unwrap_or_else(|e| {
        eprintln!("shellgate: {e:#}");
        1
    })
}
