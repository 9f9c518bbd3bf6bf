//! What of a project's configuration applies before the user trusted it (see
//! [`shellgate_approvals::trust`] for the trust itself): each section's owner says what of it
//! only makes the configuration stricter.

use super::FileConfig;
use crate::ToolConfig;

/// What of an untrusted `file` may apply over `current`: only what makes the configuration
/// stricter — a stricter `security`, `ask` or `elevated`, more `deny` rules, more `[env] redact`
/// names, a stricter sandbox mode, more protected paths, the network or Unix sockets off, lower
/// limits. Returns that part as a file of its own (its policy merged with the current one), and
/// the keys of `keys` (the ones the file sets) that were left out.
pub fn tightening(file: &FileConfig, keys: &[String], current: &ToolConfig) -> (FileConfig, Vec<String>) {
    let mut applied: Vec<&str> = Vec::new();
    let mut out = FileConfig::default();
    if let Some(wanted) = &file.policy {
        let now = current
            .policy
            .as_ref()
            .map(shellgate_intercept::Policy::policy_config);
        out.policy = Some(now.unwrap_or_default().tightened_by(wanted, &mut applied));
        // The current intercept section stays as it is (the file's needs trust).
        out.intercept = current.policy.as_ref().map(|p| p.intercept_config().clone());
    }
    if let Some(env) = file.env.as_ref().filter(|e| !e.redact.is_empty()) {
        let mut merged = current.env.clone();
        merged.redact.extend(env.redact.iter().cloned());
        out.env = Some(merged);
        applied.push("env.redact");
    }
    if let Some(wanted) = &file.sandbox {
        out.sandbox = Some(wanted.tightening(&current.sandbox, &mut applied));
    }
    let left_out = keys
        .iter()
        .filter(|k| {
            !applied
                .iter()
                .any(|a| k.as_str() == *a || k.starts_with(&format!("{a}[")))
        })
        .cloned()
        .collect();
    (out, left_out)
}
