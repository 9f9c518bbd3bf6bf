//! Which commands start an interactive shell or REPL: run as a job, what is typed into them later
//! reaches a program the policy never sees, so under `security = "allowlist"` they fail closed.

use crate::{Judgement, SegmentVerdict};

/// Shells: interactive unless given a script or `-c` (`-i` and `-s` read commands typed later).
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash",
];

/// Shell options that take the next argument as their value.
const SHELL_OPTION_ARGS: &[&str] = &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"];

/// Interpreters that read a program from their input when given none.
const INTERPRETERS: &[&str] = &[
    "python", "pypy", "ipython", "bpython", "node", "nodejs", "irb", "pry", "ruby", "perl", "php", "lua",
    "luajit", "R", "julia", "ghci", "jshell", "scala", "clojure", "clj", "iex", "erl", "ocaml", "guile",
    "racket", "sbcl", "tclsh", "wish", "bc", "dc", "gdb", "lldb",
];

/// Options of interpreters that take the next argument as their value (`python -W error`).
const INTERPRETER_OPTION_ARGS: &[&str] = &["-W", "-X", "-r", "--require", "-I", "--import"];

/// Options of interpreters that give the program inline, so nothing is read later.
const INLINE_PROGRAM: &[&str] = &[
    "-c",
    "-m",
    "-e",
    "-p",
    "--eval",
    "--print",
    "--version",
    "-V",
    "--help",
    "-h",
];

/// Clients whose prompt takes commands for another system (`psql`, `ssh host`).
const CLIENTS: &[&str] = &[
    "psql",
    "mysql",
    "mariadb",
    "sqlite",
    "redis-cli",
    "mongosh",
    "mongo",
];

/// Client options that give the commands inline or from a file.
const CLIENT_INLINE: &[&str] = &["-c", "--command", "-e", "--execute", "-f", "--file", "-cmd"];

/// The first segment of `judgement` that starts an interactive shell or REPL reading its input,
/// if any.
pub fn interactive_segment(judgement: &Judgement) -> Option<&SegmentVerdict> {
    judgement.segments.iter().find(|s| {
        // Input redirected from a file or here-document is not typed later.
        !s.command.contains('<')
            && s.argv
                .as_deref()
                .is_some_and(|argv| starts_interactive(argv, s.argv_complete))
    })
}

/// Whether `argv` (complete: nothing appended at run time) starts something interactive.
pub fn starts_interactive(argv: &[String], complete: bool) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    // Words known only at run time may be a script: not provably interactive.
    if !complete {
        return false;
    }
    let name = program_name(program);
    if SHELLS.contains(&name) {
        return shell_is_interactive(args);
    }
    if INTERPRETERS.contains(&name) {
        return interpreter_is_interactive(name, args);
    }
    match name {
        "deno" => args.is_empty() || args.first().is_some_and(|a| a == "repl"),
        "bun" => args.first().is_some_and(|a| a == "repl"),
        "ssh" => ssh_is_interactive(args),
        "su" => !args.iter().any(|a| a == "-c" || a == "--command"),
        "sudo" => args.iter().any(|a| a == "-i" || a == "-s") && args.iter().all(|a| a.starts_with('-')),
        "docker" | "podman" | "kubectl" | "nerdctl" => args.last().is_some_and(|last| {
            SHELLS.contains(&program_name(last)) || INTERPRETERS.contains(&program_name(last))
        }),
        _ if CLIENTS.contains(&name) => client_is_interactive(name, args),
        _ => false,
    }
}

/// `/usr/bin/python3.12` → `python`.
fn program_name(program: &str) -> &str {
    let base = program.rsplit('/').next().unwrap_or(program);
    let trimmed = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if trimmed.is_empty() { base } else { trimmed }
}

fn shell_is_interactive(args: &[String]) -> bool {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-i" || a == "-s" || (a == "--" && it.len() == 0) {
            return true;
        }
        if a == "-c" || (a.starts_with('-') && !a.starts_with("--") && a[1..].contains('c')) {
            return false;
        }
        if SHELL_OPTION_ARGS.contains(&a.as_str()) {
            it.next();
            continue;
        }
        if !(a.starts_with('-') || a.starts_with('+')) {
            // A script file.
            return false;
        }
    }
    true
}

fn interpreter_is_interactive(name: &str, args: &[String]) -> bool {
    if name == "php" {
        return args.iter().any(|a| a == "-a" || a == "--interactive");
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-i" || a == "--interactive" {
            return true;
        }
        if INLINE_PROGRAM.contains(&a.as_str())
            || INLINE_PROGRAM.iter().any(|o| a.starts_with(&format!("{o}=")))
        {
            return false;
        }
        if INTERPRETER_OPTION_ARGS.contains(&a.as_str()) {
            it.next();
            continue;
        }
        if a == "-" {
            return true;
        }
        if !a.starts_with('-') {
            // A script file (or, for `python -c`-like short clusters, handled above).
            return false;
        }
    }
    true
}

/// A database or cache client without commands given inline or from a file.
fn client_is_interactive(name: &str, args: &[String]) -> bool {
    let inline = args.iter().any(|a| {
        CLIENT_INLINE.contains(&a.as_str()) || CLIENT_INLINE.iter().any(|o| a.starts_with(&format!("{o}=")))
    });
    // `sqlite3 DB SQL…` runs the SQL (names are compared without their version digits).
    let sql_given = name == "sqlite" && args.iter().filter(|a| !a.starts_with('-')).count() > 1;
    !inline && !sql_given
}

/// `ssh host` (no remote command) opens a remote shell.
fn ssh_is_interactive(args: &[String]) -> bool {
    const WITH_VALUE: &[&str] = &[
        "-p", "-i", "-l", "-o", "-F", "-J", "-L", "-R", "-D", "-b", "-c", "-e", "-E", "-m", "-O", "-Q", "-S",
        "-W", "-w", "-B",
    ];
    let mut positional = 0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if WITH_VALUE.contains(&a.as_str()) {
            it.next();
        } else if !a.starts_with('-') {
            positional += 1;
        }
    }
    positional == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interactive(cmd: &str) -> bool {
        let argv: Vec<String> = cmd.split_whitespace().map(str::to_owned).collect();
        starts_interactive(&argv, true)
    }

    #[test]
    fn bare_shells_and_repls_are_interactive() {
        for cmd in [
            "bash",
            "sh -i",
            "bash -l",
            "zsh -o pipefail",
            "/usr/bin/python3.12",
            "python3 -i x.py",
            "node",
            "node --interactive",
            "irb",
            "deno",
            "deno repl",
            "bun repl",
            "ssh host",
            "ssh -p 22 host",
            "psql -h db",
            "sqlite3 x.db",
            "php -a",
            "docker exec -it c bash",
            "sudo -i",
            "su",
            "perl",
        ] {
            assert!(interactive(cmd), "{cmd}");
        }
    }

    #[test]
    fn scripts_and_inline_programs_are_not() {
        for cmd in [
            "bash x.sh",
            "sh -c true",
            "bash -ec true",
            "python3 x.py",
            "python -m http.server",
            "python3 -c print(1)",
            "node -e 1",
            "node server.js",
            "ruby x.rb",
            "deno run x.ts",
            "bun",
            "ssh host uptime",
            "psql -c select",
            "sqlite3 x.db select",
            "php x.php",
            "ls",
            "make",
            "docker ps",
        ] {
            assert!(!interactive(cmd), "{cmd}");
        }
        assert!(!starts_interactive(&["bash".to_owned()], false));
    }
}
