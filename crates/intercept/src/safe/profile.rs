//! The `@safe` profile as data: for each command, what of its command line writes files, runs
//! other programs or reaches the network, and the review of its manual that says so. A value-taking
//! option is listed only when the manual says it takes one: listing a flag as value-taking would
//! let the word after it hide an option (`tree -F -o out`), while missing one only refuses more.

use crate::getopt::Spec;

/// How a command's arguments are judged.
pub(super) enum Judge {
    /// No option or operand writes, runs a program or reaches the network.
    AnyArgs,
    /// Options scanned GNU style (unique prefixes of long options included).
    Options {
        /// Options that take a value.
        spec: Spec<'static>,
        /// Short options that write, run programs or reach the network.
        short: &'static [char],
        /// Long options that do.
        long: &'static [&'static str],
        /// More operands than this name an output or change something.
        max_operands: Option<usize>,
    },
    /// Argument words (`find` primaries) that write or run programs.
    Words(&'static [&'static str]),
    /// A reader of its own in this module (`sed`, `awk`, `git`, `printf -v`, `command -v`).
    Own,
}

/// One command of the profile.
pub(super) struct Entry {
    /// The names it runs under.
    pub names: &'static [&'static str],
    /// How its arguments are judged.
    pub judge: Judge,
    /// What its manual was checked for, and what was found.
    pub review: &'static str,
}

const fn any(names: &'static [&'static str], review: &'static str) -> Entry {
    Entry {
        names,
        judge: Judge::AnyArgs,
        review,
    }
}

const fn options(
    names: &'static [&'static str],
    spec: Spec<'static>,
    short: &'static [char],
    long: &'static [&'static str],
    max_operands: Option<usize>,
    review: &'static str,
) -> Entry {
    Entry {
        names,
        judge: Judge::Options {
            spec,
            short,
            long,
            max_operands,
        },
        review,
    }
}

