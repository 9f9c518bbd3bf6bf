//! What runs in the forked child before `exec`: new session, parent-death signal, and a guard process.
//!
//! The child calls `setsid` (so it has no controlling terminal and leads its own session and process
//! group), arms `PR_SET_PDEATHSIG` and closes the fork/exec race by checking `getppid`. It then forks
//! once more: the grandchild goes on to `exec` the command, while the child stays behind as a tiny
//! *guard* that waits for it and exits with the same status (re-raising the same signal). The guard
//! exists so that the command's parent is not the engine: `kill -TERM $PPID` from a command reaches the
//! guard, which ignores it, instead of killing the engine. The guard leads the session, so its pid is the
//! run's session and process group id; it closes every file descriptor, so it never holds the output pipe.
//!
//! Everything here runs between `fork` and `exec` in a copy of a multi-threaded process: only
//! async-signal-safe functions are called, and nothing allocates.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::decimal::Decimal;

/// File descriptor the shell writes its status trailer to (see [`crate::spec::STATUS_FD`]).
pub(crate) use crate::spec::STATUS_FD;

/// Signals the guard ignores: everything a command might aim at `$PPID` to stop it gracefully.
const GUARD_IGNORES: [libc::c_int; 10] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGPIPE,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGTSTP,
    libc::SIGTTOU,
];

/// Body of the `pre_exec` hook (fork-based variant, kept for callers that let std exec the program).
///
/// Calls `setsid`, so the run has its own session and process group. `engine` is the engine's pid, read before the fork; `status_fd` is the
/// write end of the status pipe, moved to [`STATUS_FD`] when given.
///
/// Returns in the grandchild (which then execs); never returns in the guard.
pub(crate) fn in_child(
    engine: libc::pid_t,
    status_fd: Option<RawFd>,
    needle: &[u8],
    cgroup: &crate::cgroup_entry::CgroupHandles,
) -> io::Result<()> {
    // SAFETY: setsid, prctl, getppid, getpid, kill, dup2, fcntl and fork are async-signal-safe system
    // calls on plain integers; no memory is shared with other threads (there are none after fork).
    unsafe {
        if libc::setsid() < 0 {
            return Err(io::Error::last_os_error());
        }
        // The guard's parent-death signal is SIGCHLD, blocked (see `supervise`); the grandchild
        // unblocks it and arms SIGKILL for itself.
        block_sigchld(libc::SIG_BLOCK);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGCHLD as libc::c_ulong, 0, 0, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
        // The engine may have died between fork and prctl: then nobody would send the signal.
        if libc::getppid() != engine {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        if let Some(fd) = status_fd {
            if fd == STATUS_FD {
                // dup2 onto itself keeps close-on-exec; clear it so the shell inherits the fd.
                libc::fcntl(fd, libc::F_SETFD, 0);
            } else if libc::dup2(fd, STATUS_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        let guard = libc::getpid();
        match libc::fork() {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // The grandchild: die with the guard, then return to exec the command.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != guard {
                    libc::kill(libc::getpid(), libc::SIGKILL);
                }
                block_sigchld(libc::SIG_UNBLOCK);
                cgroup.join();
                Ok(())
            }
            command => supervise(command, engine, needle, cgroup),
        }
    }
}

/// Block or unblock (`how`) SIGCHLD in the calling thread.
///
/// # Safety
/// Async-signal-safe system calls only.
unsafe fn block_sigchld(how: libc::c_int) {
    // SAFETY: sigset operations on a local, then sigprocmask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGCHLD);
        libc::sigprocmask(how, &raw const set, std::ptr::null_mut());
    }
}

