//! The system calls the supervised filter stops, and where their paths are.
//!
//! A write to a protected path needs one of these calls; each names the object by a path (relative
//! to a directory descriptor or the working directory) or by a descriptor. Opens are stopped only
//! when their flags ask for writing, so reads never wait for the supervisor.

/// How the final component of a path is resolved by the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// A symlink at the end is followed (open, truncate, chmod…).
    Yes,
    /// The link itself is the object (mkdir, unlink, rename, lchown…).
    No,
    /// Followed unless this argument holds `AT_SYMLINK_NOFOLLOW`.
    UnlessFlag(usize),
}

/// One path a call names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArg {
    /// The argument holding the directory descriptor the path is relative to (`None`: the
    /// working directory).
    pub dirfd: Option<usize>,
    /// The argument holding the path's address (a null pointer names the descriptor itself).
    pub path: usize,
    /// How the last component resolves.
    pub follow: Follow,
}

/// What a stopped call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watched {
    /// An open; the argument holding its flags (stopped only when they ask for writing).
    Open { at: PathArg, flags: usize },
    /// `openat2`: the flags are in the `open_how` structure the third argument points at.
    Openat2,
    /// A call changing the objects its paths name.
    Paths(&'static [PathArg]),
    /// A call changing the object a descriptor (this argument) names.
    Descriptor(usize),
    /// `socket` or `socketpair`, refused while the network is off.
    Socket,
}

const fn at(dirfd: usize, path: usize, follow: Follow) -> PathArg {
    PathArg {
        dirfd: Some(dirfd),
        path,
        follow,
    }
}

const fn cwd(path: usize, follow: Follow) -> PathArg {
    PathArg {
        dirfd: None,
        path,
        follow,
    }
}

/// Open flags that ask for writing: `O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC` (`O_TMPFILE`
/// needs one of the first two).
pub const WRITE_FLAGS: [libc::c_int; 4] = [libc::O_WRONLY, libc::O_RDWR, libc::O_CREAT, libc::O_TRUNC];

/// The write calls every architecture has, and what they name.
const COMMON_CALLS: &[(libc::c_long, Watched)] = {
    use Follow::{No, UnlessFlag, Yes};
    &[
        (
            libc::SYS_openat,
            Watched::Open {
                at: at(0, 1, Yes),
                flags: 2,
            },
        ),
        (libc::SYS_openat2, Watched::Openat2),
        (libc::SYS_mkdirat, Watched::Paths(&[at(0, 1, No)])),
        (libc::SYS_mknodat, Watched::Paths(&[at(0, 1, No)])),
        (libc::SYS_unlinkat, Watched::Paths(&[at(0, 1, No)])),
        (libc::SYS_renameat, Watched::Paths(&[at(0, 1, No), at(2, 3, No)])),
        (libc::SYS_renameat2, Watched::Paths(&[at(0, 1, No), at(2, 3, No)])),
        (libc::SYS_linkat, Watched::Paths(&[at(2, 3, No)])),
        (libc::SYS_symlinkat, Watched::Paths(&[at(1, 2, No)])),
        (libc::SYS_truncate, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_fchmodat, Watched::Paths(&[at(0, 1, Yes)])),
        (libc::SYS_fchownat, Watched::Paths(&[at(0, 1, UnlessFlag(4))])),
        (libc::SYS_utimensat, Watched::Paths(&[at(0, 1, UnlessFlag(3))])),
        (libc::SYS_setxattr, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_lsetxattr, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_removexattr, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_lremovexattr, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_fchmod, Watched::Descriptor(0)),
        (libc::SYS_fchown, Watched::Descriptor(0)),
        (libc::SYS_fsetxattr, Watched::Descriptor(0)),
        (libc::SYS_fremovexattr, Watched::Descriptor(0)),
    ]
};

/// The path calls older architectures still have besides their `*at` forms.
#[cfg(target_arch = "x86_64")]
const LEGACY_CALLS: &[(libc::c_long, Watched)] = {
    use Follow::{No, Yes};
    &[
        (
            libc::SYS_open,
            Watched::Open {
                at: cwd(0, Yes),
                flags: 1,
            },
        ),
        (libc::SYS_creat, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_mkdir, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_mknod, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_rmdir, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_unlink, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_rename, Watched::Paths(&[cwd(0, No), cwd(1, No)])),
        (libc::SYS_link, Watched::Paths(&[cwd(1, No)])),
        (libc::SYS_symlink, Watched::Paths(&[cwd(1, No)])),
        (libc::SYS_chmod, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_chown, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_lchown, Watched::Paths(&[cwd(0, No)])),
        (libc::SYS_utime, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_utimes, Watched::Paths(&[cwd(0, Yes)])),
        (libc::SYS_futimesat, Watched::Paths(&[at(0, 1, Yes)])),
    ]
};

#[cfg(not(target_arch = "x86_64"))]
const LEGACY_CALLS: &[(libc::c_long, Watched)] = &[];

/// The write calls of this architecture and what they name.
pub fn write_calls() -> impl Iterator<Item = (libc::c_long, Watched)> {
    COMMON_CALLS.iter().chain(LEGACY_CALLS).copied()
}

