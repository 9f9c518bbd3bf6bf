//! The guard process without copying the engine: `clone(CLONE_VM)` (x86-64 and aarch64).
//!
//! The guard shares the engine's memory the way a thread would, but is a separate process (own pid,
//! process group, descriptor table and signal dispositions). It runs only on its own stack, inside
//! one heap block the engine keeps alive until the guard is reaped, with every signal blocked, and
//! makes only raw system calls (inline `syscall`/`svc`), so it never touches the C library's
//! per-thread state (`errno`) that it shares with the engine thread that created it. It starts the
//! command with `clone(CLONE_VM | CLONE_VFORK)` + `execve`, then waits for it and exits the same way.
//! Its parent-death signal is SIGCHLD, kept blocked and collected with `rt_sigtimedwait` alongside
//! the command's exit: if the engine dies, the guard SIGKILLs the command and the run's process group.
//!
//! Compared with forking a guard, this saves copying the engine's page tables on every command (a
//! cost that grows with the engine's memory).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use crate::chunks::{CHUNK, Chunk};
use crate::direct::{ChildFds, DirectChild};
use crate::guard::{ExecImage, STATUS_FD};
use crate::guard_block::{GuardBlock, NOT_STARTED, STARTED, STARTING};
use crate::rawsys as sys;

const STACK: usize = CHUNK;

/// Whether this architecture has the raw system-call shims (elsewhere the fork-based guard is used).
pub(crate) const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Start the guard, which starts `image`. The returned child is the guard; it owns the block.
pub(crate) fn spawn(
    image: ExecImage,
    cwd: &Path,
    fds: &ChildFds,
    needle: Box<[u8]>,
) -> io::Result<DirectChild> {
    let block = new_block(image, cwd, fds, needle)?;
    // SAFETY: the guard runs on `guard_stack` inside the block, which outlives it (the DirectChild
    // keeps it until the guard is reaped); every signal is blocked around clone so the guard starts
    // with all of them blocked; this thread's mask is restored afterwards.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&raw mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const all, &raw mut old);
        // The stacks are separate heap blocks only the guard and the command touch; the block's own
        // fields that they write are read here only with volatile loads.
        let stack = block.guard_stack.as_ptr().cast_mut().add(STACK);
        let stack = stack.sub(stack as usize % 16);
        let arg = Arc::as_ptr(&block).cast_mut();
        let pid = libc::clone(
            guard_main,
            stack.cast(),
            libc::CLONE_VM | libc::SIGCHLD,
            arg.cast(),
        );
        let error = io::Error::last_os_error();
        libc::pthread_sigmask(libc::SIG_SETMASK, &raw const old, std::ptr::null_mut());
        if pid < 0 {
            return Err(error);
        }
        pid
    };
    crate::direct::adopt(pid, Some(block))
}

