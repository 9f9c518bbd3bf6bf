//! Where things are: the workspace root, its packages and targets (from `cargo metadata`), the
//! `shellgate` binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde::Deserialize;

/// The workspace root (the parent of `xtask/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// A `cargo` command (the one that launched us, so `cargo +toolchain xtask` stays consistent).
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(root());
    command
}

/// The slice of `cargo metadata --no-deps` we use.
#[derive(Debug, Deserialize)]
pub struct Metadata {
    /// Workspace packages.
    pub packages: Vec<Package>,
    /// The shared target directory.
    pub target_directory: PathBuf,
}

/// One package.
#[derive(Debug, Deserialize)]
pub struct Package {
    /// Package name (`-p` argument).
    pub name: String,
    /// Its version.
    #[serde(default)]
    pub version: String,
    /// Its targets.
    pub targets: Vec<Target>,
}

/// One build target.
#[derive(Debug, Deserialize)]
pub struct Target {
    /// Target name (`--bench` / `--example` argument).
    pub name: String,
    /// Kinds: `lib`, `bin`, `bench`, `example`, `test`, …
    pub kind: Vec<String>,
}

impl Metadata {
    /// Read the workspace's metadata.
    pub fn load() -> anyhow::Result<Self> {
        let output = cargo()
            .args(["metadata", "--no-deps", "--format-version", "1"])
            .output()
            .context("running cargo metadata")?;
        if !output.status.success() {
            bail!(
                "cargo metadata failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Self::parse(&output.stdout)
    }

    /// Parse `cargo metadata` JSON.
    pub fn parse(json: &[u8]) -> anyhow::Result<Self> {
        serde_json::from_slice(json).context("parsing cargo metadata")
    }

    /// The version of the workspace package `name`.
    pub fn version_of(&self, name: &str) -> anyhow::Result<String> {
        self.packages
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.version.clone())
            .with_context(|| format!("no package {name} in the workspace"))
    }

    /// Every (package, target) pair of `kind`, in a stable order.
    pub fn targets(&self, kind: &str) -> Vec<(&str, &str)> {
        let mut found: Vec<(&str, &str)> = self
            .packages
            .iter()
            .flat_map(|p| {
                p.targets
                    .iter()
                    .filter(|t| t.kind.iter().any(|k| k == kind))
                    .map(move |t| (p.name.as_str(), t.name.as_str()))
            })
            .collect();
        found.sort_unstable();
        found
    }
}

/// Build the release `shellgate` binary, and the sandbox helper beside it (a stale helper would
/// refuse the engine's policies), and return the binary's path.
pub fn build_shellgate(meta: &Metadata) -> anyhow::Result<PathBuf> {
    eprintln!("xtask: building shellgate (release)…");
    let status = cargo()
        .args(["build", "--release", "--quiet", "-p", "shellgate-cli", "--bins"])
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build -p shellgate-cli failed");
    }
    let binary = meta.target_directory.join("release").join("shellgate");
    if !binary.is_file() {
        bail!("{} missing after the build", binary.display());
    }
    Ok(binary)
}

/// The output directory of the bench report (created).
pub fn bench_dir(meta: &Metadata) -> anyhow::Result<PathBuf> {
    let dir = meta.target_directory.join("shellgate-bench");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
}

/// Whether `program` can be found on PATH (or is an existing path).
pub fn have(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_targets_are_filtered_by_kind() {
        let json = br#"{"packages":[
            {"name":"b","manifest_path":"/w/crates/b/Cargo.toml","targets":[
                {"name":"b","kind":["lib"]},{"name":"speed","kind":["bench"]}]},
            {"name":"a","manifest_path":"/w/crates/a/Cargo.toml","targets":[
                {"name":"zeta","kind":["bench"]},{"name":"demo","kind":["example"]}]}],
            "target_directory":"/w/target","version":1}"#;
        let meta = Metadata::parse(json).unwrap();
        assert_eq!(meta.targets("bench"), vec![("a", "zeta"), ("b", "speed")]);
        assert_eq!(meta.targets("example"), vec![("a", "demo")]);
        assert_eq!(meta.target_directory, PathBuf::from("/w/target"));
    }

    #[test]
    fn root_holds_the_workspace_manifest() {
        assert!(root().join("Cargo.toml").is_file());
        assert!(have("sh"));
        assert!(!have("definitely-not-a-program-4711"));
    }
}
