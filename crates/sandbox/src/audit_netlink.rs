//! The kernel audit netlink socket: status, enabling, the read-only log multicast group and
//! user messages (used as a barrier). Only what the denial collector needs.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use nix::sys::socket::{
    AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType, bind, recv, send, setsockopt,
    socket, sockopt,
};
use nix::sys::time::TimeVal;

/// `AUDIT_GET`: read the audit status.
const AUDIT_GET: u16 = 1000;
/// `AUDIT_SET`: change the audit status.
const AUDIT_SET: u16 = 1001;
/// `AUDIT_TRUSTED_APP`: free-form text from a trusted application (our barrier records).
pub const AUDIT_TRUSTED_APP: u16 = 1121;
/// `AUDIT_LANDLOCK_ACCESS`: one denied access.
pub const AUDIT_LANDLOCK_ACCESS: u16 = 1423;
/// `AUDIT_LANDLOCK_DOMAIN`: a Landlock domain's creator (first denial) or its end.
pub const AUDIT_LANDLOCK_DOMAIN: u16 = 1424;
/// `AUDIT_NLGRP_READLOG`: the multicast group that receives a copy of every audit record.
const AUDIT_NLGRP_READLOG: u32 = 1;
/// `AUDIT_STATUS_ENABLED`: the mask bit for `enabled` in `AUDIT_SET`.
const AUDIT_STATUS_ENABLED: u32 = 1;

/// `NLMSG_ERROR`: an error (or, with error 0, an acknowledgement) from the kernel.
const NLMSG_ERROR: u16 = 2;
/// `NLM_F_REQUEST`: the message is a request.
const NLM_F_REQUEST: u16 = 1;
/// `NLM_F_ACK`: ask the kernel to acknowledge the request.
const NLM_F_ACK: u16 = 4;
/// `sizeof(struct nlmsghdr)`.
const HEADER_LEN: usize = 16;

/// The part of the kernel's `struct audit_status` the collector reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditStatus {
    /// 0 = off, 1 = on, 2 = on and locked.
    pub enabled: u32,
    /// Records the kernel dropped so far (backlog full, rate limit).
    pub lost: u32,
}

fn io_err(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

fn open(groups: u32) -> io::Result<OwnedFd> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Raw,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkAudit,
    )
    .map_err(io_err)?;
    bind(fd.as_raw_fd(), &NetlinkAddr::new(0, groups)).map_err(io_err)?;
    Ok(fd)
}

/// A socket that receives every audit record the kernel emits (needs `CAP_AUDIT_READ`).
pub fn open_log_reader() -> io::Result<OwnedFd> {
    let fd = open(1 << (AUDIT_NLGRP_READLOG - 1))?;
    // Denial bursts arrive faster than they are parsed; a larger buffer avoids ENOBUFS.
    let _ = setsockopt(&fd, sockopt::RcvBuf, &(4 << 20));
    Ok(fd)
}

/// A socket for requests to the kernel (status, user messages).
pub fn open_control() -> io::Result<OwnedFd> {
    let fd = open(0)?;
    setsockopt(&fd, sockopt::ReceiveTimeout, &TimeVal::new(1, 0)).map_err(io_err)?;
    Ok(fd)
}

/// Encode one netlink message.
pub fn message(kind: u16, flags: u16, payload: &[u8]) -> Vec<u8> {
    let len = u32::try_from(HEADER_LEN + payload.len()).expect("small message");
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len() + 3);
    out.extend_from_slice(&len.to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(&(flags | NLM_F_REQUEST).to_ne_bytes());
    out.extend_from_slice(&1u32.to_ne_bytes()); // sequence number
    out.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel fills it in
    out.extend_from_slice(payload);
    while out.len() % 4 != 0 {
        out.push(0);
    }
    out
}

/// Split a datagram into `(type, payload)` messages.
pub fn split_messages(mut data: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while data.len() >= HEADER_LEN {
        let len = u32::from_ne_bytes(data[0..4].try_into().expect("4 bytes")) as usize;
        let kind = u16::from_ne_bytes(data[4..6].try_into().expect("2 bytes"));
        if len < HEADER_LEN || len > data.len() {
            break;
        }
        out.push((kind, &data[HEADER_LEN..len]));
        let aligned = (len + 3) & !3;
        data = &data[aligned.min(data.len())..];
    }
    out
}

