//! Helpers shared by the job tests (included with `mod common;` through `#[path]`).
#![allow(dead_code)]

use std::time::Duration;

use shellgate::{
    BashParams, BashTool, CancellationToken, ProcessAction, ProcessParams, ProcessResult, ProcessTool,
    ToolConfig, ToolResult,
};

/// Whether a test's component is `available`; when not, print why the test is skipped, or panic when
/// SHELLGATE_REQUIRE_ALL=1 (CI).
pub fn available_or_skip(available: bool, missing: &str) -> bool {
    if available {
        return true;
    }
    assert!(
        std::env::var_os("SHELLGATE_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "SHELLGATE_REQUIRE_ALL=1 but {missing}"
    );
    eprintln!("skipped: {missing}");
    false
}

/// A bash tool and a process tool sharing one registry.
pub fn tools() -> (BashTool, ProcessTool) {
    tools_with(test_config())
}

/// The default configuration, spilling into private temporary files rather than the user's store.
pub fn test_config() -> ToolConfig {
    ToolConfig {
        artifacts: None,
        ..ToolConfig::default()
    }
}

/// Like [`tools`] with a configuration.
pub fn tools_with(config: ToolConfig) -> (BashTool, ProcessTool) {
    let bash = BashTool::new(config);
    let process = ProcessTool::new(bash.jobs().clone());
    (bash, process)
}

/// Start `command` with `background: true`.
pub async fn background(bash: &BashTool, command: &str) -> ToolResult {
    let mut params = BashParams::new(command);
    params.background = true;
    bash.call(params, CancellationToken::new()).await
}

/// Run `action` on job `id`.
pub async fn act(process: &ProcessTool, action: ProcessAction, id: &str) -> ProcessResult {
    process.call(ProcessParams::new(action, id)).await
}

/// Poll job `id`, waiting up to `wait_ms`.
pub async fn poll(process: &ProcessTool, id: &str, wait_ms: u64) -> ProcessResult {
    let mut params = ProcessParams::new(ProcessAction::Poll, id);
    params.wait_ms = Some(wait_ms);
    process.call(params).await
}

/// Poll until the job has ended, collecting all output.
pub async fn poll_to_end(process: &ProcessTool, id: &str) -> (ProcessResult, String) {
    let mut all = String::new();
    for _ in 0..200 {
        let r = poll(process, id, 5000).await;
        all.push_str(r.output.as_deref().unwrap_or(""));
        if r.status != Some(shellgate::JobStatus::Running) {
            return (r, all);
        }
    }
    panic!("job {id} did not end");
}

/// Live processes (not zombies) other than this one, with their NUL-separated command lines.
fn live_processes() -> Vec<(u32, Vec<u8>)> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            (!zombie && pid != me).then_some((pid, cmdline))
        })
        .collect()
}

/// Pids of live processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    live_processes()
        .into_iter()
        .filter(|(_, cmdline)| String::from_utf8_lossy(cmdline).contains(marker))
        .map(|(pid, _)| pid)
        .collect()
}

/// Whether a live process has `word` as one whole argument. A shell whose `-c` text merely mentions
/// `sleep 30.25` does not count for `30.25`; the `sleep` it starts does.
pub fn a_process_has_argument(word: &str) -> bool {
    live_processes()
        .iter()
        .any(|(_, cmdline)| cmdline.split(|&b| b == 0).any(|arg| arg == word.as_bytes()))
}

/// Cancel `token` once a process with the argument `word` runs (what the command printed before
/// starting it has then been written); after 20 s regardless.
pub fn cancel_once_running(word: &'static str, token: shellgate::CancellationToken) {
    tokio::spawn(async move {
        let give_up = std::time::Instant::now() + Duration::from_secs(20);
        while !a_process_has_argument(word) && std::time::Instant::now() < give_up {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        token.cancel();
    });
}

/// Wait (bounded) until no process carries `marker`.
pub async fn gone(marker: &str) -> bool {
    for _ in 0..100 {
        if processes_with(marker).is_empty() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
