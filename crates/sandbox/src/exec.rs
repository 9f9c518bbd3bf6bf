//! Apply a policy to the calling process, then become the command.

use std::convert::Infallible;
use std::ffi::{CString, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use seccompiler::BpfProgram;

use crate::supervise::{self, Handover, Registration};
use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// Restrict the calling process according to `policy`, then `execvp` `argv` (looked up on `PATH`).
///
/// In order: connecting to the denial supervisor when the policy names one and the supervised filter
/// has something to stop; `PR_SET_NO_NEW_PRIVS`; resource limits; the namespaces
/// (a user namespace, the read-only mount view with protected paths, a
/// loopback-only network); dropping every capability; the Landlock ruleset, whose enforcement
/// status is checked; the supervised seccomp filter, whose listener goes to the supervisor; the
/// base seccomp filter; `execvp`. Returns only on failure:
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
    if let Some(proxy) = &policy.proxy {
        proxy.validate()?;
    }
    let protected = crate::mounts::existing_protected_paths(policy);
    let expected = crate::namespaces::needed(policy, &protected);
    let supervised = supervise::compile_filter(policy, !protected.is_empty(), expected.network)?;
    // Before any restriction or new network namespace (abstract sockets belong to one), and only
    // when there is something to supervise.
    let supervisor = policy
        .denial_supervisor
        .as_deref()
        .filter(|_| supervised.is_some())
        .and_then(|name| supervise::connect(name).ok());

    nix::sys::prctl::set_no_new_privs()
        .map_err(|e| SandboxError::unavailable(format!("cannot set no_new_privs: {e}")))?;
    crate::rlimits::apply(&policy.limits)?;
    let (isolation, protected) = match crate::namespaces::isolate(policy, &protected) {
        Ok(isolation) => (isolation, protected),
        Err(e) if !policy.allow_degraded => return Err(e),
        Err(_) => (crate::namespaces::Isolation::default(), Vec::new()),
    };
    let proxy_port = proxy_listener(policy, isolation, supervisor.is_some())?;
    let (parent, session) = (
        nix::unistd::getppid().as_raw().unsigned_abs(),
        nix::unistd::getsid(None).map_or(0, |sid| sid.as_raw().unsigned_abs()),
    );
    // Best effort: without the tag only the helper's own pid identifies its denials.
    if let Ok(tag) = CString::new(crate::audit_record::creator_tag(parent, session)) {
        let _ = nix::sys::prctl::set_name(&tag);
    }
    // Made inside the sandbox's own network, before seccomp refuses netlink sockets.
    let diag = isolation
        .network
        .then(supervise::diag_socket)
        .and_then(Result::ok);
    crate::capabilities::drop_all()?;
    crate::landlock_rules::restrict(policy, isolation)?;
    // New entries with protected names are refused by the agent; without the supervisor that
    // talks to it, nothing could refuse them.
    let agent = match &supervisor {
        Some(_) if guards_new_names(policy) => {
            let filter = crate::seccomp_rules::compile(policy, isolation, false)?;
            Some(crate::agent::spawn(&protection(policy), &filter)?)
        }
        None if guards_new_names(policy) && policy.denial_supervisor.is_some() && !policy.allow_degraded => {
            return Err(SandboxError::unavailable(
                "the engine's denial supervisor cannot be reached: new protected names could not be refused",
            ));
        }
        _ => None,
    };
    let registration = Registration {
        pid: std::process::id(),
        parent,
        session,
        protected,
        protected_names: policy.protected_names.clone(),
        restricted: policy.mode != SandboxMode::Full,
        writable: writable_for_supervisor(policy, isolation),
        isolated_network: isolation.network,
        unix_sockets: policy.unix_socket_paths.clone(),
        has_diag: diag.is_some(),
        has_agent: agent.is_some(),
        proxy: proxy_port.as_ref().and(policy.proxy.clone()),
    };
    let handed_over = match (supervisor, supervised.as_ref()) {
        (Some(connection), Some(program)) => hand_over(
            &connection,
            program,
            &registration,
            Handover {
                listener: None,
                diag,
                agent,
                proxy: proxy_port,
            },
        )?,
        _ => false,
    };
    // Without the supervisor, the base filter refuses on its own what the supervised one stops:
    // the refused socket families, and — the network being off — every Unix socket but a pair
    // (connecting one could reach any socket of the machine).
    let base = crate::seccomp_rules::compile(policy, isolation, handed_over)?;
    crate::seccomp_rules::install(&base)?;

    let error = nix::unistd::execvp(&args[0], &args).unwrap_err();
    Err(SandboxError::Exec {
        program: program.clone(),
        source: error,
    })
}

