//! Working directories (SPEC E-4) and timeouts (SPEC E-5): validation, fallback, clamping.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a working directory cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CwdError {
    /// Nothing exists at the path.
    #[error("Working directory does not exist: {}", .0.display())]
    Missing(PathBuf),
    /// Something exists but it is not a directory.
    #[error("Working directory is not a directory: {}", .0.display())]
    NotADirectory(PathBuf),
}

/// Resolve `requested` against `base` (absolute paths stay as they are) and check it is a directory.
pub fn resolve_cwd(base: &Path, requested: Option<&Path>) -> Result<PathBuf, CwdError> {
    let path = match requested {
        Some(p) => base.join(p),
        None => base.to_path_buf(),
    };
    validate_cwd(&path)?;
    Ok(path)
}

/// [`resolve_cwd`] for a directory as a caller wrote it: `~` and `~/…` are in the home directory.
pub fn resolve_written_cwd(base: &Path, requested: Option<&str>) -> Result<PathBuf, CwdError> {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    let requested = requested.map(|r| match r.strip_prefix("~/").or((r == "~").then_some("")) {
        Some(rest) => home().map_or_else(|| PathBuf::from(r), |h| h.join(rest)),
        None => PathBuf::from(r),
    });
    resolve_cwd(base, requested.as_deref())
}

/// Check that `path` exists and is a directory (symlinks followed).
pub fn validate_cwd(path: &Path) -> Result<(), CwdError> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(CwdError::NotADirectory(path.to_path_buf())),
        Err(_) => Err(CwdError::Missing(path.to_path_buf())),
    }
}

/// For a session whose directory may have been deleted: `path` itself when it is still a directory,
/// else its nearest existing ancestor directory (or `/`) with a notice saying so.
pub fn fallback_cwd(path: &Path) -> (PathBuf, Option<String>) {
    if path.is_dir() {
        return (path.to_path_buf(), None);
    }
    let fallback = path
        .ancestors()
        .skip(1)
        .find(|p| !p.as_os_str().is_empty() && p.is_dir())
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let notice = format!(
        "Working directory {} no longer exists; using {} instead.",
        path.display(),
        fallback.display()
    );
    (fallback, Some(notice))
}

/// Timeout used when none is requested.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Smallest timeout accepted.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(1);
/// Largest timeout accepted.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// A requested timeout in seconds, clamped to [[`MIN_TIMEOUT`], [`MAX_TIMEOUT`]], with a notice naming
/// the requested value when it was changed. `None` gives [`DEFAULT_TIMEOUT`]; a non-finite or negative
/// request is treated as out of range.
pub fn clamp_timeout(requested_secs: Option<f64>) -> (Duration, Option<String>) {
    let Some(secs) = requested_secs else {
        return (DEFAULT_TIMEOUT, None);
    };
    let (min, max) = (MIN_TIMEOUT.as_secs_f64(), MAX_TIMEOUT.as_secs_f64());
    let clamped = if secs.is_nan() {
        DEFAULT_TIMEOUT.as_secs_f64()
    } else {
        secs.clamp(min, max)
    };
    let duration = Duration::from_secs_f64(clamped);
    if clamped.to_bits() == secs.to_bits() {
        (duration, None)
    } else {
        let notice = format!(
            "Timeout {secs} s is outside {min}–{max} s; using {} s.",
            duration.as_secs_f64()
        );
        (duration, Some(notice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_messages() {
        let dir = std::env::temp_dir();
        assert_eq!(validate_cwd(&dir), Ok(()));
        let missing = dir.join("shellgate-no-such-dir-4711");
        assert_eq!(
            validate_cwd(&missing).unwrap_err().to_string(),
            format!("Working directory does not exist: {}", missing.display())
        );
        let file = Path::new("/proc/self/stat");
        assert_eq!(
            resolve_cwd(Path::new("/"), Some(file)).unwrap_err().to_string(),
            "Working directory is not a directory: /proc/self/stat"
        );
        assert_eq!(
            resolve_cwd(Path::new("/"), Some(Path::new("tmp"))),
            Ok(PathBuf::from("/tmp"))
        );
        if let Some(home) = std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_dir()) {
            assert_eq!(resolve_written_cwd(Path::new("/"), Some("~")), Ok(home.clone()));
            assert_eq!(
                resolve_written_cwd(Path::new("/"), Some("~/.")),
                Ok(home.join("."))
            );
        }
    }

    #[test]
    fn timeouts_clamp_with_notice() {
        assert_eq!(clamp_timeout(None), (DEFAULT_TIMEOUT, None));
        assert_eq!(clamp_timeout(Some(10.0)), (Duration::from_secs(10), None));
        let (d, notice) = clamp_timeout(Some(7200.0));
        assert_eq!(d, MAX_TIMEOUT);
        assert!(notice.unwrap().contains("7200"));
        let (d, notice) = clamp_timeout(Some(0.2));
        assert_eq!(d, MIN_TIMEOUT);
        assert!(notice.unwrap().contains("0.2"));
        assert_eq!(clamp_timeout(Some(f64::NAN)).0, DEFAULT_TIMEOUT);
        assert_eq!(clamp_timeout(Some(-5.0)).0, MIN_TIMEOUT);
        assert_eq!(clamp_timeout(Some(f64::INFINITY)).0, MAX_TIMEOUT);
    }
}
