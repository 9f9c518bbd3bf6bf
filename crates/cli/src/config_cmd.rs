//! `shellgate config`: the effective configuration, optionally with where each value came from.

use anyhow::Context as _;

/// Arguments of `shellgate config`.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    /// Configuration file (TOML).
    #[arg(long, value_name = "FILE")]
    config: Option<std::path::PathBuf>,
    /// Print every value as `key = value  # source`, the source being `default` or `FILE:LINE`.
    #[arg(long)]
    sources: bool,
}

/// Print the configuration.
pub fn run(args: &ConfigArgs) -> anyhow::Result<i32> {
    let loaded = shellgate::load_config_sources(args.config.as_deref()).context("loading configuration")?;
    if args.sources {
        print!("{}", loaded.sources_text());
    } else {
        print!("{}", shellgate::FileConfig::effective(&loaded.config).to_toml());
    }
    Ok(0)
}
