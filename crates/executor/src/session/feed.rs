//! How the engine hands a session shell the lines of its script.
//!
//! bash reads a script from a FIFO one byte per system call (it must not read past the line it runs),
//! and a regular file in blocks. So bash reads its script from a regular file that the engine appends
//! each command's line to; what keeps it from reading the end of the file, which would end the shell,
//! is that every line ends by waiting for one byte on the request FIFO, written after the next line
//! (see `script::bootstrap`). A command then costs bash one read of its line instead of one per byte.
//! zsh reads its FIFO in blocks already: its lines go to the request FIFO itself.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use super::script::{REQUEST_FIFO, SCRIPT_FILE, ShellKind};

/// The byte that lets a waiting bash read on (any byte would do).
const WAKE: &[u8] = b".";

/// How much of the script file the shell has read and the file still holds before that part is freed.
/// Freeing keeps the file's offsets (the shell reads at its own), so only the memory is given back.
const FREE_AFTER: u64 = 256 * 1024;

/// Where a shell's lines go.
pub(crate) enum Feed {
    /// bash: appended to the script file, each released by [`WAKE`] on the request FIFO.
    Script {
        file: File,
        /// The file's length: where the next line goes.
        len: u64,
        /// Up to where the file's blocks have been freed.
        freed: u64,
    },
    /// zsh: written to the request FIFO, its script.
    Fifo,
}

impl Feed {
    /// The script a shell of `kind` whose private directory is `dir` runs (its argument): bash's
    /// script file, zsh's request FIFO.
    pub(crate) fn script_path(kind: ShellKind, dir: &Path) -> PathBuf {
        match kind {
            ShellKind::Bash => dir.join(SCRIPT_FILE),
            ShellKind::Zsh => dir.join(REQUEST_FIFO),
        }
    }

    /// The feed for a shell of `kind`. For bash the script file is made at `script` (see
    /// [`Feed::script_path`]) and holds `bootstrap` before the shell starts: bash sizes its reads by
    /// the script's length when it opens it, and the bootstrap ends by waiting like every line. zsh
    /// gets its bootstrap through [`Feed::start`].
    pub(crate) fn new(kind: ShellKind, script: &Path, bootstrap: &str) -> io::Result<Self> {
        Ok(match kind {
            ShellKind::Bash => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(script)?;
                file.write_all_at(bootstrap.as_bytes(), 0)?;
                Self::Script {
                    file,
                    len: bootstrap.len() as u64,
                    freed: 0,
                }
            }
            ShellKind::Zsh => Self::Fifo,
        })
    }

    /// Once the shell runs: zsh reads its bootstrap from the request FIFO (written now, as the FIFO's
    /// buffer need not hold it whole); bash's script file holds it already.
    pub(crate) async fn start(&self, req: &mut pipe::Sender, bootstrap: &str) -> io::Result<()> {
        match self {
            Self::Script { .. } => Ok(()),
            Self::Fifo => req.write_all(bootstrap.as_bytes()).await,
        }
    }

    /// Hand the shell `text`, a command's line once the shell waits for it.
    pub(crate) async fn send(&mut self, req: &mut pipe::Sender, text: &[u8]) -> io::Result<()> {
        match self {
            Self::Script { file, len, freed } => {
                // Everything before this line has been read: the shell waits at the end of the last one.
                if *len - *freed >= FREE_AFTER {
                    *freed = free_blocks(file, *freed, *len);
                }
                file.write_all_at(text, *len)?;
                *len += text.len() as u64;
                req.write_all(WAKE).await
            }
            Self::Fifo => req.write_all(text).await,
        }
    }
}

/// Frees the blocks of `file` from `start` (where the last freeing ended, a page boundary) to `end`,
/// rounded down to whole pages, keeping its length; returns where the freed part now ends. Where the
/// file system cannot free them, the file keeps them (a few hundred bytes per command).
fn free_blocks(file: &File, start: u64, end: u64) -> u64 {
    use nix::fcntl::{FallocateFlags, fallocate};
    const PAGE: u64 = 4096;
    let upto = end / PAGE * PAGE;
    if upto > start {
        // File offsets stay far below `off_t`'s limit.
        let _ = fallocate(
            file,
            FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
            start as libc::off_t,
            (upto - start) as libc::off_t,
        );
    }
    upto
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[tokio::test]
    async fn lines_go_after_the_bootstrap_and_read_ones_are_freed() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("req");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let mut req = pipe::OpenOptions::new()
            .read_write(true)
            .open_sender(&fifo)
            .unwrap();
        let wakes = std::fs::File::open(&fifo).unwrap();
        let script = dir.path().join("script");
        let mut feed = Feed::new(ShellKind::Bash, &script, "bootstrap\n").unwrap();
        let line = vec![b'x'; 4000];
        for _ in 0..300 {
            feed.send(&mut req, &line).await.unwrap();
        }
        let meta = std::fs::metadata(&script).unwrap();
        assert_eq!(meta.len(), 10 + 300 * 4000, "offsets are kept");
        let mut head = vec![0u8; 10];
        let mut tail = vec![0u8; 4000];
        let file = std::fs::File::open(&script).unwrap();
        file.read_exact_at(&mut tail, meta.len() - 4000).unwrap();
        assert_eq!(tail, line, "the last line is there whole");
        let Feed::Script { freed, .. } = &feed else {
            panic!("bash reads a script file")
        };
        assert!(*freed > 0 && *freed % 4096 == 0, "freed up to {freed}");
        file.read_exact_at(&mut head, 0).unwrap();
        assert_eq!(head, vec![0u8; 10], "the bootstrap, read long ago, is freed");
        assert!(
            meta.blocks() * 512 <= 2 * FREE_AFTER,
            "{} bytes kept of {}",
            meta.blocks() * 512,
            meta.len()
        );
        // One wake per line, none for the bootstrap.
        let mut buf = vec![0u8; 1000];
        let n = nix::unistd::read(&wakes, &mut buf).unwrap();
        assert_eq!(&buf[..n], WAKE.repeat(300).as_slice());
    }
}
