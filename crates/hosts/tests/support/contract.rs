//! The contract every host keeps, run against each kind of host.

use std::collections::BTreeMap;
use std::time::Duration;

use shellgate_executor::{CancellationToken, ExecOutcome, Executor, LaunchSpec, RunStatus, SessionCommand};
use shellgate_hosts::{HostExecutor, RemoteHost, RemoteSessions};
use shellgate_sink::{Collect, Discard};

/// `bash -c SCRIPT` in `cwd` as a spec (`""`: the host's own starting directory).
pub fn shell(script: &str, cwd: &str) -> LaunchSpec {
    LaunchSpec::new("bash", ["-c", script, "--"], cwd)
}

pub async fn one_shot(host: &RemoteHost, spec: LaunchSpec) -> (ExecOutcome, String) {
    let mut sink = Collect::default();
    let outcome = HostExecutor::new(host.clone())
        .run(spec, &mut sink, CancellationToken::new())
        .await;
    (outcome, String::from_utf8_lossy(&sink.bytes).into_owned())
}

pub async fn in_session(
    sessions: &RemoteSessions,
    host: &RemoteHost,
    text: &str,
    cwd: Option<&str>,
    env: &BTreeMap<String, String>,
    timeout: Duration,
) -> (ExecOutcome, String) {
    let mut sink = Collect::default();
    let cwd = cwd.map(std::path::PathBuf::from);
    let command = SessionCommand {
        text,
        cwd: cwd.as_deref(),
        env,
        timeout,
        report_status: false,
    };
    let outcome = sessions
        .run_command(host, "main", &command, &mut sink, CancellationToken::new())
        .await;
    (outcome, String::from_utf8_lossy(&sink.bytes).into_owned())
}

/// How many processes on the host run `sleep <secs>` (the pattern is written so that the checking
/// command does not match itself).
pub async fn sleepers(host: &RemoteHost, secs: u32) -> usize {
    let text = secs.to_string();
    let (head, last) = text.split_at(text.len() - 1);
    let script = format!(
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' 2>/dev/null < \"$f\"; echo; done | grep -c 'sleep {head}[{last}]' || true"
    );
    let (outcome, out) = one_shot(host, LaunchSpec::new("sh", ["-c", script.as_str()], "")).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?} {out}");
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {out:?}"))
}

/// Directory, variables with spaces and quotes, exit codes, signals.
pub async fn one_shot_basics(host: &RemoteHost) {
    let mut spec = shell("pwd; printf '%s\\n' \"$A\" \"$B\"; exit 3", "/tmp");
    spec.env.insert("A".into(), "x 'y' \"z\" $HOME `w`".into());
    spec.env.insert("B".into(), "two  spaces".into());
    let (outcome, out) = one_shot(host, spec).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{outcome:?}");
    assert_eq!(out, "/tmp\nx 'y' \"z\" $HOME `w`\ntwo  spaces\n");
    assert_eq!(outcome.exit_code, Some(3));

    let (outcome, _) = one_shot(host, shell("kill -TERM $$", "")).await;
    assert_eq!(
        outcome.exit_code,
        Some(143),
        "a signal arrives as 128+n: {outcome:?}"
    );

    let (outcome, out) = one_shot(host, shell("echo ran", "/no/such/dir")).await;
    assert_ne!(outcome.exit_code, Some(0));
    assert!(!out.contains("ran"), "{out}");
    assert!(
        out.contains("no such directory on the host: /no/such/dir"),
        "{out}"
    );
}

/// A timed-out run leaves nothing on the host, background children included.
pub async fn one_shot_timeout_leaves_nothing(host: &RemoteHost) {
    let mut spec = shell("sleep 377 & sleep 378; echo never", "");
    spec.timeout = Some(Duration::from_millis(1500));
    spec.kill_grace = Duration::from_millis(200);
    let started = std::time::Instant::now();
    let (outcome, out) = one_shot(host, spec).await;
    assert_eq!(outcome.status, RunStatus::TimedOut, "{outcome:?}");
    assert!(!out.contains("never"));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(sleepers(host, 377).await, 0, "the background child survived");
    assert_eq!(sleepers(host, 378).await, 0, "the command survived");
    // A leftover of a run that ended on its own is reaped too.
    let (outcome, _) = one_shot(host, shell("setsid sleep 379 >/dev/null 2>&1 &", "")).await;
    assert_eq!(outcome.exit_code, Some(0));
    assert_eq!(sleepers(host, 379).await, 0, "a detached leftover survived");
}

/// A timed-out run in a terminal leaves nothing on the host either: killing the local client's
/// terminal session does not reach what it started there, so the host's stop must run.
pub async fn terminal_timeout_leaves_nothing(host: &RemoteHost) {
    use shellgate_executor::LaunchLayer as _;
    let mut spec = shell("sleep 385 & sleep 386; echo never", "");
    spec.timeout = Some(Duration::from_millis(1500));
    spec.kill_grace = Duration::from_millis(200);
    let wrapped = shellgate_hosts::HostLayer::new(host.clone()).wrap(spec);
    let mut sink = Collect::default();
    let outcome = shellgate_pty::PtyExecutor::default()
        .run(wrapped, &mut sink, CancellationToken::new())
        .await;
    let out = String::from_utf8_lossy(&sink.bytes);
    assert_eq!(outcome.status, RunStatus::TimedOut, "{outcome:?} {out}");
    assert!(!out.contains("never"), "{out}");
    assert_eq!(sleepers(host, 385).await, 0, "the background child survived");
    assert_eq!(sleepers(host, 386).await, 0, "the command survived");
}

