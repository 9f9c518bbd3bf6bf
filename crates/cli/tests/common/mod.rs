//! Helpers shared by the binary's integration tests.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Whether a live process (not a zombie) has `word` as one whole argument. A shell whose `-c`
/// text merely mentions `sleep 30.25` does not count for `30.25`; the `sleep` it starts does.
pub fn a_process_has_argument(word: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            return false;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z'));
        !zombie && cmdline.split(|&b| b == 0).any(|arg| arg == word.as_bytes())
    })
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
