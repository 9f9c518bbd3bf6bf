//! Spawning without copying the engine: `clone(CLONE_VM | CLONE_VFORK)` + `execve`, as `posix_spawn`
//! does, plus the setup `posix_spawn` cannot do (parent-death signal, dropping the controlling
//! terminal). Used for unguarded pipe runs ([`crate::PipeExecutor::guard`] = false).
//!
//! The child shares the engine's memory until it execs, while the calling thread is suspended; so it
//! only makes async-signal-safe system calls on data laid out beforehand, with every signal blocked
//! until its handlers are reset. The child is then followed through a pidfd and reaped by pid here
//! (tokio does not know it).

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;

use std::sync::Arc;

use tokio::io::unix::AsyncFd;

use crate::chunks::Chunk;
use crate::guard::{ExecImage, STATUS_FD};
use crate::guard_block::{CommandExit, GuardBlock};

/// Descriptors the child gets as 0, 1, 2 and, optionally, [`STATUS_FD`].
pub(crate) struct ChildFds {
    pub(crate) stdin: RawFd,
    pub(crate) stdout: RawFd,
    pub(crate) stderr: RawFd,
    pub(crate) status: Option<RawFd>,
}

#[repr(C)]
struct ChildArgs {
    cgroup: *const crate::cgroup_entry::CgroupHandles,
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: *const libc::c_char,
    fds: [RawFd; 4],
    engine: libc::pid_t,
    /// Set by the child when a step fails (shared memory until exec).
    errno: libc::c_int,
}

/// How long [`DirectChild::reap_later`] lets a guard finish by itself.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// How many times, [`ORPHAN_RETRY`] apart, an orphaned command is looked at before it is given up.
const ORPHAN_LOOKS: u32 = 40;
const ORPHAN_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// Reap `command`, a guard's command left as a zombie when the guard (`guard`, its process group) died
/// before reaping it: only if it is the engine's zombie in that group, so no other child is ever
/// reaped. It may still be on its way out: it is looked at again for up to two seconds (blocking).
fn reap_orphaned_command(command: libc::pid_t, guard: libc::pid_t) {
    for _ in 0..ORPHAN_LOOKS {
        let Some(info) = crate::tree::read_proc(command as u32) else {
            return;
        };
        if info.ppid != std::process::id() || info.pgid != guard as u32 {
            return;
        }
        if info.is_zombie() {
            let mut status = 0;
            // SAFETY: reaping a zombie child of ours that belongs to this run.
            unsafe { libc::waitpid(command, &raw mut status, libc::WNOHANG) };
            return;
        }
        std::thread::sleep(ORPHAN_RETRY);
    }
}

/// The command a guard started but did not report reaping, if any: it is left to the engine once the
/// guard is gone (killed with its group at the end of a run, or stopped and killed here).
fn unreaped_command(block: Option<&GuardBlock>, known: Option<libc::pid_t>) -> Option<libc::pid_t> {
    let block = block?;
    if block.reported_status().is_some() {
        return None;
    }
    known.or_else(|| block.command_pid())
}

/// First re-check of a child whose pidfd woke before it could be reaped (see [`DirectChild::wait`]).
const MISSED_EXIT_FIRST_RETRY: std::time::Duration = std::time::Duration::from_micros(100);
/// Longest interval between such re-checks.
const MISSED_EXIT_MAX_RETRY: std::time::Duration = std::time::Duration::from_millis(50);

/// A child started by [`spawn`]: its pid and a pidfd that becomes readable when it exits.
pub(crate) struct DirectChild {
    pid: libc::pid_t,
    pidfd: AsyncFd<OwnedFd>,
    reaped: bool,
    /// Memory the child shares with the engine (a guard started by `vmguard`); freed once reaped.
    keep: Option<Arc<GuardBlock>>,
}

/// Start `image` in `cwd` with `fds`, in a new process group, without a controlling terminal, with
/// `PR_SET_PDEATHSIG(SIGKILL)`. Needs a tokio runtime (for the pidfd).
pub(crate) fn spawn(image: &ExecImage, cwd: &Path, fds: &ChildFds) -> io::Result<DirectChild> {
    let cwd = CString::new(cwd.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in working directory"))?;
    let (path, argv, envp) = image.pointers();
    let mut args = ChildArgs {
        cgroup: image.cgroup(),
        path,
        argv,
        envp,
        cwd: cwd.as_ptr(),
        fds: [fds.stdin, fds.stdout, fds.stderr, fds.status.unwrap_or(-1)],
        engine: std::process::id() as libc::pid_t,
        errno: 0,
    };
    let mut stack = Chunk::take();
    // SAFETY: the stack and `args` outlive the child's use of them (CLONE_VFORK suspends this thread
    // until the child execs or exits); the signal mask of this thread is restored right after.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&raw mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const all, &raw mut old);
        let bottom = stack.as_mut_ptr();
        let top = bottom.add(stack.len());
        let top = top.sub(top as usize % 16);
        let pid = image
            .cgroup()
            .clone_vfork(child_main, bottom, top, (&raw mut args).cast());
        let clone_error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const old, std::ptr::null_mut());
        if pid < 0 {
            return Err(clone_error);
        }
        pid
    };
    drop(stack);
    // SAFETY: read after the child has exec'd or exited; volatile because the child wrote it.
    let errno = unsafe { std::ptr::read_volatile(&raw const args.errno) };
    if errno != 0 {
        let mut status = 0;
        // SAFETY: reaping our own, already exited child.
        unsafe { libc::waitpid(pid, &raw mut status, 0) };
        return Err(io::Error::from_raw_os_error(errno));
    }
    adopt(pid, None)
}

