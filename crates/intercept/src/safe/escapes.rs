//! Options through which a command escapes what its rule seems to allow: it deletes or writes
//! files, or runs other programs. A wildcard in a rule never covers them — `find *` does not
//! allow `find . -delete`, `git *` does not allow `git -c core.pager=sh log`; a rule must spell
//! such an option out (`find . -name * -delete`).

use crate::argv::{Arg, basename};
use crate::getopt::long_may_be;

/// What escapes, for one command.
#[derive(Default)]
struct Escapes {
    /// Short option letters (alone or in a cluster: `-pplugin`, `-uo`).
    short: &'static str,
    /// Long options (`--name`, `--name=value`, unique prefixes).
    long: &'static [&'static str],
    /// Words that escape as written, or followed by `=value` (`-exec`, `-toolexec=x`).
    words: &'static [&'static str],
    /// Any `NAME=value` argument escapes (`make test SHELL=/x`, `make CC=/x`: a make variable
    /// given on the command line replaces the one its recipes run).
    assignments: bool,
}

/// The escaping options of each command.
fn table(name: &str) -> Option<Escapes> {
    let e = |short, long, words| Escapes {
        short,
        long,
        words,
        assignments: false,
    };
    Some(match name {
        "find" => e(
            "",
            &[],
            &[
                "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-exec", "-execdir", "-ok", "-okdir",
            ],
        ),
        "sort" => e("o", &["output", "compress-program"], &[]),
        "rg" => e("z", &["pre", "hostname-bin", "search-zip"], &[]),
        "git" => e(
            "cp",
            &[
                "config-env",
                "exec-path",
                "paginate",
                "git-dir",
                "work-tree",
                "output",
                "ext-diff",
                "textconv",
                "upload-pack",
                "receive-pack",
                "exec",
            ],
            &[],
        ),
        "sed" | "gsed" => e("i", &["in-place"], &[]),
        "fd" | "fdfind" => e("xX", &["exec", "exec-batch"], &[]),
        "tar" => e(
            "IF",
            &[
                "to-command",
                "use-compress-program",
                "checkpoint-action",
                "rsh-command",
                "info-script",
                "new-volume-script",
            ],
            &[],
        ),
        "zip" => e("", &["unzip-command"], &["-TT"]),
        "rsync" => e("e", &["rsh", "rsync-path"], &[]),
        "awk" | "gawk" => e("fiel", &["file", "include", "exec", "load"], &[]),
        // `--config 'target.<triple>.runner=…'`, `build.rustc-wrapper`, another manifest's build
        // scripts, unstable flags.
        "cargo" => e("CZ", &["config", "manifest-path"], &[]),
        "npm" | "pnpm" | "yarn" => e(
            "C",
            &[
                "script-shell",
                "userconfig",
                "globalconfig",
                "node-options",
                "prefix",
                "dir",
                "cwd",
                "call",
            ],
            &[],
        ),
        "make" | "gmake" => Escapes {
            short: "fCIE",
            long: &["eval", "file", "makefile", "directory", "include-dir", "load"],
            words: &[],
            assignments: true,
        },
        // A plugin, a configuration file naming plugins, options replacing the configuration's.
        "pytest" | "py.test" => e(
            "pco",
            &["config-file", "override-ini", "rootdir", "confcutdir", "pyargs"],
            &[],
        ),
        "go" => e(
            "",
            &[],
            &[
                "-exec",
                "-toolexec",
                "-vettool",
                "-overlay",
                "-modfile",
                "-C",
                "-ldflags",
                "-gcflags",
                "-asmflags",
                "-gccgoflags",
                "-compiler",
                "-pkgdir",
            ],
        ),
        "docker" | "podman" => e("Hc", &["host", "context", "config", "url", "connection"], &[]),
        // A kubeconfig's `exec` credential plugin runs a program; other clusters and identities.
        "kubectl" | "oc" => e(
            "s",
            &[
                "kubeconfig",
                "server",
                "context",
                "cluster",
                "user",
                "token",
                "as",
                "as-group",
            ],
            &[],
        ),
        _ => return None,
    })
}

/// Indexes (into `argv`, the command name at 0) of the arguments that escape.
pub(crate) fn escapes(argv: &[Arg]) -> Vec<usize> {
    let Some(t) = argv.first().and_then(Arg::get).map(basename).and_then(table) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        let Some(v) = a.get() else { continue };
        if v == "--" {
            break;
        }
        let word = v.split('=').next().unwrap_or(v);
        let hit = if t.words.contains(&word) {
            true
        } else if let Some(n) = v.strip_prefix("--") {
            let n = n.split('=').next().unwrap_or(n);
            n.len() >= 2 && t.long.iter().any(|l| long_may_be(n, l))
        } else if v.starts_with('-') && v.len() > 1 && !t.short.is_empty() {
            v[1..].chars().any(|c| t.short.contains(c))
        } else {
            t.assignments && v.contains('=') && !v.starts_with('=')
        };
        if hit {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escapes;
    use crate::argv::Arg;

    fn e(s: &str) -> Vec<usize> {
        escapes(&s.split_whitespace().map(Arg::literal).collect::<Vec<_>>())
    }

    #[test]
    fn escaping_options() {
        assert_eq!(e("find . -name x -delete"), [4]);
        assert_eq!(e("sort --compress-prog=sh f"), [1]);
        assert_eq!(e("git -c a=b log"), [1]);
        assert_eq!(e("sed -i s/a/b/ f"), [1]);
        assert!(e("git log --oneline").is_empty());
        assert!(e("find . -name x").is_empty());
        assert!(e("cargo test -- -delete").is_empty());
    }
}
