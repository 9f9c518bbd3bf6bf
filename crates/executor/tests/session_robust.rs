//! A session survives whatever its commands do (SPEC E-10): exit, exec, set -e, timeouts, cancellation,
//! a stopped shell, redirections of the shell's own output — and no output can confuse the protocol.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use shellgate_executor::{
    CancellationToken, ExecOutcome, RunStatus, SessionKey, SessionManager, SessionOptions,
};
use shellgate_sink::Collect;

fn manager() -> SessionManager {
    SessionManager::new(SessionOptions {
        kill_grace: Duration::from_millis(300),
        respond_timeout: Duration::from_secs(2),
        ..SessionOptions::default()
    })
}

fn key(name: &str) -> SessionKey {
    SessionKey::new(name)
        .with_shell("/bin/bash")
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

async fn run_for(m: &SessionManager, k: &SessionKey, cmd: &str, timeout: Duration) -> (ExecOutcome, Vec<u8>) {
    common::session_run(m, k, cmd, None, timeout).await
}

async fn run(m: &SessionManager, k: &SessionKey, cmd: &str) -> (ExecOutcome, String) {
    let (o, out) = run_for(m, k, cmd, Duration::from_secs(20)).await;
    (o, String::from_utf8_lossy(&out).into_owned())
}

/// Processes whose command line contains `marker`.
fn survivors(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(marker)
        {
            found.push(pid);
        }
    }
    found
}

