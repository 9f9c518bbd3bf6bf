//! The engine's side: one thread that takes listeners from helpers and answers their sandboxes'
//! stopped calls, recording each refusal as a denial.

#![allow(unsafe_code)]

use std::os::fd::{AsFd as _, AsRawFd as _, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{self, AddressFamily, SockFlag, SockType};

use super::creations::{Creations, is_creation};
use super::register::{self, Handover, Registration};
use super::syscalls::{self, Watched};
use super::target::Target;
use crate::denials;

/// `SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP` (Linux 6.6): the kernel switches straight between the
/// stopped process and the supervisor instead of waking each through the scheduler.
const SYNC_WAKE_UP: libc::c_ulong = 1;

/// Domain ids of supervised sandboxes have this bit set, so they never meet Landlock's.
const SUPERVISED_DOMAIN: u64 = 1 << 63;

/// One supervised sandbox.
struct Sandbox {
    listener: Arc<OwnedFd>,
    domain: u64,
    rules: Arc<Rules>,
    /// Where its creation calls are made again, when it has an agent.
    creations: Option<Creations>,
    /// Its proxy port's accept loop (stopped when the sandbox ends).
    _proxy: Option<crate::proxy::ProxyHandle>,
}

/// What the supervisor judges a sandbox's calls by (from its [`Registration`]).
#[derive(Debug)]
pub(super) struct Rules {
    /// The protected paths that exist, resolved.
    pub protected: Vec<PathBuf>,
    /// Whether the file system is restricted: writes outside `writable` are then denied.
    pub restricted: bool,
    /// The directories the sandbox may write.
    pub writable: Vec<PathBuf>,
    /// Unix sockets outside the sandbox it may connect to.
    pub unix_sockets: Vec<PathBuf>,
    /// Whether it has its own loopback-only network (its connects are judged then).
    pub isolated_network: bool,
    /// The loopback port of the engine's proxy, when that is its way out (a connect around it is
    /// a direct connection).
    pub proxy_port: Option<u16>,
    /// The socket-diagnostics socket of that network namespace (without it, only the listed
    /// sockets can be reached).
    pub diag: Option<OwnedFd>,
}

impl Rules {
    /// Whether the sandbox may write `path` (absolute, resolved).
    fn may_write(&self, path: &Path) -> bool {
        !self.restricted
            || crate::policy::is_writable_device(path)
            || self.writable.iter().any(|dir| path.starts_with(dir))
    }
}

/// Bind the supervisor's socket and start its thread; returns the socket's name.
pub fn start() -> Result<String, String> {
    let server = socket::socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|e| format!("cannot create the supervisor socket: {e}"))?;
    let name = bind_fresh_name(&server)?;
    socket::listen(&server, socket::Backlog::new(64).map_err(|e| e.to_string())?)
        .map_err(|e| format!("cannot listen on the supervisor socket: {e}"))?;
    std::thread::Builder::new()
        .name("shellgate-supervisor".to_owned())
        .spawn(move || serve(&server))
        .map_err(|e| format!("cannot start the supervisor thread: {e}"))?;
    Ok(name)
}

/// Bind `server` to an unused abstract name, unguessable enough that no one takes it first.
fn bind_fresh_name(server: &OwnedFd) -> Result<String, String> {
    let mut last = String::new();
    for attempt in 0u32..8 {
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
            ^ u128::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let name = format!("shellgate-supervisor-{}-{nonce:x}", std::process::id());
        match socket::bind(
            server.as_raw_fd(),
            &register::address(&name).map_err(|e| e.to_string())?,
        ) {
            Ok(()) => return Ok(name),
            Err(e) => last = e.to_string(),
        }
    }
    Err(format!("cannot bind the supervisor socket: {last}"))
}

