//! The agent's messages: one `SOCK_SEQPACKET` datagram each way, JSON plus descriptors.

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

use nix::sys::socket::{self, ControlMessage, ControlMessageOwned, MsgFlags};
use serde::{Deserialize, Serialize};

/// Largest message either way.
const MAX_MESSAGE: usize = 3 * 4096 + 1024;

/// A creating operation, with the arguments that are not paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Op {
    /// `openat2(dir, path, {flags, mode, resolve})` with `O_CREAT`.
    Open { flags: u64, mode: u64, resolve: u64 },
    /// `mkdirat(dir, path, mode)`.
    Mkdir { mode: u32 },
    /// `mknodat(dir, path, mode, dev)`.
    Mknod { mode: u32, dev: u64 },
    /// `symlinkat(target, dir, path)`: the target is the first path, with no directory.
    Symlink,
    /// `linkat(old_dir, old, new_dir, new, flags)`.
    Link { flags: i32 },
    /// `renameat2(old_dir, old, new_dir, new, flags)`.
    Rename { flags: u32 },
}

/// What the supervisor asks: the operation, its paths in the caller's order, and the caller's
/// umask. The directory descriptors travel alongside, one per path (the symlink target has none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Request {
    pub op: Op,
    pub paths: Vec<Vec<u8>>,
    pub umask: u32,
    /// The caller's pid: its `/proc/self` is `/proc/<pid>`.
    pub pid: u32,
}

/// What the agent answers: the call's return value or errno; for a refusal by name, the path
/// refused (for the denial report). An open's descriptor travels alongside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub value: i64,
    pub errno: i32,
    pub refused: Option<String>,
}

/// Send `message` with `fds`.
pub(crate) fn send<T: Serialize>(socket: &OwnedFd, message: &T, fds: &[RawFd]) -> std::io::Result<()> {
    let json = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    let rights = [ControlMessage::ScmRights(fds)];
    let control: &[ControlMessage<'_>] = if fds.is_empty() { &[] } else { &rights };
    socket::sendmsg::<()>(
        socket.as_raw_fd(),
        &[IoSlice::new(&json)],
        control,
        MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    Ok(())
}

/// Receive one message and the descriptors that came with it; `Ok(None)` at the end.
pub(crate) fn receive<T: for<'de> Deserialize<'de>>(
    socket: &OwnedFd,
) -> std::io::Result<Option<(T, Vec<OwnedFd>)>> {
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut space = nix::cmsg_space!([RawFd; 4]);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let message = socket::recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    let mut fds = Vec::new();
    for cmsg in message.cmsgs()? {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            for fd in received {
                // SAFETY: SCM_RIGHTS gave this process a new descriptor; nothing else owns it.
                #[allow(unsafe_code)]
                fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    let len = message.bytes;
    if len == 0 {
        return Ok(None);
    }
    let value = serde_json::from_slice(&buf[..len]).map_err(std::io::Error::other)?;
    Ok(Some((value, fds)))
}

/// The supervisor's side: send `request` with `fds`, wait for the answer and its descriptor.
pub(crate) fn exchange(
    socket: &OwnedFd,
    request: &Request,
    fds: &[RawFd],
) -> std::io::Result<(Answer, Option<OwnedFd>)> {
    send(socket, request, fds)?;
    match receive::<Answer>(socket)? {
        Some((answer, fds)) => Ok((answer, fds.into_iter().next())),
        None => Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)),
    }
}
