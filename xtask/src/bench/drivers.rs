//! The Node and Python driver scripts: embedded in the binary, written next to the report at run time.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// Paths of the installed driver scripts.
pub struct Drivers {
    /// Node per-command latency loop.
    pub latency_js: PathBuf,
    /// Python per-command latency loop.
    pub latency_py: PathBuf,
    /// Node pipe reader (throughput).
    pub reader_js: PathBuf,
    /// Python pipe reader (throughput).
    pub reader_py: PathBuf,
}

const FILES: [(&str, &str); 4] = [
    ("latency.js", include_str!("../../drivers/latency.js")),
    ("latency.py", include_str!("../../drivers/latency.py")),
    ("reader.js", include_str!("../../drivers/reader.js")),
    ("reader.py", include_str!("../../drivers/reader.py")),
];

/// Write the scripts under `dir/drivers`.
pub fn install(dir: &Path) -> anyhow::Result<Drivers> {
    let drivers = dir.join("drivers");
    std::fs::create_dir_all(&drivers)?;
    for (name, text) in FILES {
        std::fs::write(drivers.join(name), text).with_context(|| format!("writing driver {name}"))?;
    }
    Ok(Drivers {
        latency_js: drivers.join("latency.js"),
        latency_py: drivers.join("latency.py"),
        reader_js: drivers.join("reader.js"),
        reader_py: drivers.join("reader.py"),
    })
}
