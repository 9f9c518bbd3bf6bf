//! git by its real subcommand: global options skipped, `send-pack` and `http-push` read as the
//! pushes they are, aliases expanded (from `-c alias.NAME=…` and the configuration in reach), an
//! alias that runs a shell command (`!…`) taken as a subcommand only known at run time.

use std::path::{Path, PathBuf};

use super::programs::Subcommands;
use super::table::Table;
use crate::argv::Arg;
use crate::git_config::{self, Alias};

/// git's own options, before the subcommand. git matches them exactly.
pub(super) static GLOBALS: Table = Table::new(
    "C= c= git-dir= work-tree= namespace= exec-path? config-env= super-prefix= list-cmds= \
     attr-source= p|paginate P|no-pager no-replace-objects no-lazy-fetch bare literal-pathspecs \
     glob-pathspecs noglob-pathspecs icase-pathspecs no-optional-locks html-path man-path \
     info-path version help no-advice",
);

pub(super) static SUBCOMMANDS: Subcommands = Subcommands {
    table: subcommand_table,
    aliases: &[("send-pack", "push"), ("http-push", "push")],
    globals_anywhere: false,
    abbreviated: &[],
    toolchain: false,
};

fn subcommand_table(sub: &str) -> Option<&'static Table> {
    static PUSH: Table = Table::new(
        "v|verbose q|quiet repo= all|branches mirror d|delete tags n|dry-run porcelain f|force \
         force-with-lease? force-if-includes recurse-submodules= thin receive-pack= exec= \
         u|set-upstream progress prune no-verify verify follow-tags signed? atomic \
         o|push-option= 4|ipv4 6|ipv6 stdin",
    )
    .abbreviations()
    .dashdash();
    static CLEAN: Table = Table::new("d f|force i|interactive n|dry-run q|quiet e|exclude= x X")
        .abbreviations()
        .dashdash();
    static RESET: Table = Table::new(
        "q|quiet no-refresh refresh mixed soft hard merge keep recurse-submodules? \
         no-recurse-submodules p|patch U|unified= inter-hunk-context= N|intent-to-add \
         pathspec-from-file= pathspec-file-nul",
    )
    .abbreviations()
    .dashdash();
    static BRANCH: Table = Table::new(
        "d|delete D>d+f f|force m|move M>m+f c|copy C>c+f l|list a|all r|remotes v|verbose \
         q|quiet t|track? no-track u|set-upstream-to= unset-upstream edit-description \
         contains? no-contains? merged? no-merged? column? no-column sort= points-at= format= \
         i|ignore-case omit-empty show-current create-reflog recurse-submodules abbrev? \
         no-abbrev color? no-color",
    )
    .abbreviations()
    .dashdash();
    static CHECKOUT: Table = Table::new(
        "b= B= orphan= f|force q|quiet m|merge detach t|track? no-track l guess no-guess \
         conflict= p|patch ours|2 theirs|3 ignore-skip-worktree-bits ignore-other-worktrees \
         overwrite-ignore no-overwrite-ignore recurse-submodules? no-recurse-submodules overlay \
         no-overlay pathspec-from-file= pathspec-file-nul progress no-progress",
    )
    .abbreviations()
    .dashdash();
    static RESTORE: Table = Table::new(
        "s|source= S|staged W|worktree p|patch q|quiet ours|2 theirs|3 m|merge conflict= \
         ignore-unmerged ignore-skip-worktree-bits recurse-submodules? no-recurse-submodules \
         overlay no-overlay pathspec-from-file= pathspec-file-nul progress no-progress \
         U|unified= inter-hunk-context=",
    )
    .abbreviations()
    .dashdash();
    Some(match sub {
        "push" => &PUSH,
        "clean" => &CLEAN,
        "reset" => &RESET,
        "branch" => &BRANCH,
        "checkout" => &CHECKOUT,
        "restore" => &RESTORE,
        _ => return None,
    })
}

/// git's own commands, sorted: an alias of the same name is never used.
const BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archimport",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "credential-cache",
    "credential-store",
    "cvsexportcommit",
    "cvsimport",
    "cvsserver",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "fsck-objects",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-fetch",
    "http-push",
    "imap-send",
    "index-pack",
    "init",
    "init-db",
    "instaweb",
    "interpret-trailers",
    "lfs",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-one-file",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "p4",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "quiltimport",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "subtree",
    "svn",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// Configuration given on git's command line, later entries winning.
