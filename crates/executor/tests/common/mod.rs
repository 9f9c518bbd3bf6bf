//! Shared helpers for the executor's integration tests.
#![allow(dead_code)]

pub mod zombie_leader;

use std::time::Duration;

use shellgate_executor::{
    ExecOutcome, Executor, LaunchSpec, PipeExecutor, ShellConfig, init_subreaper, non_interactive, shell_spec,
};
use shellgate_sink::Collect;
use tokio_util::sync::CancellationToken;

/// A bash spec for `command` in the temp directory, with the non-interactive environment.
pub fn bash(command: &str) -> LaunchSpec {
    let config = ShellConfig {
        shell: Some("/bin/bash".into()),
        ..ShellConfig::default()
    };
    let mut spec = non_interactive(shell_spec(&config, command, std::env::temp_dir()));
    spec.timeout = Some(Duration::from_secs(30));
    spec
}

/// Run `spec` with the default pipe executor; returns the outcome and the output as text.
pub async fn run_spec(spec: LaunchSpec) -> (ExecOutcome, String) {
    init_subreaper().unwrap();
    let mut out = Collect::default();
    let outcome = PipeExecutor::default()
        .run(spec, &mut out, CancellationToken::new())
        .await;
    (outcome, String::from_utf8_lossy(&out.bytes).into_owned())
}

/// Run a bash command with a 30 s safety timeout.
pub async fn run(command: &str) -> (ExecOutcome, String) {
    run_spec(bash(command)).await
}

/// Processes whose command line contains `marker` (zombies have none and are not listed).
pub fn survivors(marker: &str) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// Zombie children of this test process whose command name is `comm`.
pub fn zombies_named(comm: &str) -> Vec<u32> {
    let me = std::process::id();
    shellgate_executor::tree::children_of(me)
        .into_iter()
        .filter_map(shellgate_executor::tree::read_proc)
        .filter(|p| p.is_zombie() && p.comm == comm && p.ppid == me)
        .map(|p| p.pid)
        .collect()
}

/// Assert that nothing with `marker` in its command line is left.
pub fn assert_no_survivors(marker: &str) {
    let left = survivors(marker);
    assert!(left.is_empty(), "processes survived: {left:?}");
}

/// Whether `program` is on PATH; when not, print why the test is skipped, or panic when
/// SHELLGATE_REQUIRE_ALL=1 (CI).
pub fn require(program: &str) -> bool {
    if shellgate_executor::find_on_path(program).is_some() {
        return true;
    }
    assert!(
        std::env::var("SHELLGATE_REQUIRE_ALL").as_deref() != Ok("1"),
        "{program} is required (SHELLGATE_REQUIRE_ALL=1) but not on PATH"
    );
    eprintln!("skipping: {program} not on PATH");
    false
}

/// Run `command` in session `key` (optionally `cd`-ing to `cwd` first); returns the outcome and the raw
/// output.
pub async fn session_run(
    manager: &shellgate_executor::SessionManager,
    key: &shellgate_executor::SessionKey,
    command: &str,
    cwd: Option<&std::path::Path>,
    timeout: Duration,
) -> (ExecOutcome, Vec<u8>) {
    session_call(manager, key, command, cwd, &[], timeout).await
}

/// [`session_run`] with the per-call variables `env`.
pub async fn session_call(
    manager: &shellgate_executor::SessionManager,
    key: &shellgate_executor::SessionKey,
    command: &str,
    cwd: Option<&std::path::Path>,
    env: &[(&str, &str)],
    timeout: Duration,
) -> (ExecOutcome, Vec<u8>) {
    let mut out = Collect::default();
    let env: std::collections::BTreeMap<String, String> = env
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let outcome = manager
        .run(
            key,
            command,
            cwd,
            &env,
            timeout,
            &mut out,
            CancellationToken::new(),
        )
        .await;
    (outcome, out.bytes)
}

/// [`session_run`] with no `cd`, a 20 s timeout and the output as text.
pub async fn session_text(
    manager: &shellgate_executor::SessionManager,
    key: &shellgate_executor::SessionKey,
    command: &str,
) -> (ExecOutcome, String) {
    let (outcome, out) = session_run(manager, key, command, None, Duration::from_secs(20)).await;
    (outcome, String::from_utf8_lossy(&out).into_owned())
}

/// [`session_text`] with the per-call variables `env`.
pub async fn session_text_env(
    manager: &shellgate_executor::SessionManager,
    key: &shellgate_executor::SessionKey,
    command: &str,
    env: &[(&str, &str)],
) -> (ExecOutcome, String) {
    let (outcome, out) = session_call(manager, key, command, None, env, Duration::from_secs(20)).await;
    (outcome, String::from_utf8_lossy(&out).into_owned())
}

/// A session key for `shell` with `HOME` in the temp directory.
pub fn session_key(name: &str, shell: impl Into<std::path::PathBuf>) -> shellgate_executor::SessionKey {
    shellgate_executor::SessionKey::new(name)
        .with_shell(shell)
        .with_env("HOME", std::env::temp_dir().to_string_lossy())
}

/// A zsh session key, or `None` (skipped with a reason; a failure when SHELLGATE_REQUIRE_ALL=1).
pub fn zsh_session_key(name: &str) -> Option<shellgate_executor::SessionKey> {
    if !require("zsh") {
        return None;
    }
    Some(session_key(name, shellgate_executor::find_on_path("zsh")?))
}

/// Session keys for bash and (when installed) zsh, named `<name>-bash` / `<name>-zsh`.
pub fn session_keys(name: &str) -> Vec<shellgate_executor::SessionKey> {
    let mut keys = vec![session_key(&format!("{name}-bash"), "/bin/bash")];
    keys.extend(zsh_session_key(&format!("{name}-zsh")));
    keys
}
