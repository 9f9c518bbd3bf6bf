//! The helper's side: a second seccomp filter whose matches wait for the supervisor
//! (`SECCOMP_RET_USER_NOTIF`), installed with a listener that is handed to the engine.
//!
//! Seccomp runs every installed filter and takes the strictest answer, so this filter adds
//! stops without loosening the base filter ([`crate::seccomp_rules`]).

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd as _, OwnedFd};

use seccompiler::{BpfProgram, SeccompAction, SeccompFilter, SeccompRule, TargetArch};

use super::syscalls;
use crate::{SandboxError, SandboxPolicy};

/// The `SECCOMP_RET_TRACE` data seccompiler is asked to return for a match; the compiled program's
/// returns of it are then rewritten to `SECCOMP_RET_USER_NOTIF`, an action seccompiler does not
/// offer.
const MATCH_MARK: u32 = 0x5347;
/// `BPF_RET | BPF_K`: return a constant.
const BPF_RET_K: u16 = 0x06;

/// Compile the supervised filter: refused sockets while the network is off, and, when there are
/// protected paths, the write calls. `None` when there is nothing to stop.
pub fn compile(policy: &SandboxPolicy, protected_paths: bool) -> Result<Option<BpfProgram>, SandboxError> {
    build(policy, protected_paths)
        .map_err(|e| SandboxError::unavailable(format!("supervised seccomp filter: {e}")))
}

fn build(
    policy: &SandboxPolicy,
    protected_paths: bool,
) -> Result<Option<BpfProgram>, seccompiler::BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    if !policy.network {
        crate::seccomp_rules::insert_socket_rules(&mut rules, policy.unix_sockets)?;
    }
    if protected_paths {
        syscalls::write_rules(&mut rules)?;
    }
    if rules.is_empty() {
        return Ok(None);
    }
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Trace(MATCH_MARK),
        arch,
    )?;
    let mut program: BpfProgram = filter.try_into()?;
    let marked = libc::SECCOMP_RET_TRACE | MATCH_MARK;
    for instruction in &mut program {
        if instruction.code == BPF_RET_K && instruction.k == marked {
            instruction.k = libc::SECCOMP_RET_USER_NOTIF;
        }
    }
    Ok(Some(program))
}

/// Install `program` on the calling thread and return its listener. Needs `no_new_privs` (or
/// `CAP_SYS_ADMIN`); fails with `EBUSY` when an inherited filter already has a listener.
pub fn install_with_listener(program: &BpfProgram) -> Result<OwnedFd, nix::Error> {
    let len = u16::try_from(program.len()).map_err(|_| nix::Error::E2BIG)?;
    let fprog = libc::sock_fprog {
        len,
        // seccompiler's instructions have the kernel's `struct sock_filter` layout.
        filter: program.as_ptr().cast_mut().cast::<libc::sock_filter>(),
    };
    // SAFETY: `fprog` points at `program`'s instructions, which outlive the call; the kernel
    // copies the program and returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            std::ptr::from_ref(&fprog),
        )
    };
    if fd < 0 {
        return Err(nix::Error::last());
    }
    let fd = i32::try_from(fd).map_err(|_| nix::Error::EBADF)?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxMode;

    #[test]
    fn matches_become_notifications() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        let program = compile(&policy, true).unwrap().unwrap();
        let notify = program
            .iter()
            .filter(|i| i.code == BPF_RET_K && i.k == libc::SECCOMP_RET_USER_NOTIF)
            .count();
        assert!(notify > 0);
        assert!(
            program
                .iter()
                .all(|i| i.k != (libc::SECCOMP_RET_TRACE | MATCH_MARK))
        );
        let open = policy.with_network(true);
        assert!(compile(&open, false).unwrap().is_none());
        assert!(compile(&open, true).unwrap().is_some());
    }
}
