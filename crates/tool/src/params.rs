//! Parameters of the `bash` tool (SPEC T-1).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use shellgate_intercept::{AskMode, Security};

/// What an agent sends to run one command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashParams {
    /// The shell command to run.
    pub command: String,
    /// Working directory (relative paths resolve against the tool's current directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables for this command.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Timeout in seconds (default 300, clamped to 1..=3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Show only the first N lines of output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<u64>,
    /// Show only the last N lines of output (applied after `head`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<u64>,
    /// Run under a pseudo-terminal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pty: bool,
    /// Start as a background job and return at once.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
    /// Turn into a background job if still running after this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yield_ms: Option<u64>,
    /// Persistent shell session name (`"none"` for a fresh shell). Background, `yield_ms` and `pty`
    /// runs in a session start in a separate shell from the session's state (variables, functions,
    /// aliases, options, directory) and do not change it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Judge this call more strictly than configured: `deny`, `allowlist` or `full`. A value looser
    /// than the configured one is refused with a notice, and the configured one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "security_schema")]
    pub security: Option<Security>,
    /// Ask a person more often than configured: `off`, `on-miss` or `always`. A value looser than
    /// the configured one is refused with a notice, and the configured one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "ask_schema")]
    pub ask: Option<AskMode>,
    /// Run outside the sandbox, when the configuration allows it (`[policy] elevated = "on"` or
    /// `"full"`; with `"full"` also without asking for approval). Refused with a notice otherwise.
    /// After the tool's check, `true` means the elevation was granted.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub elevated: bool,
    /// Run sandboxed: `read-only`, `workspace-write` or `full`. Only stricter than the configured
    /// `[sandbox] mode` (read-only > workspace-write > full > off); a looser value is refused with a
    /// notice, and the configured one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "sandbox_schema")]
    pub sandbox: Option<shellgate_sandbox::SandboxMode>,
    /// Where the command runs: `local` (default), `auto` (the configured sandbox, else local),
    /// `sandbox` (the configured sandbox mode, `workspace-write` when none is configured),
    /// `ssh:<destination>`, `docker:<container>`, `podman:<container>`,
    /// `k8s:<pod>[/<container>][@<namespace>]`, or a host named in the configuration. On a host the
    /// command runs in that host's persistent session (or once with `session: "none"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// With `[sandbox] network = "proxy"`: reach only these destinations (`host`, `*.suffix`,
    /// optionally `:port`) of the configured `allowed_domains` for this call. Never widens them; in
    /// a session the call gets a shell of its own with the narrower list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_domains: Option<Vec<String>>,
}

fn sandbox_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["read-only", "workspace-write", "full"],
        "description": "Run sandboxed, stricter than configured (read-only > workspace-write > full); a looser value is refused with a notice.",
    })
}

fn security_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["deny", "allowlist", "full"],
        "description": "Judge this call more strictly than configured (deny > allowlist > full); a looser value is refused with a notice.",
    })
}

fn ask_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["off", "on-miss", "always"],
        "description": "Ask a person more often than configured (always > on-miss > off); a looser value is refused with a notice.",
    })
}

impl BashParams {
    /// Parameters for `command` with every option at its default.
    pub fn new(command: impl Into<String>) -> Self {
        Self {
            command: command.into(),
            ..Self::default()
        }
    }
}
