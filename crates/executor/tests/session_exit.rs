//! A command that ends its session's shell (`exit`, `set -e`) keeps what it changed before: the next
//! shell starts from the state at the exit — unless the command set an `EXIT` trap of its own, which
//! runs as it would in any shell.

mod common;

use std::path::Path;

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

use common::session_keys as keys;

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

fn restarted(o: &ExecOutcome) -> bool {
    o.notices.iter().any(|n| n.contains("restarted"))
}

#[tokio::test]
async fn changes_before_exit_survive_the_exit() {
    let m = SessionManager::default();
    for k in keys("exit-keeps") {
        let name = &k.name;
        let (o, out) = run(
            &m,
            &k,
            "set -x; export SG_V=1; cd /usr; sgf() { echo in-sgf; }; set +x; exit 3",
        )
        .await;
        assert_eq!(o.exit_code, Some(3), "{name}: {o:?}");
        assert_eq!(o.cwd_after.as_deref(), Some(Path::new("/usr")), "{name}: {o:?}");
        assert!(
            !out.contains("shellgate") && !out.contains("TRAPEXIT"),
            "{name}: the exit trap stays silent: {out:?}"
        );
        let (o, out) = run(&m, &k, "echo \"$SG_V\"; pwd; sgf").await;
        assert_eq!(out, "1\n/usr\nin-sgf\n", "{name}: {o:?}");
        assert!(restarted(&o), "{name}: {o:?}");

        // Traces show the command's own lines only, also for subshells and at an exit.
        for traced in ["set -x; x=$(exit 5); echo $?; set +x", "set -x; exit 4"] {
            let (o, out) = run(&m, &k, traced).await;
            assert!(
                !out.contains("shellgate") && !out.contains("TRAPEXIT") && !out.contains("setopt"),
                "{name}: {out:?} {o:?}"
            );
        }
        // bash keeps `xtrace` from that exit (the trace of `set +x` is the command's own); zsh keeps the
        // options of the last save.
        let (o, out) = run(&m, &k, "set +x").await;
        assert!(
            ["", "++ set +x\n"].contains(&out.as_str()),
            "{name}: {out:?} {o:?}"
        );
        let (o, out) = run(&m, &k, "echo \"$SG_V\"").await;
        assert_eq!(out, "1\n", "{name}: {o:?}");

        // Options set before the exit are kept (zsh: those of the command before; bash: also the
        // exiting command's own).
        let bash = !name.ends_with("zsh");
        let (set_opt, check_opt) = if bash {
            ("shopt -s extglob", "shopt -q extglob && echo on")
        } else {
            ("setopt extendedglob", "[[ -o extendedglob ]] && echo on")
        };
        let (o, _) = run(&m, &k, set_opt).await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let (o, _) = run(&m, &k, "exit 0").await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let (o, out) = run(&m, &k, check_opt).await;
        assert_eq!(out, "on\n", "{name}: {o:?}");

        // A failure under `set -e` ends the shell the same way.
        let (o, out) = run(&m, &k, "set -e; SG_W=2; cd /; false; echo not-reached").await;
        assert_eq!((out.as_str(), o.exit_code), ("", Some(1)), "{name}: {o:?}");
        let (o, out) = run(&m, &k, "set +e; echo \"$SG_W\"; pwd").await;
        assert_eq!(out, "2\n/\n", "{name}: {o:?}");

        // Subshells exit without touching the session's state; their statuses are unchanged.
        let (o, out) = run(
            &m,
            &k,
            "(SG_SUB=1; cd /tmp; exit 4); echo $?; x=$(SG_SUB=2; cd /tmp; exit 5); echo $?; pwd",
        )
        .await;
        assert_eq!(out, "4\n5\n/\n", "{name}: {o:?}");
        let (o, _) = run(&m, &k, "kill -KILL $$").await;
        assert_eq!(o.signal.as_deref(), Some("SIGKILL"), "{name}: {o:?}");
        let (o, out) = run(&m, &k, "echo \"[${SG_SUB-}]\"; pwd").await;
        assert_eq!(out, "[]\n/\n", "{name}: {o:?}");

        // A command's own EXIT trap replaces the session's: it runs, and that exit keeps the last save.
        let (o, _) = run(&m, &k, "SG_SAVED=before; trap 'echo user-trap' EXIT").await;
        assert_eq!(o.exit_code, Some(0), "{name}: {o:?}");
        let (o, out) = run(&m, &k, "SG_SAVED=after; exit 6").await;
        assert_eq!(
            (out.as_str(), o.exit_code),
            ("user-trap\n", Some(6)),
            "{name}: {o:?}"
        );
        let (o, out) = run(&m, &k, "echo \"$SG_SAVED\"").await;
        assert_eq!(out, "before\n", "{name}: {o:?}");
        assert!(restarted(&o), "{name}: {o:?}");
    }
    m.shutdown();
}
