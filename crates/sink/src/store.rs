//! [`ArtifactStore`]: a directory of spilled outputs shared by every process of a user.
//!
//! Artifacts are files `<n>.log` named by a decimal id and addressed as `artifact://<n>`. Ids are
//! allocated with `O_CREAT|O_EXCL`, so concurrent processes never share one. An id is parsed as a
//! number before any path is built, so no id can reach outside the directory. Each allocation first
//! prunes expired artifacts and, when the store is over three quarters of its quota, the oldest ones.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Default total size of a store.
pub const DEFAULT_QUOTA_BYTES: u64 = 1 << 30;
/// Default size limit of one artifact (the start of a longer output is kept, with a notice).
pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 512 << 20;
/// Default age after which artifacts are removed.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Longest prefix of one line that [`ArtifactStore::for_each_line`] hands out.
pub const MAX_LINE_PREFIX: usize = 1 << 20;

const SCHEME: &str = "artifact://";
/// How much more an artifact may grow each time it asks the store ([`ArtifactStore::extend`]).
pub const LEASE_STEP: u64 = 16 << 20;
/// A lease whose file has not been touched for this long belongs to a writer that is gone.
const LEASE_STALE: Duration = Duration::from_secs(120);
/// Artifacts modified this recently may still be written by another process: never pruned for quota.
const IN_USE_GRACE: Duration = Duration::from_secs(10);

/// Errors of the artifact store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The id is not `<n>` or `artifact://<n>`.
    #[error("artifact id must be a number (artifact://<n>), got: {0:?}")]
    InvalidId(String),
    /// No artifact with that id.
    #[error("artifact://{id} not found; available: {available}")]
    NotFound {
        /// The id asked for.
        id: u64,
        /// Ids present, comma-separated (or `none`).
        available: String,
    },
    /// No directory could be determined for the default store.
    #[error("no artifact directory: set SHELLGATE_ARTIFACT_DIR, XDG_STATE_HOME or HOME")]
    NoDirectory,
    /// A range argument could not be parsed.
    #[error("invalid range {0:?}: expected A:B, A: or :B")]
    BadRange(String),
    /// A search pattern is not a valid regular expression.
    #[error("invalid pattern: {0}")]
    BadPattern(String),
    /// A file-system operation failed.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

fn io_err<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> StoreError + 'a {
    move |source| StoreError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// An artifact id: the `<n>` of `artifact://<n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ArtifactId(pub u64);

impl ArtifactId {
    /// Parse `<n>` or `artifact://<n>` (decimal digits only).
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        let digits = text.trim().strip_prefix(SCHEME).unwrap_or(text.trim());
        if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(StoreError::InvalidId(text.to_owned()));
        }
        digits
            .parse()
            .map(ArtifactId)
            .map_err(|_| StoreError::InvalidId(text.to_owned()))
    }

    /// `artifact://<n>`.
    pub fn uri(self) -> String {
        format!("{SCHEME}{}", self.0)
    }

    fn file_name(self) -> String {
        format!("{}.log", self.0)
    }

    fn from_file_name(name: &str) -> Option<Self> {
        let digits = name.strip_suffix(".log")?;
        if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().map(ArtifactId)
    }
}

impl std::fmt::Display for ArtifactId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{SCHEME}{}", self.0)
    }
}

/// Where a store lives and how much it may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// The directory (created with mode 0700 if missing).
    pub dir: PathBuf,
    /// Total bytes the store may hold; older artifacts are removed to make room.
    pub quota_bytes: u64,
    /// Bytes one artifact may hold.
    pub max_artifact_bytes: u64,
    /// Artifacts older than this are removed.
    pub max_age: Duration,
}

