//! Which program a command word runs, the way bash will find it: a bare name through PATH, a path
//! from the directory the command runs in, symbolic links followed to the real file. The identity
//! keeps the name it is invoked by, since multi-call binaries (`busybox`, `toybox`, `coreutils`)
//! dispatch on it: a link `./del` to `/usr/bin/rm` is `rm`, a link `./del` to `busybox` is `del`.
//!
//! Cost: for an engine not running as root, a program in a directory only root can change (owned
//! by root, writable by no one else: `/usr/bin`, `/bin`) is resolved once and cached without
//! further checks — only root could change what it is. Elsewhere (`~/.local/bin`, the workspace) each use costs one `lstat` of the
//! program's path; when that path is a symbolic link its chain is cached per path, each use
//! checked against every link's inode and modification time, so a replaced link is read again.
//! PATH lookups are cached by [`PathLookup`]. The cache holds at most [`MAX_CACHED`] paths.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use shellgate_normalize::shell_words::is_shell_word;

use crate::argv::basename;
use crate::path_lookup::{PathLookup, lexical_normalize};

/// Binaries that act as the program they are invoked as (`rustup` is `cargo`, `rustc`, …;
/// `ccache` is the compiler it is named after).
const MULTI_CALL: &[&str] = &[
    "busybox",
    "toybox",
    "coreutils",
    "uutils",
    "uu-coreutils",
    "rustup",
    "rustup-init",
    "ccache",
    "distcc",
    "volta-shim",
    // sysvinit's `pidof` is a link to `killall5`, which acts as `pidof` when called so.
    "killall5",
];

/// The most paths whose links are cached.
pub(crate) const MAX_CACHED: usize = 1024;

/// Links longer than this are not followed (the kernel gives up at 40).
const MAX_LINKS: usize = 40;

/// `(device, inode, mtime, mtime_nsec)` of a link.
type Stamp = (u64, u64, i64, i64);

#[derive(Debug)]
struct Chain {
    /// Each link on the way, with its stamp.
    links: Vec<(PathBuf, Stamp)>,
    /// The file the chain ends at.
    real: PathBuf,
    /// Every link (or the file, when it is none) is in a directory only root can change: the
    /// chain is kept without checks.
    system: bool,
}

/// Resolves program words to what they run, with a bounded cache.
#[derive(Debug, Default)]
pub(crate) struct Identity {
    cache: Mutex<HashMap<PathBuf, Chain>>,
}

fn stamp(m: &std::fs::Metadata) -> Stamp {
    (m.dev(), m.ino(), m.mtime(), m.mtime_nsec())
}

impl Identity {
    /// The name `word` runs as when it differs from the word's own file name: the real file's
    /// name (a link followed), unless that is a multi-call binary. Shell builtins and keywords are
    /// themselves.
    pub fn real_name(&self, word: &str, cwd: Option<&Path>, lookup: &PathLookup) -> Option<String> {
        if word.is_empty() || (!word.contains('/') && is_shell_word(word)) {
            return None;
        }
        let path = lookup.command_path(word, cwd)?;
        let real = self.real_file(&path)?;
        let real_name = real.file_name()?.to_str()?;
        (real_name != basename(word) && !MULTI_CALL.contains(&real_name)).then(|| real_name.to_owned())
    }

    /// The file `path` ends at when it is a symbolic link; `None` when it is not one (or cannot
    /// be read).
    fn real_file(&self, path: &Path) -> Option<PathBuf> {
        if let Ok(cache) = self.cache.lock()
            && let Some(chain) = cache.get(path)
            && chain.system
        {
            return (!chain.links.is_empty()).then(|| chain.real.clone());
        }
        let first = std::fs::symlink_metadata(path).ok()?;
        if !first.file_type().is_symlink() {
            if system_dir(path) {
                self.remember(
                    path,
                    Chain {
                        links: Vec::new(),
                        real: path.to_path_buf(),
                        system: true,
                    },
                );
            }
            return None;
        }
        if let Ok(cache) = self.cache.lock()
            && let Some(chain) = cache.get(path)
            && chain.links.first().is_some_and(|(_, s)| *s == stamp(&first))
            && chain.links[1..]
                .iter()
                .all(|(p, s)| std::fs::symlink_metadata(p).is_ok_and(|m| stamp(&m) == *s))
        {
            return Some(chain.real.clone());
        }
        let chain = follow(path)?;
        let real = chain.real.clone();
        self.remember(path, chain);
        Some(real)
    }

    fn remember(&self, path: &Path, chain: Chain) {
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
            cache.insert(path.to_path_buf(), chain);
        }
    }
}

/// Whether the directory holding `path` can only be changed by root (owned by root, writable by
/// no one else) and the engine does not run as root (whose commands could change it).
fn system_dir(path: &Path) -> bool {
    static ENGINE_IS_ROOT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let root = *ENGINE_IS_ROOT.get_or_init(|| std::fs::metadata("/proc/self").map_or(true, |m| m.uid() == 0));
    !root
        && path
            .parent()
            .and_then(|d| std::fs::metadata(d).ok())
            .is_some_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0)
}

fn follow(path: &Path) -> Option<Chain> {
    let mut links: Vec<(PathBuf, Stamp)> = Vec::new();
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let m = std::fs::symlink_metadata(&p).ok()?;
        if !m.file_type().is_symlink() {
            let system = links.iter().all(|(l, _)| system_dir(l.as_path()));
            return Some(Chain {
                links,
                real: p,
                system,
            });
        }
        let target = std::fs::read_link(&p).ok()?;
        links.push((p.clone(), stamp(&m)));
        p = lexical_normalize(&p.parent().unwrap_or(Path::new("/")).join(target));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn links_are_followed_and_multi_call_binaries_keep_their_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let lookup = PathLookup::new(Some(&OsString::from("/usr/bin:/bin")));
        let id = Identity::default();
        std::fs::write(d.join("rm"), "").unwrap();
        std::fs::write(d.join("busybox"), "").unwrap();
        std::os::unix::fs::symlink(d.join("rm"), d.join("del")).unwrap();
        std::os::unix::fs::symlink("del", d.join("del2")).unwrap();
        std::os::unix::fs::symlink(d.join("busybox"), d.join("bb")).unwrap();
        assert_eq!(id.real_name("./del", Some(d), &lookup).as_deref(), Some("rm"));
        assert_eq!(id.real_name("./del2", Some(d), &lookup).as_deref(), Some("rm"));
        assert_eq!(id.real_name("./bb", Some(d), &lookup), None);
        assert_eq!(id.real_name("./rm", Some(d), &lookup), None);
        assert_eq!(id.real_name("cd", Some(d), &lookup), None);
        // A replaced link is read again.
        std::fs::remove_file(d.join("del")).unwrap();
        std::fs::write(d.join("cat"), "").unwrap();
        std::os::unix::fs::symlink(d.join("cat"), d.join("del")).unwrap();
        assert_eq!(id.real_name("./del2", Some(d), &lookup).as_deref(), Some("cat"));
    }
}
