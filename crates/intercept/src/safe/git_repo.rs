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
    let Some((git_dir, root)) = find_git_dir(dir, w)? else {
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
    let repository = dirs.len();
    // `git status` and `git diff` look into submodules, which read their own configuration.
    for d in dirs.clone() {
        submodule_dirs(&d.join("modules"), 0, &mut dirs, w)?;
    }
    let mut hooks_path = user_hooks_path(w);
    for (k, d) in dirs.iter().enumerate() {
        for file in [d.join("config"), d.join("config.worktree")] {
            let Some(bytes) = read_optional(&file, w)? else {
                continue;
            };
            let set = judge_file(&bytes)
                .map_err(|why| format!("the repository's configuration ({}) {why}", file.display()))?;
            if let Some(path) = set.hooks_path {
                // A submodule's relative hooks directory is relative to its own working tree.
                let base = (k < repository && !set.moves_worktree).then(|| root.clone());
                hooks_path = Some(HooksPath { path, base });
            }
        }
        if let Some(hook) = hook_in(&d.join("hooks"), w) {
            return Err(hook);
        }
    }
    match hooks_path {
        None => Ok(()),
        Some(HooksPath { path, base }) => {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let dir = match (path.strip_prefix("~/"), base) {
                _ if path.starts_with('/') => PathBuf::from(&path),
                (Some(rest), _) => home
                    .ok_or("`core.hooksPath` names a home directory that is not set")?
                    .join(rest),
                (None, Some(base)) => base.join(&path),
                (None, None) => {
                    return Err(format!(
                        "the configuration sets `core.hooksPath = {path}`, relative to a directory the analysis does not follow"
                    ));
                }
            };
            hook_in(&dir, w).map_or(Ok(()), Err)
        }
    }
}

/// Hooks git runs for commands that only read: `post-index-change` whenever the index is
/// written, as `git status`, `git diff` and `git describe --dirty` do to refresh it, and
/// `reference-transaction` whenever a reference changes.
const READ_HOOKS: &[&str] = &["post-index-change", "reference-transaction"];

/// Why a hook in `dir` makes reads run a program, if one is there. Only whether it exists
/// matters, so the directory's stamp (which creating or removing an entry changes) is enough.
fn hook_in(dir: &Path, w: &mut Watched) -> Option<String> {
    w.note(dir);
    READ_HOOKS.iter().find_map(|name| {
        let hook = dir.join(name);
        std::fs::symlink_metadata(&hook).is_ok().then(|| {
            format!(
                "the repository has a `{name}` hook ({}), which git runs for reads",
                hook.display()
            )
        })
    })
}

/// A `core.hooksPath` setting and the directory a relative one is taken from (`None`: one the
/// analysis does not know).
struct HooksPath {
    path: String,
    base: Option<PathBuf>,
}

/// The user's and the system's `core.hooksPath` (their files are trusted, but a relative path
/// there names a directory in each repository).
fn user_hooks_path(w: &mut Watched) -> Option<HooksPath> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let files = [
        Some(PathBuf::from("/etc/gitconfig")),
        xdg.map(|x| x.join("git/config")),
        home.map(|h| h.join(".gitconfig")),
    ];
    let mut found = None;
    for file in files.into_iter().flatten() {
        w.note(&file);
        let Ok(bytes) = std::fs::read(&file) else { continue };
        let Ok(entries) = crate::git_config_syntax::parse(&bytes) else {
            continue;
        };
        for e in entries {
            if e.key == "core.hookspath"
                && let Some(path) = e.value
            {
                found = Some(HooksPath { path, base: None });
            }
        }
    }
    found
}

/// What one of the repository's configuration files sets that the judgement needs.
#[derive(Default)]
struct FileSettings {
    hooks_path: Option<String>,
    /// `core.worktree`: the working tree (where relative hook paths start) is elsewhere.
    moves_worktree: bool,
}

