//! Workspace automation: `cargo xtask bench | fuzz | stress | lint-size | dist | install-check`.
//!
//! `bench` measures shellgate against the ways agents run commands today (raw spawns, Node, Python) and
//! writes `target/shellgate-bench/report.{md,json}` plus a ratio chart; `fuzz` runs every crate's fuzz
//! targets; `stress` checks the engine's limits hold and exits non-zero when one does not; `lint-size`
//! keeps the tool crate's files and functions short. See
//! `xtask/README.md`.
#![forbid(unsafe_code)]

mod bench;
mod cli;
mod dist;
mod fuzz;
mod install_check;
mod measure;
mod procs;
mod report;
mod rpc;
mod size;
mod stats;
mod stress;
mod svg;
mod workspace;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = match cli::parse(&args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("xtask: {message}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    let outcome = match command {
        cli::Command::Help => {
            println!("{}", cli::USAGE);
            Ok(true)
        }
        cli::Command::Bench(options) => bench::run(&options).map(|()| true),
        cli::Command::Fuzz(options) => fuzz::run(&options),
        cli::Command::Stress(options) => stress::run(&options),
        cli::Command::LintSize => size::run(&workspace::root()),
        cli::Command::Dist => dist::run().map(|()| true),
        cli::Command::InstallCheck => install_check::run(),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}
