//! The keys a configuration file may hold: the tool's own, then each stage's section with the keys
//! its owner declares (checked by `shellgate_config::parse`).

/// The tool's own keys: the top level of the file.
const TOOL_KEYS: &[&str] = &[
    "cwd",
    "shell",
    "login",
    "prefix",
    "timeout",
    "max_timeout",
    "kill_grace",
    "head_bytes",
    "tail_bytes",
    "tool_names",
    "session",
    "session_idle_timeout",
    "max_jobs",
    "max_finished_jobs",
    "finished_job_ttl",
    "auto_yield_ms",
    "head_grace_ms",
    "poll_settle_ms",
];

/// Each stage's section and the keys its owner declares.
const SECTIONS: &[(&str, &[&str])] = &[
    ("policy", shellgate_intercept::POLICY_KEYS),
    ("intercept", shellgate_intercept::INTERCEPT_KEYS),
    ("env", shellgate_intercept::ENV_KEYS),
    ("sandbox", shellgate_sandbox::SANDBOX_KEYS),
    ("approvals", shellgate_approvals::APPROVALS_KEYS),
    ("ssh", shellgate_hosts::SSH_KEYS),
    ("docker", shellgate_hosts::CLIENT_KEYS),
    ("podman", shellgate_hosts::CLIENT_KEYS),
    ("kubectl", shellgate_hosts::CLIENT_KEYS),
    ("hosts", shellgate_hosts::HOSTS_KEYS),
];

/// Every key of a configuration file (SPEC T-10), in the order `shellgate config` shows them.
pub(crate) fn file_keys() -> &'static [&'static str] {
    static KEYS: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| shellgate_config::join_keys(TOOL_KEYS, SECTIONS));
    &KEYS
}
