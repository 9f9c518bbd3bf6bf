//! Launch specifications: what to run, as plain data.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Where the child's standard input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StdinMode {
    /// `/dev/null`: reads see EOF at once (the default for commands).
    #[default]
    Null,
    /// A pipe kept open for writing (background jobs).
    Piped,
}

/// Everything needed to start a process. Wrappers rewrite one spec into another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Program to execute (looked up on `PATH` when it has no slash).
    pub program: String,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: PathBuf,
    /// Variables set in the child, overriding inherited ones.
    pub env: BTreeMap<String, String>,
    /// Inherited variables removed from the child.
    pub env_remove: Vec<String>,
    /// Start from an empty environment instead of inheriting the engine's.
    pub env_clear: bool,
    /// Standard input.
    pub stdin: StdinMode,
    /// Run under a pseudo-terminal.
    pub pty: bool,
    /// Wall-clock limit, counted from the start of execution.
    pub timeout: Option<Duration>,
    /// Time between SIGTERM and SIGKILL when the tree is stopped.
    pub kill_grace: Duration,
}

impl LaunchSpec {
    /// A spec for `program args…` in `cwd`, with defaults for everything else.
    pub fn new(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
        cwd: impl Into<PathBuf>,
    ) -> Self {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            cwd: cwd.into(),
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            env_clear: false,
            stdin: StdinMode::Null,
            pty: false,
            timeout: None,
            kill_grace: Duration::from_secs(2),
        }
    }

    /// Set a timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Set one environment variable.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
}

/// Which shell runs command strings, and how.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellConfig {
    /// An explicit shell; otherwise `$SHELL` if it is bash or zsh, else `bash` on `PATH`, else `sh`.
    pub shell: Option<PathBuf>,
    /// Run as a login shell (`-l`).
    pub login: bool,
    /// Text put before every command (`<prefix> <command>`).
    pub prefix: Option<String>,
}

impl ShellConfig {
    /// The shell program to use (SPEC E-2).
    pub fn resolve_shell(&self) -> PathBuf {
        if let Some(shell) = &self.shell {
            return shell.clone();
        }
        if let Some(env_shell) = std::env::var_os("SHELL").map(PathBuf::from) {
            let name = env_shell.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if (name == "bash" || name == "zsh") && env_shell.is_file() {
                return env_shell;
            }
        }
        find_on_path("bash").unwrap_or_else(|| PathBuf::from("/bin/sh"))
    }
}

/// The first executable file named `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// A spec that runs `command` with the configured shell (`<shell> [-l] -c <command>`).
pub fn shell_spec(config: &ShellConfig, command: &str, cwd: impl Into<PathBuf>) -> LaunchSpec {
    let shell = config.resolve_shell();
    let script = match &config.prefix {
        Some(prefix) if !prefix.trim().is_empty() => format!("{prefix} {command}"),
        _ => command.to_owned(),
    };
    let mut args = Vec::new();
    if config.login {
        args.push("-l".to_owned());
    }
    args.push("-c".to_owned());
    args.push(script);
    LaunchSpec::new(shell.to_string_lossy().into_owned(), args, cwd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_spec_applies_prefix_and_login() {
        let config = ShellConfig {
            shell: Some("/bin/bash".into()),
            login: true,
            prefix: Some("nice".into()),
        };
        let spec = shell_spec(&config, "ls", "/tmp");
        assert_eq!(spec.program, "/bin/bash");
        assert_eq!(spec.args, ["-l", "-c", "nice ls"]);
        assert_eq!(spec.cwd, PathBuf::from("/tmp"));
    }

    #[test]
    fn default_shell_is_an_existing_file() {
        assert!(ShellConfig::default().resolve_shell().exists());
    }
}
