//! The target a distribution is built for, and what each channel calls it.

use anyhow::bail;

/// One build target and its names in the npm and Python worlds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// The Rust target triple (`x86_64-unknown-linux-gnu`).
    pub triple: String,
    /// npm's `process.platform` (`linux`).
    pub npm_os: &'static str,
    /// npm's `process.arch` (`x64`, `arm64`).
    pub npm_cpu: &'static str,
    /// The wheel's architecture suffix (`x86_64`, `aarch64`).
    pub wheel_arch: &'static str,
}

impl Platform {
    /// The platform of `triple`, for the targets whose packages are described here. Another target
    /// (musl, macOS) needs its own npm package name and wheel tag first: refused by name.
    pub fn of(triple: &str) -> anyhow::Result<Self> {
        let (npm_cpu, wheel_arch) = match triple {
            "x86_64-unknown-linux-gnu" => ("x64", "x86_64"),
            "aarch64-unknown-linux-gnu" => ("arm64", "aarch64"),
            other => bail!(
                "no package layout for target {other}: the npm platform package and the wheel tag are \
                 described for x86_64- and aarch64-unknown-linux-gnu (see xtask/README.md, `dist`)"
            ),
        };
        Ok(Self {
            triple: triple.to_owned(),
            npm_os: "linux",
            npm_cpu,
            wheel_arch,
        })
    }

    /// The npm package carrying the binaries (`@shellgate/linux-x64`).
    pub fn npm_package(&self) -> String {
        format!("@shellgate/{}-{}", self.npm_os, self.npm_cpu)
    }

    /// The wheel's platform tag for a binary needing glibc `2.minor`.
    pub fn wheel_tag(&self, glibc: (u32, u32)) -> String {
        format!("manylinux_{}_{}_{}", glibc.0, glibc.1, self.wheel_arch)
    }
}

/// The host's target triple, as `rustc -vV` reports it.
pub fn host_triple() -> anyhow::Result<String> {
    let out = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.lines().find_map(|l| l.strip_prefix("host: ")) {
        Some(host) => Ok(host.trim().to_owned()),
        None => bail!("rustc -vV printed no host line"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_per_channel() {
        let p = Platform::of("x86_64-unknown-linux-gnu").unwrap();
        assert_eq!(p.npm_package(), "@shellgate/linux-x64");
        assert_eq!(p.wheel_tag((2, 34)), "manylinux_2_34_x86_64");
        let arm = Platform::of("aarch64-unknown-linux-gnu").unwrap();
        assert_eq!(arm.npm_package(), "@shellgate/linux-arm64");
        let err = Platform::of("x86_64-unknown-linux-musl").unwrap_err().to_string();
        assert!(err.contains("x86_64-unknown-linux-musl"), "{err}");
    }
}
