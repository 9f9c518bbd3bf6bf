//! The npm packages: `shellgate`, a launcher with no install scripts that depends on the platform
//! packages as optional dependencies (npm installs the one whose `os`/`cpu`/`libc` match), and
//! `@shellgate/<os>-<cpu>` carrying the binaries. Both are packed with `npm pack`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_json::json;

use super::Release;

/// The launcher's text: a POSIX shell script, so nothing but the engine is left running.
const LAUNCHER: &str = include_str!("npm_launcher.sh");

/// Write and pack both packages into `release.out`, returning the tarballs (launcher first).
pub fn write(release: &Release) -> anyhow::Result<Vec<PathBuf>> {
    let platform_dir = release.stage.join("npm-platform");
    std::fs::create_dir_all(platform_dir.join("bin"))?;
    release.copy_binaries(&platform_dir.join("bin"))?;
    release.copy_docs(&platform_dir)?;
    write_json(&platform_dir.join("package.json"), &platform_manifest(release))?;

    let launcher_dir = release.stage.join("npm-launcher");
    std::fs::create_dir_all(launcher_dir.join("bin"))?;
    let launcher = launcher_dir.join("bin").join("shellgate");
    std::fs::write(&launcher, LAUNCHER)?;
    super::make_executable(&launcher)?;
    release.copy_docs(&launcher_dir)?;
    write_json(&launcher_dir.join("package.json"), &launcher_manifest(release))?;

    Ok(vec![
        pack(&launcher_dir, &release.out)?,
        pack(&platform_dir, &release.out)?,
    ])
}

fn common(release: &Release) -> serde_json::Value {
    json!({
        "version": release.version,
        "license": "MIT OR Apache-2.0",
        "homepage": super::REPOSITORY,
        "repository": { "type": "git", "url": format!("git+{}.git", super::REPOSITORY) },
        "keywords": ["shell", "bash", "mcp", "agent", "sandbox"],
    })
}

fn launcher_manifest(release: &Release) -> serde_json::Value {
    let mut manifest = common(release);
    let extra = json!({
        "name": "shellgate",
        "description": "The engine under an AI agent's bash tool, as an MCP server (`shellgate mcp`) and a CLI",
        "mcpName": super::MCP_NAME,
        "bin": { "shellgate": "bin/shellgate" },
        "files": ["bin/", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "os": ["linux"],
        "optionalDependencies": { release.platform.npm_package(): release.version },
    });
    merge(&mut manifest, extra);
    manifest
}

fn platform_manifest(release: &Release) -> serde_json::Value {
    let mut manifest = common(release);
    let extra = json!({
        "name": release.platform.npm_package(),
        "description": format!("The shellgate binaries for {}", release.platform.triple),
        "files": ["bin/", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "os": [release.platform.npm_os],
        "cpu": [release.platform.npm_cpu],
        "libc": ["glibc"],
        "preferUnplugged": true,
    });
    merge(&mut manifest, extra);
    manifest
}

fn merge(into: &mut serde_json::Value, from: serde_json::Value) {
    if let (Some(into), serde_json::Value::Object(from)) = (into.as_object_mut(), from) {
        into.extend(from);
    }
}

fn write_json(path: &Path, value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `npm pack` of `dir` into `out`; the tarball it wrote.
fn pack(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let output = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .context("running npm pack (is npm installed?)")?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let name = stdout.lines().last().unwrap_or("").trim();
    if !output.status.success() || name.is_empty() {
        bail!(
            "npm pack in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(out.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_execs_and_has_no_install_scripts() {
        assert!(LAUNCHER.starts_with("#!/bin/sh\n"));
        assert!(LAUNCHER.contains("exec \"$dir/bin/shellgate\" \"$@\""));
        let release = Release::for_tests();
        let launcher = launcher_manifest(&release);
        assert!(launcher.get("scripts").is_none());
        assert_eq!(launcher["mcpName"], super::super::MCP_NAME);
        assert_eq!(launcher["optionalDependencies"]["@shellgate/linux-x64"], "0.1.0");
        let platform = platform_manifest(&release);
        assert_eq!(platform["name"], "@shellgate/linux-x64");
        assert_eq!(platform["cpu"], json!(["x64"]));
        assert!(platform.get("scripts").is_none());
    }
}
