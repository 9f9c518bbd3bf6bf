//! The sandbox's view of the file system, set up in its private mount namespace
//! ([`crate::namespaces`]):
//!
//! 1. Every mount becomes read-only (`mount_setattr(…, AT_RECURSIVE)`), then each writable root is
//!    bound over itself and made writable again. A read-only mount refuses what Landlock has no
//!    rights for: `chmod`, `chown`, `utimes`, extended attributes. Writes to devices (`/dev/null`,
//!    terminals) still work: a read-only mount does not stop writing to a device node.
//! 2. `/dev/pts` becomes a private `devpts` instance (and `/dev/ptmx` its multiplexer): the
//!    command can open new terminals of its own, and cannot see, write to or inject input into any
//!    other terminal of the machine. `/dev/shm` becomes a private tmpfs, writable in every mode:
//!    the command's processes share semaphores among themselves (`multiprocessing`), no one else's.
//! 3. Each protected path (`.git` in every writable root, configured paths) that exists is bound
//!    read-only over itself. Landlock cannot do this part: its rules only grant, and a grant on
//!    the workspace covers `.git/` too. Writes there fail with `EROFS`, whatever path or symlink
//!    leads to them (mounts apply to the resolved location).
//!
//! Nothing done here propagates back to the caller's mounts (the tree is made private first).

use std::fs;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// The protected paths of `policy` that exist, resolved (symlinks followed), without duplicates:
/// in `workspace-write` every one ([`SandboxPolicy::all_protected_paths`]); in `full` the
/// configured ones (the engine's own files among them); in `read-only` none (nothing is writable
/// anyway).
pub fn existing_protected_paths(policy: &SandboxPolicy) -> Vec<PathBuf> {
    let candidates = match policy.mode {
        SandboxMode::WorkspaceWrite => policy.all_protected_paths(),
        SandboxMode::Full => policy.protected_paths.clone(),
        SandboxMode::ReadOnly => return Vec::new(),
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for path in candidates {
        if let Ok(resolved) = fs::canonicalize(&path)
            && !paths.contains(&resolved)
        {
            paths.push(resolved);
        }
    }
    paths
}

/// The directories writable in `policy`'s mode that exist, resolved: the writable roots in
/// `workspace-write`, and the engine's own roots in every restricting mode.
pub fn writable_directories(policy: &SandboxPolicy) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let roots: Vec<&Path> = match policy.mode {
        SandboxMode::Full => Vec::new(),
        SandboxMode::ReadOnly => policy.engine_roots.iter().map(PathBuf::as_path).collect(),
        SandboxMode::WorkspaceWrite => policy
            .all_writable_roots()
            .into_iter()
            .chain(policy.engine_roots.iter().map(PathBuf::as_path))
            .collect(),
    };
    for root in roots {
        if let Ok(resolved) = fs::canonicalize(root)
            && resolved.is_dir()
            && !dirs.contains(&resolved)
        {
            dirs.push(resolved);
        }
    }
    dirs
}

/// Set up the view: private propagation, the read-only tree with writable roots, the private
/// terminals, the protected paths. Runs inside the new mount namespace.
pub fn confine(policy: &SandboxPolicy, protected: &[PathBuf]) -> Result<(), SandboxError> {
    let fail = |what: &str, path: &Path, e: nix::Error| {
        SandboxError::unavailable(format!(
            "cannot set up the sandbox's mounts: {what} {}: {e}",
            path.display()
        ))
    };
    // Nothing done in this namespace may propagate back to the caller's mounts.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| fail("private propagation of", Path::new("/"), e))?;
    if policy.mode != SandboxMode::Full {
        let writable = writable_directories(policy);
        set_read_only(Path::new("/"), true, true).map_err(|e| fail("read-only", Path::new("/"), e))?;
        for dir in &writable {
            mount(
                Some(dir.as_path()),
                dir.as_path(),
                None::<&str>,
                MsFlags::MS_BIND | MsFlags::MS_REC,
                None::<&str>,
            )
            .map_err(|e| fail("bind", dir, e))?;
            // A mount the kernel locked read-only (a read-only file system of the caller's) stays
            // read-only: nothing could be written there anyway.
            if set_read_only(dir, false, true).is_err() {
                let _ = set_read_only(dir, false, false);
            }
        }
        private_terminals().map_err(|e| fail("private terminals at", Path::new("/dev/pts"), e))?;
        private_shared_memory(&writable)
            .map_err(|e| fail("private shared memory at", Path::new(SHARED_MEMORY), e))?;
    }
    for path in protected {
        bind_read_only(path).map_err(|e| fail("read-only bind of", path, e))?;
    }
    // The working directory still names the mount it was entered through; entering it again by
    // path puts it on the mounts just made (a writable root's own, a protected path's).
    if let Ok(cwd) = std::env::current_dir() {
        let _ = std::env::set_current_dir(cwd);
    }
    Ok(())
}

