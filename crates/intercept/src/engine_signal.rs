//! Commands that would signal the engine itself, judged by what their patterns match: `pkill -f`
//! and `killall -r` take a regular expression, tested against the engine's own command lines
//! (`pkill -f 'shellg.te rpc'` matches `shellgate rpc`) and the running process's own; `kill
//! $(pgrep -f 'gate rpc')` and `pgrep -f 'gate rpc' | xargs kill` look the engine up first.

use crate::argv::Arg;
use crate::getopt::{Item, Spec, long_may_be, scan};

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

/// The options of `pgrep`/`pkill` (procps-ng 4) and `killall` (psmisc) that take a value: `-n`
/// and `-o` are flags of `pkill` (newest, oldest) but take a value for `killall` (a namespace,
/// an age), `-r` is `killall`'s regular-expression flag and `pkill`'s run states.
fn spec(name: &str) -> Spec<'static> {
    if name == "killall" {
        Spec {
            short_values: "suoynZ",
            long_values: &["signal", "user", "older-than", "younger-than", "ns", "context"],
        }
    } else {
        Spec {
            short_values: "dgGPstuUFrO",
            long_values: &[
                "delimiter",
                "pgroup",
                "group",
                "parent",
                "session",
                "terminal",
                "euid",
                "uid",
                "pidfile",
                "signal",
                "ns",
                "nslist",
                "runstates",
                "cgroup",
                "env",
                "older",
            ],
        }
    }
}

/// `pkill`/`killall` whose pattern matches the engine.
pub(crate) fn pattern_matches_engine(name: &str, args: &[Arg]) -> bool {
    let items = scan(args, spec(name));
    let full = items.iter().any(|i| {
        matches!(i, Item::Short('f', None))
            || matches!(i, Item::Long(l, _) if long_may_be(l, "full") && l.len() > 1)
    });
    let regex = name == "pkill"
        || items.iter().any(|i| {
            matches!(i, Item::Short('r', None))
                || matches!(i, Item::Long(l, _) if long_may_be(l, "regexp") && l.len() > 1)
        });
    items.iter().any(|i| match i {
        Item::Positional(p) | Item::Unknown(p) => match p.get() {
            Some(v) if regex => matches_engine(v, full),
            Some(v) => v == "shellgate" || matches_engine(&format!("^{}$", regex::escape(v)), false),
            None => p.raw.contains('$'),
        },
        _ => false,
    })
}

/// A `$(pgrep … PATTERN)` / `$(pidof …)` inside a `kill` argument that finds the engine.
pub(crate) fn lookup_finds_engine(raw: &str) -> bool {
    let inner = if let Some(start) = raw.find("$(").map(|i| i + 2) {
        raw[start..].trim_end_matches([')', '"'])
    } else if let Some(start) = raw.find('`').map(|i| i + 1) {
        raw[start..].trim_end_matches(['`', '"'])
    } else {
        return false;
    };
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
        assert!(pattern_matches_engine("pkill", &args("-f -n shellg.te.rpc")));
        assert!(pattern_matches_engine("pkill", &args("-u root -f shellg.te.rpc")));
        assert!(!pattern_matches_engine("pkill", &args("-u shellgate node")));
        assert!(pattern_matches_engine("killall", &args("-r -o 1h shellg")));
        assert!(lookup_finds_engine("$(pgrep -f 'gate rpc')"));
        assert!(!lookup_finds_engine("$(pgrep -f myserver)"));
    }
}
