//! A variable with the integer attribute (or a name reference) evaluates what is assigned to it as
//! arithmetic, and arithmetic runs the substitutions in array subscripts. Every way a value reaches
//! such a variable — declared earlier in the same call or in an earlier call of the session — is
//! therefore code when the value may hold a subscript with an expansion. Each command below ran
//! `touch /tmp/p` in bash 5.2.

mod common;

use common::{judge, safe_policy};
use shellgate_intercept::Decision;

fn refused(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_ne!(
        j.decision(),
        Decision::Allow,
        "{command:?} under @safe was allowed: {:?}",
        j.segments
    );
}

fn allowed(command: &str) {
    let j = judge(&safe_policy(&[]), command);
    assert_eq!(
        j.decision(),
        Decision::Allow,
        "{command:?} under @safe was refused: {:?}",
        j.reason
    );
}

#[test]
fn printf_into_a_variable_declared_integer_in_the_same_call() {
    for declare in [
        "declare -i n",
        "typeset -i n",
        "declare -ai n",
        "declare -il n",
        "builtin declare -i n",
    ] {
        refused(&format!("{declare}; printf -v n %s 'a[$(touch /tmp/p)]'"));
        refused(&format!("{declare}; printf -vn %s 'a[$(touch /tmp/p)]'"));
        refused(&format!("{declare}; printf -v n -- %s 'a[$(touch /tmp/p)]'"));
        refused(&format!(r"{declare}; printf -v n 'a\x5b\x24(touch /tmp/p)]'"));
        refused(&format!("{declare}; printf -v n %s \"$(cat f)\""));
    }
    refused("f() { local -i n; printf -v n %s 'a[$(touch /tmp/p)]'; }; f");
    // The declaration may come later in the text and still be in force (a loop's second turn).
    refused("for i in 1 2; do printf -v n %s 'a[$(touch /tmp/p)]'; declare -i n; done");
    allowed("declare -i n; printf -v n %d 3");
    allowed("declare -i n; printf -v m %s 'a[$(touch /tmp/p)]'");
}

#[test]
fn loops_and_plain_assignments_into_an_integer_variable() {
    refused("declare -i n; for n in 'a[$(touch /tmp/p)]'; do :; done");
    refused("declare -i n; for n in $(cat f); do :; done");
    refused("declare -i n; n+='a[$(touch /tmp/p)]'");
    refused(r"declare -i n; n+=a\[\$\(touch\ /tmp/p\)\]");
    refused(r"declare -i n; n=a\[\`touch\ /tmp/p\`\]");
    refused("declare -i n; n=$(cat f)");
    refused("declare -i n; n=(\"a[\\$(touch /tmp/p)]\")");
    refused("declare -i n; case a in a) n='a[$(touch /tmp/p)]' ;; esac");
    refused("declare -i n; export n='a[$(touch /tmp/p)]'");
    refused("declare -i n; declare n='a[$(touch /tmp/p)]'");
    refused(r"declare -i n; echo ${n:=a\[\$\(touch\ /tmp/p\)\]}");
    allowed("declare -i n; n=3; n+=4");
    allowed("declare -i n; for n in 1 2 3; do echo $n; done");
    allowed("x=$(cat f); for y in a b; do echo $y; done");
}

#[test]
fn reads_into_an_integer_variable() {
    for command in [
        "declare -i n; read n < f",
        "declare -i REPLY; read < f",
        "declare -ai arr; mapfile arr < f",
        "declare -i OPTARG; getopts a: o",
    ] {
        let j = judge(&safe_policy(&["read *", "mapfile *", "getopts *"]), command);
        assert_ne!(j.decision(), Decision::Allow, "{command}: {:?}", j.segments);
    }
    let j = judge(&safe_policy(&["read *"]), "declare -i m; read n < f");
    assert_eq!(j.decision(), Decision::Allow, "{:?}", j.reason);
}

#[test]
fn let_is_arithmetic() {
    refused("let 'x=a[$(touch /tmp/p)]'");
    refused("x='a[$(touch /tmp/p)]'; let y=x");
    allowed("let i=i+1");
}

#[test]
fn an_eval_may_declare_anything_integer() {
    refused("eval 'declare -i n'; n='a[$(touch /tmp/p)]'");
    refused("declare $opt n; n='a[$(touch /tmp/p)]'");
}

#[test]
fn arithmetic_over_a_value_only_known_at_run_time() {
    // `f` holding `a[$(touch /tmp/p)]` made each of these run it.
    for command in [
        "x=$(cat f); echo $((x))",
        "x=$(cat f); echo $(( $x ))",
        "x=$(cat f); [[ $x -eq 1 ]]",
        "x=$(cat f); [[ -v $x ]]",
        "x=$(cat f); y=(1); echo ${y[x]}",
        "x=$(cat f); y[x]=1",
        "x=$(cat f); y=([x]=1)",
        "x=$(cat f); echo ${x::$x}",
        "x=$(cat f); echo ${!x}",
        "read -r x < f; (( x ))",
        "for x in *; do echo $((x)); done",
        "cat *; echo $((_))",
        "f() { echo $(( $1 )); }; f \"$(cat f)\"",
    ] {
        refused(command);
    }
    allowed("x=$(cat f); [[ -n $x ]]");
    allowed("x=$(wc -l < f); echo \"$x\"");
    allowed("for f in *.rs; do echo \"$f\"; done");
    allowed("x=3; y=(1 2); echo ${y[x]} $((x * 2))");
    allowed("echo ${!PATH*}");
}

fn judge_in_session(state: &str, command: &str) -> Decision {
    use shellgate_normalize::{Normalizer, StandardNormalizer};
    let ctx = shellgate_intercept::Context {
        cwd: Some(common::WORKSPACE.into()),
        session: Some(std::sync::Arc::new(
            shellgate_intercept::SessionView::from_saved_state(state),
        )),
        ..Default::default()
    };
    safe_policy(&[])
        .judge(&StandardNormalizer::default().normalize(command), &ctx)
        .decision()
}

#[test]
fn session_references_and_integers_are_code_where_used() {
    // As `declare -p` prints what `declare -n r='a[$(touch /tmp/p)]'; declare -n s=r; declare -i n`
    // left behind.
    let state = &common::bash_state(
        "declare -n r=\"a[\\$(touch /tmp/p)]\"\ndeclare -n s=\"r\"\ndeclare -n ok=\"HOME\"\ndeclare -i n=\"0\"\n",
        "",
        "",
    );
    for command in [
        "echo $r",
        "echo ${r}",
        "echo \"${s:-x}\"",
        "r=1",
        "for r in 1; do :; done",
        "printf -v r %s 1",
        "unset r",
        "test -v s",
        "case $r in *) ;; esac",
        "printf -v n %s 'a[$(touch /tmp/p)]'",
        "for n in 'a[$(touch /tmp/p)]'; do :; done",
        "n=$(cat f)",
    ] {
        assert_ne!(judge_in_session(state, command), Decision::Allow, "{command}");
    }
    for command in ["echo $ok", "echo rr", "n=4", "printf -v n %d 4"] {
        assert_eq!(judge_in_session(state, command), Decision::Allow, "{command}");
    }
}