/// What the stopped call `nr` is (`None`: not one the filter stops).
pub fn watched(nr: libc::c_long) -> Option<Watched> {
    if nr == libc::SYS_socket || nr == libc::SYS_socketpair {
        return Some(Watched::Socket);
    }
    write_calls().find(|(n, _)| *n == nr).map(|(_, w)| w)
}

/// Whether open flags ask for writing.
pub fn opens_for_writing(flags: u64) -> bool {
    WRITE_FLAGS
        .iter()
        .any(|&flag| flags & u64::from(flag.unsigned_abs()) != 0)
}

/// A readable name for a socket the sandbox refused: `socket(AF_INET, SOCK_DGRAM)`.
pub fn describe_socket(nr: libc::c_long, args: &[u64; 6]) -> String {
    let call = if nr == libc::SYS_socketpair {
        "socketpair"
    } else {
        "socket"
    };
    let family = match i32::try_from(args[0]).unwrap_or(-1) {
        libc::AF_UNIX => "AF_UNIX".to_owned(),
        libc::AF_INET => "AF_INET".to_owned(),
        libc::AF_INET6 => "AF_INET6".to_owned(),
        libc::AF_NETLINK => "AF_NETLINK".to_owned(),
        libc::AF_PACKET => "AF_PACKET".to_owned(),
        libc::AF_VSOCK => "AF_VSOCK".to_owned(),
        libc::AF_BLUETOOTH => "AF_BLUETOOTH".to_owned(),
        libc::AF_ALG => "AF_ALG".to_owned(),
        other => format!("family {other}"),
    };
    let socket_type = match i32::try_from(args[1] & 0xf).unwrap_or(-1) {
        libc::SOCK_STREAM => "SOCK_STREAM".to_owned(),
        libc::SOCK_DGRAM => "SOCK_DGRAM".to_owned(),
        libc::SOCK_RAW => "SOCK_RAW".to_owned(),
        libc::SOCK_SEQPACKET => "SOCK_SEQPACKET".to_owned(),
        libc::SOCK_RDM => "SOCK_RDM".to_owned(),
        other => format!("type {other}"),
    };
    let protocol = match i32::try_from(args[2]).unwrap_or(-1) {
        0 => return format!("{call}({family}, {socket_type})"),
        libc::IPPROTO_TCP => "IPPROTO_TCP".to_owned(),
        libc::IPPROTO_UDP => "IPPROTO_UDP".to_owned(),
        libc::IPPROTO_ICMP => "IPPROTO_ICMP".to_owned(),
        libc::IPPROTO_ICMPV6 => "IPPROTO_ICMPV6".to_owned(),
        libc::IPPROTO_SCTP => "IPPROTO_SCTP".to_owned(),
        libc::IPPROTO_MPTCP => "IPPROTO_MPTCP".to_owned(),
        other => other.to_string(),
    };
    format!("{call}({family}, {socket_type}, {protocol})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_call_is_found_and_opens_need_a_write_flag() {
        for (nr, call) in write_calls() {
            assert_eq!(watched(nr), Some(call));
        }
        // The calls coreutils use to change a tree are among them, with their paths where they are.
        assert!(matches!(
            watched(libc::SYS_openat),
            Some(Watched::Open { flags: 2, .. })
        ));
        assert!(matches!(watched(libc::SYS_mkdirat), Some(Watched::Paths([p])) if p.path == 1));
        assert!(matches!(watched(libc::SYS_unlinkat), Some(Watched::Paths([p])) if p.path == 1));
        assert!(matches!(watched(libc::SYS_renameat2), Some(Watched::Paths([_, to])) if to.path == 3));
        assert_eq!(watched(libc::SYS_socket), Some(Watched::Socket));
        assert_eq!(watched(libc::SYS_read), None);
        assert!(opens_for_writing(libc::O_WRONLY as u64));
        assert!(opens_for_writing((libc::O_CREAT | libc::O_CLOEXEC) as u64));
        assert!(!opens_for_writing(
            (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_DIRECTORY) as u64
        ));
    }

    #[test]
    fn sockets_are_named_by_family_and_type() {
        let inet = |t: i32, p: u64| [libc::AF_INET as u64, t as u64, p, 0, 0, 0];
        assert_eq!(
            describe_socket(libc::SYS_socket, &inet(libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)),
            "socket(AF_INET, SOCK_DGRAM)"
        );
        assert_eq!(
            describe_socket(libc::SYS_socket, &inet(libc::SOCK_STREAM, 262)),
            "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)"
        );
        assert_eq!(
            describe_socket(libc::SYS_socket, &inet(libc::SOCK_DGRAM, 17)),
            "socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP)"
        );
        assert_eq!(
            describe_socket(libc::SYS_socket, &inet(libc::SOCK_RAW, 99)),
            "socket(AF_INET, SOCK_RAW, 99)"
        );
        assert_eq!(
            describe_socket(libc::SYS_socketpair, &[libc::AF_NETLINK as u64, 3, 0, 0, 0, 0]),
            "socketpair(AF_NETLINK, SOCK_RAW)"
        );
    }
}
