//! The verdict on a whole call, before anything runs: the request's environment, a request's
//! tightening of the modes, the command policy chained with a caller's interceptor, an interactive
//! program started as a job under an allowlist, and a request to leave the sandbox.

use std::collections::BTreeMap;

use crate::{AskMode, Context, EnvPolicy, Interceptor, Judgement, Normalized, Policy, Security, Verdict};

/// The rule name of a refused request environment.
pub const ENV_RULE: &str = "env-policy";

/// The rule name of an interactive program started as a job under `security = "allowlist"`.
pub const INTERACTIVE_RULE: &str = "interactive-job";

/// The rule name of a request to run outside the sandbox (`elevated`) under `elevated = "on"`.
pub const ELEVATED_RULE: &str = "elevated";

/// What a call asks for beyond its command.
#[derive(Debug, Clone, Copy)]
pub struct CallRequest<'a> {
    /// Variables the request sets.
    pub env: &'a BTreeMap<String, String>,
    /// A stricter `security` for this call.
    pub security: Option<Security>,
    /// A stricter `ask` for this call.
    pub ask: Option<AskMode>,
    /// It runs as a job (`background` or `yield_ms`): what is typed into it later is not judged.
    pub as_job: bool,
    /// It asks to run outside the sandbox.
    pub elevated: bool,
}

/// The verdict on a call.
#[derive(Debug, Clone)]
pub struct CallVerdict {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The policy's judgement, when the verdict is the policy's own (an ask a person may turn into
    /// durable rules).
    pub judgement: Option<Judgement>,
    /// For the result: a loosening the request asked for and did not get.
    pub notices: Vec<String>,
}

/// Judge a call: `policy` (or, when the request tightens an engine without one, `default`) chained
/// with `custom`; the first deny wins (the policy's before the custom one's), otherwise the
/// strictest verdict.
pub fn judge_call(
    policy: Option<&Policy>,
    default: impl FnOnce() -> Policy,
    custom: &dyn Interceptor,
    env: &EnvPolicy,
    request: &CallRequest<'_>,
    cmd: &Normalized,
    ctx: &Context,
) -> CallVerdict {
    if let Err(refusal) = env.check_request(request.env) {
        return CallVerdict {
            verdict: Verdict::deny(ENV_RULE, refusal.to_string()),
            judgement: None,
            notices: Vec::new(),
        };
    }
    let mut notices = Vec::new();
    let tightening = request.security.is_some() || request.ask.is_some();
    // A request may tighten even an engine without a configured policy: it starts from the default.
    let base = match policy {
        Some(p) => Some(p.clone()),
        None if tightening => Some(default()),
        None => None,
    };
    let policy = base.map(|p| {
        let (p, refused) = p.tightened_or_configured(request.security, request.ask);
        notices.extend(refused.iter().map(ToString::to_string));
        p
    });
    let env_miss = allowlist_env_miss(policy.as_ref(), env, request);
    let judgement = policy.as_ref().map(|p| p.judge(cmd, ctx));
    let own = judgement.as_ref().map_or(Verdict::Allow, |j| j.verdict.clone());
    let other = custom.inspect(cmd, ctx);
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
        && let Some(deny) = interactive_job_refusal(request, policy.as_ref(), judgement.as_ref())
    {
        verdict = deny;
    }
    // Leaving the sandbox is a person's decision, whatever the command (`elevated = "full"` makes
    // the call count as approved before it gets here).
    let from_policy = if request.elevated && verdict == Verdict::Allow {
        verdict = elevated_verdict(policy.as_ref());
        false
    } else {
        from_policy
    };
    CallVerdict {
        verdict,
        judgement: judgement.filter(|_| from_policy),
        notices,
    }
}

/// Under an allowlist, a job that starts an interactive shell or REPL is refused: what is typed into
/// it later cannot be judged.
fn interactive_job_refusal(
    request: &CallRequest<'_>,
    policy: Option<&Policy>,
    judgement: Option<&Judgement>,
) -> Option<Verdict> {
    let allowlist = policy.is_some_and(|p| p.security() == Security::Allowlist);
    let seg = judgement
        .filter(|_| request.as_job && allowlist)
        .and_then(crate::interactive_segment)?;
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
        Some(AskMode::Off) => Verdict::deny(ELEVATED_RULE, format!("{reason}, and ask = \"off\"")),
        _ => Verdict::ask(ELEVATED_RULE, reason),
    }
}

/// Under an allowlist a request may set only keys known to be inert (or allowed in `[env]`):
/// others need a person, like a command no rule allows.
fn allowlist_env_miss(
    policy: Option<&Policy>,
    env: &EnvPolicy,
    request: &CallRequest<'_>,
) -> Option<Verdict> {
    let p = policy.filter(|p| p.security() == Security::Allowlist)?;
    let refusal = env.check_request_allowlisted(request.env).err()?;
    let (rule, reason) = (ENV_RULE.to_owned(), refusal.to_string());
    Some(if p.ask() == AskMode::Off {
        Verdict::deny(rule, reason)
    } else {
        Verdict::Ask { rule, reason }
    })
}
