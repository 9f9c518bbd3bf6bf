//! Connects of a sandbox whose network is off, which the supervisor judges — and, for Unix
//! sockets, makes itself.
//!
//! Alone in its network namespace, a sandbox reaches no internet address but its own loopback;
//! Unix sockets bound to files are another matter: a path reaches the socket whatever the network
//! namespace (Docker's, D-Bus's, an ssh-agent's, the engine's). Landlock only governs that from ABI
//! 9 on. So every `connect` stops here:
//!
//! - The socket is taken from the caller (`pidfd_getfd`) and its family read from the socket
//!   itself (`SO_DOMAIN`), never from the address: the address is in the caller's memory, which
//!   another of its threads can change after it was read. A socket that is not a Unix one cannot
//!   reach a Unix address, so it continues (after a report when it aims outside the loopback).
//! - A Unix connect is made by the supervisor, on that same socket: the path is read once,
//!   opened (`O_PATH`, in the caller's root), checked — it must be a socket bound inside the same
//!   sandbox (the socket diagnostics of the sandbox's own network namespace list it) or one the
//!   configuration lists — and connected to through that very descriptor (`/proc/self/fd/N`), so
//!   the socket checked is the socket reached. Abstract addresses belong to the socket's network
//!   namespace, the sandbox's own.
//! - The connect runs on a thread of its own: a full listen backlog blocks a blocking connect, and
//!   the supervisor must go on answering other calls meanwhile.
//!
//! The peer sees the engine's credentials (`SO_PEERCRED`: the engine's pid, the same uid and gid),
//! since the engine made the connect.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fds::{pidfd_getfd, pidfd_open};
use super::server::{Reply, Rules, Verdict, send, still_valid};
use super::target::Target;
use crate::denials;

/// `sizeof(struct sockaddr_un)`.
const SOCKADDR_UN_LEN: usize = 110;
/// `sizeof(struct sockaddr_in6)`, the largest internet address.
const SOCKADDR_IN6_LEN: usize = 28;

/// Judge a stopped `connect(fd, addr, len)`.
pub fn judge(
    request: &libc::seccomp_notif,
    listener: &Arc<OwnedFd>,
    rules: &Arc<Rules>,
    domain: u64,
) -> Verdict {
    if !rules.isolated_network {
        // Not a sandbox of its own network: nothing to judge here.
        return Verdict::Continue;
    }
    let args = request.data.args;
    let Ok(pidfd) = pidfd_open(request.pid) else {
        return Verdict::Continue;
    };
    // The pidfd must name the process that made the call, not a later one with its pid.
    if !still_valid(listener.as_raw_fd(), request.id) {
        return Verdict::Deferred;
    }
    let socket = match pidfd_getfd(&pidfd, args[0] as u32 as i32) {
        Ok(socket) => socket,
        Err(errno) => {
            return Verdict::Refuse {
                errno,
                blocker: "net.connect",
                path: None,
                address: None,
            };
        }
    };
    match socket_domain(&socket) {
        Some(libc::AF_UNIX) => {}
        Some(libc::AF_INET | libc::AF_INET6) => return judge_inet(request, &socket, rules),
        _ => return Verdict::Continue,
    }
    let length = usize::try_from(args[2])
        .unwrap_or(usize::MAX)
        .min(SOCKADDR_UN_LEN);
    let Some(address) = Target::new(request.pid).bytes(args[1], length) else {
        return Verdict::Refuse {
            errno: libc::EFAULT,
            blocker: "net.connect",
            path: None,
            address: None,
        };
    };
    let pid = request.pid;
    let id = request.id;
    let listener = Arc::clone(listener);
    let rules = Arc::clone(rules);
    let spawned = std::thread::Builder::new()
        .name("shellgate-connect".to_owned())
        .spawn(move || {
            let reply = connect_unix(pid, &socket, &address, &rules, domain);
            if still_valid(listener.as_raw_fd(), id) {
                send(listener.as_raw_fd(), id, reply);
            }
        });
    match spawned {
        Ok(_) => Verdict::Deferred,
        Err(_) => Verdict::Refuse {
            errno: libc::EAGAIN,
            blocker: "net.connect",
            path: None,
            address: None,
        },
    }
}

