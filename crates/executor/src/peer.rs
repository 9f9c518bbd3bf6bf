//! Who is at the other end of a Unix socket, in relation to the engine's process tree.

use std::io;

use crate::tree::read_proc;

/// Whether the process at the other end of the Unix socket `socket` is `ancestor` itself or one of
/// its descendants — for the engine, a process of one of its runs, escaped orphans included (the
/// engine is a subreaper, so they are re-parented to it). The peer is the process that connected,
/// held through a pidfd (`SO_PEERPIDFD`, Linux 6.5; older kernels fall back to the pid from
/// `SO_PEERCRED`), so a reused pid cannot stand in for it; a peer that is gone counts as a
/// descendant (refuse it).
#[allow(unsafe_code)]
pub fn peer_is_descendant(socket: std::os::fd::BorrowedFd<'_>, ancestor: u32) -> io::Result<bool> {
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    const SO_PEERPIDFD: libc::c_int = 77;
    let mut value: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are writable and sized for an int option.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&raw mut value).cast(),
            &raw mut len,
        )
    };
    let pidfd = if rc == 0 && value >= 0 {
        // SAFETY: the kernel just made this descriptor for us.
        unsafe { OwnedFd::from_raw_fd(value) }
    } else {
        let cred = nix::sys::socket::getsockopt(&socket, nix::sys::socket::sockopt::PeerCredentials)?;
        // SAFETY: integer arguments only.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, cred.pid(), 0) };
        if fd < 0 {
            return Ok(true);
        }
        // SAFETY: the kernel just returned this descriptor.
        unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) }
    };
    let Some(pid) = pidfd_pid(&pidfd) else {
        return Ok(true);
    };
    let mut current = pid;
    let mut descendant = false;
    for _ in 0..4096 {
        if current == ancestor {
            descendant = true;
            break;
        }
        match read_proc(current) {
            Some(info) if info.ppid > 1 => current = info.ppid,
            _ => break,
        }
    }
    // The walk read `/proc` by pid: it is about the peer only if the peer still lives.
    Ok(descendant || pidfd_pid(&pidfd) != Some(pid))
}

/// The pid a pidfd names (`None` once the process has exited).
fn pidfd_pid(pidfd: &std::os::fd::OwnedFd) -> Option<u32> {
    use std::os::fd::AsRawFd as _;
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd())).ok()?;
    let pid: i64 = info
        .lines()
        .find_map(|l| l.strip_prefix("Pid:"))?
        .trim()
        .parse()
        .ok()?;
    u32::try_from(pid).ok().filter(|&p| p > 0)
}
