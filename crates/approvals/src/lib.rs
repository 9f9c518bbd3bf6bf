//! shellgate-approvals: the requests a policy answered `Ask` wait here for a person — allowed
//! once, allowed always (the narrowest durable rule: the exact argv that missed), or denied.
//!
//! [`ApprovalBroker`] keeps pending requests of any type by id, with expiry and a bound;
//! [`ApprovalsFile`] is the durable store of allow-always rules and destinations;
//! [`ApprovalState`] ties them to an [`intercept`](shellgate_intercept) policy whose allow list
//! grows with every rule a person allows always, and [`ApprovalState::decide`] carries out a
//! decision.
//!
//! ```
//! use std::path::Path;
//! use shellgate_approvals::{ApprovalDecision, ApprovalState, ApprovalsConfig, Decided};
//! use shellgate_intercept::{AskMode, Context, Policy, Security, Verdict};
//! use shellgate_normalize::{Normalizer as _, StandardNormalizer};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let config = ApprovalsConfig { file: Some(dir.path().join("approvals.toml")), ..ApprovalsConfig::default() };
//! let policy = Policy::builder().security(Security::Allowlist).ask(AskMode::OnMiss).allow("ls *").build().unwrap();
//! let approvals: ApprovalState<String> = ApprovalState::new(&config, Some(&policy));
//!
//! // The policy asks about `make test`; the request waits for a person.
//! let command = "make test";
//! let normalized = StandardNormalizer::default().normalize(command);
//! let judgement = approvals.policy().unwrap().judge(&normalized, &Context::default());
//! assert!(matches!(judgement.verdict, Verdict::Ask { .. }));
//! let ticket = approvals.broker.register(command.to_owned(), command, "/work".into(), judgement.missing().cloned().collect(), true);
//!
//! // A person allows it always: the exact argv is persisted and allowed from now on.
//! let Decided::Run { request, notices } = approvals.decide(&ticket.short_id, ApprovalDecision::AllowAlways, Path::new("/work")) else {
//!     panic!("not allowed")
//! };
//! assert_eq!(request, "make test");
//! assert!(notices[0].contains("`make test`"));
//! let again = approvals.policy().unwrap().judge(&normalized, &Context::default());
//! assert_eq!(again.verdict, Verdict::Allow);
//! ```

mod approval;
mod broker;
mod decide;
mod rule;
mod state;
mod store;
mod stored_domain;
mod time;
pub mod trust;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use approval::Approval;
pub use broker::{
    ApprovalBroker, DEFAULT_MAX_PENDING, LOCAL_HOST, Lookup, Pending, Ticket, fenced, one_line, prompt_text,
};
pub use decide::{
    DENIED_RULE, DOMAIN_DENIED_RULE, DOMAIN_ONCE_RULE, Decided, EXPIRED_RULE, NOT_ALWAYS_RULE,
    NetworkApproval, UNKNOWN_RULE,
};
pub use rule::{RuleRefusal, argv_pattern, rules_for};
pub use state::ApprovalState;
pub use store::{ApprovalsFile, StoreError, StoredDomain, StoredRule, default_approvals_path};
pub use time::rfc3339;
pub use trust::{is_trusted, trust, trust_store_path};

/// The environment variable naming the approvals file (instead of the default path).
pub const APPROVALS_FILE_ENV: &str = "SHELLGATE_APPROVALS_FILE";

/// Default lifetime of a pending approval: 30 minutes.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(30 * 60);

/// Default time an MCP server waits for a person to answer an elicitation: 5 minutes.
pub const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// A person's answer to a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalDecision {
    /// Run exactly this request once.
    AllowOnce,
    /// Run it, and persist rules so that the same commands run without asking from now on.
    AllowAlways,
    /// Do not run it.
    Deny,
}

impl ApprovalDecision {
    /// The spelling used in requests and replies.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow-once",
            ApprovalDecision::AllowAlways => "allow-always",
            ApprovalDecision::Deny => "deny",
        }
    }
}

impl FromStr for ApprovalDecision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "allow-once" | "once" => Ok(Self::AllowOnce),
            "allow-always" | "always" => Ok(Self::AllowAlways),
            "deny" => Ok(Self::Deny),
            other => Err(format!(
                "unknown decision `{other}`: expected allow-once, allow-always or deny"
            )),
        }
    }
}

