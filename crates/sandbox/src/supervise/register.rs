//! Handing a listener to the supervisor: one `SOCK_SEQPACKET` message on the supervisor's abstract
//! Unix socket, JSON describing the sandbox plus the listener as `SCM_RIGHTS`.
//!
//! The helper connects before Landlock scopes abstract sockets away from it, and checks that the
//! socket belongs to its own user (or root): whoever holds a listener answers the sandbox's
//! stopped calls. It does not wait for an answer: the queued message keeps the listener alive until
//! the supervisor takes it, and a stopped call simply waits until then (a run's timeout still
//! applies; if the engine is gone, the listener closes and stopped calls fail with `ENOSYS`).

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd, RawFd};
use std::path::PathBuf;

use nix::sys::socket::{
    self, AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, UnixAddr, sockopt,
};
use serde::{Deserialize, Serialize};

/// Largest registration accepted.
pub const MAX_MESSAGE: usize = 64 * 1024;

/// What the supervisor learns about a sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The helper's pid (it execs in place: the sandboxed command's pid).
    pub pid: u32,
    /// Its parent and session, for attribution (see [`crate::audit_record::creator_tag`]).
    pub parent: u32,
    /// Its session id.
    pub session: u32,
    /// The protected paths that exist, resolved.
    pub protected: Vec<PathBuf>,
    /// Names protected directly inside every writable root, and — for creation — anywhere
    /// beneath one (`.git`).
    #[serde(default)]
    pub protected_names: Vec<String>,
    /// Whether the file system is restricted (otherwise only protected paths are judged).
    #[serde(default)]
    pub restricted: bool,
    /// The directories the sandbox may write, resolved (writable roots, the engine's own, its
    /// private `/dev/shm`).
    #[serde(default)]
    pub writable: Vec<PathBuf>,
    /// Whether the sandbox has its own loopback-only network (its connects are then stopped).
    #[serde(default)]
    pub isolated_network: bool,
    /// Unix sockets outside the sandbox that it may connect to (`[sandbox] unix_sockets`).
    #[serde(default)]
    pub unix_sockets: Vec<PathBuf>,
    /// Whether a socket-diagnostics socket follows the listener.
    #[serde(default)]
    pub has_diag: bool,
    /// Whether the sandbox's creation agent's socket follows ([`crate::agent`]).
    #[serde(default)]
    pub has_agent: bool,
    /// The proxy's rules, when a listener of the sandbox's proxy port follows
    /// ([`crate::SandboxPolicy::proxy`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxy: Option<crate::ProxyPolicy>,
}

/// The descriptors a registration carries: the seccomp listener, and — for a sandbox with its own
/// network — a `NETLINK_SOCK_DIAG` socket made inside that network, which tells the supervisor
/// which Unix sockets were bound there.
#[derive(Debug)]
pub struct Handover {
    /// The supervised filter's listener (`None` until it is installed).
    pub listener: Option<OwnedFd>,
    /// The socket-diagnostics socket of the sandbox's network namespace.
    pub diag: Option<OwnedFd>,
    /// The supervisor's end of the creation agent's socket.
    pub agent: Option<OwnedFd>,
    /// The TCP listener on the proxy port inside the sandbox's network namespace.
    pub proxy: Option<OwnedFd>,
}

/// The supervisor's address: an abstract socket name.
pub fn address(name: &str) -> nix::Result<UnixAddr> {
    UnixAddr::new_abstract(name.as_bytes())
}

/// Connect to the supervisor at `name` and check who owns it.
pub fn connect(name: &str) -> nix::Result<OwnedFd> {
    let fd = socket::socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    socket::connect(fd.as_raw_fd(), &address(name)?)?;
    let owner = socket::getsockopt(&fd, sockopt::PeerCredentials)?.uid();
    let me = nix::unistd::geteuid().as_raw();
    if owner != me && owner != 0 {
        return Err(nix::Error::EPERM);
    }
    Ok(fd)
}

/// Send `registration` and its descriptors. They are closed here either way: the sandboxed
/// command must never hold them.
pub fn register(connection: &OwnedFd, registration: &Registration, handover: Handover) -> Result<(), String> {
    let json = serde_json::to_vec(registration).map_err(|e| e.to_string())?;
    let listener = handover.listener.as_ref().ok_or("no listener to hand over")?;
    let mut fds = vec![listener.as_raw_fd()];
    fds.extend(handover.diag.as_ref().map(AsRawFd::as_raw_fd));
    fds.extend(handover.agent.as_ref().map(AsRawFd::as_raw_fd));
    fds.extend(handover.proxy.as_ref().map(AsRawFd::as_raw_fd));
    socket::sendmsg::<()>(
        connection.as_raw_fd(),
        &[IoSlice::new(&json)],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::empty(),
        None,
    )
    .map_err(|e| format!("cannot hand the listener to the supervisor: {e}"))?;
    drop(handover);
    Ok(())
}

/// The supervisor's side: read one registration and its descriptors from `connection`.
pub fn receive(connection: &OwnedFd) -> Result<(Registration, Handover), String> {
    let creds = socket::getsockopt(connection, sockopt::PeerCredentials).map_err(|e| e.to_string())?;
    let me = nix::unistd::geteuid().as_raw();
    if creds.uid() != me && creds.uid() != 0 {
        return Err(format!("registration from uid {} refused", creds.uid()));
    }
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let (len, listener) = {
        let mut iov = [IoSliceMut::new(&mut buf)];
        let message = socket::recvmsg::<()>(
            connection.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        )
        .map_err(|e| e.to_string())?;
        let mut received = Vec::new();
        for cmsg in message.cmsgs().map_err(|e| e.to_string())? {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                for fd in fds {
                    // SAFETY: SCM_RIGHTS gave this process a new descriptor; nothing else owns it.
                    #[allow(unsafe_code)]
                    received.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        (message.bytes, received)
    };
    let registration: Registration =
        serde_json::from_slice(&buf[..len]).map_err(|e| format!("malformed registration: {e}"))?;
    let mut fds = listener.into_iter();
    let listener = fds.next().ok_or("registration without a listener")?;
    let diag = if registration.has_diag { fds.next() } else { None };
    let agent = if registration.has_agent { fds.next() } else { None };
    let proxy = if registration.proxy.is_some() {
        fds.next()
    } else {
        None
    };
    if registration.pid != 0 && creds.pid() > 0 && creds.pid().unsigned_abs() != registration.pid {
        return Err(format!(
            "registration for pid {} sent by pid {}",
            registration.pid,
            creds.pid()
        ));
    }
    Ok((
        registration,
        Handover {
            listener: Some(listener),
            diag,
            agent,
            proxy,
        },
    ))
}