fn serve(server: &OwnedFd) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // Helpers connect before they restrict themselves and send once their filter is installed:
    // their connections wait here meanwhile, so no helper holds up another sandbox's calls.
    let mut pending: Vec<OwnedFd> = Vec::new();
    let mut sandboxes: Vec<Sandbox> = Vec::new();
    loop {
        let events = {
            let mut fds = Vec::with_capacity(1 + pending.len() + sandboxes.len());
            fds.push(PollFd::new(server.as_fd(), PollFlags::POLLIN));
            fds.extend(pending.iter().map(|c| PollFd::new(c.as_fd(), PollFlags::POLLIN)));
            fds.extend(
                sandboxes
                    .iter()
                    .map(|s| PollFd::new(s.listener.as_fd(), PollFlags::POLLIN)),
            );
            if poll(&mut fds, PollTimeout::NONE).is_err() {
                continue;
            }
            fds.iter()
                .map(|f| f.revents().unwrap_or(PollFlags::empty()))
                .collect::<Vec<_>>()
        };
        let (server_events, rest) = events.split_first().expect("the server is polled");
        let (pending_events, sandbox_events) = rest.split_at(pending.len());
        let gone = PollFlags::POLLHUP | PollFlags::POLLERR | PollFlags::POLLNVAL;

        let mut ended = Vec::new();
        for (index, events) in sandbox_events.iter().enumerate() {
            if events.contains(PollFlags::POLLIN) {
                answer_one(&sandboxes[index]);
            } else if events.intersects(gone) {
                ended.push(index);
            }
        }
        for index in ended.into_iter().rev() {
            denials::supervised_sandbox_ended(sandboxes.swap_remove(index).domain);
        }

        let mut done = Vec::new();
        for (index, events) in pending_events.iter().enumerate() {
            if events.contains(PollFlags::POLLIN) {
                let domain = SUPERVISED_DOMAIN | NEXT.fetch_add(1, Ordering::Relaxed);
                sandboxes.extend(take_registration(&pending[index], domain));
                done.push(index);
            } else if events.intersects(gone) {
                done.push(index);
            }
        }
        for index in done.into_iter().rev() {
            pending.swap_remove(index);
        }

        if server_events.contains(PollFlags::POLLIN)
            && let Ok(connection) = socket::accept4(server, SockFlag::SOCK_CLOEXEC)
        {
            pending.push(connection);
        }
    }
}

/// Read a helper's registration (it has arrived: the connection was readable).
fn take_registration(connection: &OwnedFd, domain: u64) -> Option<Sandbox> {
    let (registration, handover) = register::receive(connection).ok()?;
    let Handover {
        listener,
        diag,
        agent,
        proxy,
    } = handover;
    let listener = listener?;
    let Registration {
        pid,
        parent,
        session,
        protected,
        restricted,
        writable,
        isolated_network,
        unix_sockets,
        proxy: proxy_policy,
        ..
    } = registration;
    // SAFETY: this request takes the flags as its argument, no pointer; older kernels refuse it
    // (ignored: calls are then answered the ordinary way).
    let _ = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SYNC_WAKE_UP,
        )
    };
    denials::supervised_sandbox_started(domain, pid, parent, session);
    let listener = Arc::new(listener);
    let creations = agent.and_then(|agent| Creations::start(Arc::clone(&listener), agent, domain));
    // Without its accept loop the port stays closed: nothing gets out, connects are refused.
    let proxy = match (proxy, &proxy_policy) {
        (Some(port), Some(policy)) => crate::proxy::DomainRules::new(policy)
            .ok()
            .and_then(|rules| crate::proxy::serve(port, rules, domain)),
        _ => None,
    };
    Some(Sandbox {
        listener,
        creations,
        _proxy: proxy,
        domain,
        rules: Arc::new(Rules {
            protected,
            restricted,
            writable,
            unix_sockets,
            isolated_network,
            proxy_port: proxy_policy.as_ref().map(|p| p.port),
            diag,
        }),
    })
}

/// What to answer a stopped call.
pub(super) enum Verdict {
    /// Let the kernel run it (its own checks still apply).
    Continue,
    /// Refuse it with this errno, recording the denial.
    Refuse {
        errno: i32,
        blocker: &'static str,
        path: Option<String>,
        address: Option<String>,
    },
    /// Answered later, by whoever makes the call on the sandbox's behalf (`super::connect`).
    Deferred,
}

fn answer_one(sandbox: &Sandbox) {
    let mut request = libc::seccomp_notif {
        id: 0,
        pid: 0,
        flags: 0,
        data: libc::seccomp_data {
            nr: 0,
            arch: 0,
            instruction_pointer: 0,
            args: [0; 6],
        },
    };
    let fd = sandbox.listener.as_raw_fd();
    // SAFETY: `request` is a zeroed `struct seccomp_notif` the kernel fills in.
    if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &raw mut request) } != 0 {
        // The caller died (ENOENT) or was interrupted: nothing to answer.
        return;
    }
    let nr = libc::c_long::from(request.data.nr);
    let verdict = if nr == libc::SYS_connect {
        super::connect::judge(&request, &sandbox.listener, &sandbox.rules, sandbox.domain)
    } else if nr == libc::SYS_sendto {
        super::connect::judge_sendto(&request, &sandbox.listener, &sandbox.rules)
    } else {
        match judge(&request, &sandbox.rules) {
            // A new entry is made by the sandbox's agent, from a copy of its name that is checked.
            Verdict::Continue if is_creation(nr, &request.data.args, request.pid) => match &sandbox.creations
            {
                Some(creations) if creations.submit(request) => Verdict::Deferred,
                Some(_) => Verdict::Refuse {
                    errno: libc::EACCES,
                    blocker: "fs.protected",
                    path: None,
                    address: None,
                },
                None => Verdict::Continue,
            },
            verdict => verdict,
        }
    };
    let reply = match verdict {
        Verdict::Deferred => return,
        Verdict::Continue => Reply::Continue,
        Verdict::Refuse {
            errno,
            blocker,
            path,
            address,
        } => {
            // The answer must be about the call we read: the caller may have died and its pid
            // been reused. Recorded before the answer, so the call cannot return (and the run
            // end) first.
            if !still_valid(fd, request.id) {
                return;
            }
            denials::supervised_denial(sandbox.domain, blocker, path, address);
            Reply::Error(errno)
        }
    };
    send(fd, request.id, reply);
}