const fn spec(short_values: &'static str, long_values: &'static [&'static str]) -> Spec<'static> {
    Spec {
        short_values,
        long_values,
    }
}

/// The profile. Reviews name the manual's options that read files (harmless) when they could be
/// mistaken for writes.
pub(super) const PROFILE: &[Entry] = &[
    any(
        &["cat", "tac", "nl", "rev"],
        "coreutils/util-linux: only read files and standard input",
    ),
    any(
        &["head", "tail"],
        "coreutils: `tail -f`/`--pid` only wait; no output file",
    ),
    any(
        &[
            "wc", "cut", "tr", "paste", "fold", "fmt", "expand", "unexpand", "join", "comm", "tsort",
            "numfmt",
        ],
        "coreutils text filters: standard output only; `wc --files0-from` reads",
    ),
    any(
        &[
            "ls", "du", "df", "stat", "realpath", "readlink", "basename", "dirname", "pathchk", "pwd",
        ],
        "coreutils: `du --files0-from` and `stat --printf` read or format only",
    ),
    any(
        &[
            "echo", "true", "false", "test", "[", "seq", "expr", "factor", "sleep",
        ],
        "builtins and coreutils without file or program options",
    ),
    any(
        &["which", "type", "whereis"],
        "look names up; `whereis -B/-M/-S` take directories to read",
    ),
    any(
        &[
            "whoami", "id", "groups", "users", "who", "logname", "tty", "uname", "arch", "nproc", "uptime",
            "free", "getconf", "locale", "printenv", "cal",
        ],
        "report system facts; no output file or program option",
    ),
    any(
        &[
            "md5sum",
            "sha1sum",
            "sha224sum",
            "sha256sum",
            "sha384sum",
            "sha512sum",
            "b2sum",
            "cksum",
            "sum",
        ],
        "coreutils: `--check` reads the list it is given",
    ),
    any(
        &["grep", "egrep", "fgrep"],
        "GNU grep: `-f`, `--exclude-from` read; no output file, no program",
    ),
    any(
        &["strings", "od", "hexdump"],
        "binutils/coreutils/util-linux: `strings @FILE` reads options from FILE (none writes)",
    ),
    any(
        &["column", "look", "lsblk", "ps", "pgrep"],
        "util-linux/procps: read only (`pgrep` signals nothing)",
    ),
    any(
        &["cmp"],
        "GNU diffutils: reads its two files; no output file, no program",
    ),
    options(
        &["diff"],
        spec(
            "CDFISUWxX",
            &[
                "ifdef",
                "show-function-line",
                "ignore-matching-lines",
                "starting-file",
                "width",
                "exclude",
                "exclude-from",
                "label",
                "line-format",
                "old-line-format",
                "new-line-format",
                "unchanged-line-format",
                "old-group-format",
                "new-group-format",
                "unchanged-group-format",
                "changed-group-format",
                "horizon-lines",
                "tabsize",
                "from-file",
                "to-file",
                "palette",
            ],
        ),
        &['l'],
        &["paginate"],
        None,
        "GNU diffutils: `-l`/`--paginate` runs `pr`; `--to-file`/`--from-file` read (unlike `sdiff`, `diff3`, no other program)",
    ),
    any(
        &["jq"],
        "jq 1.6/1.7: `--rawfile`/`--slurpfile`/`-L` read; no file output, no program",
    ),
    any(
        &["env"],
        "looked through as a wrapper: the program it runs (`env -S`, `env CMD`) is judged itself; alone it prints",
    ),
    options(
        &["date"],
        spec("dfrs", &["date", "file", "reference", "set", "rfc-3339"]),
        &['s'],
        &["set"],
        None,
        "coreutils date: `-s`/`--set` sets the clock; `-f`, `-r` read",
    ),
    options(
        &["hostname"],
        spec("F", &["file"]),
        &['F', 'b'],
        &["file", "boot"],
        Some(0),
        "hostname: `-F`/`--file`, `-b`/`--boot` and an operand set the host name",
    ),
    options(
        &["ptx"],
        spec(
            "bioFgSWwM",
            &[
                "break-file",
                "ignore-file",
                "only-file",
                "flag-truncation",
                "gap-size",
                "sentence-regexp",
                "word-regexp",
                "width",
                "macro-name",
                "format",
            ],
        ),
        &['G'],
        &["traditional"],
        None,
        "coreutils ptx: with `-G`/`--traditional` a second operand is the output file; otherwise every operand is input (POSIXLY_CORRECT does not change that)",
    ),
    options(
        &["uniq"],
        spec("fsw", &["skip-fields", "skip-chars", "check-chars"]),
        &[],
        &[],
        Some(1),
        "coreutils uniq: a second operand is the output file",
    ),
    options(
        &["xxd"],
        spec("cglosn", &[]),
        &[],
        &[],
        Some(1),
        "xxd: a second operand is the output file (with or without `-r`)",
    ),
    options(
        &["file"],
        spec(
            "emfFP",
            &["magic-file", "files-from", "separator", "exclude", "parameter"],
        ),
        &['C'],
        &["compile"],
        None,
        "file: `-C`/`--compile` writes a compiled magic file; `-m`, `-f` read",
    ),
    options(
        &["tree"],
        spec("LPIHTo", &["filelimit", "timefmt", "sort", "charset", "output"]),
        &['o', 'R'],
        &["output"],
        None,
        "tree: `-o` writes its output file, `-R` writes `00Tree.html` at each level; `-F` is a flag",
    ),
    options(
        &["base64", "base32"],
        spec("w", &["wrap"]),
        &['o'],
        &["output"],
        None,
        "GNU base64: standard output only (`-i` is a flag); BSD's `-o FILE` writes",
    ),
    options(
        &["sort"],
        spec(
            "kotTS",
            &[
                "key",
                "output",
                "field-separator",
                "temporary-directory",
                "buffer-size",
                "compress-program",
                "files0-from",
                "random-source",
                "parallel",
                "batch-size",
                "sort",
            ],
        ),
        &['o'],
        &["output", "compress-program"],
        None,
        "coreutils sort: `-o`/`--output` writes, `--compress-program` runs a program; `-T` only holds temporary files",
    ),
    options(
        &["fd", "fdfind"],
        spec(
            "tEedjScxXo",
            &[
                "type",
                "exclude",
                "extension",
                "max-depth",
                "min-depth",
                "exact-depth",
                "threads",
                "size",
                "changed-within",
                "changed-before",
                "owner",
                "base-directory",
                "search-path",
                "color",
                "max-results",
                "format",
                "ignore-file",
                "path-separator",
                "and",
                "exec",
                "exec-batch",
                "batch-size",
            ],
        ),
        &['x', 'X'],
        &["exec", "exec-batch"],
        None,
        "fd: `-x`/`--exec`, `-X`/`--exec-batch` run programs; `-l` runs `ls -l` (read-only)",
    ),
    options(
        &["rg"],
        spec(
            "ABCdEefgjMmrTt",
            &[
                "after-context",
                "before-context",
                "context",
                "max-depth",
                "encoding",
                "regexp",
                "file",
                "glob",
                "iglob",
                "threads",
                "max-columns",
                "max-count",
                "replace",
                "type-not",
                "type",
                "type-add",
                "type-clear",
                "pre",
                "pre-glob",
                "hostname-bin",
                "colors",
                "color",
                "sort",
                "sortr",
                "path-separator",
                "context-separator",
                "field-context-separator",
                "field-match-separator",
                "ignore-file",
                "max-filesize",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
            ],
        ),
        &['z'],
        &["pre", "hostname-bin", "search-zip"],
        None,
        "ripgrep: `--pre`, `--hostname-bin` and `-z`/`--search-zip` (decompressors) run programs; `--replace` only changes output",
    ),
    options(
        &["ag"],
        spec("ABGgmp", &["pager", "ignore", "file-search-regex", "depth"]),
        &[],
        &["pager"],
        None,
        "the silver searcher: `--pager` runs a program; `-C` takes an optional attached value only",
    ),
    Entry {
        names: &["find"],
        judge: Judge::Words(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
        ]),
        review: "GNU find: `-exec*`/`-ok*` run programs, `-delete` deletes, `-fprint*`/`-fls` write files; `-files0-from` reads",
    },
    Entry {
        names: &["printf"],
        judge: Judge::Own,
        review: "builtin printf: `-v NAME` assigns a variable (judged by name and value)",
    },
    Entry {
        names: &["command"],
        judge: Judge::Own,
        review: "builtin command: only `-v`/`-V` (look-up) are in the profile; otherwise it runs a program",
    },
    Entry {
        names: &["sed", "gsed"],
        judge: Judge::Own,
        review: "GNU sed: `-i`, `w`/`W` files, `e`, `s///e` and `s///w` are refused by the script reader",
    },
    Entry {
        names: &["awk", "gawk", "mawk", "nawk", "busybox-awk"],
        judge: Judge::Own,
        review: "awk: `system`, `getline`, pipes and output redirections are refused by the program reader; gawk `-f`/`-i`/`-l` load code",
    },
    Entry {
        names: &["git"],
        judge: Judge::Own,
        review: "git: read subcommands only, without `-c`, `--output`, `--ext-diff`, `--textconv`, pagers, and not in a repository whose configuration runs programs",
    },
];

/// The profile's entry for `name`.
pub(super) fn entry(name: &str) -> Option<&'static Entry> {
    PROFILE.iter().find(|e| e.names.contains(&name))
}

