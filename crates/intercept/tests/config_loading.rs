//! Loading a policy file: unknown keys, rule examples checked at load, redirect rules with
//! warnings, and the `check` JSON shape.

mod common;

use shellgate_intercept::{ConfigError, Context, Decision, Policy, Verdict};
use shellgate_normalize::{Normalizer, StandardNormalizer};

#[test]
fn rule_examples_are_checked_when_the_policy_loads() {
    let ok = Policy::from_toml(
        "[policy]\nsecurity = \"allowlist\"\n[[policy.rules]]\nallow = \"npm run *\"\nmatch = [\"npm run build\"]\nnot_match = [\"npm run build; rm -rf x\", \"npm test\"]\n",
    );
    assert!(ok.is_ok(), "{ok:?}");
    let err = Policy::from_toml("[[policy.rules]]\nallow = \"npm run build\"\nmatch = [\"npm run test\"]\n")
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::MatchExampleFailed { rule, .. } if rule == "npm run build"),
        "{err}"
    );
    assert!(err.to_string().contains("npm run build"), "{err}");
    let err =
        Policy::from_toml("[[policy.rules]]\nallow = \"npm *\"\nnot_match = [\"npm run x\"]\n").unwrap_err();
    assert!(matches!(err, ConfigError::NotMatchExampleFailed { .. }), "{err}");
    let err =
        Policy::from_toml("[[policy.rules]]\ndeny = \"git push *\"\nmatch = [\"git status\"]\n").unwrap_err();
    assert!(err.to_string().contains("git push *"), "{err}");
    let err = Policy::from_toml("[[policy.rules]]\nmatch = [\"x\"]\n").unwrap_err();
    assert_eq!(err, ConfigError::RuleEntryShape { index: 0 });
}

#[test]
fn bad_rules_and_unknown_keys_are_named() {
    let err = Policy::from_toml("[policy]\nallow = [\"git (status\"]\n").unwrap_err();
    assert!(err.to_string().contains("git (status"), "{err}");
    let err = Policy::from_toml("[policy]\nallow = [\"@unsafe\"]\n").unwrap_err();
    assert!(err.to_string().contains("@unsafe"), "{err}");
    let err = Policy::from_toml("[intercept]\npreflite = false\n").unwrap_err();
    assert!(err.to_string().contains("preflite"), "{err}");
    let err = Policy::from_toml("[unknown]\nx = 1\n").unwrap_err();
    assert!(err.to_string().contains("unknown"), "{err}");
}

#[test]
fn redirect_rules_fire_only_with_their_tool_and_invalid_ones_warn() {
    let p = Policy::from_toml(
        "[intercept]\ndefault_rules = true\navailable_tools = [\"read\"]\n[[intercept.redirect_rules]]\npattern = \"(unclosed\"\ntool = \"x\"\nmessage = \"m\"\n",
    )
    .unwrap();
    assert_eq!(p.warnings().len(), 1, "{:?}", p.warnings());
    let n = StandardNormalizer::default();
    let read = p.judge(&n.normalize("cat src/main.rs"), &Context::default());
    match &read.verdict {
        Verdict::Deny {
            rule, suggested_tool, ..
        } => {
            assert_eq!(rule, "redirect:read");
            assert_eq!(suggested_tool.as_deref(), Some("read"));
        }
        other => panic!("{other:?}"),
    }
    // `search` is not available: grep runs.
    assert_eq!(
        p.judge(&n.normalize("grep -rn x ."), &Context::default())
            .decision(),
        Decision::Allow
    );
    let ctx = Context {
        tool_names: vec!["search".into()],
        ..Context::default()
    };
    assert_eq!(
        p.judge(&n.normalize("grep -rn x ."), &ctx).decision(),
        Decision::Deny
    );
    assert_eq!(
        p.judge(&n.normalize("echo \"a -> b\""), &ctx).decision(),
        Decision::Allow
    );
}

#[test]
fn judgement_json_shape() {
    let p = common::safe_policy(&[]);
    let j = common::judge(&p, "ls && cargo build");
    let v: serde_json::Value = serde_json::to_value(&j).unwrap();
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["rule"], "allowlist-miss");
    assert!(v["reason"].as_str().unwrap().contains("cargo build"));
    let segs = v["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0]["decision"], "allow");
    assert_eq!(segs[1]["missing"], true);
    assert_eq!(segs[1]["argv"], serde_json::json!(["cargo", "build"]));
    assert_eq!(j.decision().exit_code(), 1);
}
