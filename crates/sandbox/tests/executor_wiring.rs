//! The layer composed with the real pipe executor: the spawned pid is what the collector needs.

mod common;

use std::fs;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{HELPER, collector, landlock_available, scratch, workspace_policy};
use shellgate_executor::{CancellationToken, Executor, PipeExecutor, ShellConfig, shell_spec};
use shellgate_sandbox::{DenialKind, SandboxLayer};
use shellgate_sink::Collect;

#[test]
fn a_wrapped_shell_command_runs_confined_and_its_denials_are_attributed() {
    if !landlock_available() {
        return;
    }
    let base = scratch();
    let layer = SandboxLayer::new(HELPER, supervised(workspace_policy(base.path())));
    let spec = layer.wrap(shell_spec(
        &ShellConfig::default(),
        "touch ./ok && echo inside; touch /etc/shellgate-wiring-probe || echo refused",
        base.path(),
    ));
    let collector = collector();
    let mut out = Collect::default();
    let outcome = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(PipeExecutor::default().run(spec, &mut out, CancellationToken::new()));
    let text = String::from_utf8_lossy(&out.bytes);
    assert!(text.contains("inside") && text.contains("refused"), "{text}");
    assert!(base.path().join("ok").exists());
    let Some(collector) = collector else { return };
    let pid = outcome.pid.expect("the pipe executor reports the pid");
    let report = collector.finish(&[pid]);
    assert!(
        report
            .denials
            .iter()
            .any(|d| d.kind == DenialKind::Write && d.path.as_deref() == Some("/etc/shellgate-wiring-probe")),
        "{report:?}"
    );
}

#[test]
fn a_long_lived_sandbox_is_reported_per_collector_window() {
    if !landlock_available() {
        return;
    }
    let Some(first) = collector() else { return };
    let base = scratch();
    let outside = scratch();
    let home = outside.path().join("home");
    fs::create_dir(&home).unwrap();
    // Like a session shell: one sandbox (one Landlock domain), two commands, one collector each.
    let spec = SandboxLayer::new(HELPER, supervised(workspace_policy(base.path()))).wrap(
        shellgate_executor::LaunchSpec::new(
            "sh",
            ["-c", "touch /etc/shellgate-first 2>/dev/null; echo first; read line; touch \"$HOME/second\" 2>/dev/null; echo second"],
            base.path(),
        ),
    );
    let mut child = Command::new(&spec.program)
        .args(&spec.args)
        .current_dir(&spec.cwd)
        .env("HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("first") {
        let mut byte = [0u8; 1];
        assert_eq!(std::io::Read::read(&mut stdout, &mut byte).unwrap(), 1);
        seen.push(byte[0]);
    }
    let first_report = first.finish(&[pid]);

    let second = collector().expect("reporting was available a moment ago");
    child.stdin.take().unwrap().write_all(b"go\n").unwrap();
    assert!(child.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(10));
    let second_report = second.finish(&[pid]);

    let paths = |r: &shellgate_sandbox::DenialReport| -> Vec<String> {
        r.denials.iter().filter_map(|d| d.path.clone()).collect()
    };
    let home = fs::canonicalize(&home)
        .unwrap()
        .join("second")
        .display()
        .to_string();
    assert_eq!(paths(&first_report), ["/etc/shellgate-first"], "{first_report:?}");
    assert_eq!(paths(&second_report), [home], "{second_report:?}");
}

/// `policy` naming the engine's denial supervisor, as the engine's own policies do.
fn supervised(mut policy: shellgate_sandbox::SandboxPolicy) -> shellgate_sandbox::SandboxPolicy {
    policy.denial_supervisor = Some(shellgate_sandbox::denial_supervisor().expect("denial supervisor"));
    policy
}