/// The guard: wait for `command`, then exit the way it did. If the engine dies first, kill the
/// command, the processes carrying the run's marker `needle` (see [`crate::marked`]) and the run's
/// process group (the guard's), then exit.
///
/// SIGCHLD is blocked and is also the guard's parent-death signal, so `sigtimedwait` wakes both when
/// the command exits and when the engine dies; the engine counts as dead once `getppid` is no longer
/// `engine` (the kernel re-parents before signalling; one engine thread's exit re-parents to another
/// thread of the same process). A SIGCHLD a command sends to `$PPID` only costs one more round.
fn supervise(
    command: libc::pid_t,
    engine: libc::pid_t,
    needle: &[u8],
    cgroup: &crate::cgroup_entry::CgroupHandles,
) -> ! {
    // SAFETY: only async-signal-safe system calls on integers and on stack locals we own.
    unsafe {
        // Hold no descriptor: the output pipe must reach EOF when the command's side closes, and the
        // parent's exec-error pipe must close so spawn() returns.
        if libc::syscall(
            libc::SYS_close_range,
            0 as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        ) != 0
        {
            for fd in 0..1024 {
                libc::close(fd);
            }
        }
        let mut ignore: libc::sigaction = std::mem::zeroed();
        ignore.sa_sigaction = libc::SIG_IGN;
        for sig in GUARD_IGNORES {
            libc::sigaction(sig, &raw const ignore, std::ptr::null_mut());
        }
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        // Default disposition, so the command's exit is reported (never auto-reaped).
        libc::sigaction(libc::SIGCHLD, &raw const default, std::ptr::null_mut());
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut chld);
        libc::sigaddset(&raw mut chld, libc::SIGCHLD);
        let mut status: libc::c_int = 0;
        loop {
            if libc::getppid() != engine {
                // The command first (it may have left the group), then escapees, then the group,
                // this guard too.
                libc::kill(command, libc::SIGKILL);
                cgroup.kill();
                crate::marked::kill_marked(needle, libc::getpid());
                libc::kill(0, libc::SIGKILL);
                libc::_exit(128 + libc::SIGKILL);
            }
            let rc = libc::waitpid(command, &raw mut status, libc::WNOHANG);
            if rc == command {
                break;
            }
            if rc < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
            // Returns once SIGCHLD is pending: the command exited or stopped, or the engine died.
            libc::sigtimedwait(&raw const chld, std::ptr::null_mut(), std::ptr::null());
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        let sig = libc::WTERMSIG(status);
        // Re-raise the command's signal on ourselves so the engine sees it; never dump a core of this
        // copy of the engine.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &raw const no_core);
        libc::sigaction(sig, &raw const default, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}

/// A program, its arguments and its complete environment, laid out as C arrays before the fork, so the
/// grandchild can `execve` without allocating. Built in the engine by [`ExecImage::new`].
pub(crate) struct ExecImage {
    path: CString,
    _argv: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp: Vec<*const libc::c_char>,
    /// Stack for the grandchild between `clone` and `execve` (it shares the guard's memory).
    stack: Vec<u8>,
    /// The run's cgroup: the `cgroup.procs` files the command joins before `execve`, and the
    /// `cgroup.kill` file a guard writes when the engine dies (see [`crate::cgroup`]).
    cgroup: crate::cgroup_entry::CgroupHandles,
}

// SAFETY: the raw pointers point into the CStrings owned by the same struct, which are never mutated;
// the struct is only read (in the forked child).
unsafe impl Send for ExecImage {}
// SAFETY: as above; shared access never writes through the pointers.
unsafe impl Sync for ExecImage {}

const GRANDCHILD_STACK: usize = 64 * 1024;

impl ExecImage {
    /// Allocate the grandchild stack used by [`in_child_exec`] (the fork-based guard); other start
    /// paths bring their own.
    pub(crate) fn reserve_stack(&mut self) {
        self.stack = vec![0; GRANDCHILD_STACK];
    }

    /// The program path, `argv` and `envp` arrays (null-terminated), valid while `self` lives.
    pub(crate) fn pointers(
        &self,
    ) -> (
        *const libc::c_char,
        *const *const libc::c_char,
        *const *const libc::c_char,
    ) {
        (self.path.as_ptr(), self.argv.as_ptr(), self.envp.as_ptr())
    }

    /// The program path and the `KEY=VALUE` entries, in order (for tests).
    #[cfg(test)]
    #[allow(clippy::used_underscore_binding)] // `_envp` is otherwise only kept alive, never read
    pub(crate) fn parts(&self) -> (String, Vec<String>) {
        let text = |c: &CString| c.to_string_lossy().into_owned();
        (text(&self.path), self._envp.iter().map(text).collect())
    }

    /// Lay out `path`, `args` (without `argv[0]`, which is `path`) and `env` (`KEY=VALUE` entries).
    pub(crate) fn new<'a>(
        path: &Path,
        args: impl IntoIterator<Item = &'a OsStr>,
        env: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
    ) -> io::Result<Self> {
        let nul = |_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "NUL byte in program, argument or environment",
            )
        };
        let path_c = CString::new(path.as_os_str().as_bytes()).map_err(nul)?;
        let mut argv_owned = vec![path_c.clone()];
        for arg in args {
            argv_owned.push(CString::new(arg.as_bytes()).map_err(nul)?);
        }
        let mut envp_owned = Vec::new();
        for (key, value) in env {
            // Sized for the NUL too, so neither the pushes nor `CString::new` reallocate.
            let mut entry = Vec::with_capacity(key.len() + value.len() + 2);
            entry.extend_from_slice(key.as_bytes());
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            envp_owned.push(CString::new(entry).map_err(nul)?);
        }
        let argv = argv_owned
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        let envp = envp_owned
            .iter()
            .map(|c| c.as_ptr())
            .chain(std::iter::once(std::ptr::null()))
            .collect();
        Ok(Self {
            path: path_c,
            _argv: argv_owned,
            argv,
            _envp: envp_owned,
            envp,
            stack: Vec::new(),
            cgroup: crate::cgroup_entry::CgroupHandles::default(),
        })
    }

    /// Have the command join `cgroup` before it execs.
    pub(crate) fn set_cgroup(&mut self, cgroup: &crate::cgroup::RunCgroup) {
        self.cgroup = crate::cgroup_entry::CgroupHandles::of(cgroup);
    }

    /// The run's cgroup files.
    pub(crate) fn cgroup(&self) -> &crate::cgroup_entry::CgroupHandles {
        &self.cgroup
    }
}

