//! Pseudo-terminal execution for shellgate: a PTY [`Executor`](shellgate_executor::Executor), an
//! interactive process handle for background jobs, key encoding and a headless screen.
//!
//! ```
//! use shellgate_executor::{CancellationToken, Executor, LaunchSpec, RunStatus};
//! use shellgate_pty::PtyExecutor;
//! use shellgate_sink::Collect;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let spec = LaunchSpec::new("sh", ["-c", "tty; exit 3"], std::env::temp_dir());
//! let mut out = Collect::default();
//! let outcome = PtyExecutor::default().run(spec, &mut out, CancellationToken::new()).await;
//! assert_eq!(outcome.status, RunStatus::Completed);
//! assert_eq!(outcome.exit_code, Some(3));
//! assert!(String::from_utf8_lossy(&out.bytes).starts_with("/dev/pts/"));
//! # });
//! ```
//!
//! Interactive use goes through [`PtyProcess`]: spawn, read the output stream, send keys, look at
//! the [`screen`](PtyProcess::screen), ask whether it is [waiting for
//! input](PtyProcess::waiting_for_input) or how much of its input is [unread](PtyProcess::unread_input),
//! wait or kill.
//!
//! Transcript-only terminals ([`PtyOptions::emulate_screen`] off) run with output post-processing
//! off (`stty -opost`): the kernel's `\n` → `\r\n` rewriting, the costliest part of its output path,
//! is skipped, and the output is the program's bytes unchanged, as through a pipe. Programs still
//! have a terminal with cooked, echoed input; only `stty -a` (`-opost`) and the rendering of a bare
//! `\n` on a real screen differ. With screen emulation the terminal stays cooked.
#![deny(unsafe_code)]

mod error;
mod executor;
mod input_queue;
mod input_wait;
pub mod keys;
mod kill;
mod kitty;
pub mod modes;
mod output_processing;
mod process;
mod screen;
mod size;
mod transcript;

use std::sync::OnceLock;

pub use error::PtyError;
pub use executor::PtyExecutor;
pub use input_queue::{InputForecast, unread_bytes};
pub use input_wait::waiting_to_read;
pub use keys::{KeyError, KeyModes, KeySpec};
pub use nix::sys::signal::Signal;
pub use process::{ExitInfo, PtyOptions, PtyOutput, PtyProcess};
pub use screen::{Screen, ScreenSnapshot};
pub use size::{COLS_RANGE, ROWS_RANGE, TermSize};
pub use transcript::CrlfToLf;

/// Environment variable that disables PTY mode when set to `1`.
pub const NO_PTY_ENV: &str = "SHELLGATE_NO_PTY";

/// Whether `SHELLGATE_NO_PTY=1` is set.
pub fn pty_disabled_by_env() -> bool {
    std::env::var_os(NO_PTY_ENV).is_some_and(|v| v == "1")
}

/// Whether a pseudo-terminal can be opened here (checked once per process).
pub fn pty_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| process::open_pty(TermSize::default()).is_ok())
}

/// The PTY selection rule: a terminal is used only when `requested`, not disabled by
/// `SHELLGATE_NO_PTY=1`, and available. (Whether the caller can interact is the caller's part.)
pub fn pty_selected(requested: bool) -> bool {
    requested && !pty_disabled_by_env() && pty_available()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_can_be_shared_across_tasks() {
        fn send_sync<T: Send + Sync>() {}
        fn send<T: Send>() {}
        send_sync::<PtyProcess>();
        send_sync::<PtyExecutor>();
        send::<PtyOutput>();
    }

    #[test]
    fn selection_requires_a_request() {
        assert!(!pty_selected(false));
        assert!(pty_available());
        assert_eq!(pty_selected(true), !pty_disabled_by_env());
    }
}
