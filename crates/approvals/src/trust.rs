//! Trust of a project's configuration file: a person's word that exactly this content may apply.
//!
//! A project's `.shellgate.toml` lives in the workspace, where the agent — and any command it
//! runs outside the sandbox — can write. So it is not the user's word: without the user's trust
//! only the keys that make the configuration stricter apply; every other key needs the user to
//! have trusted that exact file content (`shellgate trust`), which records a SHA-256 of it in the
//! user's state directory (as `direnv allow` does). The trust store is one of the engine's own
//! files, read-only in every sandbox.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

/// `$XDG_STATE_HOME/shellgate/trusted`, else `~/.local/state/shellgate/trusted`.
pub fn trust_store_path() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(state) = var("XDG_STATE_HOME").filter(|p| p.is_absolute()) {
        return Some(state.join("shellgate").join("trusted"));
    }
    var("HOME").map(|home| home.join(".local/state/shellgate/trusted"))
}

/// The SHA-256 of `text`, in hex.
fn digest(text: &str) -> String {
    use std::fmt::Write as _;
    Sha256::digest(text.as_bytes())
        .iter()
        .fold(String::new(), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

/// The store's line for `path` with contents `text`: `<sha256> <absolute path>`.
fn entry(path: &Path, text: &str) -> String {
    let absolute = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("{} {}", digest(text), absolute.display())
}

/// Whether the user trusted exactly this content of the file at `path`.
pub fn is_trusted(path: &Path, text: &str) -> bool {
    let Some(store) = trust_store_path() else {
        return false;
    };
    let wanted = entry(path, text);
    std::fs::read_to_string(store).is_ok_and(|s| s.lines().any(|line| line == wanted))
}

/// Trust the current content of the file at `path` (replacing an earlier trust of that file).
/// Returns the store's path.
pub fn trust(path: &Path) -> std::io::Result<PathBuf> {
    let store = trust_store_path().ok_or_else(|| std::io::Error::other("no HOME or XDG_STATE_HOME"))?;
    let text = std::fs::read_to_string(path)?;
    let new = entry(path, &text);
    let suffix = new.split_once(' ').map_or("", |(_, p)| p).to_owned();
    let kept: Vec<String> = std::fs::read_to_string(&store)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.split_once(' ').is_none_or(|(_, p)| p != suffix))
        .map(str::to_owned)
        .collect();
    if let Some(dir) = store.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut text = kept.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&new);
    text.push('\n');
    let temporary = store.with_extension("new");
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, &store)?;
    Ok(store)
}