/// `struct mount_attr` (linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// Set (or clear) the read-only flag on the mount at `path`, and on every mount beneath it when
/// `recursive`.
#[allow(unsafe_code)]
fn set_read_only(path: &Path, read_only: bool, recursive: bool) -> Result<(), nix::Error> {
    use std::os::unix::ffi::OsStrExt as _;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| nix::Error::EINVAL)?;
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: `c_path` and `attr` outlive the call; the size is that of the structure passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc < 0 { Err(nix::Error::last()) } else { Ok(()) }
}

/// A private `devpts` instance on `/dev/pts`, and `/dev/ptmx` pointing at its multiplexer.
fn private_terminals() -> Result<(), nix::Error> {
    let pts = Path::new("/dev/pts");
    if !pts.is_dir() {
        return Ok(());
    }
    mount(
        Some("devpts"),
        pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )?;
    let ptmx = Path::new("/dev/ptmx");
    let is_link = fs::symlink_metadata(ptmx).is_ok_and(|m| m.file_type().is_symlink());
    if ptmx.exists() && !is_link {
        mount(
            Some(Path::new("/dev/pts/ptmx")),
            ptmx,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )?;
    }
    Ok(())
}

/// Where POSIX shared memory and semaphores live (Python's `multiprocessing` locks among them).
pub const SHARED_MEMORY: &str = "/dev/shm";

/// A private, empty tmpfs on `/dev/shm`: the command's processes share semaphores and shared
/// memory with each other, and reach no other program's. It vanishes with the sandbox. Writable
/// directories inside the machine's `/dev/shm` (the engine's session directory, a configured
/// root) are bound into it at the same place; a writable root that is `/dev/shm` itself or holds
/// it keeps the machine's.
fn private_shared_memory(writable: &[PathBuf]) -> Result<(), nix::Error> {
    use std::os::fd::AsRawFd as _;
    let shm = Path::new(SHARED_MEMORY);
    if !shm.is_dir() || writable.iter().any(|dir| shm.starts_with(dir)) {
        return Ok(());
    }
    // Held open across the new mount, which hides their paths.
    let inside: Vec<(&PathBuf, fs::File)> = writable
        .iter()
        .filter(|dir| dir.starts_with(shm))
        .filter_map(|dir| {
            let file = fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
                .open(dir)
                .ok()?;
            Some((dir, file))
        })
        .collect();
    mount(
        Some("tmpfs"),
        shm,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some("mode=1777"),
    )?;
    for (dir, file) in inside {
        fs::create_dir_all(dir).map_err(|e| nix::Error::from_raw(e.raw_os_error().unwrap_or(libc::EIO)))?;
        let source = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        mount(
            Some(source.as_path()),
            dir.as_path(),
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )?;
        // Bound from the read-only view: writable again, as it was.
        let _ = set_read_only(dir, false, false);
    }
    Ok(())
}

fn bind_read_only(path: &Path) -> Result<(), nix::Error> {
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )?;
    // A remount must repeat the flags the kernel locked on the original mount (nosuid, nodev…)
    // or it is refused inside a user namespace.
    let kept = statvfs(path).map_or(MsFlags::empty(), |s| kept_flags(s.flags()));
    mount(
        None::<&str>,
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
        None::<&str>,
    )
}

fn kept_flags(flags: FsFlags) -> MsFlags {
    let mut kept = MsFlags::empty();
    for (fs_flag, ms_flag) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if flags.contains(fs_flag) {
            kept |= ms_flag;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_existing_protected_paths_are_mounted() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        fs::write(dir.path().join(".git/config"), "").unwrap();
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path())
            .with_protected_path(dir.path().join("missing"));
        let paths = existing_protected_paths(&policy);
        let git = fs::canonicalize(dir.path().join(".git")).unwrap();
        assert!(paths.contains(&git.join("hooks")), "{paths:?}");
        assert!(paths.contains(&git.join("config")), "{paths:?}");
        assert!(!paths.contains(&git), "{paths:?}");
        assert!(
            paths
                .iter()
                .all(|p| !p.ends_with("missing") && !p.ends_with("modules"))
        );
        let ro = SandboxPolicy::new(SandboxMode::ReadOnly, dir.path());
        assert!(existing_protected_paths(&ro).is_empty());
    }

    #[test]
    fn locked_flags_are_kept() {
        let kept = kept_flags(FsFlags::ST_NOSUID | FsFlags::ST_NODEV);
        assert!(kept.contains(MsFlags::MS_NOSUID | MsFlags::MS_NODEV));
        assert!(!kept.contains(MsFlags::MS_NOEXEC));
    }
}
