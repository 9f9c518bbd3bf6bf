//! `@safe` judges each word as bash will read it after what the call (or the session) did before
//! it: shell options that change what a word is, values that become arithmetic when put
//! together, tilde words that name network paths. Each case was allowed by an earlier version and
//! ran a command or opened a connection.

mod common;

use common::{bash_state, judge, safe_policy};
use shellgate_intercept::{Context, Decision, SessionView};
use shellgate_normalize::{Normalizer, StandardNormalizer};

fn refused(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_ne!(
        j.decision(),
        Decision::Allow,
        "{command:?} was allowed: {:?}",
        j.segments
    );
}

fn allowed(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_eq!(
        j.decision(),
        Decision::Allow,
        "{command:?} was refused: {:?}",
        j.reason
    );
}

fn in_session(state: &str, command: &str) -> Decision {
    let ctx = Context {
        cwd: Some(common::WORKSPACE.into()),
        session: Some(std::sync::Arc::new(SessionView::from_saved_state(state))),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

#[test]
fn shell_options_that_change_what_a_word_is_are_not_inert() {
    for command in [
        "set -k; git status GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch /tmp/p'",
        "set -o keyword; git status GIT_DIR=/tmp/x",
        "set -ek; ls",
        "set -eo keyword; ls",
        "set -a; ls",
        "set -o allexport; ls",
        "set -H; ls",
        "set -o histexpand; ls",
        "set -o posix; ls",
        "set -P; ls",
        "set +o interactive-comments; ls",
    ] {
        refused(command);
    }
    for command in [
        "set -euo pipefail; ls",
        "set -e; ls",
        "set +e; ls",
        "set -x; ls",
        "set -o nounset; ls",
        "set -f; ls",
        "set +k; ls",
    ] {
        allowed(command);
    }
}

#[test]
fn tilde_words_naming_a_network_path_are_network() {
    for command in [
        "OLDPWD=/dev/tcp/127.0.0.1; head -n1 < ~-/18082",
        "PWD=/dev/tcp/127.0.0.1; head -n1 < ~+/18082",
        "cd /dev; head -n1 < ~+/tcp/127.0.0.1/18082",
        "HOME=/dev/tcp/127.0.0.1; head -n1 < ~/18082",
        "head -n1 < ~+1/x",
        "echo hi > ~-/x",
    ] {
        refused(command);
    }
    allowed("head -n1 < ./f");
    allowed("head -n1 < tcp/127.0.0.1/80");
}

#[test]
fn arithmetic_over_values_that_join_into_code_runs_it() {
    for command in [
        "x='a['; y='$(touch /tmp/p)]'; echo $(($x$y))",
        "x='a['; y='$(touch /tmp/p)]'; [[ $x$y -eq 0 ]]",
        "x='a['; y='`touch /tmp/p`]'; (( $x$y ))",
        "x='a['; y='$(touch /tmp/p)]'; let \"z=$x$y\"",
        "x='a'; y='[$(touch /tmp/p)]'; echo $((x$y))",
        "y='$(touch /tmp/p)'; echo $((a[$y]))",
        "y='$(touch /tmp/p)'; echo ${a[$y]}",
        "y='$(touch /tmp/p)'; echo ${s:$y:1}",
        "z='a[$i]'; i='$(touch /tmp/p)'; echo $((z))",
        "w=v; v='$(touch /tmp/p)'; echo $((a[w]))",
        "for y in '$(touch /tmp/p)'; do echo $((a[$y])); done",
        "declare y='$(touch /tmp/p)'; echo $((a[$y]))",
        "export y='a[' z='$(touch /tmp/p)]'; echo $(($y$z))",
    ] {
        refused(command);
    }
    for command in [
        "x=3; y=4; echo $((x * y))",
        "x=3; echo $(($x + 1))",
        "n=y; y=2; echo $((n + 1))",
        "x='a b'; echo $x",
        "echo $((1 + 2))",
    ] {
        allowed(command);
    }
}

#[test]
fn a_compatibility_level_is_not_inert_and_subscripts_expand_values_once_more() {
    for command in [
        "BASH_COMPAT=51; i='$(touch /tmp/p)'; [[ -v a[$i] ]]",
        "BASH_COMPAT=51; ls",
        "export BASH_COMPAT=5.1; ls",
        "declare BASH_COMPAT=51; ls",
        "i='$(touch /tmp/p)'; [[ -v a[$i] ]]",
        "i='$(touch /tmp/p)'; test -v \"a[$i]\"",
        "i='$(touch /tmp/p)'; unset \"a[$i]\"",
        "shopt -s compat51; ls",
    ] {
        refused(command);
    }
    allowed("i=3; [[ -v a[$i] ]]");
}

#[test]
fn session_values_that_join_into_code_make_arithmetic_code() {
    let state = bash_state(
        "declare -- x=\"a[\"\ndeclare -- y=\"\\$(touch /tmp/p)]\"\ndeclare -- n=\"3\"\ndeclare -- r=\"y\"\n",
        "",
        "",
    );
    for command in [
        "echo $(($x$y))",
        "[[ $x$y -eq 0 ]]",
        "echo $((a[$y]))",
        "echo $((a[r]))",
        "[[ -v a[$y] ]]",
    ] {
        assert_ne!(in_session(&state, command), Decision::Allow, "{command}");
    }
    assert_eq!(in_session(&state, "echo $((n + 1))"), Decision::Allow);
    let ps4 = bash_state("declare -- PS4=\"\\$(touch /tmp/p)\"\n", "", "");
    assert_ne!(in_session(&ps4, "set -x; ls"), Decision::Allow);
}