/// Commands that are not in the profile, with why: asked about so the profile stays honest.
#[cfg(test)]
pub(super) const LEFT_OUT: &[(&str, &str)] = &[
    ("tee", "writes every operand"),
    ("split", "writes output files"),
    ("csplit", "writes output files"),
    ("less", "`LESSOPEN` and `!` run programs; `s` saves to a file"),
    ("more", "`!` runs a shell"),
    ("man", "runs a pager (`-P`, `MANPAGER`) and preprocessors"),
    ("vim", "runs commands"),
    ("xargs", "looked through: the command it runs is judged"),
];

#[cfg(test)]
pub(super) fn dangerous_cases() -> Vec<String> {
    let mut out = Vec::new();
    for e in PROFILE {
        let name = e.names[0];
        match &e.judge {
            Judge::Options {
                spec,
                short,
                long,
                max_operands,
            } => {
                for c in *short {
                    let value = if spec.short_values.contains(*c) { " v" } else { "" };
                    out.push(format!("{name} -{c}{value} x"));
                    // Clustered after a flag that takes no value.
                    out.push(format!("{name} -q{c}{value} x"));
                }
                for l in *long {
                    out.push(format!("{name} --{l}=v x"));
                    // A unique prefix is the option itself.
                    out.push(format!("{name} --{}=v x", &l[..l.len().max(4) - 1]));
                }
                if let Some(max) = max_operands {
                    out.push(format!("{name}{}", " x".repeat(max + 1)));
                }
            }
            Judge::Words(words) => {
                for w in *words {
                    out.push(format!("{name} . {w} x ;"));
                }
            }
            Judge::AnyArgs | Judge::Own => {}
        }
    }
    out
}
