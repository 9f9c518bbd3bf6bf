//! The seccomp half of the sandbox: syscalls that are always refused, and socket families that are
//! refused while the network is off.
//!
//! Refused calls fail with `EPERM` (the program sees an ordinary error, not a signal). The filter
//! also kills the process on any syscall made through another architecture's entry point (32-bit
//! `int 0x80` on x86_64) or through the x32 ABI, so the checks below cannot be sidestepped that way.
//!
//! With the network off, TCP sockets (`AF_INET`/`AF_INET6`, `SOCK_STREAM`, protocol 0 or
//! `IPPROTO_TCP`) may still be *created*: Landlock then refuses their `bind` and `connect` and
//! the kernel logs the address, which is how a network denial becomes data. Every other family,
//! type and protocol (UDP, raw, netlink, packet, MPTCP, SCTP…) is refused at `socket()`.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use crate::namespaces::Isolation;
use crate::{SandboxError, SandboxPolicy};

/// Syscalls refused in every mode: reading or steering other processes, and io_uring (whose
/// operations bypass syscall filters, including the socket rules below).
const ALWAYS_DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
];

/// `SOCK_TYPE_MASK`: the low bits of `socket()`'s type argument (the rest are `SOCK_NONBLOCK` and
/// `SOCK_CLOEXEC`).
const SOCK_TYPE_MASK: u64 = 0xf;

// Classic BPF opcodes (linux/bpf_common.h) of the hand-written instructions.
pub(crate) const LD_W_ABS: u16 = 0x20;
pub(crate) const JEQ_K: u16 = 0x15;
pub(crate) const JSET_K: u16 = 0x45;
pub(crate) const AND_K: u16 = 0x54;
pub(crate) const RET_K: u16 = 0x06;

/// `__X32_SYSCALL_BIT`: set in the number of a call through the x32 ABI.
pub(crate) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Terminal requests refused in every mode: pushing bytes into a terminal's input queue
/// (`TIOCSTI`), which the terminal's reader then runs as typed input, and the Linux console's
/// selection and paste requests (`TIOCLINUX`).
#[allow(clippy::unnecessary_cast)] // the request type is `c_ulong` on glibc, `c_int` on musl
const REFUSED_IOCTLS: [u64; 2] = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// Compile the filter for `policy` in the namespaces `isolation` describes. With
/// `supervised_sockets` the socket rules are left out: the supervised filter (`crate::supervise`)
/// refuses those sockets instead, reports them, and makes Unix connects itself. Without it, while
/// the network is off, Unix sockets are refused too (pairs excepted): nothing else would keep a
/// connect from reaching any socket of the machine.
pub fn compile(
    policy: &SandboxPolicy,
    isolation: Isolation,
    supervised_sockets: bool,
) -> Result<BpfProgram, SandboxError> {
    build(policy, isolation, supervised_sockets)
        .map_err(|e| SandboxError::unavailable(format!("seccomp filter: {e}")))
}

/// Install a compiled filter on the calling thread (it is inherited across `execve`).
pub fn install(program: &BpfProgram) -> Result<(), SandboxError> {
    seccompiler::apply_filter(program).map_err(|e| SandboxError::unavailable(format!("seccomp filter: {e}")))
}

fn build(
    policy: &SandboxPolicy,
    isolation: Isolation,
    supervised_sockets: bool,
) -> Result<BpfProgram, seccompiler::BackendError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        ALWAYS_DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    // The request is an `unsigned int` in the kernel: only its low 32 bits count, so a value with
    // anything in the high half must not slip past a full-width comparison.
    let ioctls = REFUSED_IOCTLS
        .iter()
        .map(|&request| {
            SeccompRule::new(vec![SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                request,
            )?])
        })
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctls);
    if !policy.network && !supervised_sockets {
        insert_socket_rules(&mut rules, false, isolation.network)?;
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let program: BpfProgram = filter.try_into()?;
    Ok(refusing_x32(program))
}

