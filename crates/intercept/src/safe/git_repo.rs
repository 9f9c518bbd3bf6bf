//! Which repository a `git` read runs in, and whether that repository's own configuration makes
//! the read run a program (`core.fsmonitor` for `status`, `diff.external` and text conversions for
//! `diff`/`log -p`, clean filters, `gpg.program` for signatures, an included file the analysis
//! does not follow). The user's global configuration is trusted; a repository's is not: it can come
//! from an archive, or from an earlier command.

use std::path::{Path, PathBuf};

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

/// `Err` naming the first key of the repository's own configuration (found from `dir` upwards)
/// through which a read would run a program.
pub(super) fn config_runs_nothing(dir: &Path) -> Result<(), String> {
    let Some(git_dir) = find_git_dir(dir) else {
        return Ok(());
    };
    let mut files = vec![git_dir.join("config"), git_dir.join("config.worktree")];
    // A linked worktree shares its main repository's configuration.
    if let Ok(common) = std::fs::read_to_string(git_dir.join("commondir")) {
        let common = git_dir.join(common.trim());
        files.push(common.join("config"));
        files.push(common.join("config.worktree"));
    }
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if let Some(key) = running_key(&text) {
            return Err(format!(
                "the repository's configuration ({}) sets `{key}`, which runs a program",
                file.display()
            ));
        }
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
