//! git aliases in reach of a command: the `[alias]` entries of the repository's configuration
//! (found from the command's directory, `.git` files and linked worktrees followed), the user's
//! (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`) and the system's (`/etc/gitconfig`), with their
//! `include.path` and `includeIf.*.path` files.
//!
//! Files are read with a bound on their size and their number; a file past the bound makes the
//! answer unknown, so the caller fails closed. Parsed files are cached by path, each use checked
//! against the file's length, modification time and inode, so an edited file is read again.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The largest configuration file read.
const MAX_FILE: u64 = 256 * 1024;
/// The most files (included ones counted) one lookup reads.
const MAX_FILES: usize = 16;
/// The most files kept parsed.
const MAX_CACHED: usize = 64;

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Alias {
    /// No alias of that name.
    None,
    /// The alias's value.
    Value(String),
    /// A file could not be read within the bounds: the alias may exist.
    Unknown(String),
}

#[derive(Debug, Default)]
struct Parsed {
    /// `(name, value)` of `[alias]` entries, names lower-cased, in file order.
    aliases: Vec<(String, String)>,
    /// Included files, as written.
    includes: Vec<String>,
}

type Stamp = (u64, i64, i64, u64);
type Cache = Mutex<HashMap<PathBuf, (Stamp, Arc<Parsed>)>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// A configuration file: `Ok(None)` when it does not exist, `Err` when it cannot be read within
/// the bounds.
fn parsed(path: &Path) -> Result<Option<Arc<Parsed>>, String> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > MAX_FILE {
        return Err(format!("{} is larger than {MAX_FILE} bytes", path.display()));
    }
    let stamp = (meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ino());
    if let Ok(c) = cache().lock()
        && let Some((s, p)) = c.get(path)
        && *s == stamp
    {
        return Ok(Some(p.clone()));
    }
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let p = Arc::new(parse(&text).map_err(|why| format!("{}: {why}", path.display()))?);
    if let Ok(mut c) = cache().lock() {
        if c.len() >= MAX_CACHED {
            c.clear();
        }
        c.insert(path.to_path_buf(), (stamp, p.clone()));
    }
    Ok(Some(p))
}

/// Whether an environment variable changes where git reads its configuration (and so which
/// aliases it has): `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`,
/// `GIT_CONFIG_GLOBAL`, `GIT_CONFIG_SYSTEM`, the repository (`GIT_DIR`, `GIT_COMMON_DIR`), the
/// user's files (`HOME`, `XDG_CONFIG_HOME`) or git's own commands (`GIT_EXEC_PATH`).
pub(crate) fn is_config_key(name: &str) -> bool {
    name.starts_with("GIT_CONFIG")
        || matches!(
            name,
            "GIT_DIR" | "GIT_COMMON_DIR" | "HOME" | "XDG_CONFIG_HOME" | "GIT_EXEC_PATH"
        )
}

/// The alias `name` as a configuration file `file` (and the files it includes) defines it.
pub(crate) fn alias_in_file(name: &str, file: &Path) -> Alias {
    let mut found = Alias::None;
    let mut budget = MAX_FILES;
    match read_into(file, &name.to_ascii_lowercase(), &mut found, &mut budget, 0) {
        Ok(()) => found,
        Err(why) => Alias::Unknown(why),
    }
}

/// The alias `name` as git would find it for a command run in `dir` (`None`: a directory only
/// known at run time) with `git_dir` given by `--git-dir`.
pub(crate) fn alias(name: &str, dir: Option<&Path>, git_dir: Option<&Path>) -> Alias {
    let name = name.to_ascii_lowercase();
    let mut files: Vec<PathBuf> = vec![PathBuf::from("/etc/gitconfig")];
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    files.extend(xdg.map(|x| x.join("git/config")));
    files.extend(home.as_ref().map(|h| h.join(".gitconfig")));
    let repo = match (git_dir, dir) {
        (Some(g), _) => Some(g.to_path_buf()),
        (None, Some(d)) => find_git_dir(d),
        (None, None) => {
            return Alias::Unknown("the repository is only known when the command runs".into());
        }
    };
    if let Some(g) = repo {
        files.push(g.join("config"));
        if let Ok(common) = std::fs::read_to_string(g.join("commondir")) {
            files.push(g.join(common.trim()).join("config"));
        }
        files.push(g.join("config.worktree"));
    }
    let mut found = Alias::None;
    let mut budget = MAX_FILES;
    for f in files {
        if let Err(why) = read_into(&f, &name, &mut found, &mut budget, 0) {
            return Alias::Unknown(why);
        }
    }
    found
}