/// On x86_64, put a check in front of `program` that kills a call through the x32 ABI: x32 calls
/// share the x86_64 architecture value, and their numbers (bit 30 set) match none of the rules, so
/// `ptrace` or `io_uring_setup` made that way would pass. (seccompiler's jumps are relative, so the
/// program stays valid behind the prefix.)
fn refusing_x32(program: BpfProgram) -> BpfProgram {
    if !cfg!(target_arch = "x86_64") {
        return program;
    }
    let check = |code, jt, jf, k| seccompiler::sock_filter { code, jt, jf, k };
    let mut prefixed = vec![
        // The call number is at offset 0 of `struct seccomp_data`.
        check(LD_W_ABS, 0, 0, 0),
        check(JSET_K, 0, 1, X32_SYSCALL_BIT),
        check(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
    ];
    prefixed.extend(program);
    prefixed
}

/// Add the rules refusing sockets while the network is off.
fn insert_socket_rules(
    rules: &mut BTreeMap<i64, Vec<SeccompRule>>,
    unix: bool,
    any_inet: bool,
) -> Result<(), seccompiler::BackendError> {
    rules.insert(libc::SYS_socket, socket_rules(unix, any_inet)?);
    rules.insert(libc::SYS_socketpair, socketpair_rules()?);
    Ok(())
}

fn arg(index: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(index, SeccompCmpArgLen::Dword, op, value)
}

fn family(value: libc::c_int) -> u64 {
    u64::from(value.unsigned_abs())
}

/// Rules (any one matching refuses the call) for `socket(domain, type, protocol)`. With `any_inet`
/// (a loopback-only network namespace) internet sockets of every type and protocol are allowed.
fn socket_rules(unix: bool, any_inet: bool) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let mut allowed_families = vec![family(libc::AF_INET), family(libc::AF_INET6)];
    if unix {
        allowed_families.push(family(libc::AF_UNIX));
    }
    // 1. Any family outside the allowed ones.
    let other_family = allowed_families
        .iter()
        .map(|&f| arg(0, SeccompCmpOp::Ne, f))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rules = vec![SeccompRule::new(other_family)?];
    if any_inet {
        return Ok(rules);
    }
    for inet in [family(libc::AF_INET), family(libc::AF_INET6)] {
        // 2. An internet socket of any type but SOCK_STREAM (there is no masked "not equal").
        for socket_type in (0..=SOCK_TYPE_MASK).filter(|&t| t != libc::SOCK_STREAM as u64) {
            rules.push(SeccompRule::new(vec![
                arg(0, SeccompCmpOp::Eq, inet)?,
                arg(1, SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK), socket_type)?,
            ])?);
        }
        // 3. A stream socket of another protocol than TCP (MPTCP and SCTP escape TCP rules).
        rules.push(SeccompRule::new(vec![
            arg(0, SeccompCmpOp::Eq, inet)?,
            arg(2, SeccompCmpOp::Ne, 0)?,
            arg(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
        ])?);
    }
    Ok(rules)
}

/// Rules for `socketpair(domain, …)`: only Unix pairs exist in practice, and they connect
/// nothing but each other; refuse everything else.
fn socketpair_rules() -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    Ok(vec![SeccompRule::new(vec![arg(
        0,
        SeccompCmpOp::Ne,
        family(libc::AF_UNIX),
    )?])?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SandboxMode;

    #[test]
    fn filters_compile_for_every_network_setting() {
        let base = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        let none = Isolation::default();
        let open = compile(&base.clone().with_network(true), none, false).unwrap();
        let closed = compile(&base.clone(), none, false).unwrap();
        let supervised = compile(&base.clone(), none, true).unwrap();
        let isolated = Isolation {
            mounts: true,
            network: true,
        };
        let closed_isolated = compile(&base.clone(), isolated, false).unwrap();
        assert!(closed_isolated.len() < closed.len());
        // Without the supervisor, Unix sockets are refused whatever the policy says.
        let mut no_unix = base;
        no_unix.unix_sockets = false;
        let closed_no_unix = compile(&no_unix, none, false).unwrap();
        assert!(closed.len() > open.len());
        assert_eq!(supervised, open);
        assert_eq!(closed, closed_no_unix);
        if cfg!(target_arch = "x86_64") {
            // The x32 check comes first.
            assert_eq!(open[1].k, 0x4000_0000);
            assert_eq!(open[2].k, libc::SECCOMP_RET_KILL_PROCESS);
        }
    }
}
