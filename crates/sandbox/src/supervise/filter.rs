//! The helper's side: a second seccomp filter whose matches wait for the supervisor
//! (`SECCOMP_RET_USER_NOTIF`), installed with a listener that is handed to the engine.
//!
//! Seccomp runs every installed filter and takes the strictest answer, so this filter adds
//! stops without loosening the base filter ([`crate::seccomp_rules`]).
//!
//! The program is assembled here rather than by seccompiler: seccompiler has no notify action and
//! spells "not one of these families" and "any write flag" as many rules (about 500 instructions),
//! and the kernel's preparation of a filter at install time grows with its length (a quarter of a
//! millisecond per run for that one). Written out, it is a few dozen instructions: the watched
//! call numbers, then three small argument checks.

#![allow(unsafe_code)]

use std::os::fd::{FromRawFd as _, OwnedFd};

use seccompiler::{BpfProgram, sock_filter};

use super::syscalls::{self, Watched};
use crate::seccomp_rules::{AND_K, JEQ_K, JSET_K, LD_W_ABS, RET_K, X32_SYSCALL_BIT};
use crate::{SandboxError, SandboxPolicy};

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `i` (every argument checked here is an `int`).
const fn arg_low(i: usize) -> u32 {
    #[cfg(target_endian = "little")]
    {
        16 + 8 * i as u32
    }
    #[cfg(target_endian = "big")]
    {
        20 + 8 * i as u32
    }
}

/// The high 32 bits of argument `i` (for pointers).
const fn arg_high(i: usize) -> u32 {
    #[cfg(target_endian = "little")]
    {
        20 + 8 * i as u32
    }
    #[cfg(target_endian = "big")]
    {
        16 + 8 * i as u32
    }
}

/// Labels of the flag checks of the open calls (`openat`, and `open` where it exists).
const OPEN_LABELS: [&str; 2] = ["open-flags-0", "open-flags-1"];

/// Where a jump goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Next,
    Allow,
    Notify,
    Label(&'static str),
}

