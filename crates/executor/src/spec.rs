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
    /// The command writes a status trailer (the last pipeline's `PIPESTATUS`) to [`STATUS_FD`]; the pipe
    /// executor then provides that descriptor and fills [`crate::ExecOutcome::pipeline_status`].
    /// Set by [`shell_spec`] for bash; executors that do not provide the descriptor may ignore it (the
    /// trailer then fails silently).
    pub status_report: bool,
    /// What stops this launch's processes on another host or in a container, run once (bounded by its
    /// own timeout) when the run is stopped before its end — timeout, cancel, a killed job, an
    /// abandoned run: killing the local client (`ssh`, `docker exec`) alone leaves them running. Set by
    /// host layers.
    pub remote_stop: Option<Box<LaunchSpec>>,
    /// Limits of the run's cgroup, where the engine can give it one (set by the sandbox layer).
    pub cgroup_limits: crate::cgroup::CgroupLimits,
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
            status_report: false,
            remote_stop: None,
            cgroup_limits: crate::cgroup::CgroupLimits::default(),
        }
    }

    /// Set a timeout.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// A command for this spec's program, arguments, directory and environment (stdio, timeout and
    /// the rest are the executor's to apply).
    pub fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.program);
        if self.env_clear {
            cmd.env_clear();
        }
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        cmd.args(&self.args).current_dir(&self.cwd).envs(&self.env);
        cmd
    }

    /// Set one environment variable.
    #[must_use]
    pub fn with_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }
}

/// `value` as one single-quoted word for a POSIX shell, bash or zsh: `'` is written `'\''`, every other
/// character stands as it is.
pub fn sh_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
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

/// Descriptor on which a bash command reports its last pipeline's statuses (see
/// [`LaunchSpec::status_report`]). High enough to stay clear of the descriptors scripts use (`3`–`9`)
/// and of those bash allocates for `{var}>` redirections (from 10 upward).
pub const STATUS_FD: i32 = 63;

/// Appended to bash scripts that contain a pipeline: reports `PIPESTATUS` and `$?` of the last
/// top-level pipeline on [`STATUS_FD`] (space-separated, `$?` last, preceded by `p` when `pipefail` is
/// on; `IFS` plays no part), then exits with `$?`, so the command's own status is unchanged. Failures to
/// write are silent.
const STATUS_TRAILER: &str = "\n__shellgate_ps=(\"${PIPESTATUS[@]}\" \"$?\"); \
{ [[ -o pipefail ]] && builtin printf 'p '; builtin printf '%s ' \"${__shellgate_ps[@]}\"; } 2>/dev/null >&63; \
builtin exit \"${__shellgate_ps[-1]}\"";

/// Whether a status trailer can be appended to `script` without changing its meaning, and is worth it
/// (the script has a pipe). Scripts with here-documents or a trailing line continuation are left alone:
/// the trailer would become part of the document or of the last command.
fn wants_status_trailer(shell: &std::path::Path, script: &str, always: bool) -> bool {
    let is_bash = shell.file_name().and_then(|n| n.to_str()) == Some("bash");
    is_bash && (always || script.contains('|')) && script_takes_status_trailer(script)
}

/// Whether a status line can be appended to `script` without changing its meaning (also used by
/// session commands): no here-document, no trailing line continuation.
pub(crate) fn script_takes_status_trailer(script: &str) -> bool {
    let trimmed = script.trim_end_matches([' ', '\t', '\n']);
    !script.contains("<<") && !trimmed.ends_with('\\')
}

/// A spec that runs `command` with the configured shell (`<shell> [-l] -c <command>`).
///
/// For bash, a command containing a pipeline gets a status trailer so the pipe executor can report
/// per-stage statuses ([`LaunchSpec::status_report`]).
pub fn shell_spec(config: &ShellConfig, command: &str, cwd: impl Into<PathBuf>) -> LaunchSpec {
    shell_command_spec(config, command, cwd.into(), false)
}

