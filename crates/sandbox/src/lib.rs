//! Sandboxed launches for shellgate: a helper that confines a command with Landlock, seccomp and
//! resource limits before exec'ing it, a launch layer that routes every launch through it, and a
//! collector that reads the sandbox's denials from the kernel's audit records.
//!
//! The pieces, in the order a run meets them:
//! - [`SandboxPolicy`]: plain data (mode, writable roots, protected paths, network, limits),
//!   serialized to JSON for the helper's command line.
//! - [`SandboxLayer::wrap`]: `LaunchSpec -> LaunchSpec`, turning `program args…` into
//!   `helper sandbox-exec --policy <json> -- program args…`.
//! - [`helper_main`] / [`exec_sandboxed`]: the helper itself (the `shellgate sandbox-exec`
//!   subcommand calls [`helper_main`]); it fails closed with exit 125 and
//!   `shellgate-sandbox: unavailable: <reason>` on stderr when the kernel cannot enforce the policy
//!   (see [`helper`] for the full contract and [`HelperFailure::parse`]).
//! - [`DenialCollector`]: started before a run, finished after it with the run's pid; returns the
//!   [`Denial`]s the kernel logged for that run, or says why denial reporting is off.
//!
//! ```
//! use shellgate_executor::LaunchSpec;
//! use shellgate_sandbox::{SandboxLayer, SandboxMode, SandboxPolicy};
//!
//! let policy = SandboxPolicy::new("workspace-write".parse().unwrap(), "/work/project");
//! assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
//! assert!(!policy.network);
//! assert!(policy.may_write("/work/project/src/main.rs".as_ref()));
//! assert!(!policy.may_write("/work/project/.git/config".as_ref()));
//! assert!(!policy.may_write("/etc/passwd".as_ref()));
//!
//! let layer = SandboxLayer::new("/usr/bin/shellgate", policy);
//! let spec = layer.wrap(LaunchSpec::new("touch", ["ok"], "/work/project"));
//! assert_eq!(spec.program, "/usr/bin/shellgate");
//! assert_eq!(spec.args[..2], ["sandbox-exec", "--policy"]);
//! assert_eq!(spec.args[3..], ["--", "touch", "ok"]);
//! ```
//!
//! Why the design is as it is:
//! - Landlock can only grant, so "`.git` stays read-only inside a writable workspace" is done
//!   with read-only bind mounts in a private mount namespace ([`protect`](crate#protected-paths)).
//! - The helper asks the kernel for exactly the rights of the kernel's own ABI and refuses any
//!   status but `FullyEnforced`, so a best-effort ruleset can never quietly degrade to nothing.
//! - Denials come from Landlock's audit records (ABI 7, kernel auditing on), never from the
//!   command's output; see [`denials`](DenialCollector) for what is and is not reported.
//!
//! # Protected paths
//! Each protected path that exists when the helper starts is bind-mounted read-only over itself
//! in a mount namespace only the command sees (as root directly, otherwise inside a user
//! namespace). Writes there fail with `EROFS`. The kernel does not log them; the denial
//! supervisor ([`denial_supervisor`]) reports them, and the sockets seccomp refuses.
#![deny(unsafe_code)]

mod agent;
mod audit_netlink;
mod audit_record;
mod calls;
mod capabilities;
mod denials;
mod error;
mod exec;
pub mod helper;
mod helper_image;
mod kernel;
mod landlock_rules;
mod layer;
mod mounts;
mod namespaces;
mod policy;
mod proxy;
mod rlimits;
mod seccomp_rules;
mod supervise;

pub use calls::{
    CallRefusal, DenialWatch, ModeSetting, NARROWING_NEEDS_PROXY, NetworkSetting, ProxyFile, SANDBOX_ERROR,
    SANDBOX_KEYS, SANDBOX_UNAVAILABLE, SandboxConfig, SandboxFile, SandboxRun, Sandboxing,
    engine_executables, helper_refusal, report_notices,
};
pub use denials::{
    Denial, DenialCollector, DenialKind, DenialReport, DenialReportingOff, Traffic, denial_reporting_status,
    enable_kernel_audit,
};
pub use error::SandboxError;
pub use exec::exec_sandboxed;
pub use helper::{HelperFailure, helper_main, standalone_main};
pub use helper_image::HelperImage;
pub use kernel::landlock_abi;
pub use landlock_rules::{AUDIT_LOG_ABI, NEWEST_ABI_USED, check_kernel, required_abi};
pub use layer::SandboxLayer;
pub use policy::{DEFAULT_PROXY_PORT, ProxyPolicy, ResourceLimits, SandboxMode, SandboxPolicy, UnknownMode};
pub use proxy::check_domain_pattern;
pub use supervise::denial_supervisor;