/// One instruction before jump offsets are known.
#[derive(Debug, Clone, Copy)]
enum Op {
    Load(u32),
    And(u32),
    /// Compare with a constant: equal → first target, otherwise the second.
    Jeq(u32, Target, Target),
    /// Test bits: any set → first target, otherwise the second.
    Jset(u32, Target, Target),
    Ret(u32),
    Label(&'static str),
}

/// The architecture's audit value, for the first check.
fn audit_arch() -> Option<u32> {
    match std::env::consts::ARCH {
        "x86_64" => Some(0xc000_003e),
        "aarch64" => Some(0xc000_00b7),
        "riscv64" => Some(0xc000_00f3),
        _ => None,
    }
}

fn nr(n: libc::c_long) -> u32 {
    u32::try_from(n).expect("system call numbers are small")
}

fn unsigned(n: libc::c_int) -> u32 {
    n.unsigned_abs()
}

/// Compile the supervised filter: refused sockets while the network is off, the write calls
/// when the file system is restricted or paths are protected, and every `connect` in a
/// loopback-only network namespace (`isolated_network`, where internet sockets of every kind may
/// be created). `None` when there is nothing to stop.
pub fn compile(
    policy: &SandboxPolicy,
    protected_paths: bool,
    isolated_network: bool,
) -> Result<Option<BpfProgram>, SandboxError> {
    let sockets = !policy.network;
    let writes = protected_paths || policy.mode != crate::SandboxMode::Full;
    if !sockets && !writes {
        return Ok(None);
    }
    let arch = audit_arch().ok_or_else(|| {
        SandboxError::unavailable(format!(
            "supervised seccomp filter: no audit architecture for {}",
            std::env::consts::ARCH
        ))
    })?;
    let ops = program(
        arch,
        Watch {
            sockets,
            // Unix sockets are only safe where the supervisor makes their connects.
            unix: policy.unix_sockets && isolated_network,
            writes,
            isolated_network,
        },
    );
    assemble(&ops).map(Some).map_err(SandboxError::unavailable)
}

/// What the supervised filter stops.
#[derive(Debug, Clone, Copy)]
struct Watch {
    /// Refused socket families and types (the network is off).
    sockets: bool,
    /// Unix sockets may be created.
    unix: bool,
    /// Write calls (opens with a write flag, creating, removing, changing metadata).
    writes: bool,
    /// Alone in a loopback-only network namespace: internet sockets of every kind may be created,
    /// and every `connect` stops (a Unix one is made by the supervisor, see `super::connect`).
    isolated_network: bool,
}

fn program(arch: u32, watch: Watch) -> Vec<Op> {
    use Target::{Allow, Label, Next, Notify};
    let Watch {
        sockets,
        unix,
        writes,
        isolated_network,
    } = watch;
    // Another architecture's calls are the base filter's to refuse (it kills them).
    let mut ops = vec![Op::Load(ARCH), Op::Jeq(arch, Next, Allow), Op::Load(NR)];
    if cfg!(target_arch = "x86_64") {
        // x32 calls share the x86_64 architecture value and carry bit 30 in their number: none of
        // the numbers below would match them, so they are refused outright.
        ops.push(Op::Jset(X32_SYSCALL_BIT, Label("kill"), Next));
    }
    let mut opens = Vec::new();
    if writes {
        for (n, call) in syscalls::write_calls() {
            match call {
                Watched::Open { flags, .. } => opens.push((n, flags)),
                _ => ops.push(Op::Jeq(nr(n), Notify, Next)),
            }
        }
    }
    for (i, &(n, _)) in opens.iter().enumerate() {
        ops.push(Op::Jeq(nr(n), Label(OPEN_LABELS[i]), Next));
    }
    if sockets {
        ops.push(Op::Jeq(nr(libc::SYS_socket), Label("socket"), Next));
        ops.push(Op::Jeq(nr(libc::SYS_socketpair), Label("socketpair"), Next));
    }
    if isolated_network {
        ops.push(Op::Jeq(nr(libc::SYS_connect), Notify, Next));
        ops.push(Op::Jeq(nr(libc::SYS_sendto), Label("sendto"), Next));
    }
    ops.push(Op::Ret(libc::SECCOMP_RET_ALLOW));
    if isolated_network {
        ops.extend([
            // sendto(fd, buf, len, flags, addr, addrlen): only a datagram with an address stops
            // (a stream's sends pass a null address and never wait).
            Op::Label("sendto"),
            Op::Load(arg_low(4)),
            Op::Jeq(0, Next, Notify),
            Op::Load(arg_high(4)),
            Op::Jeq(0, Allow, Notify),
        ]);
    }
    let write_flags = syscalls::WRITE_FLAGS.iter().fold(0, |all, &f| all | unsigned(f));
    for (i, &(_, flags)) in opens.iter().enumerate() {
        ops.extend([
            Op::Label(OPEN_LABELS[i]),
            Op::Load(arg_low(flags)),
            Op::Jset(write_flags, Notify, Allow),
        ]);
    }
    if sockets {
        let unix_target = if unix { Label("unix") } else { Notify };
        // Alone in its network namespace, a command may use UDP and the rest on its loopback.
        let inet_target = if isolated_network {
            Label("isolated-inet")
        } else {
            Label("inet")
        };
        ops.extend([
            // socket(domain, type, protocol): TCP over IPv4/IPv6 may be created (Landlock judges
            // its bind and connect), Unix sockets when allowed; everything else stops.
            Op::Label("socket"),
            Op::Load(arg_low(0)),
            Op::Jeq(unsigned(libc::AF_UNIX), unix_target, Next),
            Op::Jeq(unsigned(libc::AF_INET), inet_target, Next),
            Op::Jeq(unsigned(libc::AF_INET6), inet_target, Notify),
        ]);
        if isolated_network {
            ops.extend([
                // Alone in its namespace, every internet socket but a raw one may be made: a raw
                // socket stops (to be reported, then refused as the dropped capabilities would).
                Op::Label("isolated-inet"),
                Op::Load(arg_low(1)),
                Op::And(0xf),
                Op::Jeq(unsigned(libc::SOCK_RAW), Notify, Next),
                // `SOCK_PACKET` (10), the old link-layer type.
                Op::Jeq(10, Notify, Allow),
            ]);
        }
        ops.extend([
            Op::Label("inet"),
            Op::Load(arg_low(1)),
            Op::And(0xf),
            Op::Jeq(unsigned(libc::SOCK_STREAM), Next, Notify),
            Op::Load(arg_low(2)),
            Op::Jeq(0, Allow, Next),
            Op::Jeq(unsigned(libc::IPPROTO_TCP), Allow, Notify),
            // socketpair: only Unix pairs exist, and they reach nothing but each other.
            Op::Label("socketpair"),
            Op::Load(arg_low(0)),
            Op::Jeq(unsigned(libc::AF_UNIX), Label("unix"), Notify),
            // A Unix datagram socket (a pair's too) can `sendto`/`sendmsg` any pathname socket
            // without connecting, and the address of a `sendmsg` lies in memory a second thread
            // can rewrite after any check: these stop. Stream and seqpacket sockets reach a path
            // only through `connect`, which the supervisor makes.
            Op::Label("unix"),
            Op::Load(arg_low(1)),
            Op::And(0xf),
            Op::Jeq(unsigned(libc::SOCK_DGRAM), Notify, Allow),
        ]);
    }
    ops.extend([
        Op::Label("allow"),
        Op::Ret(libc::SECCOMP_RET_ALLOW),
        Op::Label("notify"),
        Op::Ret(libc::SECCOMP_RET_USER_NOTIF),
        Op::Label("kill"),
        Op::Ret(libc::SECCOMP_RET_KILL_PROCESS),
    ]);
    ops
}

/// Resolve labels into jump offsets.
fn assemble(ops: &[Op]) -> Result<BpfProgram, String> {
    let mut positions = std::collections::HashMap::new();
    let mut index = 0usize;
    for op in ops {
        match op {
            Op::Label(name) => {
                positions.insert(*name, index);
            }
            _ => index += 1,
        }
    }
    let mut program = Vec::with_capacity(index);
    for op in ops {
        let at = program.len();
        let offset = |target: Target| -> Result<u8, String> {
            let to = match target {
                Target::Next => return Ok(0),
                Target::Allow => positions["allow"],
                Target::Notify => positions["notify"],
                Target::Label(name) => *positions.get(name).ok_or(format!("no label {name}"))?,
            };
            to.checked_sub(at + 1)
                .and_then(|d| u8::try_from(d).ok())
                .ok_or_else(|| format!("jump from {at} to {to} does not fit"))
        };
        let instruction = |code: u16, jt: u8, jf: u8, k: u32| sock_filter { code, jt, jf, k };
        program.push(match *op {
            Op::Label(_) => continue,
            Op::Load(offset_k) => instruction(LD_W_ABS, 0, 0, offset_k),
            Op::And(mask) => instruction(AND_K, 0, 0, mask),
            Op::Jeq(k, yes, no) => instruction(JEQ_K, offset(yes)?, offset(no)?, k),
            Op::Jset(k, yes, no) => instruction(JSET_K, offset(yes)?, offset(no)?, k),
            Op::Ret(k) => instruction(RET_K, 0, 0, k),
        });
    }
    Ok(program)
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

    /// Run `program` on a `struct seccomp_data` the way the kernel does (the subset used here).
    fn run(program: &BpfProgram, nr: libc::c_long, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as u32).to_ne_bytes());
        data[4..8].copy_from_slice(&audit_arch().unwrap().to_ne_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_ne_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                LD_W_ABS => {
                    let at = i.k as usize;
                    acc = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                AND_K => acc &= i.k,
                JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                JSET_K => pc += usize::from(if acc & i.k != 0 { i.jt } else { i.jf }),
                RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    const NOTIFY: u32 = libc::SECCOMP_RET_USER_NOTIF;
    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

    #[test]
    fn stops_write_calls_and_refused_sockets_only() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        let program = compile(&policy, true, false).unwrap().unwrap();
        assert!(program.len() < 80, "{} instructions", program.len());
        let open = |flags: i32| run(&program, libc::SYS_openat, [0, 0, flags as u64, 0, 0, 0]);
        assert_eq!(open(libc::O_RDONLY | libc::O_CLOEXEC), ALLOW);
        assert_eq!(open(libc::O_WRONLY), NOTIFY);
        assert_eq!(open(libc::O_RDWR | libc::O_NONBLOCK), NOTIFY);
        assert_eq!(open(libc::O_RDONLY | libc::O_CREAT), NOTIFY);
        assert_eq!(open(libc::O_RDONLY | libc::O_TRUNC), NOTIFY);
        assert_eq!(run(&program, libc::SYS_mkdirat, [0; 6]), NOTIFY);
        assert_eq!(run(&program, libc::SYS_read, [0; 6]), ALLOW);
        let socket = |family: i32, kind: i32, protocol: i32| {
            run(
                &program,
                libc::SYS_socket,
                [family as u64, kind as u64, protocol as u64, 0, 0, 0],
            )
        };
        assert_eq!(
            socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0),
            ALLOW
        );
        assert_eq!(
            socket(libc::AF_INET6, libc::SOCK_STREAM, libc::IPPROTO_TCP),
            ALLOW
        );
        // Outside a network namespace of its own, no one makes its Unix connects: refused.
        assert_eq!(socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0), NOTIFY);
        assert_eq!(run(&program, libc::SYS_connect, [0; 6]), ALLOW);
        assert_eq!(socket(libc::AF_INET, libc::SOCK_DGRAM, 0), NOTIFY);
        assert_eq!(
            socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP),
            NOTIFY
        );
        assert_eq!(socket(libc::AF_INET6, libc::SOCK_RAW, 0), NOTIFY);
        assert_eq!(socket(libc::AF_NETLINK, libc::SOCK_RAW, 0), NOTIFY);
        assert_eq!(socket(libc::AF_PACKET, libc::SOCK_RAW, 0), NOTIFY);
        let pair = |family: i32| run(&program, libc::SYS_socketpair, [family as u64, 1, 0, 0, 0, 0]);
        assert_eq!(pair(libc::AF_UNIX), ALLOW);
        assert_eq!(pair(libc::AF_INET), NOTIFY);
        if cfg!(target_arch = "x86_64") {
            let x32_socket = libc::SYS_socket | 0x4000_0000;
            assert_eq!(
                run(&program, x32_socket, [2, 2, 0, 0, 0, 0]),
                libc::SECCOMP_RET_KILL_PROCESS
            );
        }
    }

    #[test]
    fn the_policy_decides_what_is_stopped() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        // In a network of its own: Unix and internet sockets of every kind, every connect stops.
        let isolated = compile(&policy, false, true).unwrap().unwrap();
        let socket = |program: &BpfProgram, family: i32, kind: i32| {
            run(
                program,
                libc::SYS_socket,
                [family as u64, kind as u64, 0, 0, 0, 0],
            )
        };
        assert_eq!(socket(&isolated, libc::AF_UNIX, libc::SOCK_STREAM), ALLOW);
        assert_eq!(socket(&isolated, libc::AF_UNIX, libc::SOCK_SEQPACKET), ALLOW);
        // A Unix datagram socket sends by path without a connect: refused, pairs too.
        let dgram = libc::SOCK_DGRAM | libc::SOCK_CLOEXEC;
        assert_eq!(socket(&isolated, libc::AF_UNIX, dgram), NOTIFY);
        let pair = |kind: i32| {
            let args = [libc::AF_UNIX as u64, kind as u64, 0, 0, 0, 0];
            run(&isolated, libc::SYS_socketpair, args)
        };
        assert_eq!(pair(libc::SOCK_STREAM | libc::SOCK_CLOEXEC), ALLOW);
        assert_eq!(pair(dgram), NOTIFY);
        assert_eq!(socket(&isolated, libc::AF_INET, libc::SOCK_DGRAM), ALLOW);
        assert_eq!(socket(&isolated, libc::AF_INET6, libc::SOCK_STREAM), ALLOW);
        assert_eq!(socket(&isolated, libc::AF_INET, libc::SOCK_RAW), NOTIFY);
        assert_eq!(socket(&isolated, libc::AF_INET6, libc::SOCK_RAW), NOTIFY);
        assert_eq!(socket(&isolated, libc::AF_NETLINK, libc::SOCK_RAW), NOTIFY);
        assert_eq!(run(&isolated, libc::SYS_connect, [0; 6]), NOTIFY);
        // A datagram with an address stops; a send without one (a stream's) does not.
        assert_eq!(run(&isolated, libc::SYS_sendto, [3, 0, 1, 0, 0, 0]), ALLOW);
        assert_eq!(
            run(&isolated, libc::SYS_sendto, [3, 0, 1, 0, 0x7f00_0000_0000, 16]),
            NOTIFY
        );
        assert_eq!(run(&isolated, libc::SYS_sendto, [3, 0, 1, 0, 0x1000, 16]), NOTIFY);
        assert_eq!(run(&isolated, libc::SYS_mkdirat, [0; 6]), NOTIFY);
        let mut no_unix = policy.clone();
        no_unix.unix_sockets = false;
        let program = compile(&no_unix, false, true).unwrap().unwrap();
        assert_eq!(socket(&program, libc::AF_UNIX, libc::SOCK_STREAM), NOTIFY);
        // The network on and no file-system rule: nothing to stop but protected paths.
        let open = SandboxPolicy::new(SandboxMode::Full, "/w").with_network(true);
        assert!(compile(&open, false, false).unwrap().is_none());
        let writes_only = compile(&open, true, false).unwrap().unwrap();
        assert_eq!(run(&writes_only, libc::SYS_socket, [2, 2, 0, 0, 0, 0]), ALLOW);
        assert_eq!(run(&writes_only, libc::SYS_unlinkat, [0; 6]), NOTIFY);
        assert_eq!(run(&writes_only, libc::SYS_connect, [0; 6]), ALLOW);
    }
}
