//! The peers' policy corpus (`shared/corpus/policy.jsonl` beside the checkout: cases from Codex,
//! OpenClaw, Gemini CLI and Claude Code with expected verdicts). A peer's bare rule `X` is an argv
//! prefix, which here is the pair `X` and `X *`; `"@safe"` is our read-only profile. No
//! `not_allow` case may be allowed and no `allow` case refused; `expect: "any"` accepts either.

mod common;

use serde_json::Value;
use shellgate_intercept::{AskMode, Decision, Policy, Security};
use std::path::PathBuf;

fn corpus_path() -> Option<PathBuf> {
    let path = std::env::var_os("SHELLGATE_SHARED_CORPUS")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"),
            PathBuf::from,
        )
        .join("policy.jsonl");
    if path.is_file() {
        return Some(path);
    }
    let reason = format!("{} is missing", path.display());
    assert!(
        std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
        "{reason} (SHELLGATE_REQUIRE_ALL=1)"
    );
    eprintln!("skipped: {reason}");
    None
}

/// The case's rules in our syntax.
fn rules(allow: &Value) -> Vec<String> {
    match allow {
        Value::String(s) if s == "@safe" => vec![s.clone()],
        Value::String(s) => vec![s.clone(), format!("{s} *")],
        Value::Array(items) => items.iter().flat_map(|v| rules(v).into_iter()).collect(),
        other => panic!("unreadable allow {other}"),
    }
}

/// `security = "allowlist"`, `ask = "on-miss"`, exactly the case's rules.
fn policy(rules: &[String]) -> Policy {
    let mut b = Policy::builder()
        .security(Security::Allowlist)
        .ask(AskMode::OnMiss)
        .search_path("/usr/local/bin:/usr/bin:/bin");
    for rule in rules {
        b = b.allow(rule.as_str());
    }
    b.build().expect("policy builds")
}

#[test]
fn peers_cases_have_no_bypass_and_no_false_positive() {
    let Some(path) = corpus_path() else { return };
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut bypasses, mut refusals, mut cases) = (Vec::new(), Vec::new(), 0);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let command = case["command"].as_str().unwrap();
        let expect = case["expect"].as_str().unwrap();
        let rules = rules(&case["allow"]);
        let j = common::judge(&policy(&rules), command);
        let allowed = j.decision() == Decision::Allow;
        let entry = || {
            format!(
                "{command:?} (allow {}; {}): {:?} {}",
                case["allow"],
                case["source"].as_str().unwrap_or(""),
                j.decision(),
                j.reason.clone().unwrap_or_default()
            )
        };
        match expect {
            "not_allow" if allowed => bypasses.push(entry()),
            "allow" if !allowed => refusals.push(entry()),
            "allow" | "not_allow" | "any" => {}
            other => panic!("unknown expectation {other}"),
        }
        cases += 1;
    }
    assert!(cases >= 350, "{} holds only {cases} cases", path.display());
    assert!(
        bypasses.is_empty() && refusals.is_empty(),
        "{} bypasses:\n{}\n{} false positives:\n{}",
        bypasses.len(),
        bypasses.join("\n"),
        refusals.len(),
        refusals.join("\n")
    );
}