/// The proxy's port inside the sandbox's own network namespace, bound before anything inside can
/// take it, for the engine to accept on. A policy with proxy rules needs the engine's supervisor
/// (the port reaches the engine through it); without one the run is refused, unless degraded, when
/// it goes on with no way out at all.
fn proxy_listener(
    policy: &SandboxPolicy,
    isolation: crate::namespaces::Isolation,
    supervised: bool,
) -> Result<Option<OwnedFd>, SandboxError> {
    let Some(proxy) = &policy.proxy else {
        return Ok(None);
    };
    if !isolation.network || !supervised {
        if policy.allow_degraded {
            return Ok(None);
        }
        return Err(SandboxError::unavailable(
            "the network by name needs the sandbox's own network namespace and the engine's denial \
             supervisor",
        ));
    }
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, proxy.port))
        .map_err(|e| SandboxError::unavailable(format!("cannot open the proxy port {}: {e}", proxy.port)))?;
    Ok(Some(OwnedFd::from(listener)))
}

/// The directories the supervisor judges writable: what the mounts left writable, and the
/// sandbox's private `/dev/shm`.
fn writable_for_supervisor(
    policy: &SandboxPolicy,
    isolation: crate::namespaces::Isolation,
) -> Vec<std::path::PathBuf> {
    let mut writable = crate::mounts::writable_directories(policy);
    if isolation.mounts {
        writable.push(crate::mounts::SHARED_MEMORY.into());
    }
    writable
}

/// Install the supervised filter and hand its listener to the supervisor. `Ok(false)` when the
/// kernel refuses a listener here (an enclosing sandbox already has one): the run goes on with the
/// base filter's own socket rules, unreported. A listener that cannot be handed over fails the
/// run: its stopped calls could never be answered.
fn hand_over(
    connection: &OwnedFd,
    program: &BpfProgram,
    registration: &Registration,
    mut handover: Handover,
) -> Result<bool, SandboxError> {
    let Ok(listener) = supervise::install_with_listener(program) else {
        return Ok(false);
    };
    handover.listener = Some(listener);
    supervise::register(connection, registration, handover).map_err(SandboxError::unavailable)?;
    Ok(true)
}

/// Whether new entries are checked against protected names and paths: in `workspace-write` with
/// something to protect, and in `full` when paths are protected (the engine's own files).
fn guards_new_names(policy: &SandboxPolicy) -> bool {
    match policy.mode {
        SandboxMode::WorkspaceWrite => {
            !policy.protected_names.is_empty() || !policy.protected_paths.is_empty()
        }
        SandboxMode::Full => !policy.protected_paths.is_empty(),
        SandboxMode::ReadOnly => false,
    }
}

/// What the creation agent refuses: the protected names (in `workspace-write`), and every
/// protected path (existing or not) resolved as far as it exists. A protected path that is a
/// symbolic link also keeps its own entry: its target is bound read-only, but the link itself can
/// be removed, and must not be made again leading elsewhere.
fn protection(policy: &SandboxPolicy) -> crate::agent::Protection {
    let (names, paths) = match policy.mode {
        SandboxMode::WorkspaceWrite => (policy.protected_names.clone(), policy.all_protected_paths()),
        _ => (Vec::new(), policy.protected_paths.clone()),
    };
    let mut resolved = Vec::new();
    for path in &paths {
        resolved.push(crate::supervise::resolve_existing(path));
        if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink())
            && let (Some(dir), Some(name)) = (path.parent(), path.file_name())
        {
            resolved.push(crate::supervise::resolve_existing(dir).join(name));
        }
    }
    crate::agent::Protection {
        names,
        paths: resolved,
    }
}
