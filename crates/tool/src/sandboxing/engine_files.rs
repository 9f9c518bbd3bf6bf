//! The engine's own files, which no sandboxed command may change (see
//! [`SandboxConfig::engine_files`](super::SandboxConfig::engine_files)).

use std::path::PathBuf;

use crate::ToolConfig;

/// The files and directories that make up the engine's authority for `config`: the project's and
/// the user's configuration (whether they exist yet or not: a sandboxed command must not create a
/// project configuration either), the files the configuration was read from, the approvals file,
/// the trust store, the artifact store, the executable with the helper beside it, and the launcher
/// that started it.
pub fn engine_files(config: &ToolConfig) -> Vec<PathBuf> {
    let mut files = vec![config.cwd.join(".shellgate.toml")];
    for path in crate::file_config::default_config_paths() {
        let absolute = if path.is_absolute() {
            path
        } else {
            config.cwd.join(path)
        };
        // The user's whole configuration directory, not only its one file.
        files.push(match absolute.parent() {
            Some(dir) if dir.ends_with("shellgate") => dir.to_path_buf(),
            _ => absolute,
        });
    }
    files.extend(config.config_files.iter().cloned());
    files.extend(config.approvals.file_path());
    files.extend(crate::file_config::trust_store_path());
    files.extend(config.artifacts.as_ref().map(|store| store.dir().to_path_buf()));
    files.extend(shellgate_sandbox::engine_executables());
    let mut unique: Vec<PathBuf> = Vec::new();
    for file in files {
        if !unique.contains(&file) {
            unique.push(file);
        }
    }
    unique
}
