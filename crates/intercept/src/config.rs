//! Configuration types of the `[policy]`, `[intercept]` and `[env]` sections.
//!
//! Every struct rejects unknown keys, so a typo is an error naming the key instead of a silently
//! ignored setting.

use serde::{Deserialize, Serialize};

use crate::ConfigError;

/// How much runs without a person's approval (SPEC I-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Security {
    /// Nothing runs.
    Deny,
    /// Only commands whose every segment is allowed by a rule run.
    Allowlist,
    /// Everything runs except dangerous and control commands.
    #[default]
    Full,
}

impl Security {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Security::Deny => "deny",
            Security::Allowlist => "allowlist",
            Security::Full => "full",
        }
    }

    /// Strictness rank: a higher value is stricter.
    pub(crate) fn strictness(self) -> u8 {
        match self {
            Security::Full => 0,
            Security::Allowlist => 1,
            Security::Deny => 2,
        }
    }
}

/// When a person is asked (SPEC I-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AskMode {
    /// Never ask: what would be asked is denied.
    Off,
    /// Ask when the allowlist misses or the command cannot be judged.
    #[default]
    OnMiss,
    /// Ask for every command that is not denied.
    Always,
}

impl AskMode {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AskMode::Off => "off",
            AskMode::OnMiss => "on-miss",
            AskMode::Always => "always",
        }
    }

    /// Strictness rank: `off` < `on-miss` < `always`. (`off` turns asks into denials, but it also
    /// never asks about allowed commands; a request may only move towards asking more.)
    pub(crate) fn strictness(self) -> u8 {
        match self {
            AskMode::Off => 0,
            AskMode::OnMiss => 1,
            AskMode::Always => 2,
        }
    }
}

/// The keys of the `[policy]` section ([`PolicyConfig`]).
///
/// For the configuration file's key check: a value's name, `table.key` inside a table,
pub const POLICY_KEYS: &[&str] = &[
    "security",
    "ask",
    "allow",
    "deny",
    "rules[].allow",
    "rules[].deny",
    "rules[].match",
    "rules[].not_match",
    "elevated",
];

/// The `[policy]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// `deny | allowlist | full` (default `full`).
    pub security: Security,
    /// `off | on-miss | always` (default `on-miss`).
    pub ask: AskMode,
    /// Allow rules (see the crate docs for the pattern syntax; `@safe` names the read-only profile).
    pub allow: Vec<String>,
    /// Deny rules: a matching segment is denied in every security mode.
    pub deny: Vec<String>,
    /// Rule entries with examples checked at load.
    pub rules: Vec<RuleEntry>,
    /// Whether a request may ask to run `elevated` (outside the sandbox): `off | on | full`
    /// (default `off`); `full` also runs it without asking for approval.
    #[serde(skip_serializing_if = "Elevated::is_off")]
    pub elevated: Elevated,
}

/// Whether requests may run elevated: outside the sandbox (SPEC X-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Elevated {
    /// An `elevated` request is refused (it runs as any other, with a notice).
    #[default]
    Off,
    /// An `elevated` request runs outside the sandbox, judged and approved as any other.
    On,
    /// An `elevated` request runs outside the sandbox and without asking for approval (deny
    /// verdicts still block it).
    Full,
}

impl Elevated {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Elevated::Off => "off",
            Elevated::On => "on",
            Elevated::Full => "full",
        }
    }

    /// Whether it is `off`.
    #[allow(clippy::trivially_copy_pass_by_ref)]
    pub fn is_off(&self) -> bool {
        *self == Elevated::Off
    }

    /// Strictness rank: `full` < `on` < `off`.
    pub(crate) fn strictness(self) -> u8 {
        match self {
            Elevated::Full => 0,
            Elevated::On => 1,
            Elevated::Off => 2,
        }
    }
}

/// One `[[policy.rules]]` entry: a rule with example commands checked when it loads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuleEntry {
    /// An allow pattern (exactly one of `allow` and `deny`).
    pub allow: Option<String>,
    /// A deny pattern.
    pub deny: Option<String>,
    /// Commands the rule must match.
    #[serde(rename = "match")]
    pub matches: Vec<String>,
    /// Commands the rule must not match (judged as whole commands: `npm run x; rm y` does not
    /// match `npm run *` because its second segment does not).
    pub not_match: Vec<String>,
}

/// One redirect-to-tool rule (SPEC I-1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedirectRuleConfig {
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// Regex flags: any of `i` (case-insensitive), `m` (multi-line), `s` (dot matches newline),
    /// `x` (verbose).
    pub flags: String,
    /// The tool the agent should use instead; the rule only fires when this tool is available.
    pub tool: String,
    /// Shown as `Blocked: <message>`.
    pub message: String,
    /// Match against the command with quoted text and non-writing redirects blanked out.
    pub quote_aware: bool,
}

