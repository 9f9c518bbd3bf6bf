//! The judging step of a call, before anything runs, as the intercept crate judges it
//! ([`shellgate_intercept::judge_call`]), mapped into the tool's result; and the redaction of the
//! configured secret values ([`EngineEnv`]) from what the model reads.

use std::path::Path;

use shellgate_intercept::{
    CallRequest, CallVerdict, Context, EngineEnv, Interceptor, Normalized, Policy, Verdict, judge_call,
};

use crate::{Approval, BashParams, Blocked, ToolResult, ToolStatus};

pub use shellgate_intercept::{ELEVATED_RULE, ENV_RULE, INTERACTIVE_RULE};

/// Redaction of the configured secret values from a result.
pub(crate) trait Redacting {
    /// `result` with every configured secret value in its model-visible text redacted.
    fn redacted(&self, result: ToolResult) -> ToolResult;
}

impl Redacting for EngineEnv {
    fn redacted(&self, mut result: ToolResult) -> ToolResult {
        let secrets = self.redactions();
        if secrets.is_empty() {
            return result;
        }
        result.output = shellgate_sink::redact_text(&result.output, &secrets);
        for notice in &mut result.notices {
            *notice = shellgate_sink::redact_text(notice, &secrets);
        }
        if let Some(blocked) = &mut result.blocked {
            blocked.message = shellgate_sink::redact_text(&blocked.message, &secrets);
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

/// Judge a call (see [`shellgate_intercept::judge_call`]). `Ok` carries notices for the result (a
/// refused loosening); `Err` is the result of a call that must not run.
pub(crate) fn judge(
    policy: Option<&Policy>,
    custom: &dyn Interceptor,
    env: &EngineEnv,
    call: &Call<'_>,
) -> Result<Vec<String>, Box<ToolResult>> {
    let cwd = call.cwd.display().to_string();
    let original = &call.normalized.original;
    let request = CallRequest {
        env: &call.params.env,
        security: call.params.security,
        ask: call.params.ask,
        as_job: call.params.background || call.params.yield_ms.is_some(),
        elevated: call.params.elevated,
    };
    let CallVerdict {
        verdict,
        judgement,
        notices,
    } = judge_call(
        policy,
        crate::config::default_policy,
        custom,
        &env.policy,
        &request,
        call.normalized,
        call.ctx,
    );
    let (status, message, rule, suggested_tool, approval) = match verdict {
        Verdict::Allow => return Ok(notices),
        Verdict::Deny {
            rule,
            reason,
            suggested_tool,
        } => {
            let message = format!("Blocked: {reason}\nCommand: {original}");
            (ToolStatus::Blocked, message, rule, suggested_tool, None)
        }
        Verdict::Ask { rule, reason } => {
            let approval = Approval::asked(original, &cwd, &rule, &reason, judgement.as_ref());
            let message = format!("Approval required: {reason}\nCommand: {original}");
            (ToolStatus::ApprovalPending, message, rule, None, Some(approval))
        }
    };
    let mut result = ToolResult::not_run(status, message.clone(), cwd);
    result.blocked = Some(Blocked {
        rule,
        message,
        suggested_tool,
    });
    result.approval = approval;
    result.notices = notices;
    Err(Box::new(result))
}
