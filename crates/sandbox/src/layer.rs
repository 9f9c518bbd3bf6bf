//! The launch layer: rewrite a [`LaunchSpec`] so that the helper starts first and execs the
//! original program inside the sandbox. Pure data; every launch path (one-shot, session, PTY, job)
//! goes through it, so none runs unsandboxed.

use std::path::PathBuf;

use shellgate_executor::LaunchSpec;

use crate::SandboxPolicy;

/// Wraps launch specs in `helper sandbox-exec --policy <json> -- program args…`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxLayer {
    /// The helper binary (the `shellgate` executable).
    pub helper: PathBuf,
    /// Arguments naming the helper mode, placed before `--policy` (`["sandbox-exec"]`).
    pub helper_args: Vec<String>,
    /// The policy handed to the helper.
    pub policy: SandboxPolicy,
}

impl SandboxLayer {
    /// A layer running `helper sandbox-exec …` with `policy`.
    pub fn new(helper: impl Into<PathBuf>, policy: SandboxPolicy) -> Self {
        Self {
            helper: helper.into(),
            helper_args: vec!["sandbox-exec".to_owned()],
            policy,
        }
    }

    /// Use other arguments than `sandbox-exec` to select the helper mode (none for a dedicated
    /// helper binary).
    #[must_use]
    pub fn with_helper_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.helper_args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Rewrite `spec`: the program becomes the helper; the original program and arguments follow
    /// `--`. The working directory, environment, stdin, PTY, timeout and everything else are kept:
    /// the helper execs in place, so they reach the command unchanged.
    pub fn wrap(&self, spec: LaunchSpec) -> LaunchSpec {
        let mut args = self.helper_args.clone();
        args.push("--policy".to_owned());
        args.push(self.policy.to_json());
        args.push("--".to_owned());
        args.push(spec.program.clone());
        args.extend(spec.args.iter().cloned());
        let cgroup_limits = shellgate_executor::CgroupLimits {
            pids_max: self.policy.limits.processes.filter(|&n| n > 0),
            memory_max: self.policy.limits.memory_bytes.filter(|&n| n > 0),
        };
        let mut spec = LaunchSpec {
            program: self.helper.to_string_lossy().into_owned(),
            args,
            cgroup_limits,
            ..spec
        };
        if let Some(proxy) = &self.policy.proxy {
            for (name, value) in proxy.environment() {
                spec = spec.with_env(name, value);
            }
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::SandboxMode;

    #[test]
    fn wraps_program_and_keeps_everything_else() {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w");
        let layer = SandboxLayer::new("/usr/bin/shellgate", policy.clone());
        let mut spec = LaunchSpec::new("bash", ["-c", "echo 'a b' -- x"], "/w/sub")
            .with_timeout(Duration::from_secs(5))
            .with_env("K", "v w");
        spec.pty = true;
        spec.status_report = true;
        let wrapped = layer.wrap(spec.clone());
        assert_eq!(wrapped.program, "/usr/bin/shellgate");
        assert_eq!(wrapped.args[0], "sandbox-exec");
        assert_eq!(wrapped.args[1], "--policy");
        assert_eq!(SandboxPolicy::from_json(&wrapped.args[2]).unwrap(), policy);
        assert_eq!(wrapped.args[3..], ["--", "bash", "-c", "echo 'a b' -- x"]);
        assert_eq!(wrapped.cwd, spec.cwd);
        assert_eq!(wrapped.env, spec.env);
        assert_eq!(wrapped.timeout, spec.timeout);
        assert!(wrapped.pty && wrapped.status_report);
        let parsed = crate::helper::parse_args(wrapped.args[1..].iter().map(Into::into)).unwrap();
        assert_eq!(parsed.1, ["bash", "-c", "echo 'a b' -- x"]);
    }

    #[test]
    fn dedicated_helpers_take_no_mode_argument() {
        let layer = SandboxLayer::new("/h", SandboxPolicy::new(SandboxMode::ReadOnly, "/"))
            .with_helper_args(Vec::<String>::new());
        let wrapped = layer.wrap(LaunchSpec::new("true", Vec::<String>::new(), "/"));
        assert_eq!(wrapped.args[0], "--policy");
        assert_eq!(wrapped.args.last().unwrap(), "true");
    }
}
