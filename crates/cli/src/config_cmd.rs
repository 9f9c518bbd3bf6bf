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

/// `shellgate trust [PATH]`: record the file's current content as trusted.
pub fn trust(path: Option<&std::path::Path>) -> anyhow::Result<i32> {
    let path = path.unwrap_or_else(|| std::path::Path::new(shellgate::PROJECT_CONFIG));
    // A file that does not even parse is not worth trusting.
    shellgate::FileConfig::read(path)?;
    let store =
        shellgate::trust(path).map_err(|e| anyhow::anyhow!("cannot trust {}: {e}", path.display()))?;
    println!(
        "Trusted {} as it is now (recorded in {}).",
        path.display(),
        store.display()
    );
    Ok(0)
}
