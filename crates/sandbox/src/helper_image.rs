//! The helper the engine starts every sandboxed process through, held so that nothing can swap it.
//!
//! Started by path, the helper is whatever file is at that path when the next run starts: a
//! command that can write there (a helper in the workspace, in `/tmp`) could put a script in its
//! place that execs its arguments unconfined. So the engine opens its helper once, at start-up, and
//! starts it through that descriptor (`/proc/<engine>/fd/N`, which resolves to the open file
//! whatever happens to the path):
//!
//! - [`HelperImage::sealed_copy`]: a copy of the small stand-alone helper in a sealed memfd
//!   (`F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL`): neither renaming nor rewriting the
//!   file on disk reaches it. It costs the helper's size (about 4 MB) of memory per engine, and keeps
//!   each sandboxed start as fast as the small helper is.
//! - [`HelperImage::own_image`]: the engine's own running executable (`/proc/self/exe`), when no
//!   small helper is installed beside it or memfds may not be executed. A running executable
//!   cannot be written (`ETXTBSY`) and a rename leaves the open file as it was; its start costs
//!   about a millisecond more than the small helper's.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// An open helper executable and the path that starts it.
#[derive(Debug)]
pub struct HelperImage {
    file: File,
    path: PathBuf,
}

impl HelperImage {
    /// A sealed in-memory copy of the executable at `source`.
    pub fn sealed_copy(source: &Path) -> io::Result<Self> {
        use nix::fcntl::{FcntlArg, SealFlag, fcntl};
        use nix::sys::memfd::{MFdFlags, memfd_create};
        let fd = memfd_create(
            c"shellgate-sandbox-exec",
            MFdFlags::MFD_CLOEXEC | MFdFlags::MFD_ALLOW_SEALING,
        )?;
        let mut copy = File::from(fd);
        io::copy(&mut File::open(source)?, &mut copy)?;
        fcntl(
            &copy,
            FcntlArg::F_ADD_SEALS(
                SealFlag::F_SEAL_WRITE
                    | SealFlag::F_SEAL_SHRINK
                    | SealFlag::F_SEAL_GROW
                    | SealFlag::F_SEAL_SEAL,
            ),
        )?;
        // A file open for writing cannot be executed (ETXTBSY): keep a read-only descriptor only.
        let read_only = File::open(format!("/proc/self/fd/{}", copy.as_raw_fd()))?;
        drop(copy);
        let image = Self::from_file(read_only);
        image.check_executable()?;
        Ok(image)
    }

    /// The running executable, opened now.
    pub fn own_image() -> io::Result<Self> {
        let file = File::options()
            .read(true)
            .custom_flags(libc::O_PATH)
            .open("/proc/self/exe")?;
        Ok(Self::from_file(file))
    }

    fn from_file(file: File) -> Self {
        // Through this process's own entry, not `/proc/self`: a child that closed its copies of the
        // descriptors before exec (the engine's guards do) still reaches the file.
        let path = PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd()));
        Self { file, path }
    }

    /// The path that starts this helper, for this process and every process it starts, while this
    /// process lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the kernel lets this image be executed (`vm.memfd_noexec` can forbid memfds).
    fn check_executable(&self) -> io::Result<()> {
        let status = std::process::Command::new(&self.path)
            .arg("--probe")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()?;
        // The helper answers a malformed invocation with its own exit status.
        if status.code() == Some(crate::helper::EXIT_SANDBOX_FAILED) {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "the helper copy did not run ({status})"
            )))
        }
    }
}

impl AsRef<File> for HelperImage {
    fn as_ref(&self) -> &File {
        &self.file
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_image_path_names_an_open_descriptor() {
        let image = HelperImage::own_image().unwrap();
        let target = std::fs::read_link(image.path()).unwrap();
        assert_eq!(target, std::env::current_exe().unwrap());
    }
}
