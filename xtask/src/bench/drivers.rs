//! The baseline drivers: Node and Python scripts and a small Rust program, embedded in the harness and
//! installed next to the report at run time (the Rust one compiled with `rustc -O`, so the raw baseline
//! is optimized even though the harness itself is a debug build).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

/// Paths of the installed drivers.
pub struct Drivers {
    /// Node per-command latency loop.
    pub latency_js: PathBuf,
    /// Python per-command latency loop.
    pub latency_py: PathBuf,
    /// Node pipe reader (throughput).
    pub reader_js: PathBuf,
    /// Python pipe reader (throughput).
    pub reader_py: PathBuf,
    /// The optimized raw Rust baseline (`raw latency …` / `raw read …`).
    pub raw: PathBuf,
}

const SCRIPTS: [(&str, &str); 4] = [
    ("latency.js", include_str!("../../drivers/latency.js")),
    ("latency.py", include_str!("../../drivers/latency.py")),
    ("reader.js", include_str!("../../drivers/reader.js")),
    ("reader.py", include_str!("../../drivers/reader.py")),
];
const RAW_SOURCE: &str = include_str!("../../drivers/raw.rs");

/// Write the scripts under `dir/drivers` and compile the raw baseline.
pub fn install(dir: &Path) -> anyhow::Result<Drivers> {
    let drivers = dir.join("drivers");
    std::fs::create_dir_all(&drivers)?;
    for (name, text) in SCRIPTS {
        std::fs::write(drivers.join(name), text).with_context(|| format!("writing driver {name}"))?;
    }
    let source = drivers.join("raw.rs");
    let raw = drivers.join("raw");
    std::fs::write(&source, RAW_SOURCE)?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--edition", "2021", "-O", "-o"])
        .arg(&raw)
        .arg(&source)
        .output()
        .context("running rustc")?;
    if !out.status.success() {
        bail!(
            "compiling the raw Rust driver failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(Drivers {
        latency_js: drivers.join("latency.js"),
        latency_py: drivers.join("latency.py"),
        reader_js: drivers.join("reader.js"),
        reader_py: drivers.join("reader.py"),
        raw,
    })
}
