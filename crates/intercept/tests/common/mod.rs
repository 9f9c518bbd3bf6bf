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

/// A complete bash session state as the engine saves it: `vars` (`declare -p` lines), the shell's
/// options, `defs` (functions and aliases), the engine's own exit trap, `hooks` (more traps,
/// hashed paths, builtins) and the end line.
pub fn bash_state(vars: &str, defs: &str, hooks: &str) -> String {
    format!(
        "{vars}declare -x PATH=\"/usr/local/bin:/usr/bin:/bin\"\n\
         declare -- __shellgate_so=\"braceexpand:hashall:interactive-comments\"\n\
         declare -- __shellgate_bo=\"expand_aliases:extglob:extquote\"\n\
         #shellgate-state-functions\n{defs}#shellgate-state-hooks\n\
         trap -- '{{ \\__shellgate_exit; }} 2>/dev/null' EXIT\n{hooks}enable echo\n: shellgate-state-end\n"
    )
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
