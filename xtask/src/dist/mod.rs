//! `cargo xtask dist`: everything a user installs shellgate from, built from one release build into
//! `target/dist/`: the release archive, the npm packages, the Python wheel and the MCP registry's
//! `server.json`. Nothing is published; `cargo xtask install-check` installs each into an empty
//! prefix and uses it.

mod archive;
mod elf;
mod npm;
mod platform;
mod registry;
mod wheel;

use std::path::{Path, PathBuf};

use anyhow::Context as _;

pub use platform::Platform;

use crate::workspace::{self, Metadata};

/// Where the project lives (the packages' repository and homepage fields).
pub const REPOSITORY: &str = "https://github.com/shellgate/shellgate";
/// The server's name in the MCP registry (`mcpName` in package.json, the marker in the wheel).
pub const MCP_NAME: &str = "io.github.shellgate/shellgate";
/// The licence files at the workspace root, shipped in every package.
pub const LICENCES: &[&str] = &["LICENSE-MIT", "LICENSE-APACHE"];
/// The binaries every package carries: the engine and the small sandbox helper it starts.
const BINARIES: [&str; 2] = ["shellgate", "shellgate-sandbox-exec"];

/// One release being packaged.
pub struct Release {
    /// The workspace root.
    pub root: PathBuf,
    /// The CLI package's version.
    pub version: String,
    /// The target the binaries were built for.
    pub platform: Platform,
    /// The `shellgate` binary every package carries (the release build's, stripped of its debug
    /// information), with the helper beside it.
    pub shellgate: PathBuf,
    /// Scratch space for package trees (`target/dist-stage`).
    pub stage: PathBuf,
    /// Where the packages go (`target/dist`).
    pub out: PathBuf,
}

impl Release {
    /// Each binary's name and built path.
    pub fn binaries(&self) -> Vec<(&'static str, PathBuf)> {
        BINARIES
            .iter()
            .map(|name| (*name, self.shellgate.with_file_name(name)))
            .collect()
    }

    /// Copy the binaries into `dir`, executable.
    pub fn copy_binaries(&self, dir: &Path) -> anyhow::Result<()> {
        for (name, path) in self.binaries() {
            let to = dir.join(name);
            std::fs::copy(&path, &to).with_context(|| format!("copying {}", path.display()))?;
            make_executable(&to)?;
        }
        Ok(())
    }

    /// Copy the README and the licences into `dir`.
    pub fn copy_docs(&self, dir: &Path) -> anyhow::Result<()> {
        for file in std::iter::once("README.md").chain(LICENCES.iter().copied()) {
            std::fs::copy(self.root.join(file), dir.join(file)).with_context(|| format!("copying {file}"))?;
        }
        Ok(())
    }

    #[cfg(test)]
    pub fn for_tests() -> Self {
        Self {
            root: workspace::root(),
            version: "0.1.0".into(),
            platform: Platform::of("x86_64-unknown-linux-gnu").unwrap(),
            shellgate: "/nonexistent/shellgate".into(),
            stage: "/nonexistent/stage".into(),
            out: "/nonexistent/dist".into(),
        }
    }
}

/// Make `path` executable by everyone (`0755`).
pub fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", path.display()))
}

/// Build and package everything into `target/dist/`.
pub fn run() -> anyhow::Result<()> {
    let meta = Metadata::load()?;
    let built = workspace::build_shellgate(&meta)?;
    let stage = fresh_dir(&meta.target_directory.join("dist-stage"))?;
    let release = Release {
        root: workspace::root(),
        version: meta.version_of("shellgate-cli")?,
        platform: Platform::of(&platform::host_triple()?)?,
        shellgate: strip_binaries(&built, &fresh_dir(&stage.join("bin"))?)?,
        stage,
        out: fresh_dir(&meta.target_directory.join("dist"))?,
    };
    let mut glibc = None;
    for (name, path) in release.binaries() {
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let needs = elf::newest_glibc(&bytes).with_context(|| format!("reading {name}'s ELF header"))?;
        glibc = glibc.max(needs);
    }
    let glibc = glibc.context("the binaries need no glibc version: a wheel tag cannot be chosen")?;
    let mut made = vec![archive::write(&release)?];
    made.extend(npm::write(&release)?);
    made.push(wheel::write(&release, glibc)?);
    made.push(registry::write(&release)?);
    std::fs::remove_dir_all(&release.stage)?;
    println!(
        "shellgate {} for {} (needs glibc >= {}.{}):",
        release.version, release.platform.triple, glibc.0, glibc.1
    );
    for path in made {
        let size = std::fs::metadata(&path)?.len();
        println!("  {} ({:.1} MiB)", path.display(), size as f64 / 1_048_576.0);
    }
    Ok(())
}

/// Copies of the built binaries in `dir` without their debug information: the release profile keeps
/// line tables, four fifths of the file; the symbols stay, so a backtrace still names functions.
fn strip_binaries(built: &Path, dir: &Path) -> anyhow::Result<PathBuf> {
    for name in BINARIES {
        let status = std::process::Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(dir.join(name))
            .arg(built.with_file_name(name))
            .status()
            .context("running strip (binutils)")?;
        if !status.success() {
            anyhow::bail!("strip --strip-debug of {name} failed");
        }
    }
    Ok(dir.join("shellgate"))
}

fn fresh_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir.to_path_buf())
}
