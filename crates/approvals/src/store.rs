//! The user's approvals file: rules a person allowed "always", readable and editable.
//!
//! ```toml
//! version = 1
//!
//! [[rule]]
//! argv = ["ls", "-a"]
//! added = "2026-12-01T10:00:00Z"
//! command = "ls -a"
//! ```
//!
//! Each `argv` allows exactly that command line (no further arguments). A `[[domain]]` entry
//! (`address = "pypi.org:443"`) lets sandboxes whose network is `"proxy"` reach exactly that host
//! and port besides their `allowed_domains` (`denied_domains` still wins). Writers take an
//! exclusive lock on `approvals.toml.lock`, read the file, and replace it atomically (a temporary
//! file renamed over it), so concurrent writers from several processes lose no rule. The file is
//! created with mode 0600.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

pub use super::stored_domain::StoredDomain;
use super::stored_domain::is_exact_address;

/// The format version this engine reads and writes.
pub const FORMAT_VERSION: u32 = 1;

const HEADER: &str = "# shellgate approvals: commands a person allowed always.\n\
# Each `argv` allows exactly that command line (no further arguments). Remove an entry to revoke\n\
# it (or run `shellgate approvals revoke`).\n";

/// Why the approvals file cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file is not a valid approvals file; no rule of it applies.
    #[error("{path}: line {line}: {message}; no rule from this file applies until it is fixed")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The line of the error (1-based).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Reading, locking or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// No rule matches what should be revoked.
    #[error("no rule `{0}` in the approvals file")]
    NoSuchRule(String),
}

/// One persisted rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredRule {
    /// The exact argv it allows.
    pub argv: Vec<String>,
    /// When it was added (RFC 3339, UTC).
    #[serde(default)]
    pub added: String,
    /// The command that was approved.
    #[serde(default)]
    pub command: String,
}