async fn set_state(m: &SessionManager, k: &SessionKey) {
    let (o, _) = run(
        m,
        k,
        "cd / && export KEEP=kept && g(){ echo gfn; } && alias g2='echo g2al'",
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
}

async fn assert_state(m: &SessionManager, k: &SessionKey) {
    let (o, out) = run(m, k, "pwd; echo $KEEP; g; g2").await;
    assert_eq!(out, "/\nkept\ngfn\ng2al\n", "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("restarted")),
        "{:?}",
        o.notices
    );
}

#[tokio::test]
async fn output_cannot_fake_the_protocol() {
    let m = manager();
    let k = key("immune");
    let cmd = r"printf 'A\0001\000D\0001\0000\000/fake\000S\0001\000'; printf 'bin\000ary\n'; echo x >&3; echo after";
    let (o, out) = run_for(&m, &k, cmd, Duration::from_secs(20)).await;
    let expected = b"A\x001\x00D\x001\x000\x00/fake\x00S\x001\x00bin\x00ary\n".to_vec();
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(out.starts_with(&expected), "{text:?}");
    assert!(
        text.contains("Bad file descriptor"),
        "fd 3 is not the control channel for commands: {text:?}"
    );
    assert!(text.ends_with("after\n"), "{text:?}");
    assert_eq!(o.exit_code, Some(0));
    assert_ne!(o.cwd_after.as_deref(), Some(std::path::Path::new("/fake")));
    let (o, out) = run(&m, &k, "echo next; exit 4").await;
    assert_eq!((out.as_str(), o.exit_code), ("next\n", Some(4)));
    m.shutdown();
}

#[tokio::test]
async fn odd_commands_keep_the_shell() {
    let m = manager();
    let k = key("odd");
    let (first, _) = run(&m, &k, "true").await;
    for (cmd, code) in [
        ("break; echo b", 0),
        ("return 7", 7),
        ("echo \"unterminated", 2),
        ("exec >/dev/null; echo gone", 0),
        ("exec 3>&-", 0),
        ("exec 255<&-", 0),
        ("exec 255>/dev/null", 0),
        // The shell's own stdin carries its wake-ups between commands; a command's is /dev/null.
        ("exec 0<&-", 0),
        ("exec </dev/null", 0),
        ("cat; read -r line", 1),
    ] {
        let (o, _) = run(&m, &k, cmd).await;
        assert_eq!(o.exit_code, Some(code), "{cmd}: {o:?}");
        assert_eq!(o.pid, first.pid, "{cmd} must not end the shell: {o:?}");
    }
    let (o, out) = run(&m, &k, "echo still here").await;
    assert_eq!(out, "still here\n", "{o:?}");
    assert_eq!(o.pid, first.pid);
    let nul = m
        .run(
            &k,
            "echo a\0b",
            None,
            &BTreeMap::new(),
            Duration::from_secs(5),
            &mut Collect::default(),
            CancellationToken::new(),
        )
        .await;
    assert_eq!(nul.status, RunStatus::FailedToStart);
    assert!(nul.error.unwrap().contains("NUL"));
    m.shutdown();
}

/// Traps run between a line's statements with the shell's own stdin: one that reads it meets the end
/// of `/dev/null` at once, as in a script run with stdin from `/dev/null`, and takes nothing the
/// protocol needs.
#[tokio::test]
async fn a_trap_that_reads_stdin_does_not_stall_the_shell() {
    let m = manager();
    let k = key("trap-read");
    let (first, _) = run(&m, &k, "trap 'read -r _; echo \"trap read $?\"' ERR; false").await;
    assert_eq!(first.exit_code, Some(1), "{first:?}");
    let (o, out) = run_for(
        &m,
        &k,
        "trap - ERR; trap 'read -r _' DEBUG; echo next",
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(o.status, RunStatus::Completed, "{o:?}");
    assert_eq!(String::from_utf8_lossy(&out), "next\n", "{o:?}");
    let (o, out) = run(&m, &k, "trap - DEBUG ERR; echo clear").await;
    assert_eq!(out, "clear\n", "{o:?}");
    assert_eq!(o.pid, first.pid, "the shell stays: {o:?}");
    assert!(o.notices.is_empty(), "{:?}", o.notices);
    m.shutdown();
}

/// The output FIFO is kept from one command to the next while nothing holds it: a command that removes
/// it, or puts a file or a directory in its place, costs the next command nothing but a new one.
#[tokio::test]
async fn a_removed_or_replaced_output_fifo_is_made_anew() {
    let m = manager();
    let k = key("fifo");
    let (first, _) = run(&m, &k, "echo one").await;
    let inode = "stat -c %i -- \"$__shellgate_o\"";
    let (_, before) = run(&m, &k, inode).await;
    let (_, after) = run(&m, &k, inode).await;
    assert!(!before.trim().is_empty());
    assert_eq!(
        before, after,
        "a command that ended cleanly leaves the FIFO to the next"
    );
    for cmd in [
        "rm -f -- \"$__shellgate_o\"; echo removed",
        "rm -f -- \"$__shellgate_o\"; echo file > \"$__shellgate_o\"; echo replaced",
        "rm -f -- \"$__shellgate_o\" && mkdir -- \"$__shellgate_o\"; echo dir",
    ] {
        let (o, out) = run(&m, &k, cmd).await;
        assert_eq!(o.exit_code, Some(0), "{cmd}: {o:?}");
        assert!(!out.is_empty(), "{cmd}: {o:?}");
        let (o, out) = run(&m, &k, "echo next").await;
        assert_eq!(out, "next\n", "after {cmd}: {o:?}");
        assert_eq!(o.pid, first.pid, "after {cmd}: {o:?}");
    }
    m.shutdown();
}

/// Between commands bash waits with `read`, which `TMOUT` would time out (and end the shell) if the wait
/// did not set its own timeout.
#[tokio::test]
async fn a_read_only_tmout_does_not_end_an_idle_shell() {
    let m = manager();
    let k = key("tmout");
    let (first, _) = run(&m, &k, "readonly TMOUT=1").await;
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (o, out) = run(&m, &k, "echo $TMOUT").await;
    assert_eq!(out, "1\n", "{o:?}");
    assert_eq!(o.pid, first.pid, "the shell must still be the same: {o:?}");
    assert!(o.notices.is_empty(), "{:?}", o.notices);
    m.shutdown();
}

/// In POSIX mode bash's `read` returns on a trapped signal: the wait between commands starts again
/// instead of letting the shell read past its script and exit.
#[tokio::test]
async fn a_trapped_signal_between_commands_does_not_end_the_shell() {
    let m = manager();
    let k = key("trapped");
    let (first, out) = run(&m, &k, "set -o posix; trap 'caught=yes' USR1; echo $$").await;
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    let shell: i32 = out.trim().parse().unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(shell),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (o, out) = run(&m, &k, "echo $$ ${caught-no}").await;
    assert_eq!(out, format!("{shell} yes\n"), "{o:?}");
    assert!(o.notices.is_empty(), "{:?}", o.notices);
    m.shutdown();
}

#[tokio::test]
async fn exit_exec_and_errexit_respawn_with_state() {
    let m = manager();
    let k = key("respawn");
    set_state(&m, &k).await;
    let (o, _) = run(&m, &k, "exit 3").await;
    assert_eq!((o.status, o.exit_code), (RunStatus::Completed, Some(3)));
    assert_state(&m, &k).await;
    let (o, out) = run(&m, &k, "exec echo replaced").await;
    assert_eq!((out.as_str(), o.exit_code), ("replaced\n", Some(0)), "{o:?}");
    assert_state(&m, &k).await;
    let (o, out) = run(&m, &k, "set -e; false; echo not-reached").await;
    assert_eq!((out.as_str(), o.exit_code), ("", Some(1)), "{o:?}");
    assert_state(&m, &k).await;
    m.shutdown();
}

#[tokio::test]
async fn timeout_of_a_loop_inside_the_shell_respawns() {
    let m = manager();
    let k = key("loop");
    set_state(&m, &k).await;
    let (o, _) = run_for(
        &m,
        &k,
        "echo start; while :; do :; done",
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(o.status, RunStatus::TimedOut, "{o:?}");
    assert_eq!(o.exit_code, None);
    assert_state(&m, &k).await;
    m.shutdown();
}

#[tokio::test]
async fn cancel_stops_the_tree_and_keeps_partial_output() {
    let m = manager();
    let k = key("cancel");
    set_state(&m, &k).await;
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancelled once the last sleep runs: `partial` has been written by then.
    tokio::spawn(async move {
        let give_up = std::time::Instant::now() + Duration::from_secs(15);
        while survivors("987.302").is_empty() && std::time::Instant::now() < give_up {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        trigger.cancel();
    });
    let mut out = Collect::default();
    let o = m
        .run(
            &k,
            "echo partial; sleep 987.301 & sleep 987.302",
            None,
            &BTreeMap::new(),
            Duration::from_secs(20),
            &mut out,
            cancel,
        )
        .await;
    assert_eq!(o.status, RunStatus::Cancelled, "{o:?}");
    assert_eq!(out.bytes, b"partial\n");
    assert!(survivors("987.30").is_empty(), "{:?}", survivors("987.30"));
    assert_state(&m, &k).await;
    m.shutdown();
}

#[tokio::test]
async fn leftover_background_processes_are_stopped_but_the_shell_stays() {
    let m = manager();
    let k = key("bg");
    let (first, _) = run(&m, &k, "true").await;
    let (o, out) = run(
        &m,
        &k,
        "sleep 987.311 & ( sleep 987.312 >/dev/null 2>&1 & ) ; echo fg",
    )
    .await;
    assert_eq!(out, "fg\n");
    assert_eq!(o.exit_code, Some(0));
    assert!(
        o.notices.iter().any(|n| n.contains("background")),
        "{:?}",
        o.notices
    );
    assert!(survivors("987.31").is_empty(), "{:?}", survivors("987.31"));
    let (o, _) = run(&m, &k, "true").await;
    assert_eq!(o.pid, first.pid);
    m.shutdown();
}

#[tokio::test]
async fn escaped_leftovers_are_stopped_at_the_end_of_their_own_command() {
    let m = manager();
    for k in common::session_keys("escaped") {
        // Each leaves its session and the command's output, and is re-parented to the engine (given
        // the time to get there).
        for (command, marker) in [
            (
                "(setsid sleep 987.321 </dev/null >/dev/null 2>&1 &); sleep 0.3; echo fg",
                "987.321",
            ),
            (
                "setsid -f sleep 987.322 </dev/null >/dev/null 2>&1; sleep 0.3; echo fg",
                "987.322",
            ),
            (
                "( (setsid sleep 987.323 </dev/null >/dev/null 2>&1 &) &); sleep 0.3; echo fg",
                "987.323",
            ),
        ] {
            let (o, out) = run(&m, &k, command).await;
            assert_eq!(out, "fg\n", "{command}: {o:?}");
            assert!(
                o.notices.iter().any(|n| n.contains("background process")),
                "{command}: {:?}",
                o.notices
            );
            assert!(survivors(marker).is_empty(), "{command}: {:?}", survivors(marker));
        }
    }
    m.shutdown();
}

#[tokio::test]
async fn a_stopped_shell_is_replaced() {
    let m = manager();
    let k = key("stopped");
    set_state(&m, &k).await;
    let pid = m.list()[0].pid.expect("live shell");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    let (o, out) = run(&m, &k, "pwd; echo $KEEP; g; g2").await;
    assert_eq!(out, "/\nkept\ngfn\ng2al\n", "{o:?}");
    assert!(
        o.notices.iter().any(|n| n.contains("stopped responding")),
        "{:?}",
        o.notices
    );
    assert_ne!(o.pid, Some(pid));
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(" Z ")
    );
    m.shutdown();
}

#[tokio::test]
async fn a_cancelled_token_does_not_touch_the_session() {
    let m = manager();
    let k = key("precancel");
    let (first, _) = run(&m, &k, "true").await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut out = Collect::default();
    let o = m
        .run(
            &k,
            "echo no",
            None,
            &BTreeMap::new(),
            Duration::from_secs(5),
            &mut out,
            cancel,
        )
        .await;
    assert_eq!(o.status, RunStatus::Cancelled);
    assert!(out.bytes.is_empty());
    let (o, _) = run(&m, &k, "true").await;
    assert_eq!(o.pid, first.pid);
    m.shutdown();
}

#[tokio::test]
async fn an_abandoned_call_stops_its_command_and_frees_the_session() {
    let m = manager();
    let k = key("abandoned");
    set_state(&m, &k).await;
    let env = BTreeMap::new();
    let mut out = Collect::default();
    let call = m.run(
        &k,
        "sleep 987.401",
        None,
        &env,
        Duration::from_secs(20),
        &mut out,
        CancellationToken::new(),
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), call)
            .await
            .is_err()
    );
    assert!(survivors("987.401").is_empty(), "{:?}", survivors("987.401"));
    assert!(!m.list()[0].busy);
    assert_state(&m, &k).await;
    m.shutdown();
}
