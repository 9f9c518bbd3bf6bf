//! Resolving command names against PATH, as the shell will when the command runs.
//!
//! A rule naming a bare command (`sed`) must not match a binary the workspace planted (`./sed`,
//! `/tmp/x/sed`), so the lookup notices PATH entries that are relative (`.`, an empty entry,
//! `bin`): those resolve against whatever directory the command runs in.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

/// PATH as the policy saw it when it was built.
#[derive(Debug)]
pub(crate) struct PathLookup {
    entries: Vec<PathBuf>,
    has_relative: bool,
    cache: Mutex<HashMap<String, Option<PathBuf>>>,
}

impl PathLookup {
    /// From a PATH value (`None`: an empty PATH).
    pub fn new(path: Option<&OsString>) -> Self {
        let entries: Vec<PathBuf> = path
            .map(|p| std::env::split_paths(p).collect())
            .unwrap_or_default();
        let has_relative = entries.iter().any(|e| !e.is_absolute());
        Self {
            entries,
            has_relative,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a bare `name` resolves outside any relative PATH entry (or not at all). Without
    /// relative entries this needs no file-system access.
    pub fn bare_name_is_trusted(&self, name: &str) -> bool {
        if !self.has_relative {
            return true;
        }
        for dir in &self.entries {
            if !dir.is_absolute() {
                return false;
            }
            if is_executable(&dir.join(name)) {
                return true;
            }
        }
        true
    }

    /// The absolute path a bare `name` resolves to through the absolute PATH entries (stopping at
    /// a relative entry, which cannot be trusted).
    pub fn resolve(&self, name: &str) -> Option<PathBuf> {
        if let Ok(cache) = self.cache.lock()
            && let Some(hit) = cache.get(name)
        {
            return hit.clone();
        }
        let mut found = None;
        for dir in &self.entries {
            if !dir.is_absolute() {
                break;
            }
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                found = Some(candidate);
                break;
            }
        }
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() > 4096 {
                cache.clear();
            }
            cache.insert(name.to_owned(), found.clone());
        }
        found
    }

    /// The absolute path a command word (`git`, `/usr/bin/git`, `./sed`) names, `cwd` resolving
    /// relative paths; `None` when it cannot be known.
    pub fn command_path(&self, word: &str, cwd: Option<&Path>) -> Option<PathBuf> {
        if word.contains('/') {
            let p = Path::new(word);
            let abs = if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd?.join(p)
            };
            Some(lexical_normalize(&abs))
        } else {
            self.resolve(word)
        }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `a/./b/../c` → `a/c` without touching the file system.
pub(crate) fn lexical_normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_entries_make_bare_names_untrusted_when_reached() {
        let abs = PathLookup::new(Some(&OsString::from("/usr/bin:/bin")));
        assert!(abs.bare_name_is_trusted("sed"));
        let rel = PathLookup::new(Some(&OsString::from(".:/usr/bin")));
        assert!(!rel.bare_name_is_trusted("sed"));
        let late = PathLookup::new(Some(&OsString::from("/bin:/usr/bin:.")));
        assert!(late.bare_name_is_trusted("sh"), "sh is found in /bin before `.`");
    }

    #[test]
    fn command_paths() {
        let l = PathLookup::new(Some(&OsString::from("/bin:/usr/bin")));
        assert_eq!(
            l.command_path("./sed", Some(Path::new("/w"))),
            Some(PathBuf::from("/w/sed"))
        );
        assert_eq!(l.command_path("./sed", None), None);
        assert_eq!(
            l.command_path("/usr/bin/../bin/x", None),
            Some(PathBuf::from("/usr/bin/x"))
        );
        assert!(l.resolve("sh").is_some());
        assert!(l.resolve("no-such-command-xyz").is_none());
    }
}