/// What the guard shares with the grandchild during `clone(CLONE_VM | CLONE_VFORK)`.
#[repr(C)]
struct GrandchildArgs {
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cgroup: *const crate::cgroup_entry::CgroupHandles,
    guard: libc::pid_t,
    /// Written by the grandchild when `execve` fails (the memory is shared until then).
    exec_errno: libc::c_int,
}

/// Body of the pipe executor's `pre_exec` hook; std has already set up stdio, the working directory
/// and the process group (`process_group(0)`). With `guarded` false, the child execs the command
/// itself after the common setup (no guard; the command's parent is the engine).
///
/// Drops the controlling terminal (so `/dev/tty` fails at once), arms the parent-death signal, moves
/// the status pipe to [`STATUS_FD`], then starts the command as a grandchild with
/// `clone(CLONE_VM | CLONE_VFORK)` + `execve` (no second copy of the engine's page tables) and stays
/// behind as the guard. Returns only on failure (the error reaches `spawn`).
///
/// A new process group rather than a new session: `setsid` would also give every run its own
/// scheduler autogroup, which costs milliseconds per command on a busy machine.
pub(crate) fn in_child_exec(
    image: &mut ExecImage,
    engine: libc::pid_t,
    status_fd: Option<RawFd>,
    guarded: bool,
    needle: &[u8],
) -> io::Result<()> {
    if guarded && image.stack.is_empty() {
        return Err(io::Error::other("no stack reserved for the command"));
    }
    // SAFETY: only async-signal-safe system calls; every pointer passed points into `image` or to
    // locals of this frame, which outlive the calls; nothing allocates.
    unsafe {
        drop_controlling_terminal();
        // A guard's parent-death signal is SIGCHLD, blocked (see `supervise`): block every signal
        // first (SIGKILL still works); the grandchild restores a clean state and arms SIGKILL.
        let pdeath = if guarded {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&raw mut all);
            libc::sigprocmask(libc::SIG_SETMASK, &raw const all, std::ptr::null_mut());
            libc::SIGCHLD
        } else {
            libc::SIGKILL
        };
        if libc::prctl(libc::PR_SET_PDEATHSIG, pdeath as libc::c_ulong, 0, 0, 0) < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::getppid() != engine {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        if let Some(fd) = status_fd {
            if fd == STATUS_FD {
                libc::fcntl(fd, libc::F_SETFD, 0);
            } else if libc::dup2(fd, STATUS_FD) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if !guarded {
            // No guard: this process becomes the command (its parent is the engine).
            image.cgroup.join();
            libc::execve(image.path.as_ptr(), image.argv.as_ptr(), image.envp.as_ptr());
            return Err(io::Error::last_os_error());
        }
        // Close every other descriptor now — among them std's exec-error pipe — so `spawn` returns in
        // the engine while the command is still being started, instead of after one more wake-up of
        // this process. Exec failures are therefore reported as exit status 126/127 with a message on
        // the output (the engine checks the program before spawning, so they are rare).
        let keep = if status_fd.is_some() { STATUS_FD } else { 2 };
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            (keep - 1).max(2) as libc::c_uint,
            0 as libc::c_uint,
        );
        libc::syscall(
            libc::SYS_close_range,
            (keep + 1) as libc::c_uint,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        );
        let mut args = GrandchildArgs {
            path: image.path.as_ptr(),
            argv: image.argv.as_ptr(),
            envp: image.envp.as_ptr(),
            cgroup: &raw const image.cgroup,
            guard: libc::getpid(),
            exec_errno: 0,
        };
        let bottom = image.stack.as_mut_ptr();
        let top = bottom.add(image.stack.len());
        let top = top.sub(top as usize % 16);
        let command = image
            .cgroup
            .clone_vfork(grandchild, bottom, top, (&raw mut args).cast());
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        // CLONE_VFORK: we resume once the grandchild has exec'd or exited.
        let exec_errno = std::ptr::read_volatile(&raw const args.exec_errno);
        if exec_errno != 0 {
            let mut status = 0;
            libc::waitpid(command, &raw mut status, 0);
            report_exec_failure(image, exec_errno);
            libc::_exit(if exec_errno == libc::ENOENT { 127 } else { 126 });
        }
        supervise(command, engine, needle, &image.cgroup)
    }
}

