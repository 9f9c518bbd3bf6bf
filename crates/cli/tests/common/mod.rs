//! Helpers shared by the binary's integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Live processes (not zombies) other than this one, with their NUL-separated command lines.
fn live_processes() -> Vec<(u32, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    entries
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

/// Live processes whose command line contains `marker`.
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

/// Wait until a process with the argument `word` runs (what a command printed before starting it
/// has then been written). Panics after 20 s, naming the word.
pub fn wait_for_argument(word: &str) {
    let give_up = Instant::now() + Duration::from_secs(20);
    while !a_process_has_argument(word) {
        assert!(
            Instant::now() < give_up,
            "no process with the argument {word:?} started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether a missing component must fail the test instead of skipping it.
pub fn require_all() -> bool {
    std::env::var_os("SHELLGATE_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// Skip (print why, return false) or, under `SHELLGATE_REQUIRE_ALL=1`, fail.
pub fn available(ok: bool, reason: &str) -> bool {
    if !ok {
        assert!(!require_all(), "required component missing: {reason}");
        eprintln!("skipping: {reason}");
    }
    ok
}

/// SIGKILL each of `pids` (what a failing test leaves behind).
pub fn kill_all(pids: &[u32]) {
    for &pid in pids {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
}

/// A scratch directory outside `/tmp` and `$TMPDIR` (both writable in the sandbox).
pub fn scratch() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") {
        Path::new("/var/tmp")
    } else {
        target
    };
    let dir = tempfile::tempdir_in(base).unwrap().keep();
    dir.canonicalize().unwrap()
}