enum Given {
    /// `-c alias.NAME=VALUE`.
    Alias(String, String),
    /// `--config-env=alias.NAME=VAR`: from the environment.
    FromEnv(String),
    /// `-c include.path=FILE`: the file's aliases (`Err`: a file git will not read or that is
    /// only known at run time, such as a relative path or `includeIf`).
    Include(Result<PathBuf, String>),
}

/// Where git reads its configuration for a command.
struct Found {
    /// The index of the subcommand word.
    sub: usize,
    /// Configuration on the command line.
    aliases: Vec<Given>,
    /// The directory after `-C`s; `None` when only known at run time.
    dir: Option<PathBuf>,
    git_dir: Option<PathBuf>,
}

fn find(argv: &[Arg], dir: Option<&Path>) -> Found {
    let mut f = Found {
        sub: argv.len(),
        aliases: Vec::new(),
        dir: dir.map(Path::to_path_buf),
        git_dir: None,
    };
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        let Some(v) = a.get() else {
            f.sub = i;
            return f;
        };
        if !v.starts_with('-') || v == "-" {
            f.sub = i;
            return f;
        }
        if v == "--" {
            f.sub = i + 1;
            return f;
        }
        let (name, inline) = v.split_once('=').map_or((v, None), |(n, x)| (n, Some(x)));
        let valued = match name.strip_prefix("--") {
            Some(long) => {
                matches!(GLOBALS.long(long), super::table::Long::Found(e) if e.kind == super::table::Kind::Value)
            }
            None => {
                name.len() == 2
                    && matches!(GLOBALS.short(name.chars().nth(1).unwrap_or('-')), Some(e) if e.kind == super::table::Kind::Value)
            }
        };
        let value = match (valued, inline) {
            (true, Some(x)) => Some(x.to_owned()),
            (true, None) => {
                i += 1;
                argv.get(i).and_then(Arg::get).map(str::to_owned)
            }
            _ => None,
        };
        match (name, value) {
            ("-C", Some(d)) => {
                f.dir = f
                    .dir
                    .map(|base| crate::path_lookup::lexical_normalize(&base.join(d)));
            }
            ("-C", None) => f.dir = None,
            ("-c", Some(kv)) => {
                let (k, v) = kv.split_once('=').unwrap_or((kv.as_str(), "true"));
                let k = k.to_ascii_lowercase();
                if let Some(alias) = k.strip_prefix("alias.") {
                    f.aliases.push(Given::Alias(alias.to_owned(), v.to_owned()));
                } else if k == "include.path" {
                    f.aliases.push(Given::Include(included(v)));
                } else if k.starts_with("includeif.") && k.rsplit('.').next() == Some("path") {
                    f.aliases.push(Given::Include(Err(format!(
                        "`-c {kv}` includes a file on a condition"
                    ))));
                }
            }
            ("-c", None) if argv.get(i).is_some_and(Arg::is_dynamic) => {
                f.aliases.push(Given::Include(Err(
                    "a `-c` setting is only known when it runs".into()
                )));
            }
            ("--config-env", Some(kv)) => {
                let k = kv.to_ascii_lowercase();
                if let Some(alias) = k.strip_prefix("alias.") {
                    let name = alias.split('=').next().unwrap_or_default().to_owned();
                    f.aliases.push(Given::FromEnv(name));
                } else if k.starts_with("include") {
                    f.aliases.push(Given::Include(Err(format!(
                        "`--config-env={kv}` includes a file named by the environment"
                    ))));
                }
            }
            ("--git-dir", Some(g)) => {
                f.git_dir = f
                    .dir
                    .as_ref()
                    .map(|d| crate::path_lookup::lexical_normalize(&d.join(&g)));
            }
            _ => {}
        }
        i += 1;
    }
    f
}

/// The file `-c include.path=VALUE` names: git reads only an absolute path or one under `~/`
/// from the command line.
fn included(value: &str) -> Result<PathBuf, String> {
    if let Some(rest) = value.strip_prefix("~/") {
        return std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(rest))
            .ok_or_else(|| "`include.path` names the home directory, which is not set".into());
    }
    if value.starts_with('/') {
        Ok(PathBuf::from(value))
    } else {
        Err(format!(
            "`-c include.path={value}` is not a file git reads from the command line"
        ))
    }
}

