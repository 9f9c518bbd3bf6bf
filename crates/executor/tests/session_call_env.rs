//! The `env` of one [`SessionManager::run`] call applies to that command only: afterwards each variable
//! is as it was before, unless the command itself changed it.

mod common;

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

use common::session_keys as keys;

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str, env: &[(&str, &str)]) -> (ExecOutcome, String) {
    common::session_text_env(m, k, cmd, env).await
}

/// Whether `$name` is set, its value, and whether it is exported.
fn show(name: &str) -> String {
    format!("echo \"{name}=${{{name}-<unset>}}\"; printenv {name} >/dev/null && echo exported || echo local")
}

#[tokio::test]
async fn call_variables_are_restored_after_the_command() {
    let m = SessionManager::default();
    for k in keys("call-env") {
        let name = &k.name;
        // nounset must not trip over the bookkeeping.
        let (o, _) = run(&m, &k, "set -u; SG_PLAIN=old; export SG_EXP=oldx", &[]).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let env = [
            ("SG_NEW", "n e'w"),
            ("SG_PLAIN", "p"),
            ("SG_EXP", "x"),
            ("SG_EMPTY", ""),
            ("SG_ODD", "a*\n$b\\ '"),
        ];
        let (o, out) = run(
            &m,
            &k,
            "printenv SG_NEW SG_PLAIN SG_EXP SG_ODD; echo \"[${SG_EMPTY}]\"; false",
            &env,
        )
        .await;
        assert_eq!(out, "n e'w\np\nx\na*\n$b\\ '\n[]\n", "{name}: {o:?}");
        assert_eq!(
            o.exit_code,
            Some(1),
            "the command's status is kept: {name}: {o:?}"
        );
        let (o, out) = run(
            &m,
            &k,
            &[
                show("SG_NEW"),
                show("SG_PLAIN"),
                show("SG_EXP"),
                show("SG_EMPTY"),
                show("SG_ODD"),
            ]
            .join("; "),
            &[],
        )
        .await;
        assert_eq!(
            out,
            "SG_NEW=<unset>\nlocal\nSG_PLAIN=old\nlocal\nSG_EXP=oldx\nexported\nSG_EMPTY=<unset>\nlocal\n\
             SG_ODD=<unset>\nlocal\n",
            "{name}: {o:?}"
        );
        let (o, _) = run(&m, &k, "set +u", &[]).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
    }
    m.shutdown();
}

#[tokio::test]
async fn what_the_command_does_to_a_call_variable_stays() {
    let m = SessionManager::default();
    for k in keys("call-env-kept") {
        let name = &k.name;
        let (o, _) = run(&m, &k, "SG_GONE=before; SG_LOCAL=before", &[]).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let env = [
            ("SG_SET", "call"),
            ("SG_GONE", "call"),
            ("SG_LOCAL", "call"),
            ("SG_SAME", "call"),
        ];
        let (o, _) = run(
            &m,
            &k,
            "SG_SET=mine; unset SG_GONE; typeset +x SG_LOCAL; SG_SAME=call",
            &env,
        )
        .await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let (o, out) = run(
            &m,
            &k,
            &[show("SG_SET"), show("SG_GONE"), show("SG_LOCAL"), show("SG_SAME")].join("; "),
            &[],
        )
        .await;
        // Assigning the call's own value again cannot be told from not touching it: restored.
        assert_eq!(
            out,
            "SG_SET=mine\nexported\nSG_GONE=<unset>\nlocal\nSG_LOCAL=call\nlocal\nSG_SAME=<unset>\nlocal\n",
            "{name}: {o:?}"
        );
    }
    m.shutdown();
}

#[tokio::test]
async fn call_variables_do_not_outlive_a_command_that_exits() {
    let m = SessionManager::default();
    for k in keys("call-env-exit") {
        let name = &k.name;
        let (o, _) = run(&m, &k, "export SG_OLD=old", &[]).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let env = [("SG_GONE", "call"), ("SG_OLD", "call")];
        let (o, _) = run(&m, &k, "SG_KEPT=1; exit 2", &env).await;
        assert_eq!(o.exit_code, Some(2), "{name}: {o:?}");
        let (o, out) = run(
            &m,
            &k,
            &[show("SG_GONE"), show("SG_OLD"), show("SG_KEPT")].join("; "),
            &[],
        )
        .await;
        assert_eq!(
            out, "SG_GONE=<unset>\nlocal\nSG_OLD=old\nexported\nSG_KEPT=1\nlocal\n",
            "{name}: {o:?}"
        );
        // Nothing of the bookkeeping is left for a later exit to act on.
        let (o, _) = run(&m, &k, "export SG_GONE=call; exit 0", &[]).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let (o, out) = run(&m, &k, &show("SG_GONE"), &[]).await;
        assert_eq!(out, "SG_GONE=call\nexported\n", "{name}: {o:?}");
    }
    m.shutdown();
}
