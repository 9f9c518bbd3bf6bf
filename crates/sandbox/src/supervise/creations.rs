//! The supervisor's side of the creation agent ([`crate::agent`]): the calls of a sandbox that
//! make a new directory entry are made again by its agent, from the copy of their paths that the
//! agent checks, and their result is returned to the caller.
//!
//! One worker thread per sandbox takes its calls in order (so a blocking open of a FIFO holds up
//! that sandbox's creations only) and talks to the agent; an open's new descriptor is installed in
//! the caller together with the answer (`SECCOMP_IOCTL_NOTIF_ADDFD` with `SECCOMP_ADDFD_FLAG_SEND`).

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::mpsc::{Sender, channel};

use super::fds::{directory_of, pidfd_open};
use super::server::{Reply, send, still_valid};
use super::target::Target;
use crate::agent::{self, Op, Request};
use crate::denials;

/// Where a sandbox's creation calls go.
pub struct Creations {
    jobs: Sender<libc::seccomp_notif>,
}

impl Creations {
    /// Start the worker for the sandbox whose listener and agent these are.
    pub fn start(listener: Arc<OwnedFd>, agent: OwnedFd, domain: u64) -> Option<Self> {
        let (jobs, queue) = channel::<libc::seccomp_notif>();
        std::thread::Builder::new()
            .name("shellgate-creations".to_owned())
            .spawn(move || {
                for request in queue {
                    let reply = make(&request, &agent, domain);
                    if still_valid(listener.as_raw_fd(), request.id) {
                        answer(listener.as_raw_fd(), request.id, reply);
                    }
                }
            })
            .ok()?;
        Some(Self { jobs })
    }

    /// Hand a stopped creation call to the worker; `false` when it is gone.
    pub fn submit(&self, request: libc::seccomp_notif) -> bool {
        self.jobs.send(request).is_ok()
    }
}

