//! Signalling everything a terminal session started.
//!
//! The program is a session leader (its pid is its session id and process group id), so the
//! session holds the whole tree that still belongs to the terminal, including jobs an interactive
//! shell moved into their own process groups.

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::input_wait::processes_with;

/// Send `signal` to process group `leader` and every process of session `leader`. Returns how many
/// deliveries succeeded.
pub(crate) fn signal_session(leader: i32, signal: Signal) -> usize {
    let mut delivered = usize::from(killpg(Pid::from_raw(leader), signal).is_ok());
    for pid in processes_with(3, leader).unwrap_or_default() {
        delivered += usize::from(kill(Pid::from_raw(pid), signal).is_ok());
    }
    delivered
}

/// Whether any live (non-zombie) process remains in session or group `leader`.
pub(crate) fn session_alive(leader: i32) -> bool {
    let in_session = processes_with(3, leader).unwrap_or_default();
    let in_group = processes_with(2, leader).unwrap_or_default();
    in_session.into_iter().chain(in_group).any(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rfind(')').map(|i| s[i + 1..].trim_start().starts_with('Z')))
            == Some(false)
    })
}