/// Follow our child `pid` through a pidfd; `keep` is let go of only after it is reaped (see
/// [`GuardBlock::release_reaped`]). On failure the child is killed and reaped.
pub(crate) fn adopt(pid: libc::pid_t, keep: Option<Arc<GuardBlock>>) -> io::Result<DirectChild> {
    let fail = |e: io::Error| {
        // SAFETY: killing and reaping our own child; `keep` outlives it.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            let mut status = 0;
            libc::waitpid(pid, &raw mut status, 0);
        }
        e
    };
    // SAFETY: pidfd_open takes a pid and flags; the returned descriptor is ours.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if raw < 0 {
        let e = fail(io::Error::last_os_error());
        GuardBlock::release_reaped(keep);
        return Err(e);
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(raw as RawFd) };
    // SAFETY: `owned` is an open pidfd that the AsyncFd owns for its whole life.
    let registered = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) };
    match registered {
        Ok(pidfd) => Ok(DirectChild {
            pid,
            pidfd,
            reaped: false,
            keep,
        }),
        Err(e) => {
            let e = fail(io::Error::other(e.to_string()));
            GuardBlock::release_reaped(keep);
            Err(e)
        }
    }
}

impl DirectChild {
    /// Process id.
    pub(crate) fn id(&self) -> u32 {
        self.pid as u32
    }

    /// For a guard: a watcher that learns the command's exit before the guard exits.
    pub(crate) fn command_watch(&self) -> Option<CommandWatch> {
        self.keep.clone().map(|block| CommandWatch { block })
    }

    /// Reap the child later on a runtime task (it is exiting or was killed), instead of waiting now.
    ///
    /// A guard that has not exited within [`EXIT_GRACE`] will not (its command stopped it with
    /// `kill -STOP $PPID` before it could reap the command): it is killed. A guard that died before
    /// reaping its command (killed here, or with its group at the end of the run) leaves the command's
    /// zombie to the engine, and that is reaped too.
    pub(crate) fn reap_later(mut self) {
        if self.reaped {
            return;
        }
        tokio::spawn(async move {
            let block = self.keep.clone();
            // Known while the guard lives (its children list), even before it wrote the pid.
            let command = block.as_deref().and_then(GuardBlock::command_pid);
            if tokio::time::timeout(EXIT_GRACE, self.wait()).await.is_err() {
                // SAFETY: signalling our own unreaped child (its pid cannot have been reused).
                unsafe { libc::kill(self.pid, libc::SIGKILL) };
                let _ = self.wait().await;
            }
            if let Some(command) = unreaped_command(block.as_deref(), command) {
                let guard = self.pid;
                drop(tokio::task::spawn_blocking(move || {
                    reap_orphaned_command(command, guard);
                }));
            }
        });
    }

