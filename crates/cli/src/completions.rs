//! `shellgate completions SHELL`: a completion script generated from the command-line definition, so
//! it never falls behind the options.

use clap::CommandFactory as _;

/// Print the completion script for `shell` to stdout.
pub fn print(shell: clap_complete::Shell) -> anyhow::Result<i32> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::Cli::command(), "shellgate", &mut script);
    std::io::Write::write_all(&mut std::io::stdout().lock(), &script)?;
    Ok(0)
}