impl StoredRule {
    /// The argv as a shell-like line (`ls -a`), as `approvals list` shows it.
    pub fn display(&self) -> String {
        self.argv
            .iter()
            .map(|w| {
                if !w.is_empty()
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
                {
                    w.clone()
                } else {
                    format!("'{}'", w.replace('\'', "'\\''"))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileData {
    version: u32,
    #[serde(default, rename = "rule")]
    rules: Vec<StoredRule>,
    #[serde(default, rename = "domain", skip_serializing_if = "Vec::is_empty")]
    domains: Vec<StoredDomain>,
}

/// `$XDG_CONFIG_HOME/shellgate/approvals.toml`, else `~/.config/shellgate/approvals.toml`.
pub fn default_approvals_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("shellgate").join("approvals.toml"))
}

/// The approvals file at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalsFile {
    path: PathBuf,
}

impl ApprovalsFile {
    /// The file at `path` (it need not exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its rules (none when it does not exist).
    pub fn load(&self) -> Result<Vec<StoredRule>, StoreError> {
        self.load_data().map(|data| data.rules)
    }

    /// The destinations allowed always (none when it does not exist).
    pub fn load_domains(&self) -> Result<Vec<StoredDomain>, StoreError> {
        self.load_data().map(|data| data.domains)
    }

    fn load_data(&self) -> Result<FileData, StoreError> {
        match fs::read_to_string(&self.path) {
            Ok(text) => self.parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FileData::default()),
            Err(source) => Err(self.io(source)),
        }
    }

    fn parse(&self, text: &str) -> Result<FileData, StoreError> {
        let corrupt = |line: usize, message: String| StoreError::Corrupt {
            path: self.path.clone(),
            line,
            message,
        };
        let data: FileData = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            corrupt(line, e.message().trim_end().to_owned())
        })?;
        if data.version != FORMAT_VERSION {
            let line = line_of(text, "version");
            return Err(corrupt(
                line,
                format!(
                    "unsupported version {} (this engine reads version {FORMAT_VERSION})",
                    data.version
                ),
            ));
        }
        if let Some(i) = data
            .rules
            .iter()
            .position(|r| r.argv.is_empty() || r.argv[0].is_empty())
        {
            let line = text
                .match_indices("[[rule]]")
                .nth(i)
                .map_or(1, |(at, _)| text[..at].matches('\n').count() + 1);
            return Err(corrupt(line, "a rule's `argv` must name a program".into()));
        }
        if let Some(i) = data.domains.iter().position(|d| !is_exact_address(&d.address)) {
            let line = text
                .match_indices("[[domain]]")
                .nth(i)
                .map_or(1, |(at, _)| text[..at].matches('\n').count() + 1);
            return Err(corrupt(
                line,
                "a domain's `address` must be an exact host:port".into(),
            ));
        }
        Ok(data)
    }

    /// Add `address` (`host:port`) to the destinations allowed always, under the lock. Returns
    /// whether it was new.
    pub fn add_domain(&self, address: &str, command: &str) -> Result<bool, StoreError> {
        if !is_exact_address(address) {
            return Err(self.io(std::io::Error::other(format!(
                "{address:?} is not an exact host:port"
            ))));
        }
        self.update(|data| {
            if data.domains.iter().any(|d| d.address == address) {
                return Ok(false);
            }
            data.domains.push(StoredDomain {
                address: address.to_owned(),
                added: super::rfc3339(SystemTime::now()),
                command: command.to_owned(),
            });
            Ok(true)
        })
    }

    /// Add `rules` (those not already present), under the lock. Returns the rules that were new.
    pub fn add(&self, argvs: &[Vec<String>], command: &str) -> Result<Vec<StoredRule>, StoreError> {
        self.update(|data| {
            let rules = &mut data.rules;
            let added = super::rfc3339(SystemTime::now());
            let mut new = Vec::new();
            for argv in argvs {
                if !rules.iter().any(|r| &r.argv == argv) {
                    let rule = StoredRule {
                        argv: argv.clone(),
                        added: added.clone(),
                        command: command.to_owned(),
                    };
                    rules.push(rule.clone());
                    new.push(rule);
                }
            }
            Ok(new)
        })
    }

    /// Remove the rule written as `rule` (its argv as [`StoredRule::display`] shows it, or its
    /// 1-based position in `approvals list`). Returns the removed rule.
    pub fn revoke(&self, rule: &str) -> Result<StoredRule, StoreError> {
        self.update(|data| {
            let rules = &mut data.rules;
            let at = rule
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1 && n <= rules.len())
                .map(|n| n - 1)
                .or_else(|| rules.iter().position(|r| r.display() == rule.trim()))
                .or_else(|| rules.iter().position(|r| r.argv.join(" ") == rule.trim()));
            match at {
                Some(i) => Ok(rules.remove(i)),
                None => Err(StoreError::NoSuchRule(rule.to_owned())),
            }
        })
    }

    /// Read, change and atomically replace the file while holding the lock.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut FileData) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let _lock = self.lock()?;
        let mut data = self.load_data()?;
        let out = change(&mut data)?;
        data.version = FORMAT_VERSION;
        self.write(&data)?;
        Ok(out)
    }

    fn lock(&self) -> Result<Flock<File>, StoreError> {
        let lock_path = self.path.with_extension("toml.lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| self.io(e))?;
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| self.io(errno.into()))
    }

    fn write(&self, data: &FileData) -> Result<(), StoreError> {
        let body = toml::to_string(data).map_err(|e| self.io(std::io::Error::other(e.to_string())))?;
        let tmp = self
            .path
            .with_extension(format!("toml.tmp.{}", std::process::id()));
        let result = (|| {
            let mut f = OpenOptions::new()
                .create(true)
                .truncate(true)
                .write(true)
                .mode(0o600)
                .open(&tmp)?;
            f.set_permissions(fs::Permissions::from_mode(0o600))?;
            f.write_all(HEADER.as_bytes())?;
            f.write_all(b"\n")?;
            f.write_all(body.as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(|e| self.io(e))
    }

    fn io(&self, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key))
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|&w| w.to_owned()).collect()
    }

    #[test]
    fn add_list_revoke_round_trip_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let file = ApprovalsFile::new(dir.path().join("shellgate/approvals.toml"));
        assert!(file.load().unwrap().is_empty());
        let new = file
            .add(
                &[argv(&["ls", "-a"]), argv(&["echo", "a b"])],
                "ls -a; echo 'a b'",
            )
            .unwrap();
        assert_eq!(new.len(), 2);
        assert!(file.add(&[argv(&["ls", "-a"])], "ls -a").unwrap().is_empty());
        let text = fs::read_to_string(file.path()).unwrap();
        assert!(text.contains("version = 1"), "{text}");
        assert!(text.contains("[[rule]]"), "{text}");
        let mode = fs::metadata(file.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let rules = file.load().unwrap();
        assert_eq!(rules[1].display(), "echo 'a b'");
        assert_eq!(file.revoke("echo 'a b'").unwrap().argv, argv(&["echo", "a b"]));
        assert_eq!(file.revoke("1").unwrap().argv, argv(&["ls", "-a"]));
        assert!(matches!(file.revoke("ls -a"), Err(StoreError::NoSuchRule(_))));
    }

    #[test]
    fn corrupt_files_name_path_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.toml");
        let file = ApprovalsFile::new(&path);
        fs::write(&path, "version = 1\n\n[[rule]]\nargv = [\"ls\"\n").unwrap();
        let err = file.load().unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("line 4") || err.contains("line 5"), "{err}");
        fs::write(&path, "version = 2\n").unwrap();
        let err = file.load().unwrap_err().to_string();
        assert!(err.contains("line 1") && err.contains("version 2"), "{err}");
        fs::write(&path, "version = 1\n[[rule]]\nargv = []\n").unwrap();
        let err = file.load().unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        // A writer does not replace a corrupt file (and lose what a person wrote).
        assert!(file.add(&[argv(&["ls"])], "ls").is_err());
    }

    #[test]
    fn concurrent_writers_lose_no_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("approvals.toml");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let file = ApprovalsFile::new(&path);
                std::thread::spawn(move || {
                    for i in 0..10 {
                        file.add(&[vec![format!("cmd{t}"), format!("{i}")]], "x").unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(ApprovalsFile::new(&path).load().unwrap().len(), 80);
    }
}