/// The file's settings, or why its reads would run a program (a key that runs one, or text git
/// rejects, which the analysis cannot read as git does).
fn judge_file(bytes: &[u8]) -> Result<FileSettings, String> {
    let entries =
        crate::git_config_syntax::parse(bytes).map_err(|crate::git_config_syntax::BadLine(n)| {
            format!("is not configuration git reads (line {n}), so what it sets is not known")
        })?;
    let mut set = FileSettings::default();
    for e in &entries {
        if runs_program(e) {
            return Err(format!("sets `{}`, which runs a program", e.key));
        }
        match e.key.as_str() {
            "core.hookspath" => set.hooks_path.clone_from(&e.value),
            "core.worktree" => set.moves_worktree = true,
            _ => {}
        }
    }
    Ok(set)
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

/// The repository directory git uses in `dir` and the directory its hooks run in (the top of
/// the working tree, or the repository itself when bare): at each level up, `.git` (a directory,
/// or a file naming one with `gitdir:`), then the level itself as a bare repository.
fn find_git_dir(dir: &Path, w: &mut Watched) -> Result<Option<(PathBuf, PathBuf)>, String> {
    for d in dir.ancestors() {
        // Its entries decide: `.git`, `HEAD`, `objects`, `refs`, `commondir`.
        w.note(d);
        let dot_git = d.join(".git");
        if dot_git.is_dir() {
            return Ok(Some((dot_git, d.to_path_buf())));
        }
        if let Some(text) = read_optional(&dot_git, w)? {
            let text = String::from_utf8_lossy(&text);
            let Some(target) = text.trim().strip_prefix("gitdir:") else {
                return Err(format!("{} is not a `gitdir:` file", dot_git.display()));
            };
            return Ok(Some((d.join(target.trim()), d.to_path_buf())));
        }
        if is_git_dir(d) {
            return Ok(Some((d.to_path_buf(), d.to_path_buf())));
        }
    }
    Ok(None)
}

/// Whether an entry makes reads run a program.
fn runs_program(e: &crate::git_config_syntax::Entry) -> bool {
    let value = e.value.as_deref();
    // A key without a value is a boolean true.
    let boolean = value.is_none_or(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0" | ""
        )
    });
    let value = value.unwrap_or("");
    match (e.section(), e.name()) {
        // The engine sets GIT_PAGER, which wins over `core.pager`, but not over `pager.<cmd>`.
        ("pager", _) | ("core", "fsmonitor") => !boolean,
        ("filter", "clean" | "smudge" | "process") => !value.starts_with("git-lfs "),
        ("core", "sshcommand" | "gitproxy" | "askpass" | "alternaterefscommand")
        | ("diff", "external" | "textconv" | "command")
        | ("gpg", "program")
        | ("credential", "helper")
        | ("include", "path")
        // A partial clone fetches missing objects when a read needs them, through the remote's
        // transport (which a repository can make a command: `ext::`).
        | ("extensions", "partialclone")
        | ("remote", "promisor") => true,
        // An alias cannot replace a built-in subcommand, but one starting with `!` is a shell
        // command: no reason to read in a repository that defines one.
        ("alias", _) => value.starts_with('!'),
        (s, "path") => s.starts_with("includeif"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    fn running_key(text: &str) -> Option<String> {
        super::judge_file(text.as_bytes()).err()
    }

    #[test]
    fn keys_that_run_programs() {
        let runs = |text: &str, key: &str| {
            let why = running_key(text).unwrap_or_default();
            assert!(why.contains(&format!("`{key}`")), "{text:?}: {why}");
        };
        runs("[core]\n\tfsmonitor = touch /tmp/p\n", "core.fsmonitor");
        assert_eq!(running_key("[core]\n\tfsmonitor = true\n"), None);
        assert_eq!(running_key("[core]\n\tfsmonitor\n"), None);
        runs("[diff \"x\"]\n\ttextconv = sh\n", "diff.x.textconv");
        runs("[Diff]External=sh", "diff.external");
        runs("[gpg]\nprogram = /tmp/x", "gpg.program");
        runs("[include]\npath = x", "include.path");
        runs("\u{feff}[core]\n\tfsmonitor = touch /tmp/p\n", "core.fsmonitor");
        runs("[diff \"a]b\"] command = touch x\n", "diff.a]b.command");
        runs(
            "[core]\n\tbare = false\n\tfsmonitor = \"touch\\\n /tmp/p\"\n",
            "core.fsmonitor",
        );
        runs(
            "[extensions]\n\tpartialClone = origin\n",
            "extensions.partialclone",
        );
        assert_eq!(running_key("[pager]\nlog = false").as_deref(), None);
        assert_eq!(
            running_key("[core]\npager = less\nbare = false\n[remote \"o\"]\nurl = x\n"),
            None
        );
        // What git would not read is not known.
        assert!(running_key("[core\n\tfsmonitor = x\n").is_some());
        assert!(running_key("[core]\n\tfsmon\\\nitor = x\n").is_some());
        assert!(running_key("\u{feff}\u{feff}[core]\n").is_some());
    }
}
