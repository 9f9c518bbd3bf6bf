//! The Python wheel: the binaries as the wheel's scripts (what maturin's `bindings = "bin"` makes),
//! so `pip install`, `pipx` and `uvx shellgate` put `shellgate` on the environment's PATH. Tagged
//! `py3-none-manylinux_2_NN_<arch>` for the newest glibc the binaries need.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use base64::Engine as _;
use sha2::Digest as _;
use zip::write::SimpleFileOptions;

use super::Release;

/// Python's name for the distribution (PyPI's project name).
const DISTRIBUTION: &str = "shellgate";

/// One file of the wheel.
struct Entry {
    path: String,
    bytes: Vec<u8>,
    executable: bool,
}

/// Write the wheel into `release.out`, returning its path.
pub fn write(release: &Release, glibc: (u32, u32)) -> anyhow::Result<PathBuf> {
    let version = python_version(&release.version)?;
    let tag = format!("py3-none-{}", release.platform.wheel_tag(glibc));
    let data = format!("{DISTRIBUTION}-{version}.data/scripts");
    let info = format!("{DISTRIBUTION}-{version}.dist-info");
    let mut entries = Vec::new();
    for (name, path) in release.binaries() {
        entries.push(Entry {
            path: format!("{data}/{name}"),
            bytes: std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?,
            executable: true,
        });
    }
    for licence in super::LICENCES {
        entries.push(Entry {
            path: format!("{info}/{licence}"),
            bytes: std::fs::read(release.root.join(licence))?,
            executable: false,
        });
    }
    entries.push(text(format!("{info}/METADATA"), metadata(release, &version)?));
    entries.push(text(
        format!("{info}/WHEEL"),
        format!("Wheel-Version: 1.0\nGenerator: cargo xtask dist\nRoot-Is-Purelib: false\nTag: {tag}\n"),
    ));
    let record = record(&entries, &format!("{info}/RECORD"));
    entries.push(text(format!("{info}/RECORD"), record));

    let wheel = release.out.join(format!("{DISTRIBUTION}-{version}-{tag}.whl"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&wheel)?);
    for entry in &entries {
        let options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(if entry.executable { 0o755 } else { 0o644 });
        zip.start_file(entry.path.as_str(), options)?;
        zip.write_all(&entry.bytes)?;
    }
    zip.finish()?;
    Ok(wheel)
}

fn text(path: String, content: String) -> Entry {
    Entry {
        path,
        bytes: content.into_bytes(),
        executable: false,
    }
}

/// The version as Python writes it: a plain release (`0.1.0`) stays as it is; anything else is
/// refused rather than guessed.
fn python_version(version: &str) -> anyhow::Result<String> {
    if version
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    {
        Ok(version.to_owned())
    } else {
        bail!("version {version} has no Python spelling here: only plain releases (1.2.3) are packaged")
    }
}

/// Core metadata 2.1. The README is the long description, with the marker the MCP registry reads
/// to verify that the PyPI project belongs to the server it lists.
fn metadata(release: &Release, version: &str) -> anyhow::Result<String> {
    let readme = std::fs::read_to_string(release.root.join("README.md"))?;
    Ok(format!(
        "Metadata-Version: 2.1\n\
         Name: {DISTRIBUTION}\n\
         Version: {version}\n\
         Summary: The engine under an AI agent's bash tool, as an MCP server (shellgate mcp) and a CLI\n\
         License: MIT OR Apache-2.0\n\
         Project-URL: Repository, {repo}\n\
         Keywords: shell,bash,mcp,agent,sandbox\n\
         Classifier: Operating System :: POSIX :: Linux\n\
         Classifier: Environment :: Console\n\
         Description-Content-Type: text/markdown\n\
         \n\
         <!-- mcp-name: {mcp} -->\n\n{readme}",
        repo = super::REPOSITORY,
        mcp = super::MCP_NAME,
    ))
}

/// The RECORD file: every entry with its SHA-256 (URL-safe base64, unpadded) and size; the RECORD
/// itself without either.
fn record(entries: &[Entry], own_path: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for entry in entries {
        let digest = sha2::Sha256::digest(&entry.bytes);
        let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
        let _ = writeln!(out, "{},sha256={encoded},{}", entry.path, entry.bytes.len());
    }
    let _ = writeln!(out, "{own_path},,");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_records() {
        assert_eq!(python_version("0.1.0").unwrap(), "0.1.0");
        assert!(python_version("0.2.0-alpha.1").is_err());
        let entries = [text("a/b".into(), "hello".into())];
        let record = record(&entries, "x.dist-info/RECORD");
        // sha256("hello") = 2cf24dba…; its URL-safe unpadded base64 below.
        assert_eq!(
            record,
            "a/b,sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ,5\nx.dist-info/RECORD,,\n"
        );
    }
}
