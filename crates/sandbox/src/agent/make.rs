//! The agent's side: make each requested entry relative to its opened parent, after checking its
//! name.

#![allow(unsafe_code)]

use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use super::protocol::{Answer, Op, Request, receive, send};

/// Most symbolic links an open follows (the kernel's `MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The names that together make a directory a bare repository to git (`HEAD` plus the `objects`
/// and `refs` directories).
const REPOSITORY_SHAPE: [&str; 3] = ["HEAD", "objects", "refs"];

/// What no new entry may be.
#[derive(Debug, Clone, Default)]
pub(crate) struct Protection {
    /// Names no entry may get (`.git`).
    pub names: Vec<String>,
    /// Paths no entry may be made at or beneath, resolved as far as they exist.
    pub paths: Vec<PathBuf>,
}

/// Answer requests on `socket` until it closes; then exit.
pub(crate) fn serve(socket: &OwnedFd, protection: &Protection) -> ! {
    // Shared by every sandbox's agent: the repository-shape check and the creation it allows are
    // one step for all of them.
    let lock = std::fs::File::open("/").ok();
    loop {
        let Ok(Some((request, fds))) = receive::<Request>(socket) else {
            std::process::exit(0);
        };
        let (answer, fd) = match handle(&request, &fds, protection, lock.as_ref()) {
            Ok((value, fd)) => (
                Answer {
                    value,
                    errno: 0,
                    refused: None,
                },
                fd,
            ),
            Err(Failure { errno, refused }) => (
                Answer {
                    value: -1,
                    errno,
                    refused,
                },
                None,
            ),
        };
        let raw: Vec<RawFd> = fd.iter().map(AsRawFd::as_raw_fd).collect();
        if send(socket, &answer, &raw).is_err() {
            std::process::exit(0);
        }
    }
}

/// A failed request: the errno, and the path when a protected name or path refused it.
struct Failure {
    errno: i32,
    refused: Option<String>,
}

impl From<i32> for Failure {
    fn from(errno: i32) -> Self {
        Self { errno, refused: None }
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn handle(
    request: &Request,
    fds: &[OwnedFd],
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<(i64, Option<OwnedFd>), Failure> {
    let dir = |i: usize| fds.get(i).map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    let own: Vec<Vec<u8>> = request
        .paths
        .iter()
        .map(|p| callers_view(p, request.pid))
        .collect();
    let path = |i: usize| own.get(i).map(Vec::as_slice).ok_or(Failure::from(libc::EINVAL));
    // SAFETY: umask takes and returns a plain mode.
    unsafe { libc::umask(request.umask & 0o777) };
    match request.op {
        Op::Open { flags, mode, resolve } => {
            let opening = Opening {
                flags,
                mode,
                resolve,
                pid: request.pid,
            };
            open(dir(0), path(0)?, &opening, protection, lock).map(|fd| (0, Some(fd)))
        }
        Op::Mkdir { mode } => {
            let (parent, name) = new_entry(dir(0), path(0)?, protection, lock)?;
            // SAFETY: `name` is a NUL-terminated string that outlives the call.
            check(unsafe { libc::mkdirat(parent.fd(), name.as_ptr(), mode) })
        }
        Op::Mknod { mode, dev } => {
            let (parent, name) = new_entry(dir(0), path(0)?, protection, lock)?;
            // SAFETY: as above.
            check(unsafe { libc::mknodat(parent.fd(), name.as_ptr(), mode, dev) })
        }
        Op::Symlink => {
            let target = c_string(path(0)?)?;
            let (parent, name) = new_entry(dir(1), path(1)?, protection, lock)?;
            // SAFETY: as above.
            check(unsafe { libc::symlinkat(target.as_ptr(), parent.fd(), name.as_ptr()) })
        }
        Op::Link { flags } => {
            let old = c_string(path(0)?)?;
            let (parent, name) = new_entry(dir(1), path(1)?, protection, lock)?;
            // SAFETY: as above.
            check(unsafe { libc::linkat(dir(0), old.as_ptr(), parent.fd(), name.as_ptr(), flags) })
        }
        Op::Rename { flags } => {
            let old = c_string(path(0)?)?;
            let (parent, name) = new_entry(dir(1), path(1)?, protection, lock)?;
            // SAFETY: as above; renameat2 has no libc wrapper everywhere, so it is called directly.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_renameat2,
                    dir(0),
                    old.as_ptr(),
                    parent.fd(),
                    name.as_ptr(),
                    flags,
                )
            };
            check(i32::try_from(rc).unwrap_or(-1))
        }
    }
}

fn check(rc: i32) -> Result<(i64, Option<OwnedFd>), Failure> {
    if rc < 0 {
        Err(last_errno().into())
    } else {
        Ok((i64::from(rc), None))
    }
}

fn c_string(bytes: &[u8]) -> Result<CString, Failure> {
    CString::new(bytes).map_err(|_| Failure::from(libc::EINVAL))
}

/// A new entry's opened parent directory, and the lock held while it is made (when its name is
/// part of a repository's shape).
struct Parent {
    dir: Option<OwnedFd>,
    _lock: Option<Flock>,
}

impl Parent {
    fn fd(&self) -> RawFd {
        self.dir.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd)
    }
}