/// Whether call `nr` with `args` makes a new directory entry (an open only with `O_CREAT`).
pub fn is_creation(nr: libc::c_long, args: &[u64; 6], pid: u32) -> bool {
    let created = |flags: u64| flags & libc::O_CREAT as u64 != 0;
    match nr {
        libc::SYS_openat => created(args[2]),
        libc::SYS_openat2 => Target::new(pid).u64_at(args[2]).is_none_or(created),
        libc::SYS_mkdirat
        | libc::SYS_mknodat
        | libc::SYS_symlinkat
        | libc::SYS_linkat
        | libc::SYS_renameat
        | libc::SYS_renameat2 => true,
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => created(args[1]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat
        | libc::SYS_mkdir
        | libc::SYS_mknod
        | libc::SYS_symlink
        | libc::SYS_link
        | libc::SYS_rename => true,
        _ => false,
    }
}

/// What the worker answers: a reply, or a descriptor to install as the call's result.
enum Outcome {
    Reply(Reply),
    Descriptor { fd: OwnedFd, cloexec: bool },
}

/// One path of a call: the argument holding its directory descriptor (`None`: the working
/// directory) and the one holding its address.
type PathArgs = (Option<usize>, usize);

/// The agent's operation for call `nr`, and where its paths are.
fn decode(nr: libc::c_long, args: &[u64; 6], target: &mut Target) -> Option<(Op, Vec<PathArgs>)> {
    let int = |i: usize| args[i] as u32;
    Some(match nr {
        libc::SYS_openat => (open(args[2], args[3], 0), vec![(Some(0), 1)]),
        libc::SYS_openat2 => {
            let how = target.bytes(args[2], 24)?;
            let word = |i: usize| u64::from_ne_bytes(how[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
            (open(word(0), word(1), word(2)), vec![(Some(0), 1)])
        }
        libc::SYS_mkdirat => (Op::Mkdir { mode: int(2) }, vec![(Some(0), 1)]),
        libc::SYS_mknodat => (
            Op::Mknod {
                mode: int(2),
                dev: args[3],
            },
            vec![(Some(0), 1)],
        ),
        libc::SYS_symlinkat => (Op::Symlink, vec![(None, 0), (Some(1), 2)]),
        libc::SYS_linkat => (
            Op::Link { flags: int(4) as i32 },
            vec![(Some(0), 1), (Some(2), 3)],
        ),
        libc::SYS_renameat => (Op::Rename { flags: 0 }, vec![(Some(0), 1), (Some(2), 3)]),
        libc::SYS_renameat2 => (Op::Rename { flags: int(4) }, vec![(Some(0), 1), (Some(2), 3)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_open => (open(args[1], args[2], 0), vec![(None, 0)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_creat => {
            let flags = (libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64;
            (open(flags, args[1], 0), vec![(None, 0)])
        }
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mkdir => (Op::Mkdir { mode: int(1) }, vec![(None, 0)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_mknod => (
            Op::Mknod {
                mode: int(1),
                dev: args[2],
            },
            vec![(None, 0)],
        ),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_symlink => (Op::Symlink, vec![(None, 0), (None, 1)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_link => (Op::Link { flags: 0 }, vec![(None, 0), (None, 1)]),
        #[cfg(target_arch = "x86_64")]
        libc::SYS_rename => (Op::Rename { flags: 0 }, vec![(None, 0), (None, 1)]),
        _ => return None,
    })
}

fn open(flags: u64, mode: u64, resolve: u64) -> Op {
    // The descriptor is the caller's; its close-on-exec flag is set when it is installed.
    Op::Open {
        flags: flags & !(libc::O_CLOEXEC as u64),
        mode,
        resolve,
    }
}

/// Make the call through the agent.
fn make(request: &libc::seccomp_notif, agent: &OwnedFd, domain: u64) -> Outcome {
    let nr = libc::c_long::from(request.data.nr);
    let args = request.data.args;
    let pid = request.pid;
    let mut target = Target::new(pid);
    let Some((op, places)) = decode(nr, &args, &mut target) else {
        return Outcome::Reply(Reply::Continue);
    };
    let cloexec = matches!(nr, libc::SYS_openat | libc::SYS_openat2) && {
        let flags = if nr == libc::SYS_openat {
            Some(args[2])
        } else {
            target.u64_at(args[2])
        };
        flags.is_some_and(|f| f & libc::O_CLOEXEC as u64 != 0)
    } || open_cloexec_x86(nr, &args);
    let Ok(pidfd) = pidfd_open(pid) else {
        return Outcome::Reply(Reply::Error(libc::ESRCH));
    };
    let mut paths = Vec::with_capacity(places.len());
    let mut dirs = Vec::with_capacity(places.len());
    for (dirfd, address) in places {
        let Some(path) = target.string(args[address]) else {
            return Outcome::Reply(Reply::Error(libc::EFAULT));
        };
        let fd = dirfd.map_or(libc::AT_FDCWD, |i| args[i] as u32 as i32);
        match directory_of(pid, &pidfd, fd) {
            Ok(dir) => dirs.push(dir),
            Err(errno) => return Outcome::Reply(Reply::Error(errno)),
        }
        paths.push(path);
    }
    let request_to_agent = Request {
        op,
        paths,
        umask: umask_of(pid).unwrap_or(0o022),
        pid,
    };
    let raw: Vec<RawFd> = dirs.iter().map(AsRawFd::as_raw_fd).collect();
    let Ok((answer, fd)) = agent::exchange(agent, &request_to_agent, &raw) else {
        // The agent is gone (the sandbox killed it): nothing new can be made.
        return Outcome::Reply(Reply::Error(libc::EACCES));
    };
    if let Some(path) = answer.refused {
        denials::supervised_denial(domain, "fs.protected", Some(path), None);
    }
    if answer.errno != 0 {
        return Outcome::Reply(Reply::Error(answer.errno));
    }
    match fd {
        Some(fd) => Outcome::Descriptor { fd, cloexec },
        None => Outcome::Reply(Reply::Value(answer.value)),
    }
}

#[cfg(target_arch = "x86_64")]
fn open_cloexec_x86(nr: libc::c_long, args: &[u64; 6]) -> bool {
    nr == libc::SYS_open && args[1] & libc::O_CLOEXEC as u64 != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn open_cloexec_x86(_: libc::c_long, _: &[u64; 6]) -> bool {
    false
}

/// The `Umask:` line of `/proc/<pid>/status`.
fn umask_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("Umask:"))?;
    u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
}

/// `SECCOMP_ADDFD_FLAG_SEND`: install the descriptor and answer the call with its number.
const ADDFD_FLAG_SEND: u32 = 1 << 1;

fn answer(listener: RawFd, id: u64, outcome: Outcome) {
    match outcome {
        Outcome::Reply(reply) => send(listener, id, reply),
        Outcome::Descriptor { fd, cloexec } => {
            let add = libc::seccomp_notif_addfd {
                id,
                flags: ADDFD_FLAG_SEND,
                srcfd: u32::try_from(fd.as_raw_fd()).unwrap_or(0),
                newfd: 0,
                newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
            };
            // SAFETY: `add` is a complete `struct seccomp_notif_addfd` that outlives the call.
            let rc = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ADDFD, &raw const add) };
            if rc < 0 {
                // The caller may have run out of descriptors: it gets the error the open would.
                let errno = std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EMFILE);
                send(listener, id, Reply::Error(errno));
            }
        }
    }
}
