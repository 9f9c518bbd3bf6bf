//! `cargo xtask stress`: the engine's limits under abuse. Each check reports held / FAILED / skipped;
//! the command exits non-zero when any check failed.

mod concurrent;
mod flood;
mod forkbomb;
mod jobs;
mod pty_cycles;
mod sigkill;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::cli::StressOptions;
use crate::workspace::{self, Metadata};

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The property held.
    Held,
    /// The property did not hold.
    Failed,
    /// Could not be checked here (feature not there yet, tool missing).
    Skipped,
}

/// One line of the stress table.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it held.
    pub verdict: Verdict,
    /// Figures and reasons.
    pub detail: String,
}

impl Check {
    /// A check that held when `ok`, else failed.
    pub fn of(name: &str, ok: bool, detail: impl Into<String>) -> Self {
        let verdict = if ok { Verdict::Held } else { Verdict::Failed };
        Self {
            name: name.to_owned(),
            verdict,
            detail: detail.into(),
        }
    }

    /// A check that could not run.
    pub fn skipped(name: &str, why: impl Into<String>) -> Self {
        Self {
            name: name.to_owned(),
            verdict: Verdict::Skipped,
            detail: why.into(),
        }
    }

    /// A check whose harness itself failed.
    pub fn error(name: &str, e: &anyhow::Error) -> Self {
        Self::of(name, false, format!("error: {e:#}"))
    }
}

/// Shared by the checks.
pub struct Env {
    /// The release `shellgate` binary.
    pub shellgate: PathBuf,
    /// A scratch directory for this run.
    pub scratch: PathBuf,
}

impl Env {
    /// A fresh empty directory under the scratch area.
    pub fn fresh_dir(&self, name: &str) -> anyhow::Result<PathBuf> {
        let dir = self.scratch.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

/// A check's entry point.
type Runner = fn(&Env) -> Vec<Check>;

/// Run the selected checks, print the table; `Ok(false)` when something did not hold.
pub fn run(options: &StressOptions) -> anyhow::Result<bool> {
    let meta = Metadata::load()?;
    let shellgate = workspace::build_shellgate(&meta)?;
    let scratch = meta.target_directory.join("shellgate-stress");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let env = Env { shellgate, scratch };

    let all: [(&str, Runner); 6] = [
        ("flood", flood::run),
        ("concurrent", concurrent::run),
        ("forkbomb", forkbomb::run),
        ("sigkill", sigkill::run),
        ("pty", pty_cycles::run),
        ("jobs", jobs::run),
    ];
    let mut checks = Vec::new();
    for (name, runner) in all {
        if !options.wants(name) {
            continue;
        }
        eprintln!("xtask: stress {name}…");
        let start = Instant::now();
        let found = runner(&env);
        for c in &found {
            eprintln!(
                "xtask:   {} → {:?} ({:.1} s)",
                c.name,
                c.verdict,
                start.elapsed().as_secs_f64()
            );
        }
        checks.extend(found);
    }
    let table = render_table(&checks);
    println!("\n{table}");
    let saved = env.scratch.join("report.txt");
    if std::fs::write(&saved, &table).is_ok() {
        println!("(saved to {})", saved.display());
    }
    Ok(checks.iter().all(|c| c.verdict != Verdict::Failed))
}

/// The table, as printed and as saved in `target/shellgate-stress/report.txt`.
fn render_table(checks: &[Check]) -> String {
    use std::fmt::Write as _;
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(5).max(5);
    let mut out = format!("{:<width$}  {:<7}  detail\n", "check", "result");
    for c in checks {
        let verdict = match c.verdict {
            Verdict::Held => "held",
            Verdict::Failed => "FAILED",
            Verdict::Skipped => "skipped",
        };
        let _ = writeln!(out, "{:<width$}  {verdict:<7}  {}", c.name, c.detail);
    }
    let count = |v: Verdict| checks.iter().filter(|c| c.verdict == v).count();
    let _ = write!(
        out,
        "\n{} held, {} failed, {} skipped\n",
        count(Verdict::Held),
        count(Verdict::Failed),
        count(Verdict::Skipped)
    );
    out
}

/// Point every per-user location (home, temp, XDG dirs) of a server at `dir`, so whatever it writes —
/// artifacts included — lands there.
pub fn isolate(command: &mut std::process::Command, dir: &Path) {
    command
        .current_dir(dir)
        .env("HOME", dir)
        .env("TMPDIR", dir)
        .env("SHELLGATE_ARTIFACT_DIR", dir.join("artifacts"));
    for var in [
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_RUNTIME_DIR",
    ] {
        command.env(var, dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lists_every_check_and_counts_verdicts() {
        let checks = [
            Check::of("a", true, "fine"),
            Check::of("bb", false, "broke"),
            Check::skipped("c", "absent"),
        ];
        let table = render_table(&checks);
        assert!(table.contains("a      held     fine"), "{table}");
        assert!(table.contains("bb     FAILED   broke"), "{table}");
        assert!(table.contains("c      skipped  absent"), "{table}");
        assert!(table.ends_with("1 held, 1 failed, 1 skipped\n"), "{table}");
    }
}
