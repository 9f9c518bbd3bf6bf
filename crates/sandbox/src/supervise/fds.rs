//! Reaching a stopped caller's descriptors: `pidfd_open`, `pidfd_getfd`, its working directory.

#![allow(unsafe_code)]

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};

/// A pidfd for `pid` (check the notification is still valid afterwards: the pid may be reused).
pub fn pidfd_open(pid: u32) -> Result<OwnedFd, i32> {
    const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;
    let pid = libc::pid_t::try_from(pid).map_err(|_| libc::ESRCH)?;
    // A notification names the calling *thread*; a plain pidfd only names a thread-group leader,
    // so a file created from a second thread would be refused. `PIDFD_THREAD` (Linux 6.9) names
    // the thread itself; before it, the thread's group leader shares its descriptor table.
    // SAFETY: integer arguments only.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, PIDFD_THREAD) };
    if fd >= 0 {
        return owned(fd);
    }
    let group = thread_group_of(pid).ok_or(libc::ESRCH)?;
    // SAFETY: integer arguments only.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, group, 0) };
    owned(fd)
}

/// The thread group (process) a thread id belongs to, from `/proc/<tid>/status`.
fn thread_group_of(tid: libc::pid_t) -> Option<libc::pid_t> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A copy of descriptor `fd` of the process `pidfd` names (close-on-exec).
pub fn pidfd_getfd(pidfd: &OwnedFd, fd: RawFd) -> Result<OwnedFd, i32> {
    // SAFETY: integer arguments only.
    let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    owned(copy)
}

/// The directory `fd` of `pid` names for a `*at` call: its working directory for `AT_FDCWD`
/// (opened `O_PATH` through `/proc`, in its own mount namespace), else a copy of the descriptor.
pub fn directory_of(pid: u32, pidfd: &OwnedFd, fd: RawFd) -> Result<OwnedFd, i32> {
    if fd == libc::AT_FDCWD {
        let path = std::ffi::CString::new(format!("/proc/{pid}/cwd")).map_err(|_| libc::EINVAL)?;
        // SAFETY: `path` outlives the call.
        let opened = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        return owned(libc::c_long::from(opened));
    }
    pidfd_getfd(pidfd, fd)
}

fn owned(fd: libc::c_long) -> Result<OwnedFd, i32> {
    if fd < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EBADF));
    }
    let fd = RawFd::try_from(fd).map_err(|_| libc::EBADF)?;
    // SAFETY: the kernel just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