/// Read one file (and what it includes) into `found`, later entries winning.
fn read_into(
    file: &Path,
    name: &str,
    found: &mut Alias,
    budget: &mut usize,
    depth: usize,
) -> Result<(), String> {
    if *budget == 0 || depth > 4 {
        return Err("the configuration includes too many files".into());
    }
    *budget -= 1;
    let Some(p) = parsed(file)? else { return Ok(()) };
    for (n, v) in &p.aliases {
        if n == name {
            *found = Alias::Value(v.clone());
        }
    }
    for inc in &p.includes {
        let path = match inc.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(h) => PathBuf::from(h).join(rest),
                None => continue,
            },
            None => file.parent().unwrap_or(Path::new("/")).join(inc),
        };
        read_into(&path, name, found, budget, depth + 1)?;
    }
    Ok(())
}

/// The `.git` directory of the repository holding `dir` (a `.git` file points to it).
fn find_git_dir(dir: &Path) -> Option<PathBuf> {
    for d in dir.ancestors() {
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        if let Ok(text) = std::fs::read_to_string(&dot_git) {
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(d.join(target));
        }
    }
    None
}

/// The `[alias]` entries and include paths of a configuration text, read as git reads it; text
/// git would reject is an error (git stops there, so what it sets is not known).
fn parse(bytes: &[u8]) -> Result<Parsed, String> {
    let entries = crate::git_config_syntax::parse(bytes)
        .map_err(|crate::git_config_syntax::BadLine(n)| format!("line {n} is not configuration git reads"))?;
    let mut p = Parsed::default();
    for e in entries {
        let value = e.value.clone().unwrap_or_else(|| "true".to_owned());
        let section = e.section();
        if section == "alias" && e.key.matches('.').count() == 1 {
            p.aliases.push((e.name().to_owned(), value));
        } else if e.name() == "path" && (e.key == "include.path" || section == "includeif") {
            p.includes.push(value);
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_includes_are_read() {
        let p = parse(
            b"[core]\n\tbare = false\n[alias]\n\tp = push\n\tS = \"!sh -c 'git push' # x\" ; c\n\
             [include]\n\tpath = ~/more\n[includeIf \"gitdir:/w/\"]\n\tpath = other\n[alias] q = \\\n  push -f\n\
             [alias \"x\"]\n\tp = pull\n",
        )
        .unwrap();
        assert_eq!(
            p.aliases,
            [
                ("p".to_owned(), "push".to_owned()),
                ("s".to_owned(), "!sh -c 'git push' # x".to_owned()),
                ("q".to_owned(), "push -f".to_owned()),
            ]
        );
        assert_eq!(p.includes, ["~/more", "other"]);
    }

    #[test]
    fn a_repository_configuration_is_found_and_reread_when_changed() {
        let dir = tempfile::tempdir().unwrap();
        let git = dir.path().join("repo/.git");
        std::fs::create_dir_all(git.join("x")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo/sub")).unwrap();
        std::fs::write(git.join("config"), "[alias]\n\tp = push\n").unwrap();
        let sub = dir.path().join("repo/sub");
        assert_eq!(alias("p", Some(&sub), None), Alias::Value("push".into()));
        assert_eq!(alias("zz", Some(&sub), None), Alias::None);
        std::fs::write(git.join("config"), "[alias]\n\tp = pull --rebase\n").unwrap();
        assert_eq!(alias("P", Some(&sub), None), Alias::Value("pull --rebase".into()));
        std::fs::write(git.join("config"), "x".repeat(MAX_FILE as usize + 1)).unwrap();
        assert!(matches!(alias("p", Some(&sub), None), Alias::Unknown(_)));
        assert!(matches!(alias("p", None, None), Alias::Unknown(_)));
    }
}
