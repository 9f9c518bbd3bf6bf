//! Which repository a `git` read runs in, and whether that repository's own configuration makes
//! the read run a program (`core.fsmonitor` for `status`, `diff.external` and text conversions for
//! `diff`/`log -p`, clean filters, `gpg.program` for signatures, an included file the analysis
//! does not follow). The user's global configuration is trusted; a repository's is not: it can come
//! from an archive, or from an earlier command.

use std::path::{Path, PathBuf};

use super::git_cache::Watched;

/// Where a `git` command runs: its directory (when known) and the workspace it must stay in.
#[derive(Clone, Copy, Default)]
pub(crate) struct Place<'a> {
    /// The directory the command runs in, `None` when only known at run time.
    pub dir: Option<&'a Path>,
    /// The directory the whole command starts in.
    pub workspace: Option<&'a Path>,
}

/// The directory `git -C A -C B …` reads, from `place`; an error when it leaves the workspace or
/// is unknown.
pub(super) fn directory(place: Place<'_>, chdirs: &[&str]) -> Result<PathBuf, String> {
    let start = place
        .dir
        .ok_or("`git` runs in a directory only known when it runs")?;
    let mut dir = start.to_path_buf();
    for c in chdirs {
        dir = crate::path_lookup::lexical_normalize(&dir.join(c));
    }
    if !chdirs.is_empty()
        && let Some(ws) = place.workspace
        && !dir.starts_with(crate::path_lookup::lexical_normalize(ws))
    {
        return Err(format!(
            "`git -C {}` reads a repository outside the workspace",
            dir.display()
        ));
    }
    Ok(dir)
}

/// `Err` naming the first key of a configuration git reads in `dir` (the repository found from
/// `dir` upwards, its common directory, its submodules' directories) through which a read would
/// run a program.
/// The verdict is kept while nothing it was read from changes (see `git_cache`).
pub(super) fn config_runs_nothing(dir: &Path) -> Result<(), String> {
    super::git_cache::cached(dir, |w| judge_configuration(dir, w))
}

fn judge_configuration(dir: &Path, w: &mut Watched) -> Result<(), String> {
    let Some(git_dir) = find_git_dir(dir, w)? else {
        return Ok(());
    };
    w.note(&git_dir);
    let mut dirs = vec![git_dir.clone()];
    // A linked worktree shares its main repository's configuration.
    if let Some(common) = read_optional(&git_dir.join("commondir"), w)? {
        let common = git_dir.join(String::from_utf8_lossy(&common).trim());
        w.note(&common);
        dirs.push(common);
    }
    // `git status` and `git diff` look into submodules, which read their own configuration.
    for d in dirs.clone() {
        submodule_dirs(&d.join("modules"), 0, &mut dirs, w)?;
    }
    for d in dirs {
        for file in [d.join("config"), d.join("config.worktree")] {
            let Some(bytes) = read_optional(&file, w)? else {
                continue;
            };
            // Keys are ASCII; a stray byte elsewhere must not hide them.
            if let Some(key) = running_key(&String::from_utf8_lossy(&bytes)) {
                return Err(format!(
                    "the repository's configuration ({}) sets `{key}`, which runs a program",
                    file.display()
                ));
            }
        }
    }
    Ok(())
}

/// How deep submodules of submodules are followed before giving up.
const MAX_SUBMODULE_DEPTH: usize = 8;

/// Every repository directory under a `modules` directory (`modules/a`, `modules/a/modules/b`;
/// a submodule's name may hold `/`, so every directory that looks like a repository counts).
fn submodule_dirs(
    modules: &Path,
    depth: usize,
    out: &mut Vec<PathBuf>,
    w: &mut Watched,
) -> Result<(), String> {
    w.note(modules);
    let Ok(entries) = std::fs::read_dir(modules) else {
        return Ok(());
    };
    if depth > MAX_SUBMODULE_DEPTH {
        return Err("the repository's submodules nest too deeply to judge".into());
    }
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        w.note(&path);
        if is_git_dir(&path) {
            submodule_dirs(&path.join("modules"), depth + 1, out, w)?;
            out.push(path);
        } else {
            submodule_dirs(&path, depth + 1, out, w)?;
        }
    }
    Ok(())
}

/// A file's bytes, `None` when it does not exist; an error when it exists but cannot be read
/// (git would read it).
fn read_optional(path: &Path, w: &mut Watched) -> Result<Option<Vec<u8>>, String> {
    w.note(path);
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if path.is_dir() => Err(format!("{} is a directory: {e}", path.display())),
        Err(e) => Err(format!("{} cannot be read to judge it: {e}", path.display())),
    }
}