/// How a stopped call returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// The kernel runs it.
    Continue,
    /// It fails with this errno.
    Error(i32),
    /// It returns this value (the supervisor made the call).
    Value(i64),
}

/// Whether the stopped call `id` is still waiting (its process alive, the call not interrupted).
pub(super) fn still_valid(listener: RawFd, id: u64) -> bool {
    // SAFETY: `id` is a plain u64 the kernel reads.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &raw const id) == 0 }
}

/// Answer the stopped call `id`.
pub(super) fn send(listener: RawFd, id: u64, reply: Reply) {
    let mut response = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: 0,
        flags: 0,
    };
    match reply {
        Reply::Continue => {
            response.flags = u32::try_from(libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE).unwrap_or(1);
        }
        Reply::Error(errno) => response.error = -errno,
        Reply::Value(value) => response.val = value,
    }
    // SAFETY: `response` is a complete `struct seccomp_notif_resp`.
    let _ = unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &raw const response) };
}

fn judge(request: &libc::seccomp_notif, rules: &Rules) -> Verdict {
    let nr = libc::c_long::from(request.data.nr);
    let args = &request.data.args;
    let Some(call) = syscalls::watched(nr) else {
        return Verdict::Continue;
    };
    if call == Watched::Socket {
        // A raw internet socket of a proxied sandbox: a way around the proxy.
        let inet = [libc::AF_INET, libc::AF_INET6].contains(&(args[0] as u32 as i32));
        return Verdict::Refuse {
            errno: libc::EPERM,
            blocker: if inet && rules.proxy_port.is_some() {
                denials::DIRECT_CONNECTION
            } else {
                "net.socket"
            },
            path: None,
            address: Some(syscalls::describe_socket(nr, args)),
        };
    }
    let mut target = Target::new(request.pid);
    let objects: Vec<PathBuf> = match call {
        Watched::Open { at, flags } => {
            if !syscalls::opens_for_writing(args[flags]) {
                return Verdict::Continue;
            }
            let mut at = at;
            if args[flags] & libc::O_NOFOLLOW as u64 != 0 {
                at.follow = syscalls::Follow::No;
            }
            target.path(at, args).into_iter().collect()
        }
        Watched::Openat2 => {
            let flags = target.u64_at(args[2]);
            if !flags.is_some_and(syscalls::opens_for_writing) {
                return Verdict::Continue;
            }
            let at = syscalls::PathArg {
                dirfd: Some(0),
                path: 1,
                follow: syscalls::Follow::Yes,
            };
            target.path(at, args).into_iter().collect()
        }
        Watched::Paths(paths) => paths.iter().filter_map(|&at| target.path(at, args)).collect(),
        Watched::Descriptor(index) => target
            .descriptor(i64::from(args[index] as u32 as i32))
            .into_iter()
            .collect(),
        Watched::Socket => Vec::new(),
    };
    for object in objects {
        // What a process reaches through `/proc` (its descriptors, `/dev/stdout`) is a pipe or a
        // terminal as often as a file: the kernel judges those alone.
        if object.starts_with("/proc") || !object.is_absolute() {
            continue;
        }
        if rules.protected.iter().any(|p| object.starts_with(p)) {
            return Verdict::Refuse {
                // What the read-only mount answers, so a program sees the same error either way.
                errno: libc::EROFS,
                blocker: "fs.protected",
                path: Some(object.display().to_string()),
                address: None,
            };
        }
        if !rules.may_write(&object) {
            return Verdict::Refuse {
                // What Landlock answers outside the writable roots.
                errno: libc::EACCES,
                blocker: "fs.write",
                path: Some(object.display().to_string()),
                address: None,
            };
        }
    }
    Verdict::Continue
}