/// 10 MB pass through whole, counted.
pub async fn one_shot_large_output(host: &RemoteHost) {
    let mut sink = Discard::default();
    let spec = shell("head -c 10000000 /dev/zero", "");
    let outcome = HostExecutor::new(host.clone())
        .run(spec, &mut sink, CancellationToken::new())
        .await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    assert_eq!(sink.bytes, 10_000_000);
}

/// The host cannot run anything: a clear failure to start.
pub async fn unreachable(host: &RemoteHost) {
    let (outcome, _) = one_shot(host, shell("echo hi", "")).await;
    assert_eq!(outcome.status, RunStatus::FailedToStart, "{outcome:?}");
    let error = outcome.error.unwrap_or_default();
    assert!(error.contains("not reachable"), "{error}");
    let sessions = RemoteSessions::default();
    let (outcome, _) = in_session(
        &sessions,
        host,
        "echo hi",
        None,
        &BTreeMap::new(),
        Duration::from_secs(5),
    )
    .await;
    assert_eq!(outcome.status, RunStatus::FailedToStart, "{outcome:?}");
}

/// A session keeps directory, variables and functions; `exit` and a stop keep them too.
pub async fn session_keeps_state(host: &RemoteHost) {
    let sessions = RemoteSessions::default();
    let none = BTreeMap::new();
    let t = Duration::from_secs(20);
    let (o, out) = in_session(
        &sessions,
        host,
        "cd /tmp && export FOO='a b' && f() { echo fn; }",
        None,
        &none,
        t,
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{o:?} {out}");
    let (o, out) = in_session(
        &sessions,
        host,
        "pwd; echo \"$FOO\"; f; echo \"$ONCE\"",
        None,
        &one("ONCE", "it's"),
        t,
    )
    .await;
    assert_eq!(out, "/tmp\na b\nfn\nit's\n", "{o:?}");
    assert_eq!(o.cwd_after.as_deref(), Some(std::path::Path::new("/tmp")));
    let (o, out) = in_session(
        &sessions,
        host,
        "echo \"${ONCE-gone}\"; printf 'no newline'",
        None,
        &none,
        t,
    )
    .await;
    assert_eq!(out, "gone\nno newline", "{o:?}");

    // Functions survive a new shell where the host has bash (a POSIX `sh` cannot list them).
    let (_, which) = one_shot(host, shell("command -v bash || echo none", "")).await;
    let kept = if which.trim() == "none" { "" } else { "fn\n" };
    let after_restart = "pwd; echo \"$FOO\"; f 2>/dev/null || true";
    let after_restart_setv = "echo \"${SETV-lost}\"";
    // A command that only runs programs skips the save; one calling a session function does not.
    let (o, _) = in_session(&sessions, host, "setv() { export SETV=yes; }", None, &none, t).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let (o, _) = in_session(&sessions, host, "true", None, &none, t).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let (o, _) = in_session(&sessions, host, "setv", None, &none, t).await;
    assert_eq!(o.exit_code, Some(0), "{o:?}");
    let (o, _) = in_session(&sessions, host, "exit 4", None, &none, t).await;
    assert_eq!(o.exit_code, Some(4), "{o:?}");
    let (o, out) = in_session(&sessions, host, after_restart, None, &none, t).await;
    assert_eq!(out, format!("/tmp\na b\n{kept}"), "state after exit: {o:?}");
    let (_, out) = in_session(&sessions, host, after_restart_setv, None, &none, t).await;
    assert_eq!(out, "yes\n", "what a session function exported is kept");

    // What a command leaves running is stopped when it ends, a process that escaped alone too.
    for (command, secs) in [
        ("sleep 396 </dev/null >/dev/null 2>&1 & sleep 0.3", 396),
        ("(setsid sleep 397 </dev/null >/dev/null 2>&1 &); sleep 0.3", 397),
        ("( (sleep 398 </dev/null >/dev/null 2>&1 &) &); sleep 0.3", 398),
    ] {
        let (o, _) = in_session(&sessions, host, command, None, &none, t).await;
        assert_eq!(o.exit_code, Some(0), "{command}: {o:?}");
        assert_eq!(sleepers(host, secs).await, 0, "{command} left its sleep running");
    }
    // A stopped external command: the shell stays, nothing is left.
    let (o, _) = in_session(&sessions, host, "sleep 388", None, &none, Duration::from_secs(1)).await;
    assert_eq!(o.status, RunStatus::TimedOut, "{o:?}");
    assert_eq!(sleepers(host, 388).await, 0);
    // A builtin loop: only ending the shell stops it; the next shell has the state.
    let (o, _) = in_session(
        &sessions,
        host,
        "while :; do :; done",
        None,
        &none,
        Duration::from_secs(1),
    )
    .await;
    assert_eq!(o.status, RunStatus::TimedOut, "{o:?}");
    let (o, out) = in_session(&sessions, host, after_restart, None, &none, t).await;
    assert_eq!(out, format!("/tmp\na b\n{kept}"), "state after a stop: {o:?}");

    let (o, _) = in_session(&sessions, host, "echo x", Some("/no/such/dir"), &none, t).await;
    assert_eq!(o.status, RunStatus::FailedToStart, "{o:?}");
    assert!(o.error.unwrap_or_default().contains("/no/such/dir"));
    let (o, out) = in_session(&sessions, host, "pwd", Some("/"), &none, t).await;
    assert_eq!((o.exit_code, out.as_str()), (Some(0), "/\n"));
    sessions.shutdown().await;
}

fn one(key: &str, value: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(key.to_owned(), value.to_owned())])
}