impl StoreConfig {
    /// A store in `dir` with the default quota and expiry.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            quota_bytes: DEFAULT_QUOTA_BYTES,
            max_artifact_bytes: DEFAULT_MAX_ARTIFACT_BYTES,
            max_age: DEFAULT_MAX_AGE,
        }
    }

    /// The store of one project: `projects/<hash>` under [`StoreConfig::default_dir`], named by a
    /// hash of the project directory's resolved path, so that an engine serving one project never
    /// lists or reads another's outputs. `$SHELLGATE_ARTIFACT_DIR`, when set, is used as it is.
    pub fn project_dir(project: &Path) -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("SHELLGATE_ARTIFACT_DIR").filter(|v| !v.is_empty()) {
            return Some(PathBuf::from(dir));
        }
        let resolved = fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        Some(Self::default_dir()?.join("projects").join(project_key(&resolved)))
    }

    /// `$SHELLGATE_ARTIFACT_DIR`, else `$XDG_STATE_HOME/shellgate/artifacts`, else
    /// `~/.local/state/shellgate/artifacts`.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |name| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(dir) = var("SHELLGATE_ARTIFACT_DIR") {
            return Some(dir);
        }
        if let Some(state) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
            return Some(state.join("shellgate").join("artifacts"));
        }
        var("HOME").map(|home| home.join(".local/state/shellgate/artifacts"))
    }
}

/// A newly allocated artifact, open for writing.
#[derive(Debug)]
pub struct NewArtifact {
    /// Its id.
    pub id: ArtifactId,
    /// Its file.
    pub path: PathBuf,
    /// The open file (mode 0600).
    pub file: File,
    /// How many bytes it may hold (store quota and per-artifact limit).
    pub limit: u64,
}

/// One entry of [`ArtifactStore::list`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtifactInfo {
    /// Its id.
    pub id: ArtifactId,
    /// `artifact://<id>`.
    pub uri: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Last modification, seconds since the Unix epoch.
    pub modified_unix: u64,
}

/// A line range, 1-based and inclusive; `None` ends are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineRange {
    /// First line (default 1).
    pub first: Option<u64>,
    /// Last line (default: the last).
    pub last: Option<u64>,
}

/// A byte range, 0-based, end exclusive; `None` ends are open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ByteRange {
    /// First byte offset (default 0).
    pub start: Option<u64>,
    /// End offset, exclusive (default: the end).
    pub end: Option<u64>,
}

/// Parse `A:B`, `A:`, `:B` or `A` (meaning `A:A`) into two optional numbers.
pub fn parse_range(text: &str) -> Result<(Option<u64>, Option<u64>), StoreError> {
    let bad = || StoreError::BadRange(text.to_owned());
    let num = |s: &str| -> Result<Option<u64>, StoreError> {
        let s = s.trim();
        if s.is_empty() {
            Ok(None)
        } else {
            s.parse().map(Some).map_err(|_| bad())
        }
    };
    if let Some((a, b)) = text.split_once(':') {
        Ok((num(a)?, num(b)?))
    } else {
        let a = num(text)?.ok_or_else(bad)?;
        Ok((Some(a), Some(a)))
    }
}

