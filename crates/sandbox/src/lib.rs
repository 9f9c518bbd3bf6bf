//! Sandbox policy for shellgate: which parts of the machine a command may write to and reach.
//!
//! A [`SandboxPolicy`] is plain data that a launch wrapper turns into kernel restrictions; this crate
//! never depends on the executor (sandboxes rewrite launch specs, they do not spawn).
//!
//! ```
//! use shellgate_sandbox::{SandboxMode, SandboxPolicy};
//!
//! let policy = SandboxPolicy::new("workspace-write".parse().unwrap(), "/work/project");
//! assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
//! assert!(policy.may_write("/work/project/src/main.rs".as_ref()));
//! assert!(!policy.may_write("/work/project/.git/config".as_ref()));
//! assert!(!policy.may_write("/etc/passwd".as_ref()));
//! ```
#![forbid(unsafe_code)]

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much of the file system a command may change (SPEC X-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Nothing is writable except the null device.
    ReadOnly,
    /// The workspace and temp directories are writable; `.git` and protected paths stay read-only.
    WorkspaceWrite,
    /// No restriction.
    Full,
}

/// A sandbox mode name that is not one of `read-only`, `workspace-write`, `full`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode {0:?}: expected read-only, workspace-write or full")]
pub struct UnknownMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(Self::ReadOnly),
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "full" => Ok(Self::Full),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::Full => "full",
        })
    }
}

/// What a sandboxed command may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPolicy {
    /// File-system mode.
    pub mode: SandboxMode,
    /// Whether network access is allowed.
    pub network: bool,
    /// Writable roots in `workspace-write` mode (the workspace and temp directories).
    pub writable_roots: Vec<PathBuf>,
    /// Names that stay read-only inside writable roots (`.git` by default).
    pub protected_names: Vec<String>,
}

impl SandboxPolicy {
    /// A policy for `mode` with `workspace` and the temp directory writable (in `workspace-write`).
    pub fn new(mode: SandboxMode, workspace: impl Into<PathBuf>) -> Self {
        Self {
            mode,
            network: mode == SandboxMode::Full,
            writable_roots: vec![workspace.into(), std::env::temp_dir()],
            protected_names: vec![".git".to_owned()],
        }
    }

    /// Whether `path` (absolute, already resolved) may be written under this policy.
    pub fn may_write(&self, path: &Path) -> bool {
        match self.mode {
            SandboxMode::Full => true,
            SandboxMode::ReadOnly => path == Path::new("/dev/null"),
            SandboxMode::WorkspaceWrite => {
                path == Path::new("/dev/null")
                    || self.writable_roots.iter().any(|root| {
                        path.strip_prefix(root).is_ok_and(|rel| {
                            !rel.components()
                                .any(|c| self.protected_names.iter().any(|p| c.as_os_str() == p.as_str()))
                        })
                    })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_and_reject_unknown() {
        for mode in [
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite,
            SandboxMode::Full,
        ] {
            assert_eq!(mode.to_string().parse::<SandboxMode>().unwrap(), mode);
        }
        let err = "write-all".parse::<SandboxMode>().unwrap_err();
        assert!(err.to_string().contains("write-all"));
    }

    #[test]
    fn write_rules_per_mode() {
        let ws = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        assert!(ws.may_write(Path::new("/w/a/b")));
        assert!(!ws.may_write(Path::new("/w/.git/HEAD")));
        assert!(!ws.may_write(Path::new("/wx/file")));
        assert!(!ws.network);
        let ro = SandboxPolicy::new(SandboxMode::ReadOnly, "/w");
        assert!(!ro.may_write(Path::new("/w/a")));
        assert!(ro.may_write(Path::new("/dev/null")));
        assert!(SandboxPolicy::new(SandboxMode::Full, "/w").may_write(Path::new("/etc/x")));
    }
}