fn u32_at(payload: &[u8], index: usize) -> Option<u32> {
    let bytes = payload.get(index * 4..index * 4 + 4)?;
    Some(u32::from_ne_bytes(bytes.try_into().ok()?))
}

/// Read the audit status.
pub fn status() -> io::Result<AuditStatus> {
    let fd = open_control()?;
    send(fd.as_raw_fd(), &message(AUDIT_GET, 0, &[]), MsgFlags::empty()).map_err(io_err)?;
    let mut buf = vec![0u8; 8192];
    loop {
        let n = recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty()).map_err(io_err)?;
        for (kind, payload) in split_messages(&buf[..n]) {
            if kind == NLMSG_ERROR {
                check_ack(payload)?;
            } else if kind == AUDIT_GET {
                // struct audit_status: mask, enabled, failure, pid, rate_limit, backlog_limit, lost
                return match (u32_at(payload, 1), u32_at(payload, 6)) {
                    (Some(enabled), Some(lost)) => Ok(AuditStatus { enabled, lost }),
                    _ => Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "short audit status reply",
                    )),
                };
            }
        }
    }
}

/// An `NLMSG_ERROR` payload: errno 0 is an acknowledgement.
fn check_ack(payload: &[u8]) -> io::Result<()> {
    let errno = payload
        .get(0..4)
        .map_or(0, |b| i32::from_ne_bytes(b.try_into().expect("4 bytes")));
    if errno == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(-errno))
    }
}

/// Turn kernel auditing on or off (needs `CAP_AUDIT_CONTROL`).
pub fn set_enabled(enabled: bool) -> io::Result<()> {
    let fd = open_control()?;
    let mut payload = Vec::new();
    payload.extend_from_slice(&AUDIT_STATUS_ENABLED.to_ne_bytes());
    payload.extend_from_slice(&u32::from(enabled).to_ne_bytes());
    send(
        fd.as_raw_fd(),
        &message(AUDIT_SET, NLM_F_ACK, &payload),
        MsgFlags::empty(),
    )
    .map_err(io_err)?;
    let mut buf = vec![0u8; 8192];
    let n = recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty()).map_err(io_err)?;
    for (kind, payload) in split_messages(&buf[..n]) {
        if kind == NLMSG_ERROR {
            return check_ack(payload);
        }
    }
    Ok(())
}

/// Log a user message through the kernel's audit queue (needs `CAP_AUDIT_WRITE`). Records queued
/// before it are delivered before it, which makes it a barrier.
pub fn send_user_message(fd: &OwnedFd, text: &str) -> io::Result<()> {
    let mut payload = text.as_bytes().to_vec();
    payload.push(0);
    send(
        fd.as_raw_fd(),
        &message(AUDIT_TRUSTED_APP, 0, &payload),
        MsgFlags::empty(),
    )
    .map(drop)
    .map_err(io_err)
}

/// Block until the next datagram arrives on a log reader; `Ok(None)` when records were lost
/// because the socket's buffer overflowed.
pub fn receive(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    match recv(fd.as_raw_fd(), buf, MsgFlags::empty()) {
        Ok(n) => Ok(Some(n)),
        Err(nix::Error::ENOBUFS) => Ok(None),
        Err(e) => Err(io_err(e)),
    }
}

/// How long a collector waits for its barrier record.
pub const BARRIER_TIMEOUT: Duration = Duration::from_secs(2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let a = message(AUDIT_TRUSTED_APP, 0, b"hello\0");
        assert_eq!(a.len() % 4, 0);
        let mut both = a.clone();
        both.extend_from_slice(&message(AUDIT_GET, NLM_F_ACK, &[]));
        let parts = split_messages(&both);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], (AUDIT_TRUSTED_APP, &b"hello\0"[..]));
        assert_eq!(parts[1], (AUDIT_GET, &[][..]));
        assert!(split_messages(&both[..10]).is_empty());
    }

    #[test]
    fn acks_and_errors() {
        assert!(check_ack(&0i32.to_ne_bytes()).is_ok());
        let err = check_ack(&(-libc::EPERM).to_ne_bytes()).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EPERM));
    }
}
