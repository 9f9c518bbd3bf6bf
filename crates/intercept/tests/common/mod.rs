//! Helpers shared by the integration tests.
#![allow(dead_code)]

use shellgate_intercept::{AskMode, Context, Decision, Judgement, Policy, Security};
use shellgate_normalize::{Normalizer, StandardNormalizer};

/// A fixed workspace directory for judgements (it need not exist).
pub const WORKSPACE: &str = "/work/ws";

/// `security = "allowlist"`, `ask = "on-miss"`, `allow = ["@safe", extra…]`, PATH fixed.
pub fn safe_policy(extra: &[&str]) -> Policy {
    let mut b = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::OnMiss)
        .search_path("/usr/local/bin:/usr/bin:/bin")
        .allow("@safe");
    for rule in extra {
        b = b.allow(*rule);
    }
    b.build().expect("policy builds")
}

/// A context whose working directory is [`WORKSPACE`].
pub fn ctx() -> Context {
    Context {
        cwd: Some(WORKSPACE.into()),
        ..Context::default()
    }
}

/// Judge `command` (normalized first, as the tool does).
pub fn judge(policy: &Policy, command: &str) -> Judgement {
    policy.judge(&StandardNormalizer::default().normalize(command), &ctx())
}

/// The decision for `command`.
pub fn decide(policy: &Policy, command: &str) -> Decision {
    judge(policy, command).decision()
}

/// Skip a test for want of an outside program, printing why; fails under
/// `SHELLGATE_REQUIRE_ALL=1`.
pub fn skip(reason: &str) {
    assert!(
        std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
        "{reason} (SHELLGATE_REQUIRE_ALL=1)"
    );
    eprintln!("skipped: {reason}");
}
