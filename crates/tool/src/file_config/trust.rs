//! Trust of a project's configuration file.
//!
//! A project's `.shellgate.toml` lives in the workspace, where the agent — and any command it
//! runs outside the sandbox — can write. So it is not the user's word: without the user's trust
//! only the keys that make the configuration stricter apply ([`tightening`]); every other key
//! needs the user to have trusted that exact file content (`shellgate trust`), which records a
//! SHA-256 of it in the user's state directory (as `direnv allow` does). The trust store is one of
//! the engine's own files, read-only in every sandbox.

use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};
use shellgate_intercept::{AskMode, Elevated, PolicyConfig, Security};
use shellgate_sandbox::SandboxMode;

use super::FileConfig;
use crate::ToolConfig;

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

/// What of an untrusted `file` may apply over `current`: only what makes the configuration
/// stricter — a stricter `security`, `ask` or `elevated`, more `deny` rules, more `[env] redact`
/// names, a stricter sandbox mode, more protected paths, the network or Unix sockets off, lower
/// limits. Returns that part as a file of its own (its policy merged with the current one), and
/// the keys of `keys` (the ones the file sets) that were left out.
pub fn tightening(file: &FileConfig, keys: &[String], current: &ToolConfig) -> (FileConfig, Vec<String>) {
    let mut applied: Vec<&str> = Vec::new();
    let mut out = FileConfig::default();
    if let Some(wanted) = &file.policy {
        let now = current
            .policy
            .as_ref()
            .map(shellgate_intercept::Policy::policy_config);
        let mut merged: PolicyConfig = now.clone().unwrap_or_default();
        if strictness_security(wanted.security) >= strictness_security(merged.security) {
            merged.security = wanted.security;
            applied.push("policy.security");
        }
        if ask_tightens(merged.ask, wanted.ask) {
            merged.ask = wanted.ask;
            applied.push("policy.ask");
        }
        if strictness_elevated(wanted.elevated) >= strictness_elevated(merged.elevated) {
            merged.elevated = wanted.elevated;
            applied.push("policy.elevated");
        }
        merged.deny.extend(wanted.deny.iter().cloned());
        applied.push("policy.deny");
        out.policy = Some(merged);
        // The current intercept section stays as it is (the file's needs trust).
        out.intercept = current.policy.as_ref().map(|p| p.intercept_config().clone());
    }
    if let Some(env) = file.env.as_ref().filter(|e| !e.redact.is_empty()) {
        let mut merged = current.env.clone();
        merged.redact.extend(env.redact.iter().cloned());
        out.env = Some(merged);
        applied.push("env.redact");
    }
    if let Some(wanted) = &file.sandbox {
        out.sandbox = Some(tightening_sandbox(wanted, current, &mut applied));
    }
    let left_out = keys
        .iter()
        .filter(|k| {
            !applied
                .iter()
                .any(|a| k.as_str() == *a || k.starts_with(&format!("{a}[")))
        })
        .cloned()
        .collect();
    (out, left_out)
}

fn tightening_sandbox(
    wanted: &crate::SandboxFile,
    current: &ToolConfig,
    applied: &mut Vec<&'static str>,
) -> crate::SandboxFile {
    let now = &current.sandbox;
    let mut out = crate::SandboxFile::default();
    if let Some(mode) = wanted.mode {
        let mode: Option<SandboxMode> = mode.into();
        if strictness_mode(mode) >= strictness_mode(now.mode) {
            out.mode = Some(mode.into());
            applied.push("sandbox.mode");
        }
    }
    if let Some(paths) = &wanted.protected_paths {
        let mut merged = now.protected_paths.clone();
        merged.extend(paths.iter().cloned());
        out.protected_paths = Some(merged);
        applied.push("sandbox.protected_paths");
    }
    if wanted.network == Some(crate::NetworkSetting::Off) {
        out.network = Some(crate::NetworkSetting::Off);
        applied.push("sandbox.network");
    }
    if wanted.unix_sockets == Some(false) {
        out.unix_sockets = Some(false);
        applied.push("sandbox.unix_sockets");
    }
    let limits = &now.limits;
    let lower = |wanted: Option<u64>, now: Option<u64>| {
        wanted.filter(|&w| w != 0 && now.is_none_or(|n| n == 0 || w <= n))
    };
    for (key, value, slot) in [
        (
            "sandbox.cpu_seconds",
            lower(wanted.cpu_seconds, limits.cpu_seconds),
            &mut out.cpu_seconds,
        ),
        (
            "sandbox.address_space_bytes",
            lower(wanted.address_space_bytes, limits.address_space_bytes),
            &mut out.address_space_bytes,
        ),
        (
            "sandbox.file_size_bytes",
            lower(wanted.file_size_bytes, limits.file_size_bytes),
            &mut out.file_size_bytes,
        ),
        (
            "sandbox.open_files",
            lower(wanted.open_files, limits.open_files),
            &mut out.open_files,
        ),
        (
            "sandbox.processes",
            lower(wanted.processes, limits.processes),
            &mut out.processes,
        ),
    ] {
        if value.is_some() {
            *slot = value;
            applied.push(key);
        }
    }
    if wanted.allow_degraded == Some(false) {
        out.allow_degraded = Some(false);
        applied.push("sandbox.allow_degraded");
    }
    if let Some(abi) = wanted
        .min_landlock_abi
        .filter(|&a| now.min_landlock_abi.is_none_or(|n| a >= n))
    {
        out.min_landlock_abi = Some(abi);
        applied.push("sandbox.min_landlock_abi");
    }
    out
}

fn strictness_security(s: Security) -> u8 {
    match s {
        Security::Full => 0,
        Security::Allowlist => 1,
        Security::Deny => 2,
    }
}

/// `off` denies what `on-miss` asks, `always` asks what `on-miss` allows: both tighten `on-miss`;
/// between the two, neither tightens the other.
fn ask_tightens(now: AskMode, wanted: AskMode) -> bool {
    now == wanted || now == AskMode::OnMiss
}

fn strictness_elevated(e: Elevated) -> u8 {
    match e {
        Elevated::Full => 0,
        Elevated::On => 1,
        Elevated::Off => 2,
    }
}

fn strictness_mode(mode: Option<SandboxMode>) -> u8 {
    match mode {
        None => 0,
        Some(SandboxMode::Full) => 1,
        Some(SandboxMode::WorkspaceWrite) => 2,
        Some(SandboxMode::ReadOnly) => 3,
    }
}
