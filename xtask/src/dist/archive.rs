//! The release archive: `shellgate-<version>-<target>.tar.gz`, one directory of the same name with
//! the binaries, the README, the licences and shell completions (where `cargo binstall` looks, as
//! `[package.metadata.binstall]` in crates/cli/Cargo.toml says).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use super::Release;

/// Shells `shellgate completions` writes scripts for, and each script's conventional file name.
const COMPLETIONS: &[(&str, &str)] = &[
    ("bash", "shellgate.bash"),
    ("zsh", "_shellgate"),
    ("fish", "shellgate.fish"),
];

/// Write the archive into `release.out`, returning its path.
pub fn write(release: &Release) -> anyhow::Result<PathBuf> {
    let name = format!("shellgate-{}-{}", release.version, release.platform.triple);
    let dir = release.stage.join(&name);
    std::fs::create_dir_all(dir.join("completions"))?;
    release.copy_binaries(&dir)?;
    release.copy_docs(&dir)?;
    for (shell, file) in COMPLETIONS {
        let out = Command::new(&release.shellgate)
            .args(["completions", shell])
            .output()
            .context("running shellgate completions")?;
        if !out.status.success() || out.stdout.is_empty() {
            bail!("shellgate completions {shell} failed");
        }
        std::fs::write(dir.join("completions").join(file), out.stdout)?;
    }
    let archive = release.out.join(format!("{name}.tar.gz"));
    tar(&release.stage, &name, &archive)?;
    Ok(archive)
}

/// `tar -czf archive -C parent name`, with owners and order that do not depend on who built it.
fn tar(parent: &Path, name: &str, archive: &Path) -> anyhow::Result<()> {
    let status = Command::new("tar")
        .args(["--sort=name", "--owner=0", "--group=0", "--numeric-owner", "-czf"])
        .arg(archive)
        .arg("-C")
        .arg(parent)
        .arg(name)
        .status()
        .context("running tar")?;
    if !status.success() {
        bail!("tar failed writing {}", archive.display());
    }
    Ok(())
}
