//! `cargo xtask fuzz`: build and run every crate's cargo-fuzz targets (`crates/*/fuzz`) for a fixed time
//! each, keeping the corpora under `crates/<crate>/fuzz/corpus/<target>`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, bail};

use crate::cli::FuzzOptions;
use crate::workspace;

/// One fuzz target of one crate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuzzTarget {
    /// The crate directory (where `cargo fuzz` runs).
    pub crate_dir: PathBuf,
    /// The `[[bin]]` name.
    pub name: String,
}

/// Run every (selected) target; `Ok(false)` when one crashed or failed to build.
pub fn run(options: &FuzzOptions) -> anyhow::Result<bool> {
    let root = workspace::root();
    let mut targets = discover(&root.join("crates"))?;
    if let Some(filter) = &options.target {
        targets.retain(|t| t.name.contains(filter.as_str()));
    }
    if targets.is_empty() {
        println!("no fuzz targets found under crates/*/fuzz (nothing to do)");
        return Ok(true);
    }
    ensure_cargo_fuzz()?;
    let nightly = !options.stable && has_nightly();
    let mode = if nightly {
        "nightly, AddressSanitizer"
    } else {
        "stable, -s none (no sanitizer)"
    };
    println!(
        "fuzzing {} target(s) for {} s each ({mode})",
        targets.len(),
        options.time_secs
    );
    let logs = root.join("target").join("shellgate-fuzz");
    std::fs::create_dir_all(&logs)?;

    let mut rows = Vec::new();
    for target in &targets {
        let crate_name = target
            .crate_dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let log = logs.join(format!("{crate_name}-{}.log", target.name));
        eprintln!(
            "xtask: fuzz {crate_name}/{} (log: {})",
            target.name,
            log.display()
        );
        let start = Instant::now();
        let status = std::fs::File::create(&log).and_then(|file| {
            fuzz_command(nightly, target, options.time_secs)
                .stdout(Stdio::from(file.try_clone()?))
                .stderr(Stdio::from(file))
                .status()
        });
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let verdict = match status {
            Ok(s) if s.success() => format!("ok — {}", last_stats(&text).unwrap_or("no stats line")),
            Ok(s) => {
                let artifacts = target.crate_dir.join("fuzz").join("artifacts").join(&target.name);
                format!("FAILED ({s}); see {} and {}", log.display(), artifacts.display())
            }
            Err(e) => format!("FAILED to run cargo fuzz: {e}"),
        };
        rows.push((
            format!("{crate_name}/{}", target.name),
            start.elapsed().as_secs(),
            verdict,
        ));
    }
    println!("\n{:<40} {:>6}  result", "target", "secs");
    for (name, secs, verdict) in &rows {
        println!("{name:<40} {secs:>6}  {verdict}");
    }
    Ok(rows.iter().all(|(_, _, v)| v.starts_with("ok")))
}

fn fuzz_command(nightly: bool, target: &FuzzTarget, secs: u64) -> Command {
    let mut command = Command::new("cargo");
    if nightly {
        command.args(["+nightly", "fuzz", "run", "--sanitizer", "address"]);
    } else {
        command.args(["fuzz", "run", "-s", "none"]);
    }
    command
        .arg(&target.name)
        .arg("--")
        .arg(format!("-max_total_time={secs}"))
        .current_dir(&target.crate_dir)
        .stdin(Stdio::null());
    command
}

/// Every `crates/*/fuzz/Cargo.toml` and its `[[bin]]` targets.
pub fn discover(crates: &Path) -> anyhow::Result<Vec<FuzzTarget>> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(crates)
        .with_context(|| format!("reading {}", crates.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("fuzz").join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    for crate_dir in dirs {
        let manifest = std::fs::read_to_string(crate_dir.join("fuzz").join("Cargo.toml"))?;
        for name in bin_names(&manifest) {
            found.push(FuzzTarget {
                crate_dir: crate_dir.clone(),
                name,
            });
        }
    }
    Ok(found)
}

/// The `name`s of the `[[bin]]` tables of a Cargo manifest.
pub fn bin_names(manifest: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line.starts_with("[[bin]]");
            continue;
        }
        if !in_bin {
            continue;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim() == "name"
        {
            names.push(value.trim().trim_matches('"').trim_matches('\'').to_owned());
        }
    }
    names
}

/// libFuzzer's last progress line (`#N DONE cov: … exec/s: …`).
fn last_stats(log: &str) -> Option<&str> {
    log.lines()
        .rev()
        .find(|l| l.starts_with('#') && l.contains("cov:"))
        .map(str::trim)
}

fn has_nightly() -> bool {
    Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.starts_with("nightly"))
        })
}

fn ensure_cargo_fuzz() -> anyhow::Result<()> {
    let present = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return Ok(());
    }
    eprintln!("xtask: installing cargo-fuzz (cargo install cargo-fuzz --locked)");
    let status = Command::new("cargo")
        .args(["install", "cargo-fuzz", "--locked"])
        .status()?;
    if !status.success() {
        bail!("cargo install cargo-fuzz failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_names_come_from_bin_tables_only() {
        let manifest = r#"
[package]
name = "shellgate-normalize-fuzz"

[dependencies.shellgate-normalize]
path = ".."

[[bin]]
name = "parse"
path = "fuzz_targets/parse.rs"
test = false

[[bin]]
name = 'normalize'
path = "fuzz_targets/normalize.rs"
"#;
        assert_eq!(bin_names(manifest), vec!["parse", "normalize"]);
        assert!(bin_names("[package]\nname = \"x\"\n").is_empty());
    }

    #[test]
    fn discovery_finds_fuzz_manifests() {
        let crates = crate::measure::scratch_file("fuzz-discover");
        std::fs::create_dir_all(crates.join("a").join("fuzz")).unwrap();
        std::fs::create_dir_all(crates.join("b")).unwrap();
        std::fs::write(crates.join("a/fuzz/Cargo.toml"), "[[bin]]\nname = \"t1\"\n").unwrap();
        let found = discover(&crates).unwrap();
        std::fs::remove_dir_all(&crates).unwrap();
        assert_eq!(
            found,
            vec![FuzzTarget {
                crate_dir: crates.join("a"),
                name: "t1".into()
            }]
        );
    }

    #[test]
    fn libfuzzer_stats_line_is_found() {
        let log = "INFO: seed\n#1024 pulse cov: 10 ft: 12\n#5000 DONE cov: 88 ft: 120 exec/s: 4000\nDone 5000 runs\n";
        assert_eq!(last_stats(log), Some("#5000 DONE cov: 88 ft: 120 exec/s: 4000"));
    }
}
