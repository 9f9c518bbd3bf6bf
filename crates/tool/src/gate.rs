//! The judging step of a call, before anything runs: the environment policy, a request's
//! tightening of the modes, the command policy chained with a custom interceptor, and the guard
//! against interactive programs started as jobs. Also the redaction of configured secret values
//! from what the model reads.

use std::path::Path;

use shellgate_intercept::{
    Context, EnvConfig, EnvPolicy, Interceptor, Judgement, Normalized, Policy, Security, Verdict,
};

use crate::{Approval, BashParams, Blocked, ToolResult, ToolStatus};

/// The rule name of a refused request environment.
pub const ENV_RULE: &str = "env-policy";

/// The rule name of an interactive program started as a job under `security = "allowlist"`.
pub const INTERACTIVE_RULE: &str = "interactive-job";

/// The rule name of a request to run outside the sandbox (`elevated`) under `elevated = "on"`.
pub const ELEVATED_RULE: &str = "elevated";

/// The environment policy with what it means for this engine's own environment.
#[derive(Debug, Default)]
pub(crate) struct EnvGate {
    policy: EnvPolicy,
    /// Inherited variables removed from every child (secrets not allowlisted, injection keys).
    pub(crate) removals: Vec<String>,
    /// Configured secret names and their values, replaced by `[REDACTED:NAME]` in the output stream
    /// (window, artifact, live view, job logs) and in results.
    redactions: std::sync::Arc<Vec<(String, String)>>,
}

impl EnvGate {
    /// The gate of `config` over the engine's environment as it is now.
    pub(crate) fn new(config: &EnvConfig) -> Self {
        // Variables that are not UTF-8 cannot be named in a configuration; they are kept.
        let vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let policy = EnvPolicy::new(config);
        Self {
            removals: policy.inherited_removals(vars.iter().map(|(k, v)| (k, v))),
            redactions: std::sync::Arc::new(policy.redactions(vars.iter().map(|(k, v)| (k, v)))),
            policy,
        }
    }

    /// The secret values to redact from output streams.
    pub(crate) fn redactions(&self) -> std::sync::Arc<Vec<(String, String)>> {
        std::sync::Arc::clone(&self.redactions)
    }

    /// `result` with every configured secret value in its model-visible text redacted.
    pub(crate) fn redacted(&self, mut result: ToolResult) -> ToolResult {
        if self.redactions.is_empty() {
            return result;
        }
        result.output = shellgate_sink::redact_text(&result.output, &self.redactions);
        for notice in &mut result.notices {
            *notice = shellgate_sink::redact_text(notice, &self.redactions);
        }
        if let Some(blocked) = &mut result.blocked {
            blocked.message = shellgate_sink::redact_text(&blocked.message, &self.redactions);
        }
        result
    }
}

/// What the judging step needs to know about one call.
pub(crate) struct Call<'a> {
    pub params: &'a BashParams,
    pub normalized: &'a Normalized,
    pub ctx: &'a Context,
    pub cwd: &'a Path,
}