/// An internet connect in a loopback-only namespace: reported when it aims elsewhere (it could
/// not get there anyway) — as a direct connection where the proxy is the way out, where a
/// loopback port nothing in the sandbox is bound to counts as elsewhere too.
fn judge_inet(request: &libc::seccomp_notif, socket: &OwnedFd, rules: &Rules) -> Verdict {
    let args = request.data.args;
    judge_destination(request.pid, socket, args[1], args[2], rules)
}

/// A datagram sent with an address (`sendto(fd, buf, len, flags, addr, addrlen)`, stopped only
/// with an address) in a loopback-only namespace: judged like a connect to that address.
pub fn judge_sendto(request: &libc::seccomp_notif, listener: &OwnedFd, rules: &Rules) -> Verdict {
    if !rules.isolated_network {
        return Verdict::Continue;
    }
    let args = request.data.args;
    let Ok(pidfd) = pidfd_open(request.pid) else {
        return Verdict::Continue;
    };
    if !still_valid(listener.as_raw_fd(), request.id) {
        return Verdict::Continue;
    }
    let Ok(socket) = pidfd_getfd(&pidfd, args[0] as u32 as i32) else {
        return Verdict::Continue;
    };
    match socket_domain(&socket) {
        Some(libc::AF_INET | libc::AF_INET6) => {
            judge_destination(request.pid, &socket, args[4], args[5], rules)
        }
        _ => Verdict::Continue,
    }
}

/// Judge the internet address at `pointer` (`length` bytes) in process `pid`'s memory that
/// `socket` is to reach. The address is read once, for the report: the namespace holds no route
/// out, so a second thread that changes it afterwards changes only what is reported.
fn judge_destination(pid: u32, socket: &OwnedFd, pointer: u64, length: u64, rules: &Rules) -> Verdict {
    let length = usize::try_from(length).unwrap_or(0).min(SOCKADDR_IN6_LEN);
    let Some(bytes) = Target::new(pid).bytes(pointer, length) else {
        return Verdict::Continue;
    };
    let Some(address) = inet_address(&bytes) else {
        return Verdict::Continue;
    };
    let ip = address.ip().to_canonical();
    let (errno, blocker) = if !ip.is_loopback() && !ip.is_unspecified() {
        let blocker = if rules.proxy_port.is_some() {
            denials::DIRECT_CONNECTION
        } else {
            "net.connect_tcp"
        };
        (libc::ENETUNREACH, blocker)
    } else {
        let Some(proxy_port) = rules.proxy_port else {
            return Verdict::Continue;
        };
        let stream = socket_type(socket) == Some(libc::SOCK_STREAM);
        let to_proxy = stream && address.port() == proxy_port;
        if to_proxy || super::loopback::bound_at(pid, address, stream) {
            return Verdict::Continue;
        }
        (libc::ECONNREFUSED, denials::DIRECT_CONNECTION)
    };
    Verdict::Refuse {
        errno,
        blocker,
        path: None,
        address: Some(address.to_string()),
    }
}

/// The internet address in a `struct sockaddr_in`/`sockaddr_in6`.
fn inet_address(bytes: &[u8]) -> Option<std::net::SocketAddr> {
    let family = i32::from(u16::from_ne_bytes(bytes.get(0..2)?.try_into().ok()?));
    let port = u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?);
    match family {
        libc::AF_INET => {
            let ip: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some((std::net::Ipv4Addr::from(ip), port).into())
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            Some((std::net::Ipv6Addr::from(ip), port).into())
        }
        _ => None,
    }
}

/// Make the Unix connect of process `pid` on `socket` to `address` (the bytes it passed), if the
/// sandbox may reach it.
fn connect_unix(pid: u32, socket: &OwnedFd, address: &[u8], rules: &Rules, domain: u64) -> Reply {
    let family = address
        .get(0..2)
        .map(|b| i32::from(u16::from_ne_bytes([b[0], b[1]])));
    let path_bytes = address.get(2..).unwrap_or_default();
    // Abstract names (a leading NUL) and AF_UNSPEC (dissolving a datagram association) stay
    // inside the socket's own network namespace: the call is made as the caller made it.
    if family != Some(libc::AF_UNIX) || path_bytes.first().is_none_or(|&b| b == 0) {
        return raw_connect(socket, address);
    }
    let end = path_bytes
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(path_bytes.len());
    let path = Path::new(std::ffi::OsStr::from_bytes(&path_bytes[..end]));
    let shown = format!("unix:{}", path.display());
    let refuse = |errno| {
        denials::supervised_denial(domain, "net.connect_unix", None, Some(shown.clone()));
        Reply::Error(errno)
    };
    let opened = match open_in_root(pid, path) {
        Ok(opened) => opened,
        // What the kernel would answer for a path that leads nowhere.
        Err(errno) => return Reply::Error(errno),
    };
    let Ok(meta) = std::fs::metadata(format!("/proc/self/fd/{}", opened.as_raw_fd())) else {
        return Reply::Error(libc::ECONNREFUSED);
    };
    if !meta.file_type().is_socket() {
        return Reply::Error(libc::ECONNREFUSED);
    }
    if !allowed(rules, meta.dev(), meta.ino()) {
        return refuse(libc::EACCES);
    }
    let through = format!("/proc/self/fd/{}", opened.as_raw_fd());
    let mut bytes = Vec::with_capacity(2 + through.len() + 1);
    bytes.extend_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
    bytes.extend_from_slice(through.as_bytes());
    bytes.push(0);
    raw_connect(socket, &bytes)
}

