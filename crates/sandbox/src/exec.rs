//! Apply a policy to the calling process, then become the command.

use std::convert::Infallible;
use std::ffi::{CString, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use seccompiler::BpfProgram;

use crate::supervise::{self, Registration};
use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// Restrict the calling process according to `policy`, then `execvp` `argv` (looked up on `PATH`).
///
/// In order: connecting to the denial supervisor when the policy names one and the supervised filter
/// has something to stop; `PR_SET_NO_NEW_PRIVS`; resource limits; read-only mounts for protected
/// paths (in a private mount namespace); the Landlock ruleset, whose enforcement status is checked;
/// the supervised seccomp filter, whose listener goes to the supervisor; the base seccomp filter
/// (both compiled before anything is restricted); `execvp`. Returns only on failure:
/// [`SandboxError::Unavailable`] when a restriction cannot be enforced (unless
/// `policy.allow_degraded`, which skips what the kernel cannot do), [`SandboxError::Exec`] when the
/// command cannot be executed. Call it from a single-threaded process (the helper's `main`): Landlock
/// and seccomp restrict the calling thread, and mount namespaces refuse threaded callers.
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
    let protected = crate::protect::existing_protected_paths(policy);
    let filters = Filters::compile(policy, !protected.is_empty())?;
    // Before any restriction (Landlock scopes abstract sockets, and the supervisor is one), and only
    // when there is something to supervise.
    let supervisor = policy
        .denial_supervisor
        .as_deref()
        .filter(|_| filters.supervised.is_some())
        .and_then(|name| supervise::connect(name).ok());

    nix::sys::prctl::set_no_new_privs()
        .map_err(|e| SandboxError::unavailable(format!("cannot set no_new_privs: {e}")))?;
    crate::rlimits::apply(&policy.limits)?;
    let protected = match crate::protect::apply(&protected) {
        Ok(()) => protected,
        Err(e) if !policy.allow_degraded => return Err(e),
        Err(_) => Vec::new(),
    };
    let (parent, session) = (
        nix::unistd::getppid().as_raw().unsigned_abs(),
        nix::unistd::getsid(None).map_or(0, |sid| sid.as_raw().unsigned_abs()),
    );
    // Best effort: without the tag only the helper's own pid identifies its denials.
    if let Ok(tag) = CString::new(crate::audit_record::creator_tag(parent, session)) {
        let _ = nix::sys::prctl::set_name(&tag);
    }
    crate::landlock_rules::restrict(policy)?;
    let supervised = match (supervisor, filters.supervised.as_ref()) {
        (Some(connection), Some(program)) => {
            let registration = Registration {
                pid: std::process::id(),
                parent,
                session,
                protected,
            };
            hand_over(&connection, program, &registration)?
        }
        _ => false,
    };
    crate::seccomp_rules::install(match (&filters.with_socket_rules, supervised) {
        (Some(fallback), false) => fallback,
        _ => &filters.base,
    })?;

    let error = nix::unistd::execvp(&args[0], &args).unwrap_err();
    Err(SandboxError::Exec {
        program: program.clone(),
        source: error,
    })
}

/// The seccomp programs a run may install, compiled while nothing is restricted yet.
struct Filters {
    /// The base filter: without the socket rules when the supervised filter has them.
    base: BpfProgram,
    /// The supervised filter, when the policy names a supervisor and there is something to stop.
    supervised: Option<BpfProgram>,
    /// When the supervised filter has the socket rules: the base filter with its own, for a run
    /// whose listener cannot be handed over.
    with_socket_rules: Option<BpfProgram>,
}

impl Filters {
    fn compile(policy: &SandboxPolicy, protected_paths: bool) -> Result<Self, SandboxError> {
        let supervised = match policy.denial_supervisor {
            Some(_) => supervise::compile_filter(policy, protected_paths)?,
            None => None,
        };
        // The socket rules differ only while the network is off (the supervised filter then has
        // them); otherwise the base filter is the same either way and is compiled once.
        let supervised_sockets = supervised.is_some() && !policy.network;
        let with_socket_rules = if supervised_sockets {
            Some(crate::seccomp_rules::compile(policy, false)?)
        } else {
            None
        };
        Ok(Self {
            base: crate::seccomp_rules::compile(policy, supervised_sockets)?,
            supervised,
            with_socket_rules,
        })
    }
}

/// Install the supervised filter and hand its listener to the supervisor. `Ok(false)` when the
/// kernel refuses a listener here (an enclosing sandbox already has one): the run goes on with the
/// base filter's own socket rules, unreported. A listener that cannot be handed over fails the
/// run: its stopped calls could never be answered.
fn hand_over(
    connection: &OwnedFd,
    program: &BpfProgram,
    registration: &Registration,
) -> Result<bool, SandboxError> {
    let Ok(listener) = supervise::install_with_listener(program) else {
        return Ok(false);
    };
    supervise::register(connection, registration, listener).map_err(SandboxError::unavailable)?;
    Ok(true)
}
