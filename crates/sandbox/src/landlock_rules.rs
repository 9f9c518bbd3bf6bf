//! The Landlock half of the sandbox: file-system write rules, TCP rules, scopes, audit flags.
//!
//! Landlock only ever *allows*: a ruleset handles a set of access rights, and each rule grants some
//! of them beneath one directory. Reads and execution are granted everywhere; write rights only
//! beneath the writable roots and on a few devices. Landlock resolves paths before checking them,
//! so a symlink inside the workspace that points at `/etc/x` is checked as `/etc/x` and denied.
//!
//! Enforcement is checked, never assumed: the helper asks for exactly the rights of the kernel's
//! ABI (capped at [`NEWEST_ABI_USED`]), refuses when that ABI is below what the policy needs, and
//! refuses when the kernel reports anything but full enforcement.

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};

use crate::namespaces::Isolation;
use crate::policy::WRITABLE_DEVICES;
use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// The newest Landlock ABI whose rights this crate hands to the kernel. Newer ABIs add rights
/// (ABI 9: connecting to pathname Unix sockets; ABI 10: UDP) whose rules this policy does not
/// write yet; handling them without rules would deny things the policy means to allow.
pub const NEWEST_ABI_USED: u8 = 7;

/// The Landlock ABI that introduced audit logging of denials after `execve`
/// (`LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON`), which the denial collector relies on.
pub const AUDIT_LOG_ABI: u8 = 7;

/// The lowest ABI a policy needs: 3 for file-system rules (truncation is only controlled from ABI
/// 3 on), 4 for TCP rules, plus whatever the policy raises it to.
pub fn required_abi(policy: &SandboxPolicy) -> u8 {
    let mut needed = 0;
    if policy.mode != SandboxMode::Full {
        needed = 3;
    }
    if !policy.network {
        needed = needed.max(4);
    }
    needed.max(policy.min_landlock_abi.unwrap_or(0))
}

/// Whether the policy needs a Landlock ruleset at all (`full` mode with the network on does not;
/// it still gets the scopes where the kernel has them).
pub fn needs_landlock(policy: &SandboxPolicy) -> bool {
    policy.mode != SandboxMode::Full || !policy.network
}

/// The first ABI with scopes (signals and abstract Unix sockets stay inside the sandbox).
const SCOPE_ABI: u8 = 6;

/// Check, without restricting anything, that the running kernel can enforce `policy`.
pub fn check_kernel(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    if !needs_landlock(policy) {
        return Ok(());
    }
    let kernel = crate::landlock_abi();
    let required = required_abi(policy);
    if kernel == 0 {
        return Err(SandboxError::unavailable(
            "Landlock is not available in this kernel (not built in or not enabled at boot)",
        ));
    }
    if kernel < required {
        return Err(SandboxError::unavailable(format!(
            "the policy needs Landlock ABI {required}, the kernel offers ABI {kernel}"
        )));
    }
    Ok(())
}

/// Build the ruleset for `policy` and restrict the calling thread (and so the program it execs).
///
/// With `allow_degraded`, a kernel below the required ABI gets whatever it can enforce (possibly
/// nothing); otherwise such a kernel, or a status other than fully enforced, is an error.
pub fn restrict(policy: &SandboxPolicy, isolation: Isolation) -> Result<(), SandboxError> {
    if !needs_landlock(policy) {
        let kernel = crate::landlock_abi();
        if kernel >= SCOPE_ABI {
            // Nothing to enforce on files or TCP, but signals and abstract sockets stay inside.
            let abi = ABI::from(i32::from(kernel.min(NEWEST_ABI_USED)));
            build_and_restrict(policy, abi, kernel, isolation)
                .map_err(|e| SandboxError::unavailable(format!("Landlock: {e}")))?;
        }
        return Ok(());
    }
    let degraded = match check_kernel(policy) {
        Ok(()) => false,
        Err(e) if policy.allow_degraded => {
            drop(e);
            true
        }
        Err(e) => return Err(e),
    };
    let kernel = crate::landlock_abi();
    if kernel == 0 {
        // Only reachable with `allow_degraded`: there is nothing to enforce with.
        return Ok(());
    }
    let abi = ABI::from(i32::from(kernel.min(NEWEST_ABI_USED)));
    let status = build_and_restrict(policy, abi, kernel, isolation)
        .map_err(|e| SandboxError::unavailable(format!("Landlock: {e}")))?;
    if degraded {
        return Ok(());
    }
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(SandboxError::unavailable(format!(
            "Landlock did not fully enforce the policy (status {:?}, kernel ABI {kernel})",
            status.ruleset
        )));
    }
    if !status.no_new_privs {
        return Err(SandboxError::unavailable("no_new_privs could not be set"));
    }
    Ok(())
}

