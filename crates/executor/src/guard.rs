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

use std::io;
use std::os::fd::RawFd;

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

/// Body of the `pre_exec` hook. `engine` is the engine's pid, read before the fork; `status_fd` is the
/// write end of the status pipe, moved to [`STATUS_FD`] when given.
///
/// Returns in the grandchild (which then execs); never returns in the guard.
pub(crate) fn in_child(engine: libc::pid_t, status_fd: Option<RawFd>) -> io::Result<()> {
    // SAFETY: setsid, prctl, getppid, getpid, kill, dup2, fcntl and fork are async-signal-safe system
    // calls on plain integers; no memory is shared with other threads (there are none after fork).
    unsafe {
        if libc::setsid() < 0 {
            return Err(io::Error::last_os_error());
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
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
                Ok(())
            }
            command => supervise(command),
        }
    }
}

/// The guard: wait for `command`, then exit the way it did.
fn supervise(command: libc::pid_t) -> ! {
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
        let mut status: libc::c_int = 0;
        loop {
            let rc = libc::waitpid(command, &raw mut status, 0);
            if rc == command {
                break;
            }
            if rc < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
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
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &raw const default, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig)
    }
}
