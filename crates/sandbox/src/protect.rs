//! Protected paths (`.git`, configured ones) inside writable roots: read-only bind mounts in a
//! private mount namespace.
//!
//! Landlock cannot do this part. Its rules only grant, and a grant on a directory covers
//! everything beneath it, so "the workspace is writable except `.git`" has no Landlock
//! expression: creating `./ok` needs the make-file right on the workspace directory, and that same
//! right then covers `.git/`. A read-only bind mount of each protected path over itself, in a
//! mount namespace only the command sees, makes writes there fail with `EROFS`, whatever path or
//! symlink leads to them (mounts apply to the resolved location).
//!
//! The namespace is created with `unshare(CLONE_NEWNS)` when the helper runs as root, and inside
//! a new user namespace (mapping the caller's own ids) otherwise.

use std::fs;
use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::unistd::{Gid, Uid};

use crate::{SandboxError, SandboxMode, SandboxPolicy};

/// The protected paths of `policy` that exist, resolved (symlinks followed), without duplicates.
pub fn existing_protected_paths(policy: &SandboxPolicy) -> Vec<PathBuf> {
    if policy.mode != SandboxMode::WorkspaceWrite {
        return Vec::new();
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    for path in policy.all_protected_paths() {
        if let Ok(resolved) = fs::canonicalize(&path)
            && !paths.contains(&resolved)
        {
            paths.push(resolved);
        }
    }
    paths
}

/// Make `paths` (the policy's [`existing_protected_paths`]) read-only for this process and its
/// descendants.
pub fn apply(paths: &[PathBuf]) -> Result<(), SandboxError> {
    if paths.is_empty() {
        return Ok(());
    }
    let fail = |what: &str, path: &Path, e: nix::Error| {
        SandboxError::unavailable(format!("cannot keep {} read-only: {what}: {e}", path.display()))
    };
    enter_mount_namespace().map_err(|e| fail("new mount namespace", &paths[0], e))?;
    // Nothing done in this namespace may propagate back to the caller's mounts.
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| fail("private mount propagation", &paths[0], e))?;
    for path in paths {
        mount(
            Some(path.as_path()),
            path.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| fail("bind mount", path, e))?;
        // A remount must repeat the flags the kernel locked on the original mount (nosuid, nodev…)
        // or it is refused inside a user namespace.
        let kept = statvfs(path.as_path()).map_or(MsFlags::empty(), |s| kept_flags(s.flags()));
        mount(
            None::<&str>,
            path.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | kept,
            None::<&str>,
        )
        .map_err(|e| fail("read-only remount", path, e))?;
    }
    Ok(())
}

fn enter_mount_namespace() -> Result<(), nix::Error> {
    if Uid::effective().is_root() {
        return unshare(CloneFlags::CLONE_NEWNS);
    }
    let (uid, gid) = (Uid::effective(), Gid::effective());
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS)?;
    let write = |file: &str, text: String| {
        fs::write(file, text).map_err(|e| nix::Error::from_raw(e.raw_os_error().unwrap_or(libc::EPERM)))
    };
    write("/proc/self/setgroups", "deny".to_owned())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
    Ok(())
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
        fs::create_dir(dir.path().join(".git")).unwrap();
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, dir.path())
            .with_protected_path(dir.path().join("missing"));
        let paths = existing_protected_paths(&policy);
        let git = fs::canonicalize(dir.path().join(".git")).unwrap();
        assert!(paths.contains(&git), "{paths:?}");
        assert!(paths.iter().all(|p| !p.ends_with("missing")));
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