/// A short, stable name for a project directory: FNV-1a of its path, in hex.
fn project_key(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let hash = path
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// The spilled outputs of one user; see the module docs.
#[derive(Debug)]
pub struct ArtifactStore {
    config: StoreConfig,
    next_id: Mutex<Option<u64>>,
}

impl ArtifactStore {
    /// Open (creating if needed) a store.
    pub fn open(config: StoreConfig) -> Result<Self, StoreError> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&config.dir)
            .map_err(io_err("create", &config.dir))?;
        Ok(Self {
            config,
            next_id: Mutex::new(None),
        })
    }

    /// Open the store of the project in the current directory ([`StoreConfig::project_dir`]).
    pub fn open_default() -> Result<Self, StoreError> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Self::open_for_project(&cwd)
    }

    /// Open the store of the project in `project` ([`StoreConfig::project_dir`]).
    pub fn open_for_project(project: &Path) -> Result<Self, StoreError> {
        let dir = StoreConfig::project_dir(project).ok_or(StoreError::NoDirectory)?;
        Self::open(StoreConfig::new(dir))
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.config.dir
    }

    /// Allocate a new, empty artifact (pruning first). Its `limit` is a first lease of the store's
    /// room; a writer that needs more asks [`ArtifactStore::extend`], and the store never grants
    /// more than its quota across all writers, whichever process they are in.
    pub fn create(&self) -> Result<NewArtifact, StoreError> {
        self.prune()?;
        let mut next = self.next_id.lock().unwrap_or_else(PoisonError::into_inner);
        let mut id = match *next {
            Some(id) => id,
            None => self.list()?.last().map_or(1, |a| a.id.0 + 1),
        };
        loop {
            let path = self.config.dir.join(ArtifactId(id).file_name());
            match OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => {
                    *next = Some(id + 1);
                    drop(next);
                    let limit = self.extend(ArtifactId(id), 0)?;
                    return Ok(NewArtifact {
                        id: ArtifactId(id),
                        path,
                        file,
                        limit,
                    });
                }
                // Another process took this id: try the next one.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => id += 1,
                Err(e) => return Err(io_err("create", &path)(e)),
            }
        }
    }

    /// Ask for room for artifact `id`, which has `written` bytes: returns its new limit (at least
    /// `written`; more when the store has room, up to `LEASE_STEP` more and the per-artifact
    /// limit). The store's quota counts every artifact's size and every live writer's lease, under
    /// a lock on the store, so concurrent writers together never pass it.
    pub fn extend(&self, id: ArtifactId, written: u64) -> Result<u64, StoreError> {
        let dir = &self.config.dir;
        // Held until the lease is written; closing the file releases it.
        let lock = File::create(dir.join(".lock")).map_err(io_err("lock", dir))?;
        lock.lock().map_err(io_err("lock", dir))?;
        let leases = self.leases();
        let usage: u64 = self
            .list()?
            .iter()
            .filter(|a| a.id != id)
            .map(|a| leases.get(&a.id.0).map_or(a.bytes, |&lease| lease.max(a.bytes)))
            .sum();
        let room = self.config.quota_bytes.saturating_sub(usage);
        let limit = (written + LEASE_STEP)
            .min(self.config.max_artifact_bytes)
            .min(room)
            .max(written);
        let lease = dir.join(format!("{}.lease", id.0));
        fs::write(&lease, limit.to_string()).map_err(io_err("write", &lease))?;
        Ok(limit)
    }

    /// The writer of `id` is done: its lease no longer counts.
    pub fn release(&self, id: ArtifactId) {
        let _ = fs::remove_file(self.config.dir.join(format!("{}.lease", id.0)));
    }

    /// Live leases by id (stale ones are removed).
    fn leases(&self) -> std::collections::HashMap<u64, u64> {
        let mut out = std::collections::HashMap::new();
        let Ok(entries) = fs::read_dir(&self.config.dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".lease"))
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_none_or(|age| age > LEASE_STALE);
            if stale {
                let _ = fs::remove_file(entry.path());
            } else if let Some(bytes) = fs::read_to_string(entry.path())
                .ok()
                .and_then(|t| t.trim().parse().ok())
            {
                out.insert(id, bytes);
            }
        }
        out
    }

    /// The file of an artifact (which must exist). Accepts `<n>` or `artifact://<n>`.
    pub fn resolve(&self, id: &str) -> Result<PathBuf, StoreError> {
        let id = ArtifactId::parse(id)?;
        let path = self.config.dir.join(id.file_name());
        if path.is_file() {
            return Ok(path);
        }
        let available: Vec<String> = self
            .list()
            .unwrap_or_default()
            .iter()
            .map(|a| a.id.0.to_string())
            .collect();
        Err(StoreError::NotFound {
            id: id.0,
            available: if available.is_empty() {
                "none".to_owned()
            } else {
                available.join(", ")
            },
        })
    }

    /// Every artifact, by id.
    pub fn list(&self) -> Result<Vec<ArtifactInfo>, StoreError> {
        let dir = &self.config.dir;
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).map_err(io_err("read", dir))? {
            let Ok(entry) = entry else { continue };
            let Some(id) = entry.file_name().to_str().and_then(ArtifactId::from_file_name) else {
                continue;
            };
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let modified_unix = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            out.push(ArtifactInfo {
                id,
                uri: id.uri(),
                bytes: meta.len(),
                modified_unix,
            });
        }
        out.sort_by_key(|a| a.id);
        Ok(out)
    }

    /// Remove expired artifacts, then the oldest ones while the store is above three quarters of its
    /// quota. Returns the bytes still in use.
    pub fn prune(&self) -> Result<u64, StoreError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let max_age = self.config.max_age.as_secs();
        let mut kept = Vec::new();
        for artifact in self.list()? {
            if now.saturating_sub(artifact.modified_unix) > max_age {
                self.remove_file(artifact.id);
            } else {
                kept.push(artifact);
            }
        }
        let mut usage: u64 = kept.iter().map(|a| a.bytes).sum();
        let target = self.config.quota_bytes / 4 * 3;
        for artifact in &kept {
            if usage <= target {
                break;
            }
            if now.saturating_sub(artifact.modified_unix) < IN_USE_GRACE.as_secs() {
                continue;
            }
            if self.remove_file(artifact.id) {
                usage -= artifact.bytes;
            }
        }
        Ok(usage)
    }

    /// Delete one artifact.
    pub fn remove(&self, id: &str) -> Result<(), StoreError> {
        let path = self.resolve(id)?;
        fs::remove_file(&path).map_err(io_err("remove", &path))
    }

    fn remove_file(&self, id: ArtifactId) -> bool {
        fs::remove_file(self.config.dir.join(id.file_name())).is_ok()
    }

    fn open_file(&self, id: &str) -> Result<(File, PathBuf), StoreError> {
        let path = self.resolve(id)?;
        let file = File::open(&path).map_err(io_err("open", &path))?;
        Ok((file, path))
    }

    /// Copy a byte range of an artifact to `out`; returns the bytes copied.
    pub fn copy_bytes(&self, id: &str, range: ByteRange, out: &mut dyn Write) -> Result<u64, StoreError> {
        let (mut file, path) = self.open_file(id)?;
        let start = range.start.unwrap_or(0);
        file.seek(SeekFrom::Start(start)).map_err(io_err("seek", &path))?;
        let len = range.end.map_or(u64::MAX, |end| end.saturating_sub(start));
        io::copy(&mut file.take(len), out).map_err(io_err("copy", &path))
    }

    /// Copy a line range of an artifact (raw bytes, newlines included) to `out`; returns the bytes
    /// copied.
    pub fn copy_lines(&self, id: &str, range: LineRange, out: &mut dyn Write) -> Result<u64, StoreError> {
        let (file, path) = self.open_file(id)?;
        copy_lines(file, range, out).map_err(io_err("read", &path))
    }

    /// Call `f(line_number, line)` for each line (without its newline; at most [`MAX_LINE_PREFIX`]
    /// bytes of it) until `f` returns `false`. Returns the number of lines visited.
    pub fn for_each_line(&self, id: &str, mut f: impl FnMut(u64, &[u8]) -> bool) -> Result<u64, StoreError> {
        let (file, path) = self.open_file(id)?;
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut line = Vec::new();
        let mut number = 0u64;
        let mut in_line = false;
        loop {
            let buf = reader.fill_buf().map_err(io_err("read", &path))?;
            if buf.is_empty() {
                if in_line {
                    number += 1;
                    f(number, &line);
                }
                return Ok(number);
            }
            in_line = true;
            let (piece, used, ended) = match memchr::memchr(b'\n', buf) {
                Some(k) => (&buf[..k], k + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = MAX_LINE_PREFIX.saturating_sub(line.len());
            line.extend_from_slice(&piece[..piece.len().min(room)]);
            reader.consume(used);
            if ended {
                number += 1;
                in_line = false;
                if !f(number, &line) {
                    return Ok(number);
                }
                line.clear();
            }
        }
    }

    /// Call `f(line_number, line)` for each line within `range` that matches the regular expression
    /// `pattern`, until `f` returns `false`. Returns the number of lines visited.
    pub fn grep(
        &self,
        id: &str,
        pattern: &str,
        range: LineRange,
        mut f: impl FnMut(u64, &[u8]) -> bool,
    ) -> Result<u64, StoreError> {
        let re = regex::bytes::Regex::new(pattern).map_err(|e| StoreError::BadPattern(e.to_string()))?;
        let first = range.first.unwrap_or(1);
        let last = range.last.unwrap_or(u64::MAX);
        self.for_each_line(id, |n, line| {
            if n < first {
                return true;
            }
            n <= last && (!re.is_match(line) || f(n, line))
        })
    }

    /// Size of an artifact in bytes.
    pub fn size(&self, id: &str) -> Result<u64, StoreError> {
        let path = self.resolve(id)?;
        Ok(fs::metadata(&path).map_err(io_err("stat", &path))?.len())
    }
}

/// Copy lines `range` of `input` to `out`, scanning with memchr rather than line by line.
fn copy_lines(mut input: impl Read, range: LineRange, out: &mut dyn Write) -> io::Result<u64> {
    let first = range.first.unwrap_or(1).max(1);
    let last = range.last.unwrap_or(u64::MAX);
    if last < first {
        return Ok(0);
    }
    let mut buf = vec![0u8; 256 * 1024];
    let mut line = 1u64;
    let mut copied = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(copied),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        if line < first {
            // Skip to the start of line `first`.
            let skip = (first - line - 1) as usize;
            let Some(k) = memchr::memchr_iter(b'\n', chunk).nth(skip) else {
                line += crate::scan::count_newlines(chunk);
                continue;
            };
            line = first;
            chunk = &chunk[k + 1..];
        }
        // Copy through the end of line `last`.
        let more = last - line;
        let end = usize::try_from(more)
            .ok()
            .and_then(|m| memchr::memchr_iter(b'\n', chunk).nth(m));
        if let Some(k) = end {
            out.write_all(&chunk[..=k])?;
            return Ok(copied + k as u64 + 1);
        }
        out.write_all(chunk)?;
        copied += chunk.len() as u64;
        line += crate::scan::count_newlines(chunk);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, ArtifactStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::open(StoreConfig::new(dir.path().join("a"))).unwrap();
        (dir, store)
    }

    fn write(store: &ArtifactStore, bytes: &[u8]) -> ArtifactId {
        let mut new = store.create().unwrap();
        new.file.write_all(bytes).unwrap();
        new.id
    }

    #[test]
    fn ids_parse_strictly() {
        assert_eq!(ArtifactId::parse("artifact://7").unwrap(), ArtifactId(7));
        assert_eq!(ArtifactId::parse("12").unwrap(), ArtifactId(12));
        for bad in [
            "",
            "artifact://",
            "../1",
            "1/../../etc/passwd",
            "-1",
            "1.log",
            "٣",
            "99999999999999999999",
        ] {
            assert!(
                matches!(ArtifactId::parse(bad), Err(StoreError::InvalidId(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn ids_are_sequential_and_unique() {
        let (_dir, store) = store();
        let a = write(&store, b"a");
        let b = write(&store, b"b");
        assert_eq!(b.0, a.0 + 1);
        // A second handle (as another process would have) does not reuse ids.
        let other = ArtifactStore::open(store.config().clone()).unwrap();
        let c = write(&other, b"c");
        let d = write(&store, b"d");
        assert!(c.0 > b.0 && d.0 > c.0, "{c:?} {d:?}");
        let listed: Vec<u64> = store.list().unwrap().iter().map(|a| a.id.0).collect();
        assert_eq!(listed, vec![a.0, b.0, c.0, d.0]);
    }

    #[test]
    fn reads_by_lines_and_bytes() {
        let (_dir, store) = store();
        let mut text = String::new();
        for i in 1..=1000 {
            text.push_str(&i.to_string());
            text.push('\n');
        }
        let id = write(&store, text.as_bytes()).uri();
        let mut out = Vec::new();
        store
            .copy_lines(
                &id,
                LineRange {
                    first: Some(10),
                    last: Some(12),
                },
                &mut out,
            )
            .unwrap();
        assert_eq!(out, b"10\n11\n12\n");
        out.clear();
        store
            .copy_lines(
                &id,
                LineRange {
                    first: Some(999),
                    last: None,
                },
                &mut out,
            )
            .unwrap();
        assert_eq!(out, b"999\n1000\n");
        out.clear();
        store
            .copy_bytes(
                &id,
                ByteRange {
                    start: Some(2),
                    end: Some(6),
                },
                &mut out,
            )
            .unwrap();
        assert_eq!(out, b"2\n3\n");
        let mut seen = Vec::new();
        let lines = store
            .for_each_line(&id, |n, l| {
                seen.push((n, l.to_vec()));
                n < 3
            })
            .unwrap();
        assert_eq!(lines, 3);
        assert_eq!(seen[2], (3, b"3".to_vec()));
        let mut hits = Vec::new();
        store
            .grep(
                &id,
                "^99",
                LineRange {
                    first: Some(100),
                    last: Some(995),
                },
                |n, _| {
                    hits.push(n);
                    true
                },
            )
            .unwrap();
        assert_eq!(hits, (990..=995).collect::<Vec<u64>>());
        assert!(matches!(
            store.grep(&id, "(", LineRange::default(), |_, _| true),
            Err(StoreError::BadPattern(_))
        ));
    }

    #[test]
    fn missing_artifacts_name_what_exists() {
        let (_dir, store) = store();
        write(&store, b"x");
        let err = store.resolve("artifact://5").unwrap_err().to_string();
        assert_eq!(err, "artifact://5 not found; available: 1");
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range("3:9").unwrap(), (Some(3), Some(9)));
        assert_eq!(parse_range(":9").unwrap(), (None, Some(9)));
        assert_eq!(parse_range("4:").unwrap(), (Some(4), None));
        assert_eq!(parse_range("4").unwrap(), (Some(4), Some(4)));
        assert!(parse_range("a:b").is_err());
        assert!(parse_range("").is_err());
    }

    #[test]
    fn quota_removes_the_oldest_artifacts() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = StoreConfig::new(dir.path());
        config.quota_bytes = 1000;
        let store = ArtifactStore::open(config).unwrap();
        let first = write(&store, &[b'x'; 400]);
        let second = write(&store, &[b'x'; 400]);
        // Make both look old enough to be removable.
        let old = SystemTime::now() - Duration::from_secs(60);
        for id in [first, second] {
            File::options()
                .write(true)
                .open(dir.path().join(id.file_name()))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        let third = store.create().unwrap();
        assert!(third.limit >= 600, "{}", third.limit);
        let ids: Vec<ArtifactId> = store.list().unwrap().iter().map(|a| a.id).collect();
        assert_eq!(ids, vec![second, third.id]);
    }

    #[test]
    fn expired_artifacts_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = StoreConfig::new(dir.path());
        config.max_age = Duration::from_secs(3600);
        let store = ArtifactStore::open(config).unwrap();
        let old = write(&store, b"old");
        File::options()
            .write(true)
            .open(dir.path().join(old.file_name()))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(7200))
            .unwrap();
        let new = write(&store, b"new");
        let ids: Vec<ArtifactId> = store.list().unwrap().iter().map(|a| a.id).collect();
        assert_eq!(ids, vec![new]);
    }
}
