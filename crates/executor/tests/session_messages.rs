//! What a session command prints is its own: no job notices about processes the engine stopped after an
//! earlier command, and error messages that read like those of a one-shot `bash -c` / `zsh -c`.

mod common;

use shellgate_executor::{ExecOutcome, SessionKey, SessionManager};

use common::session_keys as keys;

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    common::session_text(m, k, cmd).await
}

#[tokio::test]
async fn background_jobs_stopped_after_a_command_leave_no_notices() {
    let m = SessionManager::default();
    for k in keys("jobs") {
        let marker = "sleep 987.6141";
        let (o, out) = run(&m, &k, &format!("{marker} & echo started")).await;
        assert_eq!(out, "started\n", "{o:?}");
        assert!(
            o.notices.iter().any(|n| n.contains("sleep (pid")),
            "the engine reports what it killed: {:?}",
            o.notices
        );
        common::assert_no_survivors(marker);
        let (o, out) = run(&m, &k, "echo next; jobs").await;
        assert_eq!(out, "next\n", "{}: {o:?}", k.name);
        let (o, out) = run(&m, &k, "echo again").await;
        assert_eq!(out, "again\n", "{}: {o:?}", k.name);
    }
    m.shutdown();
}

/// Error messages name the command as `/dev/fd/3` with lines counted from its first line, never the
/// engine's private command file — also for a pipeline (its status-line copy), for a function defined
/// by an earlier command, and for a function restored into a new shell.
#[tokio::test]
async fn error_messages_name_the_command_not_an_internal_file() {
    let m = SessionManager::default();
    for k in keys("errors") {
        let bash = !k.name.ends_with("zsh");
        let not_found = |line: u32, name: &str| {
            if bash {
                format!("/dev/fd/3: line {line}: {name}: command not found\n")
            } else {
                format!("/dev/fd/3:{line}: command not found: {name}\n")
            }
        };
        let (o, out) = run(&m, &k, "true\nnosuchcmd_sg").await;
        assert_eq!(out, not_found(2, "nosuchcmd_sg"), "{}: {o:?}", k.name);
        assert_eq!(o.exit_code, Some(127), "{}: {o:?}", k.name);

        let (o, out) = run(&m, &k, "echo ok\nif then").await;
        // A sourced file runs statement by statement in both shells (`zsh -c` would parse it all first).
        let syntax = if bash {
            "ok\n/dev/fd/3: line 2: syntax error near unexpected token `then'\n/dev/fd/3: line 2: `if then'\n"
        } else {
            "ok\n/dev/fd/3:2: parse error near `then'\n"
        };
        assert_eq!(out, syntax, "{}: {o:?}", k.name);
        assert_ne!(o.exit_code, Some(0), "{}: {o:?}", k.name);

        let (o, out) = run(&m, &k, "echo $LINENO\n\ntrue | nosuch_piped").await;
        assert_eq!(
            out,
            format!("1\n{}", not_found(3, "nosuch_piped")),
            "{}: {o:?}",
            k.name
        );
        assert_eq!(o.pipeline_status, vec![0, 127], "{}: {o:?}", k.name);

        // Lines count through here-documents; `return` ends the command with its status.
        let (o, out) = run(
            &m,
            &k,
            "cat <<'EOF'\n'$x' \"q\"\nEOF\nnosuch_h; return 5\necho not-reached",
        )
        .await;
        assert_eq!(
            out,
            format!("'$x' \"q\"\n{}", not_found(4, "nosuch_h")),
            "{}: {o:?}",
            k.name
        );
        assert_eq!(o.exit_code, Some(5), "{}: {o:?}", k.name);

        let (o, _) = run(&m, &k, "sgf() {\n  nosuch_in_f\n}").await;
        assert_eq!(o.exit_code, Some(0), "{}: {o:?}", k.name);
        let in_function = if bash {
            not_found(2, "nosuch_in_f")
        } else {
            "sgf:1: command not found: nosuch_in_f\n".to_owned()
        };
        let (o, out) = run(&m, &k, "sgf").await;
        assert_eq!(out, in_function, "{}: {o:?}", k.name);

        let (o, _) = run(&m, &k, "exit 0").await;
        assert_eq!(o.exit_code, Some(0), "{}: {o:?}", k.name);
        let (o, out) = run(&m, &k, "sgf").await;
        assert!(out.contains("nosuch_in_f"), "{}: {out:?} {o:?}", k.name);
        assert!(!out.contains("shellgate"), "{}: {out:?}", k.name);
    }
    m.shutdown();
}
