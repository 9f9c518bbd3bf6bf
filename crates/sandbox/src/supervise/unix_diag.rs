//! Which Unix sockets were bound inside a sandbox: the kernel's socket diagnostics
//! (`NETLINK_SOCK_DIAG`, `UNIX_DIAG_VFS`), asked through a socket made inside the sandbox's own
//! network namespace, list exactly the Unix sockets of that namespace, each with the file-system
//! inode it is bound to. A socket file is the sandbox's own when one of them is bound to it.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

/// `NETLINK_SOCK_DIAG`, `SOCK_DIAG_BY_FAMILY` (linux/sock_diag.h).
const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `UDIAG_SHOW_VFS`, `UNIX_DIAG_VFS` (linux/unix_diag.h).
const UDIAG_SHOW_VFS: u32 = 0x2;
const UNIX_DIAG_VFS: u16 = 1;
const NLMSG_DONE: u16 = 3;
const NLMSG_ERROR: u16 = 2;

/// A `NETLINK_SOCK_DIAG` socket in the calling process's network namespace.
pub fn open() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) with integer arguments.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Whether a Unix socket of `diag`'s network namespace is bound to the file with `device` and
/// `inode` (as `stat` gives them).
pub fn bound_to(diag: &OwnedFd, device: u64, inode: u64) -> io::Result<bool> {
    let mut found = false;
    dump(diag, |vfs_inode, vfs_device| {
        if u64::from(vfs_inode) == (inode & 0xffff_ffff) && u64::from(vfs_device) == encode(device) {
            found = true;
        }
    })?;
    Ok(found)
}

/// The kernel's own device number (`MKDEV`: 12 bits of major, 20 of minor), which
/// `UNIX_DIAG_VFS` carries, from `stat`'s.
fn encode(device: u64) -> u64 {
    let (major, minor) = (libc::major(device), libc::minor(device));
    u64::from((major << 20) | (minor & 0xf_ffff))
}

/// Ask for every Unix socket of the namespace with its inode, and call `each(inode, device)` for
/// those bound to a file.
fn dump(diag: &OwnedFd, mut each: impl FnMut(u32, u32)) -> io::Result<()> {
    // struct nlmsghdr (16) + struct unix_diag_req (24).
    let mut request = [0u8; 40];
    request[0..4].copy_from_slice(&40u32.to_ne_bytes());
    request[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16;
    request[6..8].copy_from_slice(&flags.to_ne_bytes());
    request[8..12].copy_from_slice(&1u32.to_ne_bytes());
    request[16] = libc::AF_UNIX as u8;
    request[20..24].copy_from_slice(&u32::MAX.to_ne_bytes()); // every state
    request[28..32].copy_from_slice(&UDIAG_SHOW_VFS.to_ne_bytes());
    // SAFETY: `request` outlives the call; the kernel routes it to itself (no address needed on a
    // netlink socket that was never bound).
    let sent = unsafe { libc::send(diag.as_raw_fd(), request.as_ptr().cast(), request.len(), 0) };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::recv(diag.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut rest = &buf[..usize::try_from(n).unwrap_or(0)];
        while rest.len() >= 16 {
            let len = u32::from_ne_bytes(rest[0..4].try_into().expect("4 bytes")) as usize;
            let kind = u16::from_ne_bytes(rest[4..6].try_into().expect("2 bytes"));
            if len < 16 || len > rest.len() {
                return Ok(());
            }
            match kind {
                NLMSG_DONE => return Ok(()),
                NLMSG_ERROR => return Err(io::Error::other("socket diagnostics refused the request")),
                _ => attributes(&rest[16..len], &mut each),
            }
            rest = &rest[align(len).min(rest.len())..];
        }
    }
}

/// Walk the attributes after a `struct unix_diag_msg` (16 bytes) for `UNIX_DIAG_VFS`.
fn attributes(message: &[u8], each: &mut impl FnMut(u32, u32)) {
    let mut rest = message.get(16..).unwrap_or_default();
    while rest.len() >= 4 {
        let len = usize::from(u16::from_ne_bytes([rest[0], rest[1]]));
        let kind = u16::from_ne_bytes([rest[2], rest[3]]);
        if len < 4 || len > rest.len() {
            return;
        }
        if kind == UNIX_DIAG_VFS && len >= 12 {
            let inode = u32::from_ne_bytes(rest[4..8].try_into().expect("4 bytes"));
            let device = u32::from_ne_bytes(rest[8..12].try_into().expect("4 bytes"));
            each(inode, device);
        }
        rest = &rest[align(len).min(rest.len())..];
    }
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt as _;
    use std::os::unix::net::UnixListener;

    use super::*;

    #[test]
    fn finds_a_socket_bound_in_this_namespace_by_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let _listener = UnixListener::bind(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let diag = open().unwrap();
        assert!(bound_to(&diag, meta.dev(), meta.ino()).unwrap());
        let other = std::fs::metadata(dir.path()).unwrap();
        assert!(!bound_to(&diag, other.dev(), other.ino()).unwrap());
    }
}