/// The alias `name` as the command line's configuration gives it, if it does.
fn given(aliases: &[Given], name: &str) -> Option<Alias> {
    for g in aliases.iter().rev() {
        match g {
            Given::Alias(n, v) if n == name => return Some(Alias::Value(v.clone())),
            Given::FromEnv(n) if n == name => {
                return Some(Alias::Unknown("it is set from the environment".into()));
            }
            Given::Include(Ok(file)) => match git_config::alias_in_file(name, file) {
                Alias::None => {}
                found => return Some(found),
            },
            Given::Include(Err(why)) => return Some(Alias::Unknown(why.clone())),
            _ => {}
        }
    }
    None
}

/// `argv` (a `git` command line) with the alias its subcommand names expanded, as many times as
/// git would; `None` when there is none. An alias that runs a shell command, or one that cannot be
/// known before the command runs, leaves a subcommand word only known at run time; so does any
/// name that is not git's own when `config_env` says the environment may change git's
/// configuration.
pub(crate) fn expand_aliases(argv: &[Arg], dir: Option<&Path>, config_env: Option<&str>) -> Option<Vec<Arg>> {
    let mut out: Option<Vec<Arg>> = None;
    let mut seen: Vec<String> = Vec::new();
    loop {
        let current = out.as_deref().unwrap_or(argv);
        let f = find(current, dir);
        let sub = current.get(f.sub)?.get()?.to_owned();
        if BUILTINS.binary_search(&sub.as_str()).is_ok() {
            return out;
        }
        let lower = sub.to_ascii_lowercase();
        if seen.contains(&lower) || seen.len() > 8 {
            return out;
        }
        seen.push(lower.clone());
        let value = match (config_env, given(&f.aliases, &lower)) {
            (Some(why), _) => Alias::Unknown(format!(
                "git's configuration may come from the environment: {why}"
            )),
            (None, Some(found)) => found,
            (None, None) => git_config::alias(&lower, f.dir.as_deref(), f.git_dir.as_deref()),
        };
        let words = match value {
            Alias::None => return out,
            Alias::Value(v) if !v.trim_start().starts_with('!') => match split_cmdline(&v) {
                Some(words) if !words.is_empty() => words.iter().map(|w| Arg::literal(w)).collect(),
                _ => vec![opaque(&sub, &v)],
            },
            Alias::Value(v) => vec![opaque(&sub, &v)],
            Alias::Unknown(why) => vec![opaque(&sub, &why)],
        };
        let opaque_now = words.iter().any(Arg::is_dynamic);
        let mut next = current[..f.sub].to_vec();
        next.extend(words);
        next.extend(current[f.sub + 1..].iter().cloned());
        out = Some(next);
        if opaque_now {
            return out;
        }
    }
}

/// A subcommand word whose meaning is only known when git runs.
fn opaque(sub: &str, why: &str) -> Arg {
    Arg::dynamic(&format!("{sub} (a git alias: {why})"), true)
}

/// git's splitting of an alias into words: blanks separate, quotes group, `\` escapes.
fn split_cmdline(s: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, ' ' | '\t' | '\n') => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (Some(q), _) if c == q => quote = None,
            (Some('\''), _) => cur.push(c),
            (_, '\\') => {
                cur.push(chars.next()?);
                in_word = true;
            }
            _ => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return None;
    }
    if in_word {
        words.push(cur);
    }
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    fn expanded(s: &str) -> Option<Vec<String>> {
        expand_aliases(&argv(s), Some(Path::new("/nonexistent-shellgate-dir")), None)
            .map(|v| v.iter().map(|a| a.get().unwrap_or("?").to_owned()).collect())
    }

    #[test]
    fn builtins_are_sorted() {
        assert!(BUILTINS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn command_line_aliases() {
        assert_eq!(
            expanded("git -c alias.p=push p origin x").unwrap(),
            ["git", "-c", "alias.p=push", "push", "origin", "x"]
        );
        assert_eq!(
            expanded("git -c alias.p=q -c alias.q=push p").unwrap(),
            ["git", "-c", "alias.p=q", "-c", "alias.q=push", "push"]
        );
        assert_eq!(expanded("git -c alias.status=push status"), None);
        assert_eq!(expanded("git -c alias.p=!sh p").unwrap().last().unwrap(), "?");
        assert_eq!(
            split_cmdline(r#"push -o "a b" 'c d' e\ f"#).unwrap(),
            ["push", "-o", "a b", "c d", "e f"]
        );
    }
}