/// Whether the socket file (`device`, `inode`) is one the sandbox may reach.
fn allowed(rules: &Rules, device: u64, inode: u64) -> bool {
    let listed = rules
        .unix_sockets
        .iter()
        .any(|path| std::fs::metadata(path).is_ok_and(|m| m.dev() == device && m.ino() == inode));
    listed
        || rules
            .diag
            .as_ref()
            .is_some_and(|diag| super::unix_diag::bound_to(diag, device, inode).unwrap_or(false))
}

/// `path` opened `O_PATH` the way process `pid` would look it up: relative to its working
/// directory, absolute (and through absolute symlinks) from its root, in its mount namespace.
fn open_in_root(pid: u32, path: &Path) -> Result<OwnedFd, i32> {
    let absolute: PathBuf = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).map_err(|_| libc::ENOENT)?;
        cwd.join(path)
    };
    let root = open_path(Path::new(&format!("/proc/{pid}/root")), libc::AT_FDCWD, 0)?;
    open_path(&absolute, root.as_raw_fd(), RESOLVE_IN_ROOT)
}

/// `RESOLVE_IN_ROOT` (linux/openat2.h).
const RESOLVE_IN_ROOT: u64 = 0x10;

/// `struct open_how`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

fn open_path(path: &Path, dirfd: RawFd, resolve: u64) -> Result<OwnedFd, i32> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(|_| libc::EINVAL)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    // SAFETY: `c_path` and `how` outlive the call; the size is that of the structure passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            c_path.as_ptr(),
            &raw const how,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(nix::Error::last() as i32);
    }
    // SAFETY: the kernel just returned this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// `connect(socket, address)` with the raw address bytes; the call's return as a reply.
fn raw_connect(socket: &OwnedFd, address: &[u8]) -> Reply {
    let length = libc::socklen_t::try_from(address.len()).unwrap_or(0);
    // SAFETY: `address` is readable for `length` bytes; the kernel copies it.
    let rc = unsafe { libc::connect(socket.as_raw_fd(), address.as_ptr().cast(), length) };
    if rc == 0 {
        Reply::Value(0)
    } else {
        Reply::Error(nix::Error::last() as i32)
    }
}

/// The socket's address family (`SO_DOMAIN`).
fn socket_domain(socket: &OwnedFd) -> Option<i32> {
    socket_option(socket, libc::SO_DOMAIN)
}

/// The socket's type (`SO_TYPE`: stream, datagram, raw).
fn socket_type(socket: &OwnedFd) -> Option<i32> {
    socket_option(socket, libc::SO_TYPE)
}

/// An integer socket option at `SOL_SOCKET`.
fn socket_option(socket: &OwnedFd, option: i32) -> Option<i32> {
    let mut value: libc::c_int = 0;
    let mut length = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `length` are writable and sized for an int option.
    let rc = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            (&raw mut value).cast(),
            &raw mut length,
        )
    };
    (rc == 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_internet_addresses() {
        let mut v4 = vec![0u8; 16];
        v4[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&443u16.to_be_bytes());
        v4[4..8].copy_from_slice(&[93, 184, 216, 34]);
        assert_eq!(inet_address(&v4).unwrap().to_string(), "93.184.216.34:443");
        let mut v6 = vec![0u8; 28];
        v6[0..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&80u16.to_be_bytes());
        v6[23] = 1;
        assert_eq!(inet_address(&v6).unwrap().to_string(), "[::1]:80");
        assert_eq!(inet_address(&[1, 0]), None);
    }
}