/// The block for a guard that will start `image` in `cwd` with `fds`.
fn new_block(image: ExecImage, cwd: &Path, fds: &ChildFds, needle: Box<[u8]>) -> io::Result<Arc<GuardBlock>> {
    let cwd = CString::new(cwd.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in working directory"))?;
    let (path, argv, envp) = image.pointers();
    Ok(Arc::new(GuardBlock {
        path,
        argv,
        envp,
        cwd: cwd.as_ptr(),
        fds: [fds.stdin, fds.stdout, fds.stderr, fds.status.unwrap_or(-1)],
        engine: std::process::id() as i32,
        guard: 0,
        needle: needle.as_ptr(),
        needle_len: needle.len(),
        exec_errno: 0,
        command_pid: 0,
        command_status: 0,
        status_set: 0,
        start_state: NOT_STARTED,
        guard_stack: Chunk::take(),
        command_stack: Chunk::take(),
        image,
        _cwd: cwd,
        _needle: needle,
    }))
}

/// Common setup, then the command, then the wait. Runs in the guard (shared memory, raw calls only).
extern "C" fn guard_main(arg: *mut libc::c_void) -> libc::c_int {
    use sys::c;
    let block = arg.cast::<GuardBlock>();
    // SAFETY: `block` is alive for the guard's whole life; fields are read/written with volatile
    // accesses where the engine or the command also touches them.
    unsafe {
        let me = c(libc::SYS_getpid, &[]) as i32;
        std::ptr::write_volatile(&raw mut (*block).guard, me);
        c(libc::SYS_setpgid, &[0, 0]);
        let tty = c(
            libc::SYS_openat,
            &[
                libc::AT_FDCWD as usize,
                c"/dev/tty".as_ptr() as usize,
                (libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) as usize,
            ],
        );
        if tty >= 0 {
            c(libc::SYS_ioctl, &[tty as usize, libc::TIOCNOTTY as usize]);
            c(libc::SYS_close, &[tty as usize]);
        }
        // The engine's death arrives as SIGCHLD (blocked, like every signal here), so the guard can
        // take the run's process group down with it; see `wait_command`. Default disposition, so
        // the command's exit is reported (never auto-reaped) whatever the engine installed.
        let default = sys::KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        c(
            libc::SYS_rt_sigaction,
            &[libc::SIGCHLD as usize, (&raw const default) as usize, 0, 8],
        );
        c(
            libc::SYS_prctl,
            &[libc::PR_SET_PDEATHSIG as usize, libc::SIGCHLD as usize],
        );
        if c(libc::SYS_getppid, &[]) as i32 != (*block).engine {
            c(libc::SYS_kill, &[me as usize, libc::SIGKILL as usize]);
        }
        let targets = [0, 1, 2, STATUS_FD];
        let fds = (*block).fds;
        for (source, target) in fds.iter().zip(targets) {
            if *source < 0 {
                continue;
            }
            if *source == target {
                c(libc::SYS_fcntl, &[target as usize, libc::F_SETFD as usize, 0]);
            } else {
                c(libc::SYS_dup3, &[*source as usize, target as usize, 0]);
            }
        }
        let keep = if fds[3] >= 0 { STATUS_FD } else { 2 };
        if keep > 3 {
            c(libc::SYS_close_range, &[3, (keep - 1) as usize, 0]);
        }
        c(
            libc::SYS_close_range,
            &[(keep + 1) as usize, u32::MAX as usize, 0],
        );
        let rc = c(libc::SYS_chdir, &[(*block).cwd as usize]);
        if rc < 0 {
            finish_failed(block, (-rc) as i32);
        }
        let bottom = (*block).command_stack.as_ptr().cast_mut();
        let top = bottom.add(STACK);
        let top = top.sub(top as usize % 16);
        std::ptr::write_volatile(&raw mut (*block).start_state, STARTING);
        // The command starts inside the run's cgroup (or glibc's clone wrapper switches stacks for
        // it; that only touches errno if the system call fails, which — with every resource
        // already in place — means the process limit was hit).
        let command = (*block)
            .image
            .cgroup()
            .clone_vfork(command_main, bottom, top, arg);
        std::ptr::write_volatile(&raw mut (*block).start_state, STARTED);
        let exec_errno = std::ptr::read_volatile(&raw const (*block).exec_errno);
        if command < 0 || exec_errno != 0 {
            if command > 0 {
                c(libc::SYS_wait4, &[command as usize, 0, 0, 0]);
            }
            finish_failed(block, if command < 0 { libc::EAGAIN } else { exec_errno });
        }
        // Hold no descriptor, so the output pipe reaches EOF when the command's side closes.
        c(libc::SYS_close_range, &[0, u32::MAX as usize, 0]);
        std::ptr::write_volatile(&raw mut (*block).command_pid, command);
        let needle = std::slice::from_raw_parts((*block).needle, (*block).needle_len);
        let status = wait_command(command, (*block).engine, needle, (*block).image.cgroup());
        std::ptr::write_volatile(&raw mut (*block).command_status, status);
        std::ptr::write_volatile(&raw mut (*block).status_set, 1);
        if libc::WIFEXITED(status) {
            sys::exit(libc::WEXITSTATUS(status));
        }
        let sig = libc::WTERMSIG(status);
        // Re-raise the command's signal so the engine sees it; no core of this process.
        let no_core = [0u64; 2];
        c(
            libc::SYS_prlimit64,
            &[0, libc::RLIMIT_CORE as usize, (&raw const no_core) as usize, 0],
        );
        let default = sys::KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        c(
            libc::SYS_rt_sigaction,
            &[sig as usize, (&raw const default) as usize, 0, 8],
        );
        let unblock: u64 = 1 << (sig - 1);
        c(
            libc::SYS_rt_sigprocmask,
            &[libc::SIG_UNBLOCK as usize, (&raw const unblock) as usize, 0, 8],
        );
        c(libc::SYS_kill, &[me as usize, sig as usize]);
        sys::exit(128 + sig)
    }
}

/// Wait for `command` to exit and return its wait status; if the engine dies first, kill the
/// command, the run's process group (this guard's) and every process carrying the run's marker
/// `needle` (escapees that left the group), and exit.
///
/// Every signal is blocked here. SIGCHLD, the guard's parent-death signal, wakes `rt_sigtimedwait`
/// both when the command exits and when the engine does; a SIGCHLD a command sends to `$PPID`
/// only costs one more round of checks. The engine counts as dead once `getppid` is no longer its
/// pid (the kernel re-parents the guard before sending the signal; the exit of one engine thread
/// re-parents to another thread of the same process, which is not a death).
fn wait_command(
    command: i32,
    engine: i32,
    needle: &[u8],
    cgroup: &crate::cgroup_entry::CgroupHandles,
) -> i32 {
    use sys::c;
    let chld: u64 = 1 << (libc::SIGCHLD - 1);
    let mut status: i32 = 0;
    loop {
        if c(libc::SYS_getppid, &[]) as i32 != engine {
            // The command first (it may have left the group), then the escapees, then the whole
            // group, this guard too.
            c(libc::SYS_kill, &[command as usize, libc::SIGKILL as usize]);
            cgroup.kill();
            crate::marked::kill_marked(needle, c(libc::SYS_getpid, &[]) as i32);
            c(libc::SYS_kill, &[0, libc::SIGKILL as usize]);
            sys::exit(128 + libc::SIGKILL);
        }
        let rc = c(
            libc::SYS_wait4,
            &[
                command as usize,
                (&raw mut status) as usize,
                libc::WNOHANG as usize,
                0,
            ],
        );
        if rc == command as isize {
            return status;
        }
        if rc < 0 && rc != -(libc::EINTR as isize) {
            sys::exit(127);
        }
        // Returns once SIGCHLD is pending (also if it already was): the command exited or stopped,
        // or the engine died.
        c(libc::SYS_rt_sigtimedwait, &[(&raw const chld) as usize, 0, 0, 8]);
    }
}

/// Report a start failure on the command's stderr (fd 2 is the output pipe by now) and exit.
///
/// # Safety
/// `block` must be the guard's block.
unsafe fn finish_failed(block: *mut GuardBlock, errno: i32) -> ! {
    // SAFETY: the path is a NUL-terminated string the block owns.
    let path = unsafe { std::ffi::CStr::from_ptr((*block).path) }.to_bytes();
    crate::guard::write_exec_failure(path, errno, |part| {
        sys::c(libc::SYS_write, &[2, part.as_ptr() as usize, part.len()]);
    });
    sys::exit(if errno == libc::ENOENT { 127 } else { 126 })
}

/// The command between clone and exec (shared memory, the guard suspended; raw calls only).
extern "C" fn command_main(arg: *mut libc::c_void) -> libc::c_int {
    use sys::c;
    let block = arg.cast::<GuardBlock>();
    // SAFETY: as in `guard_main`; the guard is suspended until we exec or exit.
    unsafe {
        c(
            libc::SYS_prctl,
            &[libc::PR_SET_PDEATHSIG as usize, libc::SIGKILL as usize],
        );
        if c(libc::SYS_getppid, &[]) as i32 != std::ptr::read_volatile(&raw const (*block).guard) {
            let me = c(libc::SYS_getpid, &[]);
            c(libc::SYS_kill, &[me as usize, libc::SIGKILL as usize]);
        }
        // Handlers inherited from the engine point into its code: reset them; SIGPIPE too (the
        // engine ignores it, a command starts with the default). Other ignored signals stay ignored.
        let default = sys::KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        for sig in 1..65usize {
            if sig == libc::SIGKILL as usize || sig == libc::SIGSTOP as usize {
                continue;
            }
            let mut old = sys::KernelSigaction {
                handler: 0,
                flags: 0,
                restorer: 0,
                mask: 0,
            };
            if c(libc::SYS_rt_sigaction, &[sig, 0, (&raw mut old) as usize, 8]) == 0
                && old.handler != 0
                && (old.handler != 1 || sig == libc::SIGPIPE as usize)
            {
                c(
                    libc::SYS_rt_sigaction,
                    &[sig, (&raw const default) as usize, 0, 8],
                );
            }
        }
        let none: u64 = 0;
        c(
            libc::SYS_rt_sigprocmask,
            &[libc::SIG_SETMASK as usize, (&raw const none) as usize, 0, 8],
        );
        (*block).image.cgroup().join();
        let rc = c(
            libc::SYS_execve,
            &[
                (*block).path as usize,
                (*block).argv as usize,
                (*block).envp as usize,
            ],
        );
        std::ptr::write_volatile(&raw mut (*block).exec_errno, (-rc) as i32);
        sys::exit(127)
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;

    fn block() -> Arc<GuardBlock> {
        let image = ExecImage::new(Path::new("/bin/true"), [], [(OsStr::new("A"), OsStr::new("1"))]).unwrap();
        let fds = ChildFds {
            stdin: -1,
            stdout: -1,
            stderr: -1,
            status: None,
        };
        new_block(image, Path::new("/"), &fds, Box::new(*b"needle")).unwrap()
    }

    #[test]
    fn a_block_is_freed_once_its_guard_is_reaped_unless_the_guard_died_inside_its_clone() {
        for (state, kept) in [(NOT_STARTED, false), (STARTED, false), (STARTING, true)] {
            let mut block = block();
            Arc::get_mut(&mut block).unwrap().start_state = state;
            let watch = Arc::downgrade(&block);
            GuardBlock::release_reaped(Some(block));
            assert_eq!(watch.upgrade().is_some(), kept, "start state {state}");
        }
    }
}