/// Judge a call. `Ok` carries notices for the result (a refused loosening); `Err` is the result of
/// a call that must not run.
pub(crate) fn judge(
    policy: Option<&Policy>,
    custom: &dyn Interceptor,
    env: &EnvGate,
    call: &Call<'_>,
) -> Result<Vec<String>, Box<ToolResult>> {
    let cwd = call.cwd.display().to_string();
    let original = &call.normalized.original;
    if let Err(refusal) = env.policy.check_request(&call.params.env) {
        let message = format!("Blocked: {refusal}\nCommand: {original}");
        return Err(Box::new(blocked(message, ENV_RULE.into(), None, cwd)));
    }
    let mut notices = Vec::new();
    let tightening = call.params.security.is_some() || call.params.ask.is_some();
    // A request may tighten even an engine without a configured policy: it starts from the default.
    let base = match policy {
        Some(p) => Some(p.clone()),
        None if tightening => Some(crate::config::default_policy()),
        None => None,
    };
    let policy = base.map(|p| {
        let (p, refused) = p.tightened_or_configured(call.params.security, call.params.ask);
        notices.extend(refused.iter().map(ToString::to_string));
        p
    });
    let env_miss = allowlist_env_miss(policy.as_ref(), env, call);
    let judgement = policy.as_ref().map(|p| p.judge(call.normalized, call.ctx));
    let own = judgement.as_ref().map_or(Verdict::Allow, |j| j.verdict.clone());
    let other = custom.inspect(call.normalized, call.ctx);
    // The first deny wins (the policy's before the custom one's), otherwise the strictest.
    let (verdict, from_policy) = if own.is_deny() || own.severity() >= other.severity() {
        (own, true)
    } else {
        (other, false)
    };
    let (mut verdict, from_policy) = match env_miss {
        Some(miss) if miss.severity() > verdict.severity() => (miss, false),
        _ => (verdict, from_policy),
    };
    if !verdict.is_deny()
        && let Some(deny) = interactive_job_refusal(call.params, policy.as_ref(), judgement.as_ref())
    {
        verdict = deny;
    }
    // Leaving the sandbox is a person's decision, whatever the command (`elevated = "full"` makes
    // the call count as approved before it gets here).
    let from_policy = if call.params.elevated && verdict == Verdict::Allow {
        verdict = elevated_verdict(policy.as_ref());
        false
    } else {
        from_policy
    };
    match verdict {
        Verdict::Allow => Ok(notices),
        Verdict::Deny {
            rule,
            reason,
            suggested_tool,
        } => {
            let message = format!("Blocked: {reason}\nCommand: {original}");
            let mut result = blocked(message, rule, suggested_tool, cwd);
            result.notices = notices;
            Err(Box::new(result))
        }
        Verdict::Ask { rule, reason } => {
            let message = format!("Approval required: {reason}\nCommand: {original}");
            let mut result = ToolResult::not_run(ToolStatus::ApprovalPending, message.clone(), cwd.clone());
            result.blocked = Some(Blocked {
                rule: rule.clone(),
                message,
                suggested_tool: None,
            });
            let from_judgement = judgement.as_ref().filter(|_| from_policy);
            result.approval = Some(Approval {
                command: original.clone(),
                cwd,
                rule,
                reason,
                segments_missing: from_judgement
                    .map(|j| j.missing().cloned().collect())
                    .unwrap_or_default(),
                always_approvable: from_judgement.is_some_and(Judgement::always_approvable),
                id: String::new(),
                short_id: String::new(),
                host: String::new(),
                expires_at: String::new(),
            });
            result.notices = notices;
            Err(Box::new(result))
        }
    }
}

/// Under an allowlist, a job that starts an interactive shell or REPL is refused: what is typed into
/// it later cannot be judged.
fn interactive_job_refusal(
    params: &BashParams,
    policy: Option<&Policy>,
    judgement: Option<&Judgement>,
) -> Option<Verdict> {
    let as_job = params.background || params.yield_ms.is_some();
    let allowlist = policy.is_some_and(|p| p.security() == Security::Allowlist);
    let seg = judgement
        .filter(|_| as_job && allowlist)
        .and_then(shellgate_intercept::interactive_segment)?;
    Some(Verdict::deny(
        INTERACTIVE_RULE,
        format!(
            "`{}` starts an interactive shell or REPL as a job under security = \"allowlist\": \
             what is typed into it later cannot be judged. Run each command on its own instead.",
            seg.command
        ),
    ))
}

/// The verdict on an otherwise allowed call that asks to leave the sandbox: each elevated run is
/// approved once (no durable rule can stand for "outside the sandbox").
fn elevated_verdict(policy: Option<&Policy>) -> Verdict {
    let reason = "the command asks to run outside the sandbox (elevated)";
    match policy.map(Policy::ask) {
        Some(shellgate_intercept::AskMode::Off) => {
            Verdict::deny(ELEVATED_RULE, format!("{reason}, and ask = \"off\""))
        }
        _ => Verdict::ask(ELEVATED_RULE, reason),
    }
}

fn blocked(message: String, rule: String, suggested_tool: Option<String>, cwd: String) -> ToolResult {
    let mut result = ToolResult::not_run(ToolStatus::Blocked, message.clone(), cwd);
    result.blocked = Some(Blocked {
        rule,
        message,
        suggested_tool,
    });
    result
}

/// Under an allowlist a request may set only keys known to be inert (or allowed in `[env]`):
/// others need a person, like a command no rule allows.
fn allowlist_env_miss(policy: Option<&Policy>, env: &EnvGate, call: &Call<'_>) -> Option<Verdict> {
    let p = policy.filter(|p| p.security() == shellgate_intercept::Security::Allowlist)?;
    let refusal = env.policy.check_request_allowlisted(&call.params.env).err()?;
    let (rule, reason) = (ENV_RULE.to_owned(), refusal.to_string());
    Some(if p.ask() == shellgate_intercept::AskMode::Off {
        Verdict::deny(rule, reason)
    } else {
        Verdict::Ask { rule, reason }
    })
}
