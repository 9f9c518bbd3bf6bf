//! The denial supervisor: the kernel-side source for the denials Landlock does not log.
//!
//! Two refusals leave no audit record: a write to a protected path (a read-only mount answers
//! `EROFS`) and a socket the seccomp rules refuse while the network is off. For those, the helper
//! installs a second seccomp filter whose matches *stop* the calling process
//! (`SECCOMP_RET_USER_NOTIF`) and hands its listener to this supervisor, a thread of the engine.
//! The kernel then delivers each stopped call (number, arguments, pid) to the supervisor, which
//! refuses it — recording a denial first — when it is a refused socket or a write whose object
//! lies in a protected path, and lets every other call continue.
//!
//! - Only write-intent calls stop: opens with a write flag, `mkdir`, `unlink`, `rename`, `link`,
//!   `symlink`, `mknod`, `truncate`, `chmod`, `chown`, `utimes`, `setxattr` and their `*at` and
//!   descriptor forms ([`syscalls`]); reads never wait. The cost is measured in
//!   `cargo xtask bench` (section `sandbox`).
//! - The supervisor reports; it does not enforce. The read-only mounts and the base seccomp filter
//!   stay in place, so a process racing the supervisor (changing a path after it was read) can
//!   change what is reported, never what it may do. If the engine goes away, stopped calls fail
//!   with `ENOSYS`.
//! - Attribution is exact: each listener belongs to one helper, i.e. one run or one session shell.
//! - The sandboxed command never holds the listener (it would answer its own calls): the helper
//!   closes it before `execve`.

mod connect;
mod creations;
mod fds;
mod filter;
mod loopback;
mod register;
mod server;
mod syscalls;
mod target;
mod unix_diag;

use std::sync::OnceLock;

pub(crate) use filter::{compile as compile_filter, install_with_listener};
pub(crate) use register::{Handover, Registration, connect, register};
pub(crate) use unix_diag::open as diag_socket;

/// `path` with its symlinks resolved as far as it exists (the rest kept as written).
pub(crate) fn resolve_existing(path: &std::path::Path) -> std::path::PathBuf {
    target::resolve_for(std::process::id(), path, true)
}

use crate::DenialReportingOff;

/// Start (once per process) the denial supervisor and return its address, for
/// [`SandboxPolicy::denial_supervisor`](crate::SandboxPolicy::denial_supervisor). Its denials
/// reach [`DenialCollector`](crate::DenialCollector)s, with or without kernel auditing; it also
/// makes the Unix connects of sandboxes whose network is off (see `connect`). Fails only when
/// its socket or thread cannot be made.
pub fn denial_supervisor() -> Result<String, DenialReportingOff> {
    static SUPERVISOR: OnceLock<Result<String, String>> = OnceLock::new();
    if let Some(Ok(name)) = SUPERVISOR.get() {
        return Ok(name.clone());
    }
    SUPERVISOR
        .get_or_init(server::start)
        .clone()
        .map_err(DenialReportingOff::new)
}