fn build_and_restrict(
    policy: &SandboxPolicy,
    abi: ABI,
    kernel: u8,
    isolation: Isolation,
) -> Result<RestrictionStatus, Box<dyn std::error::Error>> {
    let restrict_fs = policy.mode != SandboxMode::Full;
    // Device nodes are never created, whoever runs the sandbox: a block device for the disk would
    // let a root command write past every other rule.
    let fs_handled = AccessFs::from_all(abi);
    let fs_all = fs_handled & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    // Best effort only matters on the degraded path: on the normal path `abi` never exceeds what
    // the kernel has, so nothing is dropped and the status says FullyEnforced.
    let mut ruleset = Ruleset::default().set_compatibility(CompatLevel::BestEffort);
    if restrict_fs {
        ruleset = ruleset.handle_access(fs_handled)?;
    }
    let net = AccessNet::from_all(abi);
    // In its own loopback-only network namespace the command may bind and connect freely: nothing
    // there leads out, and its own test servers keep working.
    if !policy.network && !isolation.network && !net.is_empty() {
        ruleset = ruleset.handle_access(net)?;
    }
    let scopes = scopes(abi);
    if !scopes.is_empty() {
        ruleset = ruleset.scope(scopes)?;
    }
    let mut created = ruleset.create()?;
    if restrict_fs {
        created = created.add_rule(PathBeneath::new(PathFd::new("/")?, AccessFs::from_read(abi)))?;
        let device_rights = AccessFs::from_file(abi) & !AccessFs::from_read(abi);
        for device in WRITABLE_DEVICES {
            if let Ok(fd) = PathFd::new(device) {
                created = created.add_rule(PathBeneath::new(fd, device_rights))?;
            }
        }
        if let Ok(fd) = PathFd::new("/dev/pts") {
            created = created.add_rule(PathBeneath::new(fd, device_rights))?;
        }
        // The sandbox's own private tmpfs (see `crate::mounts`); without it, the host's is
        // read-only like everything else.
        if isolation.mounts
            && let Ok(fd) = PathFd::new(crate::mounts::SHARED_MEMORY)
        {
            created = created.add_rule(PathBeneath::new(fd, fs_all))?;
        }
        for root in &policy.engine_roots {
            if let Ok(fd) = PathFd::new(root) {
                created = created.add_rule(PathBeneath::new(fd, fs_all))?;
            }
        }
        if policy.mode == SandboxMode::WorkspaceWrite {
            for root in policy.all_writable_roots() {
                // A missing root (an unset-up `$TMPDIR`) grants nothing; the workspace itself is
                // checked by the helper before it gets here.
                if let Ok(fd) = PathFd::new(root) {
                    created = created.add_rule(PathBeneath::new(fd, fs_all))?;
                }
            }
        }
    }
    if kernel >= AUDIT_LOG_ABI {
        // Denials happen in the program the helper execs, which the kernel does not log by default.
        created = created.log_new_exec(true)?;
    }
    Ok(created.restrict_self()?)
}

/// Signals and abstract Unix sockets stay inside the sandbox in every mode: the engine's own
/// sockets (the control socket, the denial supervisor) are abstract, and a sandboxed command must
/// reach none of them.
fn scopes(abi: ABI) -> BitFlags<Scope> {
    Scope::from_all(abi) & (Scope::Signal | Scope::AbstractUnixSocket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_abi_follows_mode_and_network() {
        let ws = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        assert_eq!(required_abi(&ws), 4);
        assert_eq!(required_abi(&ws.clone().with_network(true)), 3);
        let full = SandboxPolicy::new(SandboxMode::Full, "/w");
        assert!(!needs_landlock(&full));
        assert_eq!(required_abi(&full.clone().with_network(false)), 4);
        let mut raised = ws;
        raised.min_landlock_abi = Some(9);
        assert_eq!(required_abi(&raised), 9);
    }

    #[test]
    fn a_raised_minimum_above_the_kernel_is_refused() {
        let mut policy = SandboxPolicy::new(SandboxMode::ReadOnly, "/");
        policy.min_landlock_abi = Some(crate::landlock_abi().saturating_add(1));
        let err = check_kernel(&policy).unwrap_err();
        assert!(matches!(err, SandboxError::Unavailable { .. }), "{err}");
    }
}
