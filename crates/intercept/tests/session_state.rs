//! A session's saved state is untrusted text, and some of what it records changes what every later
//! command runs without the command naming it (traps, `hash -p`, builtins, options). A state
//! holding any of that — or one that is cut short, unparsable or not as the shell writes it —
//! makes no command `@safe` in the session.

mod common;

use common::{bash_state, safe_policy};
use shellgate_intercept::{Context, Decision, SessionView};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn judge(state: &str, command: &str) -> (Decision, Option<String>) {
    let ctx = Context {
        cwd: Some(common::WORKSPACE.into()),
        session: Some(std::sync::Arc::new(SessionView::from_saved_state(state))),
        ..Default::default()
    };
    let j = safe_policy(&[]).judge(&StandardNormalizer::default().normalize(command), &ctx);
    (j.decision(), j.reason)
}

fn safe_in(state: &str) -> bool {
    judge(state, "pwd").0 == Decision::Allow
}

#[test]
fn a_complete_ordinary_state_is_judged_against() {
    let state = bash_state(
        "declare -- x=\"1\"\n",
        "f () \n{ \n    ls\n}\nalias ll='ls -l'\n",
        "trap -- '' SIGINT\nbuiltin hash -p /usr/bin/ls ls\n",
    );
    assert!(safe_in(&state), "{:?}", judge(&state, "pwd"));
    assert_eq!(judge(&state, "ll").0, Decision::Allow);
}

#[test]
fn traps_hashed_paths_builtins_and_options_make_the_session_unjudgeable() {
    for (vars, hooks, names) in [
        ("", "trap -- 'touch /tmp/p' DEBUG\n", "DEBUG"),
        ("", "trap -- 'touch /tmp/p' RETURN\n", "RETURN"),
        ("", "trap -- 'touch /tmp/p' ERR\n", "ERR"),
        ("", "trap -- 'touch /tmp/p' EXIT\n", "EXIT"),
        ("", "builtin hash -p /tmp/x/ls ls\n", "hash -p"),
        ("", "builtin hash -p /usr/bin/touch ls\n", "hash -p"),
        ("", "enable evil\n", "loaded the builtin"),
        ("", "enable -n test\n", "disabled the builtin"),
    ] {
        let state = bash_state(vars, "", hooks);
        let (decision, reason) = judge(&state, "pwd");
        assert_ne!(decision, Decision::Allow, "{hooks}");
        let reason = reason.unwrap_or_default();
        assert!(reason.contains(names), "{hooks}: {reason}");
    }
    // Options: the saved SHELLOPTS/BASHOPTS values stand after the ones `bash_state` writes.
    for options in [
        "declare -- __shellgate_so=\"braceexpand:keyword\"\n",
        "declare -- __shellgate_so=\"allexport\"\n",
        "declare -- __shellgate_bo=\"extdebug:extglob\"\n",
        "declare -- __shellgate_bo=\"compat42\"\n",
        "declare -- __shellgate_so=\"xtrace\"\ndeclare -x PS4=\"\\$(touch /tmp/p)\"\n",
        "declare -- CDPATH=\"/tmp\"\n",
    ] {
        let state = bash_state("", "", "").replacen(
            "#shellgate-state-functions",
            &format!("{options}#shellgate-state-functions"),
            1,
        );
        assert!(!safe_in(&state), "{options}");
    }
    // zsh: a trap function.
    let zsh = "typeset x=1\n#shellgate-state-functions\nTRAPDEBUG () {\n\ttouch /tmp/p\n}\n#shellgate-state-hooks\n: shellgate-state-end\n";
    assert!(!safe_in(zsh));
}

#[test]
fn a_forged_or_damaged_state_fails_closed() {
    let good = bash_state("declare -- x=\"1\"\n", "alias ll='ls -l'\n", "");
    assert!(safe_in(&good));
    let forged = [
        // Cut short: no end line, or nothing after the variables.
        good.replace(": shellgate-state-end\n", ""),
        good[..good.find("#shellgate-state-functions").unwrap()].to_owned(),
        String::new(),
        // Lines the shell does not write there.
        good.replacen("declare -- x=\"1\"\n", "x=1\n", 1),
        good.replacen("alias ll='ls -l'\n", "rm -rf ~\n", 1),
        good.replacen("alias ll='ls -l'\n", "alias ll=\"$(id)\"\n", 1),
        good.replacen("alias ll='ls -l'\n", "if true; then :; fi\n", 1),
        // A function part that does not parse (its extent is unknown).
        good.replacen("alias ll='ls -l'\n", "f () \n{ \n    cat <<'E'\n}\n", 1),
        // Options missing.
        good.replace(
            "declare -- __shellgate_so=\"braceexpand:hashall:interactive-comments\"\n",
            "",
        ),
        // Garbage.
        "\u{0}\u{1}binary".to_owned(),
        "#shellgate-state-functions\n: shellgate-state-end\n".to_owned(),
    ];
    for state in &forged {
        let (decision, reason) = judge(state, "pwd");
        assert_ne!(decision, Decision::Allow, "{state:?}");
        assert!(
            reason.as_deref().is_some_and(|r| r.contains("session")),
            "{state:?}: {reason:?}"
        );
    }
}

#[test]
fn a_definition_whose_text_looks_like_other_definitions_is_read_as_one() {
    // `f` holds a here-document whose lines look like the end of `f` and an alias for `rm`, as
    // `declare -f` prints it; `rm` is not aliased.
    let state = bash_state("", "f () \n{ \n    cat <<'E'\n}\nalias rm='echo'\nE\n\n}\n", "");
    assert!(safe_in(&state));
    assert_ne!(judge(&state, "rm -rf ~").0, Decision::Allow);
    assert_ne!(judge(&state, "rm -f x").0, Decision::Allow);
}
