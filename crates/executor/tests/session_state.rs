//! Session state persists between commands and survives a lost shell (SPEC E-10).

mod common;

use std::path::Path;

use shellgate_executor::{ExecOutcome, RunStatus, SessionKey, SessionManager};

fn key(name: &str) -> SessionKey {
    let home = std::env::temp_dir();
    SessionKey::new(name)
        .with_shell("/bin/bash")
        .with_env("HOME", home.to_string_lossy())
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

#[tokio::test]
async fn cwd_variables_functions_aliases_persist_and_survive_exit() {
    let m = SessionManager::default();
    let k = key("state");
    let (o, _) = run(
        &m,
        &k,
        "cd /tmp && export V=1 && f(){ echo fn; } && alias a1='echo al'",
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    assert_eq!(o.cwd_after.as_deref(), Some(Path::new("/tmp")));
    let (o, out) = run(&m, &k, "pwd; echo $V; f; a1").await;
    assert_eq!(out, "/tmp\n1\nfn\nal\n", "{o:?}");
    let (o, _) = run(&m, &k, "exit 3").await;
    assert_eq!(o.status, RunStatus::Completed);
    assert_eq!(o.exit_code, Some(3));
    assert!(o.notices.iter().any(|n| n.contains("ended")), "{:?}", o.notices);
    let (o, out) = run(&m, &k, "pwd; echo $V; f; a1").await;
    assert_eq!(out, "/tmp\n1\nfn\nal\n", "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
    m.shutdown();
}

#[tokio::test]
async fn plain_variables_options_and_path_survive_a_respawn() {
    let m = SessionManager::default();
    let k = key("kinds");
    let (o, _) = run(
        &m,
        &k,
        "PLAIN=p; declare -a ARR=(x 'y z'); shopt -s extglob; set -o noclobber; PATH=/opt/sg-test-bin:$PATH; \
         counter() { N=$((N+1)); }; N=0",
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    // Commands that only run programs skip the state save; later ones still see everything.
    let (_, out) = run(&m, &k, "ls / >/dev/null && echo listed").await;
    assert_eq!(out, "listed\n");
    let (_, _) = run(&m, &k, "counter; counter").await;
    let check = "echo \"$PLAIN ${ARR[1]} $N ${PATH%%:*}\"; shopt -q extglob && echo extglob; [[ -o noclobber ]] && echo noclobber";
    let expected = "p y z 2 /opt/sg-test-bin\nextglob\nnoclobber\n";
    let (o, out) = run(&m, &k, check).await;
    assert_eq!(out, expected, "{o:?}");
    let (o, _) = run(&m, &k, "kill -KILL $$").await;
    assert_eq!(o.signal.as_deref(), Some("SIGKILL"), "{o:?}");
    let (o, out) = run(&m, &k, check).await;
    assert_eq!(out, expected, "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
    m.shutdown();
}

#[tokio::test]
async fn every_part_of_the_key_separates_sessions() {
    let m = SessionManager::default();
    let base = key("same-name");
    let other_env = base.clone().with_env("SG_KEY_ENV", "other");
    let mut prefixed = base.clone();
    prefixed.shell.prefix = Some("env SG_PREFIXED=yes".into());
    let (_, _) = run(&m, &base, "export WHERE=base").await;
    let (_, out) = run(&m, &other_env, "echo \"[$WHERE] $SG_KEY_ENV\"").await;
    assert_eq!(out, "[] other\n");
    let (_, out) = run(&m, &prefixed, "printenv SG_PREFIXED").await;
    assert_eq!(out, "yes\n");
    let (_, out) = run(&m, &base, "echo \"[$WHERE]\"").await;
    assert_eq!(out, "[base]\n");
    assert_eq!(m.list().len(), 3);
    assert!(m.close("same-name"));
    assert!(m.list().is_empty());
}