/// Write `<program>: cannot execute (errno N)` to the command's stderr, without allocating.
///
/// # Safety
/// Async-signal-safe system calls only.
unsafe fn report_exec_failure(image: &ExecImage, errno: libc::c_int) {
    write_exec_failure(image.path.as_bytes(), errno, |part| {
        // SAFETY: writes from a live slice to fd 2.
        unsafe {
            libc::write(2, part.as_ptr().cast(), part.len());
        }
    });
}

/// Hand `<path>: cannot execute (errno N)\n` to `write` in pieces, without allocating (for code that
/// runs between `fork`/`clone` and `exec`).
pub(crate) fn write_exec_failure(path: &[u8], errno: i32, mut write: impl FnMut(&[u8])) {
    let errno = Decimal::new(errno.unsigned_abs());
    for part in [path, b": cannot execute (errno ", errno.as_bytes(), b")\n"] {
        write(part);
    }
}

/// Give up the controlling terminal, if any, without leaving the engine's session.
///
/// # Safety
/// Async-signal-safe system calls only.
unsafe fn drop_controlling_terminal() {
    // SAFETY: open/ioctl/close on a descriptor we own.
    unsafe {
        let fd = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if fd >= 0 {
            libc::ioctl(fd, libc::TIOCNOTTY);
            libc::close(fd);
        }
    }
}

/// The grandchild: parent-death signal, default signal handlers, empty mask, `execve`.
extern "C" fn grandchild(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the guard's `GrandchildArgs`, alive while the guard is suspended
    // (CLONE_VFORK); only async-signal-safe system calls follow.
    unsafe {
        let args = arg.cast::<GrandchildArgs>();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != (*args).guard {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        // Handlers inherited from the engine point into its code; reset them (ignored signals stay
        // ignored, as across any exec).
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for sig in 1..65 {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                libc::sigaction(sig, &raw const default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
        (*(*args).cgroup).join();
        libc::execve((*args).path, (*args).argv, (*args).envp);
        std::ptr::write_volatile(&raw mut (*args).exec_errno, *libc::__errno_location());
        libc::_exit(127)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_and_exec_failure_messages() {
        assert_eq!(Decimal::new(0).as_bytes(), b"0");
        assert_eq!(Decimal::new(4_294_967_295).as_bytes(), b"4294967295");
        let mut text = Vec::new();
        write_exec_failure(b"/bin/x", libc::ENOENT, |part| text.extend_from_slice(part));
        assert_eq!(text, b"/bin/x: cannot execute (errno 2)\n");
    }
}
