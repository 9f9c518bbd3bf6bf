//! shellgate: the engine under an AI agent's bash tool.
//!
//! [`BashTool`] composes the stage crates — normalize, intercept, execute, sink — into one call that
//! returns a [`ToolResult`]: clean bounded output plus structured status.
//!
//! ```
//! use shellgate::{BashParams, BashTool, ToolStatus};
//! use tokio_util::sync::CancellationToken;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tool = BashTool::default();
//! let result = tool.call(BashParams::new("echo hello; exit 3"), CancellationToken::new()).await;
//! assert_eq!(result.status, ToolStatus::Completed);
//! assert_eq!(result.exit_code, Some(3));
//! assert!(result.is_error);
//! assert_eq!(result.output, "hello\n");
//! # });
//! ```
#![forbid(unsafe_code)]

mod bash;
mod config;
mod file_config;
mod gate;
mod job_start;
mod params;
mod process;
mod result;
mod runners;
mod sandboxing;
mod shape;

pub use approvals::{ApprovalDecision, ApprovalsConfig, NetworkApproval};
pub use bash::BashTool;
pub use config::{DEFAULT_SESSION, NO_SESSION, ToolConfig, default_policy};
pub use file_config::{
    ConfigError, FileConfig, LoadedConfig, PROJECT_CONFIG, default_config_paths, is_trusted,
    load_config_sources, load_tool_config, tightening, trust, trust_store_path, user_config_path,
};
pub use gate::{ELEVATED_RULE, ENV_RULE, INTERACTIVE_RULE};
pub use jobs::{JobConfig, JobExit, JobInfo, JobRegistry, JobStatus};
pub use jobs::{QUIET_FACTOR, Settled};
pub use params::BashParams;
pub use process::{ProcessAction, ProcessParams, ProcessResult, ProcessTool, SessionSummary};
pub use result::{Approval, Blocked, ResultError, ToolResult, ToolStatus, truncation_notice};
pub use sandboxing::SandboxAccount;
pub use shellgate_hosts::{ClientFile, HostFile, HostsConfig, HostsFile, NamedHost, SshFile};
pub use shellgate_sandbox::{
    ModeSetting, NetworkSetting, ProxyFile, SANDBOX_ERROR, SANDBOX_UNAVAILABLE, SandboxConfig, SandboxFile,
};
pub use shellgate_sink::{DEFAULT_LIVE_CAPACITY, LiveFeed, LiveSink, LiveText};

/// The pending approvals of a [`BashTool`]: requests to run again once a person allows them.
pub type ApprovalBroker = approvals::ApprovalBroker<BashParams>;

pub use shellgate_approvals as approvals;
pub use shellgate_config as config_file;
pub use shellgate_executor as executor;
pub use shellgate_hosts as hosts;
pub use shellgate_intercept as intercept;
pub use shellgate_jobs as jobs;
pub use shellgate_normalize as normalize;
pub use shellgate_sandbox as sandbox;
pub use shellgate_sink as sink;
pub use tokio_util::sync::CancellationToken;