/// An exclusive `flock`, released when dropped.
struct Flock(RawFd);

impl Drop for Flock {
    fn drop(&mut self) {
        // SAFETY: unlocking a descriptor this process holds.
        unsafe { libc::flock(self.0, libc::LOCK_UN) };
    }
}

/// Open the parent of `path` (relative to `dirfd`), check the entry's name, and return the
/// parent with the name to make in it.
fn new_entry(
    dirfd: RawFd,
    path: &[u8],
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<(Parent, CString), Failure> {
    new_entry_with(dirfd, path, 0, protection, lock)
}

fn new_entry_with(
    dirfd: RawFd,
    path: &[u8],
    resolve: u64,
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<(Parent, CString), Failure> {
    new_entry_in(dirfd, path, resolve, protection, lock).map(|(parent, name, _)| (parent, name))
}

/// As [`new_entry_with`], and whether the parent lies in `/proc`.
fn new_entry_in(
    dirfd: RawFd,
    path: &[u8],
    resolve: u64,
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<(Parent, CString, bool), Failure> {
    let (directory, name) = split(path);
    let dir = open_directory(dirfd, &directory, resolve)?;
    let parent_path = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .map_err(|_| Failure::from(libc::ENOENT))?;
    let in_proc = parent_path.starts_with("/proc");
    let held = judge(&dir, &parent_path, OsStr::from_bytes(&name), protection, lock)?;
    let parent = Parent {
        dir: Some(dir),
        _lock: held,
    };
    Ok((parent, c_string(&name)?, in_proc))
}

/// `path` as process `pid` means it: its `/proc/self` (and `/proc/thread-self`) is `/proc/<pid>`.
fn callers_view(path: &[u8], pid: u32) -> Vec<u8> {
    for own in [&b"/proc/self"[..], b"/proc/thread-self"] {
        if let Some(rest) = path.strip_prefix(own)
            && (rest.is_empty() || rest[0] == b'/')
        {
            let mut out = format!("/proc/{pid}").into_bytes();
            out.extend_from_slice(rest);
            return out;
        }
    }
    path.to_vec()
}

/// Refuse a protected name, an entry at or beneath a protected path, or the last piece of a
/// repository's shape.
fn judge(
    dir: &OwnedFd,
    parent_path: &Path,
    name: &OsStr,
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<Option<Flock>, Failure> {
    if name.is_empty() || name == "." || name == ".." {
        return Ok(None);
    }
    let full = parent_path.join(name);
    let refuse = |errno| Failure {
        errno,
        refused: Some(full.display().to_string()),
    };
    if protection.names.iter().any(|n| OsStr::new(n) == name) {
        return Err(refuse(libc::EPERM));
    }
    if protection.paths.iter().any(|p| full.starts_with(p)) {
        // What a read-only mount of the path would answer.
        return Err(refuse(libc::EROFS));
    }
    let Some(shape) = name.to_str().filter(|n| REPOSITORY_SHAPE.contains(n)) else {
        return Ok(None);
    };
    let held = lock.map(|file| {
        // SAFETY: locking a descriptor this process holds; blocks until every other agent's check
        // and creation of a repository-shaped name is done.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        Flock(file.as_raw_fd())
    });
    let others_exist = REPOSITORY_SHAPE
        .iter()
        .filter(|&&other| other != shape)
        .all(|other| exists_in(dir, other));
    if others_exist {
        return Err(refuse(libc::EPERM));
    }
    Ok(held)
}

fn exists_in(dir: &OwnedFd, name: &str) -> bool {
    let Ok(name) = CString::new(name) else {
        return false;
    };
    // SAFETY: `stat` is plain data the kernel fills in; `name` outlives the call.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &raw mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        ) == 0
    }
}

/// `path` split into its directory part and its last component; trailing slashes are dropped
/// (`mkdir a/` makes `a`).
fn split(path: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut end = path.len();
    while end > 1 && path[end - 1] == b'/' {
        end -= 1;
    }
    let trimmed = &path[..end];
    match trimmed.iter().rposition(|&b| b == b'/') {
        None => (b".".to_vec(), trimmed.to_vec()),
        Some(0) => (b"/".to_vec(), trimmed[1..].to_vec()),
        Some(i) => (trimmed[..i].to_vec(), trimmed[i + 1..].to_vec()),
    }
}

/// `struct open_how`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

fn openat2(dirfd: RawFd, path: &[u8], flags: u64, mode: u64, resolve: u64) -> Result<OwnedFd, Failure> {
    let c_path = c_string(path)?;
    let how = OpenHow { flags, mode, resolve };
    // SAFETY: `c_path` and `how` outlive the call; the size is that of the structure passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dirfd,
            c_path.as_ptr(),
            &raw const how,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(last_errno().into());
    }
    // SAFETY: the kernel just returned this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(RawFd::try_from(fd).map_err(|_| Failure::from(libc::EBADF))?) })
}

fn open_directory(dirfd: RawFd, path: &[u8], resolve: u64) -> Result<OwnedFd, Failure> {
    let flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    openat2(dirfd, path, flags, 0, resolve)
}

/// An open with `O_CREAT`: the entry is made (or opened) in its checked parent, never through a
/// symlink at its end; such a symlink is followed here, one hop at a time, each checked. With
/// `openat2`'s resolve flags, a symlink at the end is not followed (`ELOOP`).
/// An open's arguments besides its path.
struct Opening {
    flags: u64,
    mode: u64,
    resolve: u64,
    /// The caller, whose `/proc/self` a symlink may name (`/dev/stdout`).
    pid: u32,
}

fn open(
    dirfd: RawFd,
    path: &[u8],
    opening: &Opening,
    protection: &Protection,
    lock: Option<&std::fs::File>,
) -> Result<OwnedFd, Failure> {
    let Opening {
        flags,
        mode,
        resolve,
        pid,
    } = *opening;
    let no_follow = flags & libc::O_NOFOLLOW as u64 != 0 || flags & libc::O_EXCL as u64 != 0 || resolve != 0;
    // Where a relative symlink's target is looked up: the directory that held the link. (An
    // absolute target ignores it.)
    let mut anchor: Option<OwnedFd> = None;
    let mut current = path.to_vec();
    for _ in 0..=MAX_LINKS {
        let at = anchor.as_ref().map_or(dirfd, AsRawFd::as_raw_fd);
        let (parent, name, in_proc) = new_entry_in(at, &current, resolve, protection, lock)?;
        // Nothing new is ever made in `/proc`; its links lead to files already open (a pipe
        // behind `/dev/stdout`), which only following them reaches.
        let end = if in_proc { 0 } else { libc::O_NOFOLLOW as u64 };
        match openat2(
            parent.fd(),
            name.as_bytes(),
            flags | end | libc::O_CLOEXEC as u64,
            mode,
            0,
        ) {
            Ok(fd) => return Ok(fd),
            Err(failure) if failure.errno == libc::ELOOP && !no_follow && !in_proc => {
                let target = read_link_at(parent.fd(), &name).ok_or(failure)?;
                current = callers_view(&target, pid);
                if current.first() != Some(&b'/') {
                    anchor = parent.dir;
                }
            }
            Err(failure) => return Err(failure),
        }
    }
    Err(libc::ELOOP.into())
}

fn read_link_at(dirfd: RawFd, name: &CString) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length; `name` outlives the call.
    let n = unsafe { libc::readlinkat(dirfd, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    let n = usize::try_from(n).ok()?;
    buf.truncate(n);
    Some(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_into_directory_and_name() {
        assert_eq!(split(b"a"), (b".".to_vec(), b"a".to_vec()));
        assert_eq!(split(b"a/b/c"), (b"a/b".to_vec(), b"c".to_vec()));
        assert_eq!(split(b"/x"), (b"/".to_vec(), b"x".to_vec()));
        assert_eq!(split(b"dir/"), (b".".to_vec(), b"dir".to_vec()));
        assert_eq!(split(b"a//b//"), (b"a/".to_vec(), b"b".to_vec()));
        assert_eq!(callers_view(b"/proc/self/fd/1", 42), b"/proc/42/fd/1");
        assert_eq!(callers_view(b"/proc/selfish", 42), b"/proc/selfish");
    }

    #[test]
    fn protected_names_and_repository_shapes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fd: OwnedFd = std::fs::File::open(dir.path()).unwrap().into();
        let protection = Protection {
            names: vec![".git".to_owned()],
            paths: vec![dir.path().join("secret")],
        };
        let j = |name: &str| judge(&fd, dir.path(), OsStr::new(name), &protection, None).map(|_| ());
        assert!(j("src").is_ok());
        assert_eq!(j(".git").unwrap_err().errno, libc::EPERM);
        assert_eq!(j("secret").unwrap_err().errno, libc::EROFS);
        assert!(j("HEAD").is_ok());
        std::fs::write(dir.path().join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir(dir.path().join("objects")).unwrap();
        assert!(j("objects").is_ok(), "an existing name is judged like a new one");
        let refused = j("refs").unwrap_err();
        assert_eq!(refused.errno, libc::EPERM);
        assert!(refused.refused.unwrap().ends_with("refs"));
    }
}
