//! Sandboxed runs (SPEC ): which sandbox mode a call gets, the launch layer that confines
//! it, the kernel check before it starts, and the denials read back from the kernel after it.
//!
//! - The mode is the configured one (`[sandbox] mode`), or a stricter one the call asks for with
//!   `sandbox` (`full` → `workspace-write` → `read-only`); a looser request is refused with a
//!   notice and the configured mode applies.
//! - The workspace is the tool's directory ([`ToolConfig::cwd`](crate::ToolConfig::cwd)), not the
//!   call's `cwd`: a call cannot widen what it may write by choosing where it runs.
//! - Every launch of a sandboxed call (one-shot, terminal, job) is wrapped by a
//!   [`SandboxLayer`](shellgate_sandbox::SandboxLayer) (the engine's own binary in its `sandbox-exec`
//!   mode); a persistent session gets a shell of its own, started through the same layer (see
//!   [`SandboxRun::session_key`]).
//! - Enforcement is checked, never assumed: [`check_kernel`](shellgate_sandbox::check_kernel) before
//!   the run, and the helper's own refusal (exit 125, `shellgate-sandbox: unavailable: …`) after it,
//!   both become `failed_to_start` with `error: {kind: "sandbox_unavailable", reason}` — unless the
//!   configuration allows degrading, which a notice then says.
//! - Denials are data: a [`DenialCollector`](shellgate_sandbox::DenialCollector) around the run gives
//!   `sandbox_denied`. Outside a sandbox no collector runs, so an ordinary permission error is never
//!   labelled a denial.
//!
//! `config` holds the settings, `decide` picks a call's sandbox, `run` wraps its launches, `denials`
//! reads back what the kernel refused.

mod config;
mod decide;
mod denials;
mod engine_files;
mod run;
mod sandbox_end;

pub use config::{ModeSetting, NetworkSetting, ProxyFile, SandboxConfig, SandboxFile};
pub(crate) use decide::Sandboxing;
pub(crate) use denials::{DenialWatch, DomainOffer};
pub use engine_files::engine_files;
pub(crate) use run::{NARROWING_NEEDS_PROXY, SandboxRun};
pub(crate) use sandbox_end::SandboxEnd;

/// `error.kind` when the sandbox cannot be enforced.
pub const SANDBOX_UNAVAILABLE: &str = "sandbox_unavailable";
/// `error.kind` when the sandbox helper was invoked wrongly (an engine fault).
pub const SANDBOX_ERROR: &str = "sandbox_error";
