//! Commands that would signal the engine itself, judged by what their patterns match: `pkill -f`
//! and `killall -r` take a regular expression, tested against the engine's own command lines
//! (`pkill -f 'shellg.te rpc'` matches `shellgate rpc`) and the running process's own; `kill
//! $(pgrep -f 'gate rpc')` and `pgrep -f 'gate rpc' | xargs kill` look the engine up first.

use crate::argv::Arg;

/// Command lines the engine runs as, besides its own.
const ENGINE_LINES: &[&str] = &[
    "shellgate rpc",
    "shellgate mcp",
    "shellgate run",
    "/usr/local/bin/shellgate rpc",
    "target/release/shellgate mcp",
];

/// The command line of the process judging: the engine's own, whatever it is installed as.
fn own_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| std::env::args().collect::<Vec<_>>().join(" "))
}

/// Whether a pattern (an extended regular expression for `pkill`/`pgrep`, a whole name or regex
/// for `killall`) matches the engine: its full command line with `whole_line`, its process name
/// (the program's file name, cut to the kernel's 15 characters) otherwise. One that does not
/// compile is taken to match.
fn matches_engine(pattern: &str, whole_line: bool) -> bool {
    let Ok(re) = regex::Regex::new(pattern) else {
        return true;
    };
    ENGINE_LINES
        .iter()
        .copied()
        .chain(std::iter::once(own_line()))
        .any(|line| {
            if whole_line {
                return re.is_match(line);
            }
            let program = line.split(' ').next().unwrap_or(line);
            let name = program.rsplit('/').next().unwrap_or(program);
            let comm: String = name.chars().take(15).collect();
            re.is_match(name) || re.is_match(&comm)
        })
}

/// `pkill`/`killall` whose pattern matches the engine.
pub(crate) fn pattern_matches_engine(name: &str, args: &[Arg]) -> bool {
    let full = args.iter().any(|a| {
        a.get()
            .is_some_and(|v| v == "--full" || (v.starts_with('-') && !v.starts_with("--") && v.contains('f')))
    });
    let regex = name == "pkill" || args.iter().any(|a| a.is("-r") || a.is("--regexp"));
    operands(args).any(|p| match p.get() {
        Some(v) if regex => matches_engine(v, full),
        Some(v) => v == "shellgate" || matches_engine(&format!("^{}$", regex::escape(v)), false),
        None => p.raw.contains('$'),
    })
}

/// A `$(pgrep … PATTERN)` / `$(pidof …)` inside a `kill` argument that finds the engine.
pub(crate) fn lookup_finds_engine(raw: &str) -> bool {
    let Some(start) = raw.find("$(").map(|i| i + 2) else {
        return false;
    };
    let inner = raw[start..].trim_end_matches([')', '"']);
    let Ok(script) = shellgate_normalize::parse(inner) else {
        return false;
    };
    let Some(cmd) = script
        .list
        .items
        .first()
        .and_then(|i| i.and_or.first.commands.first())
        .and_then(|c| c.as_simple())
    else {
        return false;
    };
    let Some(argv) = cmd.static_argv() else {
        return false;
    };
    let args: Vec<Arg> = argv.iter().skip(1).map(|a| Arg::literal(a)).collect();
    match argv.first().map(|n| crate::argv::basename(n)) {
        Some("pgrep") => pattern_matches_engine("pkill", &args),
        Some("pidof") => args.iter().any(|a| a.is("shellgate")),
        _ => false,
    }
}

/// The words after the options (values of the options that take one skipped).
fn operands(args: &[Arg]) -> impl Iterator<Item = &Arg> {
    let mut skip = false;
    args.iter().filter(move |a| {
        if skip {
            skip = false;
            return false;
        }
        match a.get() {
            Some(v) if v.starts_with('-') && v.len() > 1 => {
                skip = matches!(
                    v,
                    "-u" | "-U" | "-g" | "-G" | "-P" | "-s" | "-t" | "--signal" | "-o" | "-y" | "-n" | "-O"
                );
                false
            }
            _ => true,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<Arg> {
        s.split_whitespace().map(Arg::literal).collect()
    }

    #[test]
    fn patterns_are_tested_against_the_engine() {
        assert!(pattern_matches_engine("pkill", &args("-f shellg.te.rpc")));
        assert!(pattern_matches_engine("pkill", &args("-f gate")));
        assert!(pattern_matches_engine("pkill", &args("shellg")));
        assert!(!pattern_matches_engine("pkill", &args("-f myserver")));
        assert!(!pattern_matches_engine("pkill", &args("-9 node")));
        assert!(lookup_finds_engine("$(pgrep -f 'gate rpc')"));
        assert!(!lookup_finds_engine("$(pgrep -f myserver)"));
    }
}