impl PolicyConfig {
    /// What of `wanted`, from a file the user has not trusted, may apply over this section: only
    /// what makes the policy stricter — a stricter `security`, `ask` or `elevated`, more `deny`
    /// rules. The keys applied go to `applied`.
    #[must_use]
    pub fn tightened_by(&self, wanted: &PolicyConfig, applied: &mut Vec<&'static str>) -> PolicyConfig {
        let mut merged = self.clone();
        if wanted.security.strictness() >= merged.security.strictness() {
            merged.security = wanted.security;
            applied.push("policy.security");
        }
        // `off` denies what `on-miss` asks, `always` asks what `on-miss` allows: both tighten
        // `on-miss`; between the two, neither tightens the other.
        if merged.ask == wanted.ask || merged.ask == AskMode::OnMiss {
            merged.ask = wanted.ask;
            applied.push("policy.ask");
        }
        if wanted.elevated.strictness() >= merged.elevated.strictness() {
            merged.elevated = wanted.elevated;
            applied.push("policy.elevated");
        }
        merged.deny.extend(wanted.deny.iter().cloned());
        applied.push("policy.deny");
        merged
    }
}

/// The keys of the `[intercept]` section ([`InterceptConfig`]), for the configuration file's key
/// check: a value's name, `array[].key` in an array of tables.
pub const INTERCEPT_KEYS: &[&str] = &[
    "default_rules",
    "redirect_rules[].pattern",
    "redirect_rules[].flags",
    "redirect_rules[].tool",
    "redirect_rules[].message",
    "redirect_rules[].quote_aware",
    "available_tools",
    "preflight",
];

/// The `[intercept]` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct InterceptConfig {
    /// Turn on the built-in redirect-to-tool rules (SPEC I-1). Off by default.
    pub default_rules: bool,
    /// Extra redirect-to-tool rules.
    pub redirect_rules: Vec<RedirectRuleConfig>,
    /// Tools available to the agent, added to [`crate::Context::tool_names`].
    pub available_tools: Vec<String>,
    /// Check scripts run by `python`/`node`/`deno`/`bun` for shell-variable syntax (SPEC I-6).
    pub preflight: bool,
}

impl Default for InterceptConfig {
    fn default() -> Self {
        Self {
            default_rules: false,
            redirect_rules: Vec::new(),
            available_tools: Vec::new(),
            preflight: true,
        }
    }
}

/// The keys of the `[env]` section ([`EnvConfig`]), for the configuration file's key check.
pub const ENV_KEYS: &[&str] = &["allow_secrets", "redact", "allow"];

/// The `[env]` section (SPEC I-7).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EnvConfig {
    /// Inherited secret names that children may still see.
    pub allow_secrets: Vec<String>,
    /// Names whose values are redacted from output as `[REDACTED:NAME]` (and, being secrets, are
    /// removed from children's environment unless also in `allow_secrets`).
    pub redact: Vec<String>,
    /// Keys a request's `env` or a command prefix may set under an allowlist, besides the ones
    /// known to be inert. Keys that load or run code stay refused.
    pub allow: Vec<String>,
}

/// A whole file with the three sections this crate reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[policy]`
    pub policy: PolicyConfig,
    /// `[intercept]`
    pub intercept: InterceptConfig,
    /// `[env]`
    pub env: EnvConfig,
}

impl Config {
    /// Parse a TOML document holding `[policy]`, `[intercept]` and `[env]`. An unknown key is an
    /// error that names it. The rules are not validated here: build a [`crate::Policy`] for that.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_full_on_miss_with_preflight() {
        let c = Config::from_toml("").unwrap();
        assert_eq!(c.policy.security, Security::Full);
        assert_eq!(c.policy.ask, AskMode::OnMiss);
        assert!(c.intercept.preflight);
        assert!(!c.intercept.default_rules);
    }

    #[test]
    fn full_example_parses() {
        let c = Config::from_toml(
            r#"
[policy]
security = "allowlist"
ask = "on-miss"
allow = ["@safe", "git status", "cargo test *"]
deny = ["git push *"]
[[policy.rules]]
allow = "npm run *"
match = ["npm run build"]
not_match = ["npm run build; rm -rf x"]
[intercept]
default_rules = true
available_tools = ["read", "search"]
preflight = true
[env]
allow_secrets = ["GITHUB_TOKEN"]
redact = ["MY_SERVICE_KEY"]
"#,
        )
        .unwrap();
        assert_eq!(c.policy.security, Security::Allowlist);
        assert_eq!(c.policy.rules[0].allow.as_deref(), Some("npm run *"));
        assert_eq!(c.policy.rules[0].matches, ["npm run build"]);
        assert_eq!(c.env.redact, ["MY_SERVICE_KEY"]);
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = Config::from_toml("[policy]\nsecurty = \"deny\"\n").unwrap_err();
        assert!(err.to_string().contains("securty"), "{err}");
        let err = Config::from_toml("[[policy.rules]]\nallow = \"x\"\nmatches = []\n").unwrap_err();
        assert!(err.to_string().contains("matches"), "{err}");
        let err = Config::from_toml("[policy]\nsecurity = \"lax\"\n").unwrap_err();
        assert!(err.to_string().contains("lax"), "{err}");
        let err = Config::from_toml("[policy]\nelevated = \"yes\"\n").unwrap_err();
        assert!(err.to_string().contains("yes"), "{err}");
    }

    #[test]
    fn elevated_defaults_off_and_parses() {
        assert_eq!(Config::from_toml("").unwrap().policy.elevated, Elevated::Off);
        let c = Config::from_toml("[policy]\nelevated = \"full\"\n").unwrap();
        assert_eq!(c.policy.elevated, Elevated::Full);
    }
}