/// What happens to a pending approval nobody decided before it expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpiryFallback {
    /// It is denied: the command never runs.
    #[default]
    Deny,
}

/// Settings of approvals (the `[approvals]` section).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsConfig {
    /// How long a pending approval waits for a decision.
    pub expiry: Duration,
    /// What an expired approval becomes.
    pub fallback: ExpiryFallback,
    /// The approvals file (`None`: [`default_approvals_path`]).
    pub file: Option<PathBuf>,
    /// Most approvals pending at once (the oldest is dropped beyond it).
    pub max_pending: usize,
    /// Whether an MCP server offers the model the `approve` tool. Off by default: the model would
    /// approve its own commands; a person answers through elicitation, `shellgate approve` or
    /// JSON-RPC instead.
    pub mcp_approve_tool: bool,
    /// How long an MCP server waits for a person to answer an elicitation before the call returns
    /// `approval_pending` (zero: never ask through elicitation).
    pub elicitation_timeout: Duration,
    /// Whether a person may decide pending approvals through the server's control socket
    /// (`shellgate approve`). The socket never serves the engine's own descendants either way.
    pub socket_approve: bool,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        Self {
            expiry: DEFAULT_EXPIRY,
            fallback: ExpiryFallback::Deny,
            file: None,
            max_pending: DEFAULT_MAX_PENDING,
            mcp_approve_tool: false,
            elicitation_timeout: DEFAULT_ELICITATION_TIMEOUT,
            socket_approve: true,
        }
    }
}

impl ApprovalsConfig {
    /// The approvals file in force: the configured one, else `$SHELLGATE_APPROVALS_FILE`, else the
    /// default path.
    pub fn file_path(&self) -> Option<PathBuf> {
        self.file
            .clone()
            .or_else(|| std::env::var_os(APPROVALS_FILE_ENV).map(PathBuf::from))
            .or_else(default_approvals_path)
    }
}

/// The keys of the `[approvals]` section ([`ApprovalsFileConfig`]), for the configuration file's
/// key check.
pub const APPROVALS_KEYS: &[&str] = &[
    "expiry_secs",
    "fallback",
    "file",
    "mcp_approve_tool",
    "elicitation_timeout_secs",
    "socket_approve",
];

/// The `[approvals]` section of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApprovalsFileConfig {
    /// Seconds a pending approval waits (default 1800).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiry_secs: Option<f64>,
    /// What an expired approval becomes: `deny`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<ExpiryFallback>,
    /// The approvals file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Offer the model the MCP `approve` tool (default false).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_approve_tool: Option<bool>,
    /// Seconds an MCP server waits for an elicitation answer (default 300; 0: never elicit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elicitation_timeout_secs: Option<f64>,
    /// Let `shellgate approve` decide through the control socket (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket_approve: Option<bool>,
}

impl ApprovalsFileConfig {
    /// Apply the values that are set.
    pub fn apply(&self, config: &mut ApprovalsConfig) {
        if let Some(s) = self.expiry_secs {
            config.expiry = Duration::from_secs_f64(s.clamp(0.0, 1e9));
        }
        if let Some(f) = self.fallback {
            config.fallback = f;
        }
        if let Some(p) = &self.file {
            config.file = Some(p.clone());
        }
        if let Some(offered) = self.mcp_approve_tool {
            config.mcp_approve_tool = offered;
        }
        if let Some(s) = self.elicitation_timeout_secs {
            config.elicitation_timeout = Duration::from_secs_f64(s.clamp(0.0, 1e9));
        }
        if let Some(allowed) = self.socket_approve {
            config.socket_approve = allowed;
        }
    }

    /// Every key, with the values in effect in `config`.
    pub fn effective(config: &ApprovalsConfig) -> Self {
        Self {
            expiry_secs: Some(config.expiry.as_secs_f64()),
            fallback: Some(config.fallback),
            file: config.file_path(),
            mcp_approve_tool: Some(config.mcp_approve_tool),
            elicitation_timeout_secs: Some(config.elicitation_timeout.as_secs_f64()),
            socket_approve: Some(config.socket_approve),
        }
    }
}