/// Whether `dir` looks like a repository directory to git's discovery (`HEAD` beside `objects/`
/// or `refs/`, or a linked worktree's `commondir`). Looser than git: a directory counted here that
/// git would not use only costs a needless look at its configuration.
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("objects").is_dir() || dir.join("refs").is_dir() || dir.join("commondir").is_file())
}

/// The repository directory git uses in `dir`: at each level up, `.git` (a directory, or a file
/// naming one with `gitdir:`), then the level itself as a bare repository.
fn find_git_dir(dir: &Path, w: &mut Watched) -> Result<Option<PathBuf>, String> {
    for d in dir.ancestors() {
        // Its entries decide: `.git`, `HEAD`, `objects`, `refs`, `commondir`.
        w.note(d);
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Ok(Some(dot_git));
        }
        if let Some(text) = read_optional(&dot_git, w)? {
            let text = String::from_utf8_lossy(&text);
            let Some(target) = text.trim().strip_prefix("gitdir:") else {
                return Err(format!("{} is not a `gitdir:` file", dot_git.display()));
            };
            return Ok(Some(d.join(target.trim())));
        }
        if is_git_dir(d) {
            return Ok(Some(d.to_path_buf()));
        }
    }
    Ok(None)
}

/// The first `section.key` in a git configuration text that makes reads run a program.
fn running_key(text: &str) -> Option<String> {
    let mut section = String::new();
    for line in text.lines() {
        let mut line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let Some((header, after)) = rest.split_once(']') else {
                return Some("an unreadable section header".into());
            };
            section = header_name(header);
            line = after.trim();
            if line.is_empty() {
                continue;
            }
        }
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, "true"));
        let key = format!("{section}.{}", key.trim().to_ascii_lowercase());
        if runs_program(&key, value.trim().trim_matches('"')) {
            return Some(key);
        }
    }
    None
}

/// `core`, `diff.name` from `core`, `diff "name"`, `diff.name`.
fn header_name(header: &str) -> String {
    match header.split_once(char::is_whitespace) {
        Some((name, sub)) => format!("{}.{}", name.to_ascii_lowercase(), sub.trim().trim_matches('"')),
        None => header.to_ascii_lowercase(),
    }
}

fn runs_program(key: &str, value: &str) -> bool {
    let boolean = matches!(
        value.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
    );
    let (first, last) = (
        key.split('.').next().unwrap_or(""),
        key.rsplit('.').next().unwrap_or(""),
    );
    match (first, last) {
        // The engine sets GIT_PAGER, which wins over `core.pager`, but not over `pager.<cmd>`.
        ("pager", _) | ("core", "fsmonitor") => !boolean,
        ("filter", "clean" | "smudge" | "process") => !value.starts_with("git-lfs "),
        ("core", "sshcommand" | "gitproxy" | "askpass" | "alternaterefscommand")
        | ("diff", "external" | "textconv" | "command")
        | ("gpg", "program")
        | ("credential", "helper")
        | ("include", "path") => true,
        // An alias cannot replace a built-in subcommand, but one starting with `!` is a shell
        // command: no reason to read in a repository that defines one.
        ("alias", _) => value.starts_with('!'),
        (s, "path") => s.starts_with("includeif"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::running_key;

    #[test]
    fn keys_that_run_programs() {
        assert_eq!(
            running_key("[core]\n\tfsmonitor = touch /tmp/p\n").as_deref(),
            Some("core.fsmonitor")
        );
        assert_eq!(running_key("[core]\n\tfsmonitor = true\n"), None);
        assert_eq!(
            running_key("[diff \"x\"]\n\ttextconv = sh\n").as_deref(),
            Some("diff.x.textconv")
        );
        assert_eq!(running_key("[Diff]External=sh").as_deref(), Some("diff.external"));
        assert_eq!(
            running_key("[gpg]\nprogram = /tmp/x").as_deref(),
            Some("gpg.program")
        );
        assert_eq!(
            running_key("[include]\npath = x").as_deref(),
            Some("include.path")
        );
        assert_eq!(running_key("[pager]\nlog = false").as_deref(), None);
        assert_eq!(
            running_key("[core]\npager = less\nbare = false\n[remote \"o\"]\nurl = x\n"),
            None
        );
    }
}
