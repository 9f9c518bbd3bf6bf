//! Sandboxed calls (SPEC ): which sandbox mode a call gets, the layer that confines its
//! launches and its session's shell, and the watch that reads its denials back from the kernel.
//!
//! - The mode is the configured one (`[sandbox] mode`), or a stricter one the call asks for
//!   (`full` → `workspace-write` → `read-only`); a looser request is refused with a notice and the
//!   configured mode applies ([`Sandboxing::decide`]).
//! - The workspace is the engine's directory, not the call's `cwd`: a call cannot widen what it
//!   may write by choosing where it runs.
//! - Every launch of a sandboxed call (one-shot, terminal, job) is wrapped by a
//!   [`SandboxLayer`](crate::SandboxLayer); a persistent session gets a shell of its own, started
//!   through the same layer ([`SandboxRun::session_key`]).
//! - Enforcement is checked, never assumed: [`check_kernel`](crate::check_kernel) before the run
//!   ([`CallRefusal::Unavailable`]), and the helper's own refusal after it ([`helper_refusal`]) —
//!   unless the configuration allows degrading, which a notice then says.
//! - Denials are data: a [`DenialWatch`] around the run gives its [`DenialReport`](crate::DenialReport).
//!   Outside a sandbox no collector runs, so an ordinary permission error is never labelled a denial.

mod decide;
mod engine_executables;
mod run;
mod settings;
mod watch;

pub use decide::{CallRefusal, Sandboxing};
pub use engine_executables::engine_executables;
pub use run::{NARROWING_NEEDS_PROXY, SandboxRun};
pub use settings::{ModeSetting, NetworkSetting, ProxyFile, SANDBOX_KEYS, SandboxConfig, SandboxFile};
pub use watch::{DenialWatch, SANDBOX_ERROR, SANDBOX_UNAVAILABLE, helper_refusal, report_notices};