    /// Wait for the child to exit and reap it. Cancel-safe.
    ///
    /// The kernel wakes pidfd pollers while the exiting child is still becoming a zombie, so a
    /// `waitpid` right after the wake-up can find nothing to reap, and no second wake-up follows.
    /// After such a miss the child is polled again with a short, growing back-off until it is reaped.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        let mut backoff: Option<std::time::Duration> = None;
        loop {
            match backoff {
                None => self.pidfd.readable().await?.clear_ready(),
                Some(delay) => {
                    tokio::select! {
                        ready = self.pidfd.readable() => ready?.clear_ready(),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
            }
            let mut status = 0;
            // SAFETY: our own child, reaped only here (the pidfd keeps its pid from being reused).
            let rc = unsafe { libc::waitpid(self.pid, &raw mut status, libc::WNOHANG) };
            if rc == self.pid {
                self.reaped = true;
                GuardBlock::release_reaped(self.keep.take());
                return Ok(ExitStatus::from_raw(status));
            }
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
            backoff = Some(backoff.map_or(MISSED_EXIT_FIRST_RETRY, |d| (d * 2).min(MISSED_EXIT_MAX_RETRY)));
        }
    }
}

impl Drop for DirectChild {
    fn drop(&mut self) {
        if self.reaped {
            return;
        }
        let pid = self.pid;
        // Freed by the reaper thread after the child is gone; leaked if that thread cannot start
        // (the child may still run on this memory until it is reaped).
        let keep = self.keep.take();
        let leak = keep.clone();
        // Known while the guard lives (its children list), even before it wrote the pid.
        let command = keep.as_deref().and_then(GuardBlock::command_pid);
        // SAFETY: signalling our own unreaped child (its pid cannot have been reused).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        // Reap it off the async threads; SIGKILL makes this quick unless it is stuck in the kernel.
        let spawned = std::thread::Builder::new()
            .name("shellgate-reap".into())
            .spawn(move || {
                let mut status = 0;
                // SAFETY: reaping our own child.
                unsafe { libc::waitpid(pid, &raw mut status, 0) };
                if let Some(command) = unreaped_command(keep.as_deref(), command) {
                    reap_orphaned_command(command, pid);
                }
                GuardBlock::release_reaped(keep);
            });
        match spawned {
            Ok(_) => drop(leak),
            Err(_) => std::mem::forget(leak),
        }
    }
}

/// Learns a guard's command's exit status through a pidfd on the command, so the engine need not
/// wait for the guard to be scheduled and exit first.
pub(crate) struct CommandWatch {
    block: Arc<GuardBlock>,
}

impl CommandWatch {
    /// Resolves with the command's wait status once it has exited. Cancel-safe.
    pub(crate) async fn exited(&self) -> ExitStatus {
        // Asked after EOF or once the run is under way, so the command exists (or existed): look until
        // its pid is known.
        let mut delay = MISSED_EXIT_FIRST_RETRY;
        let pid = loop {
            if let Some(status) = self.block.reported_status() {
                return ExitStatus::from_raw(status);
            }
            if let Some(pid) = self.block.command_pid() {
                break pid;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MISSED_EXIT_MAX_RETRY);
        };
        if let CommandExit::Exited(status) = self.block.command_exit(pid) {
            return ExitStatus::from_raw(status);
        }
        // SAFETY: pidfd_open takes a pid and flags; the returned descriptor is ours.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if raw >= 0 {
            // SAFETY: fresh descriptor, owned here.
            let owned = unsafe { OwnedFd::from_raw_fd(raw as RawFd) };
            // SAFETY: the AsyncFd owns the open pidfd for its whole life.
            if let Ok(fd) = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
                && let Ok(ready) = fd.readable().await
            {
                drop(ready);
            }
        }
        // Exited (or already reaped by the guard, which publishes the status right after: then only
        // the published status is looked at again, not `/proc`).
        let mut reaped = false;
        for _ in 0..1000 {
            if reaped {
                if let Some(status) = self.block.reported_status() {
                    return ExitStatus::from_raw(status);
                }
            } else {
                match self.block.command_exit(pid) {
                    CommandExit::Exited(status) => return ExitStatus::from_raw(status),
                    CommandExit::Reaped => reaped = true,
                    CommandExit::Running => {}
                }
            }
            tokio::task::yield_now().await;
        }
        std::future::pending().await
    }
}

/// The child, between clone and exec.
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points to the parent's `ChildArgs`, alive while the parent is suspended; only
    // async-signal-safe system calls follow.
    unsafe {
        let args = arg.cast::<ChildArgs>();
        let fail = |args: *mut ChildArgs| -> libc::c_int {
            std::ptr::write_volatile(&raw mut (*args).errno, *libc::__errno_location());
            libc::_exit(127)
        };
        if libc::setpgid(0, 0) < 0 {
            return fail(args);
        }
        let tty = libc::open(
            c"/dev/tty".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        if tty >= 0 {
            libc::ioctl(tty, libc::TIOCNOTTY);
            libc::close(tty);
        }
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) < 0 {
            return fail(args);
        }
        if libc::getppid() != (*args).engine {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        let targets = [0, 1, 2, STATUS_FD];
        for (source, target) in (*args).fds.iter().zip(targets) {
            if *source < 0 {
                continue;
            }
            let rc = if *source == target {
                libc::fcntl(*source, libc::F_SETFD, 0)
            } else {
                libc::dup2(*source, target)
            };
            if rc < 0 {
                return fail(args);
            }
        }
        if libc::chdir((*args).cwd) < 0 {
            return fail(args);
        }
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        for sig in 1..65 {
            let mut old: libc::sigaction = std::mem::zeroed();
            // SIGPIPE too: std ignores it in the engine, a command must start with the default.
            if libc::sigaction(sig, std::ptr::null(), &raw mut old) == 0
                && (old.sa_sigaction != libc::SIG_DFL
                    && (old.sa_sigaction != libc::SIG_IGN || sig == libc::SIGPIPE))
            {
                libc::sigaction(sig, &raw const default, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
        (*(*args).cgroup).join();
        libc::execve((*args).path, (*args).argv, (*args).envp);
        fail(args)
    }
}
