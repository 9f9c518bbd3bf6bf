//! How a new process of a run enters the run's cgroup ([`crate::cgroup::RunCgroup`]) and how a
//! guard stops it, with raw system calls only: this runs between `clone` and `exec`, in memory shared
//! with the engine.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::cgroup::RunCgroup;

/// A run's cgroup files, laid out before a fork: what a new process of the run needs to enter it
/// and what a guard needs to stop it, all usable with raw system calls only.
///
/// The command is created inside the run's v2 cgroup where it can be (`clone3` with
/// `CLONE_INTO_CGROUP`, [`CgroupHandles::clone_vfork`]): a process that *moves* between cgroups
/// takes the kernel's cgroup-wide write lock, which waits for an RCU grace period (≈10 ms on an idle
/// machine, ≈0.3 ms between back-to-back runs); one created inside does not. Its v1 cgroups
/// (limits) are still joined by moving.
#[derive(Default)]
pub(crate) struct CgroupHandles {
    /// The run's v2 directory and its `cgroup.procs`.
    unified: Option<(CString, CString)>,
    /// `cgroup.procs` of its v1 directories.
    v1_procs: Vec<CString>,
    kill: Option<CString>,
    /// Set while the command is created inside the v2 cgroup: then it need not move there.
    created_inside: AtomicBool,
}

impl CgroupHandles {
    pub(crate) fn of(cgroup: &RunCgroup) -> Self {
        let c = |path: &Path| CString::new(path.as_os_str().as_bytes()).ok();
        Self {
            unified: cgroup
                .unified
                .as_ref()
                .and_then(|dir| Some((c(dir)?, c(&dir.join("cgroup.procs"))?))),
            v1_procs: cgroup
                .v1()
                .filter_map(|dir| c(&dir.join("cgroup.procs")))
                .collect(),
            kill: cgroup
                .unified
                .as_ref()
                .and_then(|dir| c(&dir.join("cgroup.kill"))),
            created_inside: AtomicBool::new(false),
        }
    }

    /// Move the calling process into the run's cgroups it is not already in (raw system calls).
    pub(crate) fn join(&self) {
        if let Some((_, procs)) = &self.unified
            && !self.created_inside.load(Ordering::SeqCst)
        {
            join_raw(procs);
        }
        for procs in &self.v1_procs {
            join_raw(procs);
        }
    }

    /// Kill everything in the run's cgroup (raw system calls), when there is one.
    pub(crate) fn kill(&self) {
        if let Some(file) = &self.kill {
            kill_raw(file.as_ptr());
        }
    }

    /// `clone(CLONE_VM | CLONE_VFORK | SIGCHLD)` running `child(arg)` on the stack
    /// `stack..stack_top` (its top 16-byte aligned), created inside the run's v2 cgroup where the
    /// kernel allows. Like `libc::clone`: the child's pid, or -1 with `errno` set.
    ///
    /// # Safety
    /// As for `libc::clone` with these flags: `child` must only exec or exit, the stack must be
    /// valid and unused, and `arg` must stay valid until the child has exec'd or exited.
    pub(crate) unsafe fn clone_vfork(
        &self,
        child: extern "C" fn(*mut libc::c_void) -> libc::c_int,
        stack: *mut u8,
        stack_top: *mut u8,
        arg: *mut libc::c_void,
    ) -> libc::pid_t {
        if let Some((dir, _)) = &self.unified {
            use crate::rawsys::c;
            let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
            let fd = c(
                libc::SYS_openat,
                &[libc::AT_FDCWD as usize, dir.as_ptr() as usize, flags as usize],
            );
            if fd >= 0 {
                self.created_inside.store(true, Ordering::SeqCst);
                // SAFETY: as promised by the caller; `fd` is an open cgroup directory.
                let pid = unsafe { crate::rawsys::clone_vfork_into(child, stack, stack_top, arg, fd as i32) };
                c(libc::SYS_close, &[fd as usize]);
                if pid > 0 {
                    return pid as libc::pid_t;
                }
                self.created_inside.store(false, Ordering::SeqCst);
            }
        }
        // SAFETY: as promised by the caller.
        unsafe {
            libc::clone(
                child,
                stack_top.cast(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                arg,
            )
        }
    }
}

/// Write `0` into `file` (`cgroup.procs`): move the calling process. Raw system calls only: for a
/// process between fork and exec, possibly sharing the engine's memory.
fn join_raw(file: &CString) {
    use crate::rawsys::c;
    let fd = c(
        libc::SYS_openat,
        &[
            libc::AT_FDCWD as usize,
            file.as_ptr() as usize,
            (libc::O_WRONLY | libc::O_CLOEXEC) as usize,
        ],
    );
    if fd >= 0 {
        c(libc::SYS_write, &[fd as usize, c"0".as_ptr() as usize, 1]);
        c(libc::SYS_close, &[fd as usize]);
    }
}

/// Write `1` into `file` (`cgroup.kill`). Raw system calls only (a guard whose engine died).
fn kill_raw(file: *const libc::c_char) {
    use crate::rawsys::c;
    let fd = c(
        libc::SYS_openat,
        &[
            libc::AT_FDCWD as usize,
            file as usize,
            (libc::O_WRONLY | libc::O_CLOEXEC) as usize,
        ],
    );
    if fd >= 0 {
        c(libc::SYS_write, &[fd as usize, c"1".as_ptr() as usize, 1]);
        c(libc::SYS_close, &[fd as usize]);
    }
}