/// [`shell_spec`] for a command whose status must be reported even without a pipe in it: a command
/// whose trailing `| head` was lifted out is still the first stage of the user's pipeline, and its
/// status (and whether `pipefail` is on) decides the status bash would have given the whole pipeline.
pub fn shell_spec_reporting_status(
    config: &ShellConfig,
    command: &str,
    cwd: impl Into<PathBuf>,
) -> LaunchSpec {
    shell_command_spec(config, command, cwd.into(), true)
}

fn shell_command_spec(config: &ShellConfig, command: &str, cwd: PathBuf, always_report: bool) -> LaunchSpec {
    let shell = config.resolve_shell();
    let mut script = match &config.prefix {
        Some(prefix) if !prefix.trim().is_empty() => format!("{prefix} {command}"),
        _ => command.to_owned(),
    };
    let status_report = wants_status_trailer(&shell, &script, always_report);
    if status_report {
        script.push_str(STATUS_TRAILER);
    }
    let mut args = Vec::new();
    if config.login {
        args.push("-l".to_owned());
    }
    args.push("-c".to_owned());
    // `--`: a command that starts with `-` is the command, not an option of the shell.
    args.push("--".to_owned());
    args.push(script);
    let mut spec = LaunchSpec::new(shell.to_string_lossy().into_owned(), args, cwd);
    spec.status_report = status_report;
    spec
}

/// What a status trailer reported: the last pipeline's stage statuses and whether `pipefail` was on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StatusReport {
    /// The stages, only when there were at least two (the last command was a pipeline).
    pub stages: Vec<i32>,
    /// `pipefail` was on.
    pub pipefail: bool,
}

/// Parse a status trailer line: an optional `p` (pipefail), the stage statuses, then `$?`.
pub(crate) fn parse_status_trailer(text: &str) -> Option<StatusReport> {
    let line = text.lines().next_back()?;
    let mut words = line.split_ascii_whitespace().peekable();
    let pipefail = words.next_if_eq(&"p").is_some();
    let mut numbers: Vec<i32> = words.map(str::parse).collect::<Result<_, _>>().ok()?;
    numbers.pop()?;
    if numbers.len() < 2 {
        numbers.clear();
    }
    Some(StatusReport {
        stages: numbers,
        pipefail,
    })
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
        assert_eq!(spec.args, ["-l", "-c", "--", "nice ls"]);
        assert_eq!(spec.cwd, PathBuf::from("/tmp"));
    }

    #[test]
    fn pipelines_get_a_status_trailer_in_bash_only() {
        let bash = ShellConfig {
            shell: Some("/bin/bash".into()),
            ..ShellConfig::default()
        };
        let spec = shell_spec(&bash, "a | b", "/");
        assert!(spec.status_report);
        assert!(spec.args[2].starts_with("a | b\n__shellgate_ps="));
        assert!(!shell_spec(&bash, "cat <<EOF | x\nhi\nEOF", "/").status_report);
        assert!(!shell_spec(&bash, "echo hi", "/").status_report);
        let sh = ShellConfig {
            shell: Some("/bin/sh".into()),
            ..ShellConfig::default()
        };
        assert!(!shell_spec(&sh, "a | b", "/").status_report);
    }

    #[test]
    fn parses_status_trailers() {
        let stages = |text| parse_status_trailer(text).map(|r| r.stages);
        assert_eq!(stages("0 141 0\n"), Some(vec![0, 141]));
        assert_eq!(stages("3 3\n"), Some(vec![]));
        assert_eq!(stages("x y"), None);
        assert_eq!(stages(""), None);
        let report = parse_status_trailer("p 141 0 141").unwrap();
        assert!(report.pipefail);
        assert_eq!(report.stages, [141, 0]);
        assert!(!parse_status_trailer("0 0 0").unwrap().pipefail);
    }

    #[test]
    fn default_shell_is_an_existing_file() {
        assert!(ShellConfig::default().resolve_shell().exists());
    }
}
