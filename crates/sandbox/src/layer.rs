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
            // What the command's environment holds without these: the spec's own variables, then
            // the engine's unless the spec clears or removes them.
            let existing = |name: &str| {
                spec.env.get(name).cloned().or_else(|| {
                    let inherited = !spec.env_clear && !spec.env_remove.iter().any(|r| r == name);
                    inherited.then(|| std::env::var(name).ok()).flatten()
                })
            };
            let added = proxy.environment(existing);
            for (name, value) in added {
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

    fn proxied_env(spec: LaunchSpec) -> std::collections::BTreeMap<String, String> {
        let policy = SandboxPolicy::new(SandboxMode::WorkspaceWrite, "/w")
            .with_proxy(crate::ProxyPolicy::allowing(["pypi.org"]));
        SandboxLayer::new("/h", policy).wrap(spec).env
    }

    #[test]
    fn a_proxied_launch_gets_every_proxy_variable_and_no_java_options() {
        let env = proxied_env(LaunchSpec::new("true", Vec::<String>::new(), "/w"));
        let http = "http://127.0.0.1:3128";
        for name in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
            "PIP_PROXY",
        ] {
            assert_eq!(env.get(name).map(String::as_str), Some(http), "{name}");
        }
        for name in ["ALL_PROXY", "all_proxy"] {
            assert_eq!(
                env.get(name).map(String::as_str),
                Some("socks5h://127.0.0.1:3128"),
                "{name}"
            );
        }
        for name in ["NO_PROXY", "no_proxy"] {
            assert_eq!(
                env.get(name).map(String::as_str),
                Some("localhost,127.0.0.1,::1"),
                "{name}"
            );
        }
        let git: Vec<(&str, &str)> = env
            .iter()
            .filter(|(k, _)| k.starts_with("GIT_CONFIG_"))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let inherited = std::env::var("GIT_CONFIG_COUNT").ok();
        if inherited.is_none() {
            assert_eq!(
                git,
                [
                    ("GIT_CONFIG_COUNT", "1"),
                    ("GIT_CONFIG_KEY_0", "http.proxy"),
                    ("GIT_CONFIG_VALUE_0", http)
                ]
            );
        }
        assert!(!env.contains_key("JAVA_TOOL_OPTIONS"));
        assert!(!env.keys().any(|k| k.contains("JAVA")), "{env:?}");
    }

    #[test]
    fn gits_configuration_from_the_environment_is_extended_not_replaced() {
        let spec = LaunchSpec::new("git", ["fetch"], "/w")
            .with_env("GIT_CONFIG_COUNT", "2")
            .with_env("GIT_CONFIG_KEY_0", "user.name")
            .with_env("GIT_CONFIG_VALUE_0", "someone")
            .with_env("GIT_CONFIG_KEY_1", "core.pager")
            .with_env("GIT_CONFIG_VALUE_1", "cat");
        let env = proxied_env(spec);
        let get = |name: &str| env.get(name).map(String::as_str);
        assert_eq!(get("GIT_CONFIG_COUNT"), Some("3"));
        assert_eq!(get("GIT_CONFIG_KEY_0"), Some("user.name"));
        assert_eq!(get("GIT_CONFIG_VALUE_0"), Some("someone"));
        assert_eq!(get("GIT_CONFIG_KEY_1"), Some("core.pager"));
        assert_eq!(get("GIT_CONFIG_KEY_2"), Some("http.proxy"));
        assert_eq!(get("GIT_CONFIG_VALUE_2"), Some("http://127.0.0.1:3128"));
    }

    #[test]
    fn an_inherited_git_count_is_extended_and_a_removed_one_is_not_counted() {
        let proxy = crate::ProxyPolicy::allowing(["pypi.org"]);
        let inherited = |name: &str| (name == "GIT_CONFIG_COUNT").then(|| "4".to_owned());
        let env: std::collections::BTreeMap<String, String> =
            proxy.environment(inherited).into_iter().collect();
        assert_eq!(env["GIT_CONFIG_COUNT"], "5");
        assert_eq!(env["GIT_CONFIG_KEY_4"], "http.proxy");
        assert!(!env.contains_key("GIT_CONFIG_KEY_0"));
        // A count git would refuse anyway is replaced.
        let bogus = |name: &str| (name == "GIT_CONFIG_COUNT").then(|| "many".to_owned());
        let env: std::collections::BTreeMap<String, String> = proxy.environment(bogus).into_iter().collect();
        assert_eq!(env["GIT_CONFIG_COUNT"], "1");
        assert_eq!(env["GIT_CONFIG_KEY_0"], "http.proxy");
        // The layer reads the engine's own environment unless the spec removes or clears it.
        let mut spec = LaunchSpec::new("true", Vec::<String>::new(), "/w");
        spec.env_remove.push("GIT_CONFIG_COUNT".into());
        assert_eq!(proxied_env(spec)["GIT_CONFIG_COUNT"], "1");
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
