//! Command-line parsing for `cargo xtask` (hand-rolled: four subcommands do not need a parser crate).

/// Usage text printed by `cargo xtask help` and on bad arguments.
pub const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  bench [--quick] [--only LIST] [--runs N] [--peers]
        criterion benches of every crate plus end-to-end comparisons against raw spawn, Node and
        Python; writes target/shellgate-bench/report.md, report.json and ratios.svg.
        LIST is comma-separated from: criterion,latency,limiter,throughput,parse,jobs,pty,peers,sandbox,hosts,mcp
        --runs N sets the per-command latency sample count (at least 500, the default).
        --peers adds the peers section (npm installs oh-my-pi and Codex's shell-tool MCP into
        target/peers/); `--only peers` implies it.
  fuzz [--time SECS] [--target NAME] [--stable]
        builds and runs every fuzz target under crates/*/fuzz for SECS seconds each (default 60).
        Uses the nightly toolchain with AddressSanitizer when installed, else `-s none` on stable.
  stress [--only LIST]
        output floods, 1000 concurrent commands, a fork bomb under a timeout, SIGKILL of the server,
        10000 PTY open/close cycles, 200 background jobs of 10000 lines each read back line by line;
        prints what held and exits non-zero if anything did not.
        LIST is comma-separated from: flood,concurrent,forkbomb,sigkill,pty,jobs
  lint-size
        no file in crates/tool/src over 400 lines, no function in crates/tool over 100 lines;
        lists what is too long and exits non-zero if anything is.
  dist  builds the release binaries once and packages them into target/dist/: the release archive
        (shellgate-VERSION-TARGET.tar.gz), the npm packages (shellgate and @shellgate/OS-CPU, packed
        with npm pack), a Python wheel carrying the binaries and the MCP registry's server.json.
  install-check
        installs each package from target/dist into an empty prefix (npm --offline, pip --no-index,
        cargo install --path --offline) and uses it: a command, a sandboxed command whose helper is
        found, MCP tools/list through the Inspector CLI; exits non-zero if anything failed.
  help  this text";

/// Options of `cargo xtask bench`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchOptions {
    /// Short criterion times and smaller throughput volumes.
    pub quick: bool,
    /// Sections to run (empty = all).
    pub only: Vec<String>,
    /// Samples per command and method for the latency comparison.
    pub runs: usize,
    /// Run the peers section (it installs packages from npm, so it is never on by default).
    pub peers: bool,
}

impl BenchOptions {
    /// Whether section `name` was selected (`peers` only with `--peers`).
    pub fn wants(&self, name: &str) -> bool {
        if name == "peers" && !self.peers {
            return false;
        }
        self.only.is_empty() || self.only.iter().any(|s| s == name)
    }
}

/// Options of `cargo xtask fuzz`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzOptions {
    /// Seconds per target.
    pub time_secs: u64,
    /// Only targets whose name contains this.
    pub target: Option<String>,
    /// Force the stable toolchain (`-s none`) even when nightly is installed.
    pub stable: bool,
}

/// Options of `cargo xtask stress`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StressOptions {
    /// Checks to run (empty = all).
    pub only: Vec<String>,
}

impl StressOptions {
    /// Whether check `name` was selected.
    pub fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == name)
    }
}

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Print usage.
    Help,
    /// `bench`.
    Bench(BenchOptions),
    /// `fuzz`.
    Fuzz(FuzzOptions),
    /// `stress`.
    Stress(StressOptions),
    /// `lint-size`.
    LintSize,
    /// `dist`.
    Dist,
    /// `install-check`.
    InstallCheck,
}

/// The minimum latency sample count: p99 over fewer samples is mostly noise.
pub const MIN_LATENCY_RUNS: usize = 500;

const BENCH_SECTIONS: &[&str] = &[
    "criterion",
    "latency",
    "limiter",
    "throughput",
    "parse",
    "jobs",
    "pty",
    "peers",
    "sandbox",
    "hosts",
    "mcp",
];
const STRESS_CHECKS: &[&str] = &["flood", "concurrent", "forkbomb", "sigkill", "pty", "jobs"];

/// Parse the arguments after `cargo xtask`.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((first, rest)) = args.split_first() else {
        return Ok(Command::Help);
    };
    let mut rest = rest.iter();
    match first.as_str() {
        "help" | "-h" | "--help" => Ok(Command::Help),
        "bench" => {
            let mut options = BenchOptions {
                quick: false,
                only: Vec::new(),
                runs: MIN_LATENCY_RUNS,
                peers: false,
            };
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--quick" => options.quick = true,
                    "--peers" => options.peers = true,
                    "--only" => {
                        options.only = list(rest.next(), BENCH_SECTIONS)?;
                        options.peers |= options.only.iter().any(|s| s == "peers");
                    }
                    "--runs" => {
                        options.runs = number(rest.next(), "--runs")?;
                        if options.runs < MIN_LATENCY_RUNS {
                            return Err(format!("--runs must be at least {MIN_LATENCY_RUNS}"));
                        }
                    }
                    other => return Err(format!("unknown bench option {other:?}")),
                }
            }
            Ok(Command::Bench(options))
        }
        "fuzz" => {
            let mut options = FuzzOptions {
                time_secs: 60,
                target: None,
                stable: false,
            };
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--time" => options.time_secs = number(rest.next(), "--time")?,
                    "--target" => {
                        options.target = Some(rest.next().ok_or("--target needs a name")?.clone());
                    }
                    "--stable" => options.stable = true,
                    other => return Err(format!("unknown fuzz option {other:?}")),
                }
            }
            if options.time_secs == 0 {
                return Err("--time must be at least 1".to_owned());
            }
            Ok(Command::Fuzz(options))
        }
        "stress" => {
            let mut options = StressOptions { only: Vec::new() };
            while let Some(arg) = rest.next() {
                match arg.as_str() {
                    "--only" => options.only = list(rest.next(), STRESS_CHECKS)?,
                    other => return Err(format!("unknown stress option {other:?}")),
                }
            }
            Ok(Command::Stress(options))
        }
        "lint-size" | "dist" | "install-check" => match rest.next() {
            None => Ok(match first.as_str() {
                "lint-size" => Command::LintSize,
                "dist" => Command::Dist,
                _ => Command::InstallCheck,
            }),
            Some(other) => Err(format!("{first} takes no options, got {other:?}")),
        },
        other => Err(format!("unknown command {other:?}")),
    }
}

fn number<T: std::str::FromStr>(value: Option<&String>, flag: &str) -> Result<T, String> {
    let value = value.ok_or_else(|| format!("{flag} needs a number"))?;
    value
        .parse()
        .map_err(|_| format!("{flag} needs a number, got {value:?}"))
}

fn list(value: Option<&String>, allowed: &[&str]) -> Result<Vec<String>, String> {
    let value = value.ok_or("--only needs a comma-separated list")?;
    value
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if allowed.contains(&s) {
                Ok(s.to_owned())
            } else {
                Err(format!(
                    "unknown section {s:?} (choose from {})",
                    allowed.join(",")
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn bench_options_parse() {
        let Command::Bench(o) = parse(&args("bench --quick --only latency,jobs --runs 800")).unwrap() else {
            panic!("not a bench command");
        };
        assert!(o.quick);
        assert_eq!(o.runs, 800);
        assert!(o.wants("jobs") && !o.wants("criterion"));
    }

    #[test]
    fn peers_run_only_when_asked_for() {
        let Command::Bench(o) = parse(&args("bench --quick")).unwrap() else {
            panic!("not a bench command");
        };
        assert!(!o.peers && !o.wants("peers") && o.wants("latency"));
        let Command::Bench(o) = parse(&args("bench --peers")).unwrap() else {
            panic!("not a bench command");
        };
        assert!(o.wants("peers") && o.wants("latency"));
        let Command::Bench(o) = parse(&args("bench --only peers")).unwrap() else {
            panic!("not a bench command");
        };
        assert!(o.peers && o.wants("peers") && !o.wants("latency"));
        let Command::Bench(o) = parse(&args("bench --peers --only latency")).unwrap() else {
            panic!("not a bench command");
        };
        assert!(!o.wants("peers"));
    }

    #[test]
    fn latency_runs_below_the_minimum_are_refused() {
        assert!(
            parse(&args("bench --runs 100"))
                .unwrap_err()
                .contains("at least 500")
        );
    }

    #[test]
    fn fuzz_and_stress_options_parse() {
        assert_eq!(
            parse(&args("fuzz --time 5 --target parse --stable")).unwrap(),
            Command::Fuzz(FuzzOptions {
                time_secs: 5,
                target: Some("parse".into()),
                stable: true
            })
        );
        assert!(parse(&args("fuzz --time x")).is_err());
        assert!(
            parse(&args("stress --only bogus"))
                .unwrap_err()
                .contains("unknown section")
        );
        assert_eq!(parse(&[]).unwrap(), Command::Help);
        assert_eq!(parse(&args("lint-size")).unwrap(), Command::LintSize);
        assert_eq!(parse(&args("dist")).unwrap(), Command::Dist);
        assert_eq!(parse(&args("install-check")).unwrap(), Command::InstallCheck);
        assert!(parse(&args("dist --fast")).unwrap_err().contains("--fast"));
        assert!(parse(&args("lint-size --fix")).is_err());
        assert!(parse(&args("frobnicate")).is_err());
    }
}
