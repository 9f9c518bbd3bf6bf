//! The user's rc file is captured once and sourced by every session (SPEC E-11); a broken or hanging rc
//! gives a notice, not a broken session. Each test uses a temporary HOME with its own rc files.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use shellgate_executor::{ExecOutcome, RunStatus, SessionKey, SessionManager, SessionOptions};

fn manager() -> SessionManager {
    SessionManager::new(SessionOptions {
        snapshot_timeout: Duration::from_secs(2),
        ..SessionOptions::default()
    })
}

fn home_with(file: &str, rc: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(file), rc).unwrap();
    home
}

fn key(name: &str, shell: impl Into<PathBuf>, home: &Path) -> SessionKey {
    SessionKey::new(name)
        .with_shell(shell)
        .with_env("HOME", home.to_string_lossy())
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

/// zsh, or `None` (skipped with a reason) — a failure when SHELLGATE_REQUIRE_ALL=1.
fn zsh() -> Option<PathBuf> {
    let found = ["/usr/bin/zsh", "/bin/zsh"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
            "zsh is required (SHELLGATE_REQUIRE_ALL=1)"
        );
        eprintln!("skipped: zsh is not installed");
    }
    found
}

const BASHRC: &str = r#"
case $- in *i*) ;; *) return;; esac
alias rcal='echo from-alias'
rcfn() { echo "from-function $1"; }
shopt -s extglob
export PATH="$HOME/rcbin:$PATH"
set -o errexit
"#;

#[tokio::test]
async fn bashrc_functions_aliases_options_and_path_reach_sessions() {
    let home = home_with(".bashrc", BASHRC);
    std::fs::create_dir(home.path().join("rcbin")).unwrap();
    let m = manager();
    let k = key("rc", "/bin/bash", home.path());
    let (o, out) = run(
        &m,
        &k,
        "rcal; rcfn x; shopt -q extglob && echo extglob; echo \"${PATH%%:*}\"; false; echo survived-errexit",
    )
    .await;
    assert_eq!(
        out,
        format!(
            "from-alias\nfrom-function x\nextglob\n{}/rcbin\nsurvived-errexit\n",
            home.path().display()
        ),
        "{o:?}"
    );
    assert!(o.notices.is_empty(), "{:?}", o.notices);
    // After a respawn the rc's definitions are still there (restored from saved state).
    run(&m, &k, "exit 9").await;
    let (_, out) = run(&m, &k, "rcal").await;
    assert_eq!(out, "from-alias\n");
    // Without the snapshot, nothing of the rc is seen.
    let mut plain = key("plain", "/bin/bash", home.path());
    plain.snapshot = false;
    let (_, out) = run(&m, &plain, "type rcal >/dev/null 2>&1 || echo none").await;
    assert_eq!(out, "none\n");
    m.shutdown();
}

#[tokio::test]
async fn broken_rc_gives_a_notice_not_a_broken_session() {
    for (rc, expect) in [
        ("alias ok1='echo ok1'\nif then fi (\n", "errors while loading"),
        ("alias ok1='echo ok1'\nexit 1\n", "failed"),
        (
            "alias ok1='echo ok1'\nread -r answer\nsleep 30\n",
            "did not finish",
        ),
    ] {
        let home = home_with(".bashrc", rc);
        let m = manager();
        let k = key("broken", "/bin/bash", home.path());
        let (o, out) = run(&m, &k, "echo works").await;
        assert_eq!(
            (o.status, out.as_str()),
            (RunStatus::Completed, "works\n"),
            "{rc}: {o:?}"
        );
        assert!(
            o.notices.iter().any(|n| n.contains(expect)),
            "{rc}: {:?}",
            o.notices
        );
        m.shutdown();
    }
}

#[tokio::test]
async fn zsh_sessions_use_zshrc_and_keep_state() {
    let Some(zsh) = zsh() else { return };
    let home = home_with(
        ".zshrc",
        "alias zal='echo zsh-alias'\nzfn() { echo zsh-fn }\nsetopt extendedglob\n",
    );
    let m = manager();
    let k = key("z", zsh, home.path());
    let (o, out) = run(
        &m,
        &k,
        "zal; zfn; [[ -o extendedglob ]] && echo eg; cd / && export ZV=1 && zf2() { echo f2 } && zplain=(p \"q r\") && typeset -A zh=(k v)",
    )
    .await;
    assert_eq!(out, "zsh-alias\nzsh-fn\neg\n", "{o:?}");
    let (o, out) = run(&m, &k, "pwd; echo $ZV; zf2").await;
    assert_eq!(out, "/\n1\nf2\n", "{o:?}");
    let (o, out) = run(&m, &k, "exec >/dev/null; echo hidden").await;
    assert_eq!((out.as_str(), o.exit_code), ("", Some(0)), "{o:?}");
    let (first, out) = run(&m, &k, r"echo visible; print -n -- 'a\0b'").await;
    assert_eq!(out, "visible\na\0b", "{first:?}");
    let (o, _) = run(&m, &k, "exit 5").await;
    assert_eq!(o.exit_code, Some(5));
    let (o, out) = run(&m, &k, "pwd; echo $ZV; zf2; zal; echo $zplain[2] $zh[k]").await;
    assert_eq!(out, "/\n1\nf2\nzsh-alias\nq r v\n", "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
    m.shutdown();
}
