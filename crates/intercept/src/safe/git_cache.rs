//! The judgement of a directory's repository configuration, kept while nothing it was read from
//! changed. Every directory whose entries the judgement looked at (each level walked up, the
//! repository directory, `modules/`) and every file it read is stamped (device, inode, size, mode,
//! modification and change times); a later judgement of the same directory re-stats them and
//! reuses the verdict only when every stamp is the same. Creating, removing or renaming an entry
//! changes its directory's stamp, writing a file changes the file's, and setting a time back still
//! moves the change time. A judgement that read anything modified in the last two seconds is not
//! kept: a second write within the file system's time granularity could leave the stamp as it was.
//! Within one judgement (see [`new_judgement`]) a verdict checked once is not checked again: the
//! git commands of one command line are judged against the same moment's files.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

/// How many directories' judgements are kept (all are dropped when full).
const CAPACITY: usize = 256;

/// How recent a modification makes a judgement too young to keep.
const RACY: Duration = Duration::from_secs(2);

/// What a path looked like: `None` when it did not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp(Option<Seen>);

/// Device, inode, size, mode, modification and change times (seconds, nanoseconds).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    file: (u64, u64, u64, u32),
    times: [i64; 4],
}

fn stamp(path: &Path) -> Stamp {
    Stamp(std::fs::metadata(path).ok().map(|m| Seen {
        file: (m.dev(), m.ino(), m.size(), m.mode()),
        times: [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()],
    }))
}

/// The paths a judgement depended on, stamped when first looked at.
#[derive(Default)]
pub(super) struct Watched(Vec<(PathBuf, Stamp)>);

impl Watched {
    /// Note `path` (a directory whose entries are looked at, or a file that is read).
    pub(super) fn note(&mut self, path: &Path) {
        if !self.0.iter().any(|(p, _)| p == path) {
            self.0.push((path.to_path_buf(), stamp(path)));
        }
    }

    fn unchanged(&self) -> bool {
        self.0.iter().all(|(p, s)| stamp(p) == *s)
    }

    fn settled(&self) -> bool {
        let now = SystemTime::now();
        self.0.iter().all(|(p, _)| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .map_or(true, |t| now.duration_since(t).is_ok_and(|age| age > RACY))
        })
    }
}

struct Kept {
    watched: Watched,
    verdict: Result<(), String>,
    /// The judgement in which the stamps were last found unchanged.
    checked: u64,
}

static CACHE: LazyLock<Mutex<HashMap<PathBuf, Kept>>> = LazyLock::new(Mutex::default);

/// Counts judgements: a kept verdict checked in the current one is reused without looking again.
static JUDGEMENT: AtomicU64 = AtomicU64::new(0);

/// A new judgement starts: kept verdicts are checked against the files again when next used.
pub(crate) fn new_judgement() {
    JUDGEMENT.fetch_add(1, Ordering::Relaxed);
}

/// The verdict of `judge` for `dir`, reused while what it read is unchanged.
pub(super) fn cached(
    dir: &Path,
    judge: impl FnOnce(&mut Watched) -> Result<(), String>,
) -> Result<(), String> {
    let judgement = JUDGEMENT.load(Ordering::Relaxed);
    if let Ok(mut cache) = CACHE.lock()
        && let Some(kept) = cache.get_mut(dir)
        && (kept.checked == judgement || kept.watched.unchanged())
    {
        kept.checked = judgement;
        return kept.verdict.clone();
    }
    let mut watched = Watched::default();
    let verdict = judge(&mut watched);
    if watched.settled()
        && let Ok(mut cache) = CACHE.lock()
    {
        if cache.len() >= CAPACITY {
            cache.clear();
        }
        cache.insert(
            dir.to_path_buf(),
            Kept {
                watched,
                verdict: verdict.clone(),
                checked: judgement,
            },
        );
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Set a path's modification time well in the past (its change time moves to now).
    fn age(path: &Path) {
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(path).unwrap().set_modified(old).unwrap();
    }

    #[test]
    fn a_kept_verdict_follows_every_change_to_what_was_read() {
        let ws = tempfile::tempdir().unwrap();
        let git = ws.path().join(".git");
        std::fs::create_dir_all(&git).unwrap();
        let config = git.join("config");
        std::fs::write(&config, "[core]\n\tbare = false\n").unwrap();
        for p in [config.as_path(), git.as_path(), ws.path()] {
            age(p);
        }
        let judge = || {
            new_judgement();
            super::super::git_repo::config_runs_nothing(ws.path())
        };
        assert_eq!(judge(), Ok(()));
        assert!(
            CACHE.lock().unwrap().contains_key(ws.path()),
            "a settled verdict is kept"
        );
        assert_eq!(judge(), Ok(()));
        // Within one judgement the verdict is not checked again.
        assert_eq!(super::super::git_repo::config_runs_nothing(ws.path()), Ok(()));
        // A rewrite of the configuration (even one that keeps its size and time) is seen.
        std::fs::write(&config, "[core]\n\tfsmonitor = x\n").unwrap();
        age(&config);
        assert!(judge().is_err());
        // So is a submodule directory appearing.
        std::fs::write(&config, "[core]\n\tbare = false\n").unwrap();
        age(&config);
        assert_eq!(judge(), Ok(()));
        let sub = git.join("modules/s");
        std::fs::create_dir_all(sub.join("objects")).unwrap();
        std::fs::write(sub.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(sub.join("config"), "[core]\n\tfsmonitor = x\n").unwrap();
        assert!(judge().is_err());
    }
}
