//! The engine's own executables, which no sandboxed command may replace (with the engine's other
//! files: [`SandboxConfig::engine_files`](super::SandboxConfig::engine_files)).

use std::path::PathBuf;

/// This executable, the helper beside it (`shellgate-sandbox-exec`), and the launcher that started
/// it, if one names itself in `SHELLGATE_LAUNCHER` (the npm package's script does: the path it was
/// started by, its package and the platform package, separated by `:`), each as given and as it
/// resolves. A command that replaced or relinked one would run outside any sandbox the next time a
/// client starts shellgate. The variable can only add paths to protect, never remove one.
pub fn engine_executables() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        files.push(exe.with_file_name("shellgate-sandbox-exec"));
        files.push(exe);
    }
    let Some(list) = std::env::var_os("SHELLGATE_LAUNCHER") else {
        return files;
    };
    for entry in std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()) {
        let Ok(path) = std::path::absolute(&entry) else {
            continue;
        };
        files.extend(path.canonicalize().ok().filter(|real| *real != path));
        files.push(path);
    }
    files
}
