//! Options through which a command escapes what its rule seems to allow: it deletes or writes
//! files, or runs other programs. A wildcard in a rule never covers them — `find *` does not
//! allow `find . -delete`, `git *` does not allow `git -c core.pager=sh log`; a rule must spell
//! such an option out (`find . -name * -delete`).

use crate::argv::{Arg, basename};
use crate::getopt::long_may_be;

/// `(short letters, long options, exact words)` that escape, per command.
fn table(name: &str) -> Option<(&'static str, &'static [&'static str], &'static [&'static str])> {
    Some(match name {
        "find" => (
            "",
            &[],
            &[
                "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-exec", "-execdir", "-ok", "-okdir",
            ],
        ),
        "sort" => ("o", &["output", "compress-program"], &[]),
        "rg" => ("z", &["pre", "hostname-bin", "search-zip"], &[]),
        "git" => (
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
        "sed" | "gsed" => ("i", &["in-place"], &[]),
        "fd" | "fdfind" => ("xX", &["exec", "exec-batch"], &[]),
        "tar" => (
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
        "zip" => ("", &["unzip-command"], &["-TT"]),
        "rsync" => ("e", &["rsh", "rsync-path"], &[]),
        "awk" | "gawk" => ("fiel", &["file", "include", "exec", "load"], &[]),
        _ => return None,
    })
}

/// Indexes (into `argv`, the command name at 0) of the arguments that escape.
pub(crate) fn escapes(argv: &[Arg]) -> Vec<usize> {
    let Some((short, long, exact)) = argv.first().and_then(Arg::get).map(basename).and_then(table) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, a) in argv.iter().enumerate().skip(1) {
        let Some(v) = a.get() else { continue };
        if v == "--" {
            break;
        }
        let hit = if exact.contains(&v) {
            true
        } else if let Some(n) = v.strip_prefix("--") {
            let n = n.split('=').next().unwrap_or(n);
            n.len() >= 2 && long.iter().any(|l| long_may_be(n, l))
        } else if v.starts_with('-') && v.len() > 1 && !short.is_empty() {
            v[1..].chars().any(|c| short.contains(c))
        } else {
            false
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
