//! Where the control sockets live, shared by the server that listens and the commands that call
//! it (`shellgate jobs`, `shellgate approve`): a private directory of this user's.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

/// Why the control socket could not be set up or reached.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The socket directory could not be created or inspected.
    #[error("socket directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The socket directory exists but is not private to this user.
    #[error("socket directory {path} is not private: {reason}")]
    NotPrivate {
        /// The directory.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The socket could not be bound.
    #[error("cannot listen on {path}: {source}")]
    Bind {
        /// The socket.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// The directory holding the control sockets: `$XDG_RUNTIME_DIR/shellgate`, else `/tmp/shellgate-<uid>`.
pub fn socket_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        Some(runtime) if runtime.is_absolute() => runtime.join("shellgate"),
        _ => std::env::temp_dir().join(format!("shellgate-{}", rustix::process::getuid().as_raw())),
    }
}

/// The control socket of the server with process id `pid`.
pub fn socket_path(dir: &Path, pid: u32) -> PathBuf {
    dir.join(format!("{pid}.sock"))
}

/// Check that `dir` is a real directory of this user that nobody else can enter.
pub fn check_private(dir: &Path) -> Result<(), ControlError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|source| ControlError::Dir {
        path: dir.to_owned(),
        source,
    })?;
    let not_private = |reason: String| ControlError::NotPrivate {
        path: dir.to_owned(),
        reason,
    };
    if !meta.file_type().is_dir() {
        return Err(not_private("not a directory (or a symlink)".into()));
    }
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        return Err(not_private(format!("owned by uid {}, not {uid}", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(not_private(format!(
            "mode {:o}, expected 700",
            meta.mode() & 0o777
        )));
    }
    Ok(())
}
