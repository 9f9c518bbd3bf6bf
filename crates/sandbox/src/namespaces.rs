//! The namespaces a sandboxed command runs in: its own user namespace (always), mount namespace
//! (whenever the file system is restricted or a path is protected) and network namespace
//! (whenever the network is off).
//!
//! - **User namespace.** The caller's own uid and gid map to themselves, nothing else. Root stays
//!   uid 0, but its capabilities now belong to the new namespace only, and
//!   [`crate::capabilities::drop_all`] removes even those before the command starts: a sandboxed
//!   root cannot create device nodes (`CAP_MKNOD` counts only in the first namespace), read other
//!   users' files, signal or trace processes outside, or move itself out of a cgroup.
//! - **Mount namespace.** Everything is read-only but the writable roots ([`crate::mounts`]): a
//!   read-only mount also refuses `chmod`, `chown`, `utimes` and extended attributes, which
//!   Landlock has no rights for. Terminals come from a private `devpts` instance, so other
//!   terminals of the machine are not even visible.
//! - **Network namespace.** Only a loopback interface: nothing outside can connect in, nothing
//!   inside can connect out, and the command's own loopback servers keep working. Abstract Unix
//!   sockets belong to a network namespace, so the engine's and other programs' are out of reach.

use std::fs;
use std::path::PathBuf;

use nix::sched::{CloneFlags, unshare};
use nix::unistd::{Gid, Uid};

use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// What [`isolate`] set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Isolation {
    /// A private mount namespace with the read-only view.
    pub mounts: bool,
    /// A network namespace holding only loopback.
    pub network: bool,
}

/// Which namespaces `policy` needs besides the user namespace.
pub fn needed(policy: &SandboxPolicy, protected: &[PathBuf]) -> Isolation {
    Isolation {
        mounts: policy.mode != SandboxMode::Full || !protected.is_empty(),
        network: !policy.network,
    }
}

/// Enter a new user namespace (mapping the caller's ids to themselves) and the other namespaces
/// `policy` needs, and set them up. Call before Landlock and seccomp, from a single-threaded
/// process; the capabilities it uses are dropped afterwards by [`crate::capabilities::drop_all`].
pub fn isolate(policy: &SandboxPolicy, protected: &[PathBuf]) -> Result<Isolation, SandboxError> {
    let wanted = needed(policy, protected);
    let (uid, gid) = (Uid::effective(), Gid::effective());
    let mut flags = CloneFlags::CLONE_NEWUSER;
    if wanted.mounts {
        flags |= CloneFlags::CLONE_NEWNS;
    }
    if wanted.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| {
        SandboxError::unavailable(format!(
            "cannot create the sandbox's namespaces (user namespaces may be disabled here): {e}"
        ))
    })?;
    map_ids(uid, gid)
        .map_err(|e| SandboxError::unavailable(format!("cannot map ids in the user namespace: {e}")))?;
    if wanted.mounts {
        crate::mounts::confine(policy, protected)?;
    }
    if wanted.network {
        loopback_up().map_err(|e| SandboxError::unavailable(format!("cannot bring up loopback: {e}")))?;
    }
    Ok(wanted)
}

fn map_ids(uid: Uid, gid: Gid) -> std::io::Result<()> {
    fs::write("/proc/self/setgroups", "deny")?;
    fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
}

/// `SIOCGIFFLAGS` / `SIOCSIFFLAGS` (linux/sockios.h).
const SIOCGIFFLAGS: libc::c_ulong = 0x8913;
const SIOCSIFFLAGS: libc::c_ulong = 0x8914;

/// Bring the new network namespace's loopback interface up (it starts down).
#[allow(unsafe_code)]
fn loopback_up() -> std::io::Result<()> {
    use std::os::fd::AsRawFd as _;
    let socket = nix::sys::socket::socket(
        nix::sys::socket::AddressFamily::Inet,
        nix::sys::socket::SockType::Datagram,
        nix::sys::socket::SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    // SAFETY: `ifreq` is plain data; zeroed is a valid value.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: both requests read or write the `ifreq` we pass, which outlives the calls.
    unsafe {
        if libc::ioctl(socket.as_raw_fd(), SIOCGIFFLAGS, &raw mut request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), SIOCSIFFLAGS, &raw const request) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_follow_the_policy() {
        let ws = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        assert_eq!(
            needed(&ws, &[]),
            Isolation {
                mounts: true,
                network: true
            }
        );
        let full = SandboxPolicy::new(SandboxMode::Full, "/w");
        assert_eq!(needed(&full, &[]), Isolation::default());
        assert!(needed(&full, &[PathBuf::from("/w/.git")]).mounts);
        assert!(needed(&full.with_network(false), &[]).network);
    }
}
