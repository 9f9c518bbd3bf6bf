//! Reading a stopped call's arguments from the calling process: strings and numbers from its
//! memory, paths resolved against its working directory and descriptors.
//!
//! The supervisor only *reports*; the read-only mounts and the seccomp rules enforce. A process
//! that changes its memory between the check and the call can at worst change what is reported,
//! never what it may do.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};

use super::syscalls::{Follow, PathArg};

/// The longest path the kernel accepts (`PATH_MAX`, the terminating NUL included).
const PATH_MAX: usize = 4096;
/// Bytes read at a time: a string may end just before an unmapped page.
const CHUNK: usize = 256;

/// A process stopped in a system call.
pub struct Target {
    pid: u32,
    memory: Option<File>,
}

impl Target {
    /// The process `pid` (its memory is opened on first use).
    pub fn new(pid: u32) -> Self {
        Self { pid, memory: None }
    }

    fn memory(&mut self) -> Option<&File> {
        if self.memory.is_none() {
            self.memory = File::open(format!("/proc/{}/mem", self.pid)).ok();
        }
        self.memory.as_ref()
    }

    /// The NUL-terminated string at `address` (`None`: unreadable or longer than `PATH_MAX`).
    pub fn string(&mut self, address: u64) -> Option<Vec<u8>> {
        let memory = self.memory()?;
        let mut out = Vec::new();
        let mut at = address;
        while out.len() < PATH_MAX {
            // Never read across a page boundary in one go: the next page may be unmapped.
            let to_page_end = CHUNK - usize::try_from(at % CHUNK as u64).ok()?;
            let mut buf = [0u8; CHUNK];
            let n = memory.read_at(&mut buf[..to_page_end], at).ok()?;
            if n == 0 {
                return None;
            }
            if let Some(end) = buf[..n].iter().position(|&b| b == 0) {
                out.extend_from_slice(&buf[..end]);
                return Some(out);
            }
            out.extend_from_slice(&buf[..n]);
            at = at.checked_add(n as u64)?;
        }
        None
    }

    /// `len` bytes at `address` (`None`: unreadable).
    pub fn bytes(&mut self, address: u64, len: usize) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.memory()?.read_exact_at(&mut buf, address).ok()?;
        Some(buf)
    }

    /// The native-endian `u64` at `address`.
    pub fn u64_at(&mut self, address: u64) -> Option<u64> {
        let mut buf = [0u8; 8];
        self.memory()?.read_exact_at(&mut buf, address).ok()?;
        Some(u64::from_ne_bytes(buf))
    }

    /// The location a descriptor of the process names (`AT_FDCWD`: its working directory).
    pub fn descriptor(&self, fd: i64) -> Option<PathBuf> {
        let link = if fd == i64::from(libc::AT_FDCWD) {
            format!("/proc/{}/cwd", self.pid)
        } else {
            format!("/proc/{}/fd/{}", self.pid, u32::try_from(fd).ok()?)
        };
        std::fs::read_link(link).ok().filter(|p| p.is_absolute())
    }

    /// The object `arg` names in a call with arguments `args`, resolved the way the call resolves
    /// it (`None`: unreadable, or the process is gone).
    pub fn path(&mut self, arg: PathArg, args: &[u64; 6]) -> Option<PathBuf> {
        let dirfd = arg.dirfd.map_or(i64::from(libc::AT_FDCWD), |i| {
            // A descriptor is an `int`: the upper half of the register is not part of it.
            i64::from(args[i] as u32 as i32)
        });
        if args[arg.path] == 0 {
            // A null path (utimensat) names the descriptor itself.
            return self.descriptor(dirfd);
        }
        let raw = self.string(args[arg.path])?;
        let path = Path::new(OsStr::from_bytes(&raw));
        let follow = match arg.follow {
            Follow::Yes => true,
            Follow::No => false,
            Follow::UnlessFlag(i) => args[i] & libc::AT_SYMLINK_NOFOLLOW as u64 == 0,
        };
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            let base = self.descriptor(dirfd)?;
            if raw.is_empty() {
                return Some(base);
            }
            base.join(path)
        };
        Some(resolve_for(self.pid, &joined, follow))
    }
}

/// Most symbolic links followed in one path (the kernel's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// `path` as process `pid` resolves it: every directory resolved (symlinks, `.`, `..`), the last
/// component followed only when `follow`. What does not exist yet is kept as written below the
/// part that does. `/proc/self` means `pid`'s own, and a path that leads into `/proc` (a
/// descriptor, `/dev/stdout`) stops there: it names a pipe or a terminal as often as a file.
pub fn resolve_for(pid: u32, path: &Path, follow: bool) -> PathBuf {
    let mut resolved = PathBuf::from("/");
    let mut pending: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(name) = pending.pop() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        if resolved.starts_with("/proc") {
            // A process's own view: `self` is the caller, descriptors are not paths.
            if resolved == Path::new("/proc") && (name == "self" || name == "thread-self") {
                resolved.push(pid.to_string());
            } else {
                resolved.push(&name);
            }
            continue;
        }
        let candidate = resolved.join(&name);
        let last = pending.is_empty();
        let is_link = std::fs::symlink_metadata(&candidate).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link || (last && !follow) || links >= MAX_LINKS {
            resolved = candidate;
            continue;
        }
        links += 1;
        let Ok(target) = std::fs::read_link(&candidate) else {
            resolved = candidate;
            continue;
        };
        if target.is_absolute() {
            resolved = PathBuf::from("/");
        }
        pending.extend(target.components().rev().filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        }));
    }
    resolved
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn resolves_directories_and_follows_the_end_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        symlink(root.join("real"), root.join("link")).unwrap();
        let resolve = |p: &Path, follow| resolve_for(1, p, follow);
        assert_eq!(resolve(&root.join("link/new"), true), root.join("real/new"));
        assert_eq!(resolve(&root.join("link"), false), root.join("link"));
        assert_eq!(resolve(&root.join("link"), true), root.join("real"));
        assert_eq!(resolve(&root.join("real/../link/x"), false), root.join("real/x"));
        assert_eq!(
            resolve(&root.join("missing/deeper/x"), true),
            root.join("missing/deeper/x")
        );
        // Another process's `/proc/self` is its own, and descriptors are not followed.
        assert_eq!(
            resolve(Path::new("/proc/self/fd/1"), true),
            Path::new("/proc/1/fd/1")
        );
        symlink("/proc/self/fd/1", root.join("out")).unwrap();
        assert_eq!(resolve(&root.join("out"), true), Path::new("/proc/1/fd/1"));
    }

    #[test]
    fn reads_strings_and_descriptors_of_a_process() {
        let own = Target::new(std::process::id()).descriptor(i64::from(libc::AT_FDCWD));
        assert_eq!(own, std::env::current_dir().ok());
        let text = b"/some/path\0after";
        let mut target = Target::new(std::process::id());
        let read = target.string(text.as_ptr() as u64).unwrap();
        assert_eq!(read, b"/some/path");
        let number: u64 = 0x0102_0304_0506_0708;
        assert_eq!(target.u64_at(std::ptr::from_ref(&number) as u64), Some(number));
    }
}
