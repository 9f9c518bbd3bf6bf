//! Apply a policy to the calling process, then become the command.

use std::convert::Infallible;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// Restrict the calling process according to `policy`, then `execvp` `argv` (looked up on `PATH`).
///
/// In order: `PR_SET_NO_NEW_PRIVS`; resource limits; read-only mounts for protected paths (in a
/// private mount namespace); the Landlock ruleset, whose enforcement status is checked; the
/// seccomp filter (compiled before anything is restricted); `execvp`. Returns only on failure:
/// [`SandboxError::Unavailable`] when a restriction cannot be enforced (unless
/// `policy.allow_degraded`, which skips what the kernel cannot do), [`SandboxError::Exec`] when the
/// command cannot be executed. Call it from a single-threaded process (the helper's `main`):
/// Landlock and seccomp restrict the calling thread, and mount namespaces refuse threaded callers.
pub fn exec_sandboxed(policy: &SandboxPolicy, argv: &[OsString]) -> Result<Infallible, SandboxError> {
    let Some(program) = argv.first() else {
        return Err(SandboxError::Usage("no command given after `--`".to_owned()));
    };
    let args = argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| SandboxError::Usage("an argument contains a NUL byte".to_owned()))?;
    if policy.mode == SandboxMode::WorkspaceWrite && !policy.workspace.is_dir() {
        return Err(SandboxError::unavailable(format!(
            "workspace {} is not a directory",
            policy.workspace.display()
        )));
    }
    let filter = crate::seccomp_rules::compile(policy)?;

    nix::sys::prctl::set_no_new_privs()
        .map_err(|e| SandboxError::unavailable(format!("cannot set no_new_privs: {e}")))?;
    crate::rlimits::apply(&policy.limits)?;
    match crate::protect::apply(policy) {
        Err(e) if !policy.allow_degraded => return Err(e),
        _ => {}
    }
    // Best effort: without the tag only the helper's own pid identifies its denials.
    if let Ok(tag) = CString::new(crate::audit_record::creator_tag(
        nix::unistd::getppid().as_raw().unsigned_abs(),
        nix::unistd::getsid(None).map_or(0, |sid| sid.as_raw().unsigned_abs()),
    )) {
        let _ = nix::sys::prctl::set_name(&tag);
    }
    crate::landlock_rules::restrict(policy)?;
    crate::seccomp_rules::install(&filter)?;

    let error = nix::unistd::execvp(&args[0], &args).unwrap_err();
    Err(SandboxError::Exec {
        program: program.clone(),
        source: error,
    })
}
