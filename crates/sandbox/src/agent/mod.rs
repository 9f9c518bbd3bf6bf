//! The creation agent: a small process inside each sandbox that makes the sandbox's new directory
//! entries for it, so that no entry with a protected name — a `.git`, a bare repository, a
//! configured protected path that did not exist yet — can appear during the run.
//!
//! Why a process of its own, and why inside: a name check on a path read from the caller's
//! memory is worth nothing if the kernel then reads that memory again (a second thread changes
//! `x` into `.git` in between). So the call is not let through: it is *made again* from the copy
//! that was checked. Whoever makes it must have exactly the sandbox's authority and view — its
//! user namespace without capabilities, its mounts (the read-only view, the private `/dev/shm`),
//! its Landlock domain — or the copy could do more than the original. The agent is forked by the
//! helper after all of that is in place and before the supervised seccomp filter, so its own calls
//! are not stopped; it keeps nothing but its socket to the supervisor.
//!
//! Each request names the operation, its paths (as the caller passed them) and the caller's
//! directory descriptors and umask. The agent opens each new entry's parent directory, checks the
//! entry's name against the protected names, paths and repository shapes, and makes the entry
//! relative to that open directory (`mkdirat`, `openat` with `O_NOFOLLOW`, …): the name checked is
//! the name made. A symlink at the end of an open is followed by the agent itself, one hop at a
//! time, each hop checked. An open's new descriptor goes back to the supervisor, which installs it
//! in the caller (`SECCOMP_IOCTL_NOTIF_ADDFD`).
//!
//! Requests come one at a time, so two creations of one sandbox never race each other; the
//! repository-shape check also takes a lock shared by every sandbox, so two sandboxes cannot each
//! make half of one.

mod make;
mod protocol;

pub(crate) use make::serve;
pub(crate) use protocol::{Op, Request, exchange};

pub(crate) use make::Protection;

use std::os::fd::{AsRawFd as _, OwnedFd};

use nix::sys::socket::{AddressFamily, SockFlag, SockType, socketpair};
use seccompiler::BpfProgram;

use crate::SandboxError;

/// Fork the agent (call after the namespaces, the dropped capabilities and Landlock, before the
/// supervised filter) and return the supervisor's end of its socket. The agent installs
/// `filter`, keeps nothing open but its socket, cannot be traced or read (not dumpable), dies
/// with the process that forked it, and answers requests until the supervisor hangs up.
#[allow(unsafe_code)]
pub(crate) fn spawn(protection: &Protection, filter: &BpfProgram) -> Result<OwnedFd, SandboxError> {
    let fail = |what: &str, e: nix::Error| {
        SandboxError::unavailable(format!("cannot start the creation agent: {what}: {e}"))
    };
    let (supervisor_end, agent_end) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| fail("socketpair", e))?;
    let parent = nix::unistd::getpid();
    // SAFETY: the helper is single-threaded, so the child may do anything the parent could.
    match unsafe { nix::unistd::fork() }.map_err(|e| fail("fork", e))? {
        nix::unistd::ForkResult::Parent { .. } => {
            drop(agent_end);
            Ok(supervisor_end)
        }
        nix::unistd::ForkResult::Child => {
            drop(supervisor_end);
            // SAFETY: plain system calls on integers and descriptors this process owns.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                if libc::getppid() != parent.as_raw() {
                    libc::_exit(0);
                }
                libc::prctl(libc::PR_SET_DUMPABLE, 0 as libc::c_ulong, 0, 0, 0);
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
                // The socket becomes descriptor 3; everything else (the command's output pipe
                // among them) is closed, so the agent holds nothing of the run's.
                libc::dup2(agent_end.as_raw_fd(), 3);
                libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32);
                let _ = nix::sys::prctl::set_name(c"shellgate-agent");
            }
            // SAFETY: descriptor 3 was just made a copy of the agent's end.
            let socket = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(3) };
            if crate::seccomp_rules::install(filter).is_err() {
                std::process::exit(0);
            }
            serve(&socket, protection)
        }
    }
}
