//! The control-command guard: the engine's administration is denied through any wrapper and in
//! every mode.

mod common;

use shellgate_intercept::{AskMode, Decision, Policy, Security, Verdict};

#[test]
fn administration_is_denied_through_wrappers() {
    let full = Policy::builder()
        .security(Security::Full)
        .ask(AskMode::Off)
        .build()
        .unwrap();
    let permissive = Policy::builder()
        .security(Security::Allowlist)
        .allow("shellgate *")
        .allow("bash *")
        .allow("xargs *")
        .build()
        .unwrap();
    for c in [
        "shellgate approve abc allow-always",
        "shellgate approvals list",
        "shellgate jobs kill 3",
        "shellgate config",
        "/usr/local/bin/shellgate approve x deny",
        "env FOO=1 shellgate approve x allow-once",
        "sudo -E shellgate approve x allow-once",
        "bash -c 'shellgate approve x allow-once'",
        "sh -c \"timeout 5 shellgate approvals revoke 'git *'\"",
        "eval shellgate approve x deny",
        "echo approve | xargs shellgate",
        "echo ok && shellgate approve x allow-once",
        "echo $(shellgate approve x allow-once)",
        "cargo run -p shellgate-cli -- approve x allow-once",
        "npx shellgate approve x allow-once",
        "bash <<'EOF'\nshellgate approve x allow-always\nEOF",
        "sh <<< 'shellgate approve x deny'",
        "echo 'shellgate approve x allow-always' | sh",
        "printf 'shellgate jobs kill 1' | bash -s",
    ] {
        for p in [&full, &permissive] {
            let j = common::judge(p, c);
            assert!(
                matches!(&j.verdict, Verdict::Deny { rule, .. } if rule == "control-command"),
                "{c:?}: {:?}",
                j.verdict
            );
        }
    }
}

#[test]
fn other_engine_commands_are_not_control_commands() {
    let full = Policy::builder().build().unwrap();
    for c in [
        "shellgate check -- ls",
        "shellgate run 'ls'",
        "echo shellgate approve",
    ] {
        assert_eq!(common::decide(&full, c), Decision::Allow, "{c}");
    }
}
