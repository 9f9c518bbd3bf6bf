//! The bypass and false-positive corpora (tests/corpus/*.toml): commands gathered from peers'
//! public test suites and bug reports. No bypass case may be allowed under `@safe` plus its own
//! rules; every allowed case must be allowed under its rules.

mod common;

use serde::Deserialize;
use shellgate_intercept::Decision;

#[derive(Deserialize)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    source: String,
    #[serde(default)]
    allow: Vec<String>,
}

fn load(name: &str) -> Vec<Case> {
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let corpus: Corpus = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    for c in &corpus.case {
        assert!(
            !c.source.trim().is_empty(),
            "{name}: case `{}` cites no source",
            c.command
        );
    }
    corpus.case
}

fn policy_for(case: &Case) -> shellgate_intercept::Policy {
    let extra: Vec<&str> = case
        .allow
        .iter()
        .map(String::as_str)
        .filter(|r| *r != "@safe")
        .collect();
    common::safe_policy(&extra)
}

#[test]
fn no_bypass_is_allowed() {
    let cases = load("bypass.toml");
    assert!(
        cases.len() >= 300,
        "the bypass corpus has {} cases, fewer than 300",
        cases.len()
    );
    let mut allowed = Vec::new();
    for case in &cases {
        let j = common::judge(&policy_for(case), &case.command);
        if j.decision() == Decision::Allow {
            allowed.push(format!(
                "{:?} (allow {:?}; from {})",
                case.command, case.allow, case.source
            ));
        }
    }
    assert!(
        allowed.is_empty(),
        "{} bypasses allowed:\n{}",
        allowed.len(),
        allowed.join("\n")
    );
}

#[test]
fn no_false_positive() {
    let cases = load("allowed.toml");
    assert!(
        cases.len() >= 100,
        "the false-positive corpus has {} cases, fewer than 100",
        cases.len()
    );
    let mut refused = Vec::new();
    for case in &cases {
        let j = common::judge(&policy_for(case), &case.command);
        if j.decision() != Decision::Allow {
            refused.push(format!(
                "{:?} (allow {:?}): {:?} {}",
                case.command,
                case.allow,
                j.decision(),
                j.reason.unwrap_or_default()
            ));
        }
    }
    assert!(
        refused.is_empty(),
        "{} read-only commands refused:\n{}",
        refused.len(),
        refused.join("\n")
    );
}
