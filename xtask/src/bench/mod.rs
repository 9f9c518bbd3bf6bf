//! `cargo xtask bench`: criterion benches of every crate plus end-to-end comparisons, each against
//! baselines measured in the same run; writes `target/shellgate-bench/report.{md,json}` and `ratios.svg`.

mod criterion;
mod drivers;
mod hosts;
mod jobs;
mod keystroke;
mod latency;
mod limiter;
mod mcp;
mod parse;
mod peers;
mod pty;
mod repl_answer;
mod sandbox;
mod sandbox_proxy;

pub use pty::pty_works;
mod throughput;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::cli::BenchOptions;
use crate::report::{Machine, Ratio, Report, Section};
use crate::workspace::{self, Metadata};

/// What every section needs.
pub struct Ctx<'a> {
    /// Command-line options.
    pub options: &'a BenchOptions,
    /// Workspace metadata.
    pub meta: Metadata,
    /// `target/shellgate-bench`.
    pub dir: PathBuf,
    /// A scratch working directory for the commands (so no project configuration applies).
    pub work: PathBuf,
    /// The release `shellgate` binary, when it built.
    pub shellgate: Option<PathBuf>,
    /// Node and Python driver scripts.
    pub drivers: drivers::Drivers,
    /// Ratios collected so far.
    pub ratios: Vec<Ratio>,
}

impl Ctx<'_> {
    /// Record a ratio when both costs are usable.
    pub fn ratio(
        &mut self,
        section: &str,
        label: &str,
        subject: (&str, f64),
        baseline: (&str, f64),
    ) -> Option<f64> {
        let ratio = Ratio::of(section, label, subject, baseline)?;
        let value = ratio.value;
        self.ratios.push(ratio);
        Some(value)
    }
}

/// Run the selected sections and write the report.
pub fn run(options: &BenchOptions) -> anyhow::Result<()> {
    let started = Instant::now();
    let load_at_start = crate::report::load_average();
    let generated_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let meta = Metadata::load()?;
    let dir = workspace::bench_dir(&meta)?;
    let work = dir.join("work");
    std::fs::create_dir_all(&work)?;
    let drivers = drivers::install(&dir)?;
    let shellgate = match workspace::build_shellgate(&meta) {
        Ok(path) => Some(path),
        Err(e) => {
            eprintln!("xtask: shellgate did not build ({e:#}); end-to-end sections will be skipped");
            None
        }
    };
    let mut ctx = Ctx {
        options,
        meta,
        dir,
        work,
        shellgate,
        drivers,
        ratios: Vec::new(),
    };

    let mut sections = Vec::new();
    let mut estimates = Vec::new();
    let mut spawn_true_us = None;
    let mut timed = |section: Section, since: Instant| {
        let mut section = section;
        section.seconds = since.elapsed().as_secs_f64();
        eprintln!("xtask: section {} took {:.0} s", section.id, section.seconds);
        sections.push(section);
    };
    if options.wants("criterion") {
        let t = Instant::now();
        let (section, found) = criterion::run(&mut ctx);
        estimates = found;
        timed(section, t);
    }
    if options.wants("latency") {
        let t = Instant::now();
        let (section, raw_true) = latency::run(&mut ctx);
        spawn_true_us = raw_true;
        timed(section, t);
    }
    if options.wants("limiter") {
        let t = Instant::now();
        timed(limiter::run(&mut ctx), t);
    }
    if options.wants("throughput") {
        let t = Instant::now();
        timed(throughput::run(&mut ctx), t);
    }
    if options.wants("parse") {
        let t = Instant::now();
        timed(parse::run(&mut ctx, &estimates, spawn_true_us), t);
    }
    if options.wants("jobs") {
        let t = Instant::now();
        timed(jobs::run(&mut ctx), t);
        let t = Instant::now();
        timed(repl_answer::run(&mut ctx), t);
    }
    if options.wants("pty") {
        let t = Instant::now();
        timed(pty::run(&mut ctx), t);
    }
    if options.wants("peers") {
        let t = Instant::now();
        timed(peers::run(&mut ctx), t);
    }
    if options.wants("sandbox") {
        let t = Instant::now();
        timed(sandbox::run(&mut ctx), t);
        let t = Instant::now();
        timed(sandbox_proxy::run(&mut ctx), t);
    }
    if options.wants("hosts") {
        let t = Instant::now();
        timed(hosts::run(&mut ctx), t);
    }
    if options.wants("mcp") {
        let t = Instant::now();
        timed(mcp::run(&mut ctx), t);
    }

    let report = Report {
        generated_unix,
        quick: options.quick,
        machine: machine(load_at_start),
        sections,
        ratios: ctx.ratios,
    };
    report.write(&ctx.dir)?;
    println!("\nratios (subject / baseline; below 1 = cheaper):");
    for r in &report.ratios {
        println!("  {:>8.3}  [{}] {}", r.value, r.section, r.caption());
    }
    println!(
        "\nreport: {}\n        {}\n        {}\n(took {:.0} s)",
        ctx.dir.join("report.md").display(),
        ctx.dir.join("report.json").display(),
        ctx.dir.join("ratios.svg").display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn machine(load_at_start: f64) -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    Machine {
        cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        cpu,
        kernel: first_line("uname", &["-r"]).unwrap_or_default(),
        rustc: first_line("rustc", &["--version"]).unwrap_or_default(),
        node: first_line("node", &["--version"]),
        python: first_line("python3", &["--version"]),
        rss_method: crate::measure::rss_method().to_owned(),
        load: (load_at_start, crate::report::load_average()),
    }
}

/// The first line a tool prints, if it runs.
pub fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text).lines().next().map(str::to_owned)
}

/// Add a "skipped" note when `shellgate` did not build; returns the binary otherwise.
pub fn need_shellgate(ctx: &Ctx<'_>, section: &mut Section) -> Option<PathBuf> {
    if ctx.shellgate.is_none() {
        section.note("skipped: the shellgate binary did not build");
    }
    ctx.shellgate.clone()
}
