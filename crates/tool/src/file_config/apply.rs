//! A configuration file's values onto a [`ToolConfig`], and the values in effect back into a file.

use std::time::Duration;

use shellgate_intercept::{Policy, Security};

use super::FileConfig;
use crate::ToolConfig;

impl FileConfig {
    /// Apply the values that are set.
    pub fn apply(&self, config: &mut ToolConfig) {
        if let Some(cwd) = &self.cwd {
            // The default store follows the project: another project's outputs stay out of reach.
            let default_store = shellgate_sink::StoreConfig::project_dir(&config.cwd);
            let uses_default = config
                .artifacts
                .as_ref()
                .is_some_and(|store| Some(store.dir()) == default_store.as_deref());
            config.cwd.clone_from(cwd);
            if uses_default {
                match shellgate_sink::ArtifactStore::open_for_project(cwd) {
                    Ok(store) => config.artifacts = Some(std::sync::Arc::new(store)),
                    Err(e) => {
                        config.artifacts = None;
                        config.artifacts_error = Some(e.to_string());
                    }
                }
            }
        }
        if let Some(shell) = &self.shell {
            config.shell.shell = Some(shell.clone());
        }
        if let Some(login) = self.login {
            config.shell.login = login;
        }
        if let Some(prefix) = &self.prefix {
            config.shell.prefix = Some(prefix.clone());
        }
        let secs = |s: f64| Duration::from_secs_f64(s.clamp(0.0, 1e9));
        if let Some(t) = self.timeout {
            config.default_timeout = secs(t);
        }
        if let Some(t) = self.max_timeout {
            config.max_timeout = secs(t);
        }
        if let Some(t) = self.kill_grace {
            config.kill_grace = secs(t);
        }
        if let Some(b) = self.head_bytes {
            config.window.head_bytes = b;
        }
        if let Some(b) = self.tail_bytes {
            config.window.tail_bytes = b;
        }
        if let Some(names) = &self.tool_names {
            config.tool_names.clone_from(names);
        }
        if let Some(session) = &self.session {
            config.default_session.clone_from(session);
        }
        if let Some(t) = self.session_idle_timeout {
            config.sessions.idle_timeout = secs(t);
        }
        if let Some(n) = self.max_jobs {
            config.jobs.max_running = n;
        }
        if let Some(n) = self.max_finished_jobs {
            config.jobs.max_finished = n;
        }
        if let Some(t) = self.finished_job_ttl {
            config.jobs.finished_ttl = secs(t);
        }
        if let Some(ms) = self.auto_yield_ms {
            config.auto_yield = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(ms) = self.head_grace_ms {
            config.head_grace = Duration::from_millis(ms);
        }
        if let Some(ms) = self.poll_settle_ms {
            config.jobs.poll_settle = Duration::from_millis(ms);
        }
        if let Some(approvals) = &self.approvals {
            approvals.apply(&mut config.approvals);
        }
        match self.build_policy() {
            Ok(Some(policy)) => config.policy = Some(policy),
            Ok(None) => {}
            // Only a hand-made value can get here (a parsed file was built once already): a policy
            // that cannot be built fails closed.
            Err(_) => {
                config.policy = Policy::builder().security(Security::Deny).build().ok();
            }
        }
        if let Some(env) = &self.env {
            config.env.clone_from(env);
        }
        self.host_sections().apply(&mut config.hosts);
        if let Some(sandbox) = &self.sandbox {
            sandbox.apply(&mut config.sandbox);
        }
    }

    /// Every key, with the values in effect in `config` (what `shellgate config` prints).
    pub fn effective(config: &ToolConfig) -> Self {
        let (ssh, [docker, podman, kubectl], hosts) = shellgate_hosts::effective(&config.hosts);
        Self {
            cwd: Some(config.cwd.clone()),
            shell: Some(config.shell.resolve_shell()),
            login: Some(config.shell.login),
            prefix: config.shell.prefix.clone(),
            timeout: Some(config.default_timeout.as_secs_f64()),
            max_timeout: Some(config.max_timeout.as_secs_f64()),
            kill_grace: Some(config.kill_grace.as_secs_f64()),
            head_bytes: Some(config.window.head_bytes),
            tail_bytes: Some(config.window.tail_bytes),
            tool_names: Some(config.tool_names.clone()),
            session: Some(config.default_session.clone()),
            session_idle_timeout: Some(config.sessions.idle_timeout.as_secs_f64()),
            max_jobs: Some(config.jobs.max_running),
            max_finished_jobs: Some(config.jobs.max_finished),
            finished_job_ttl: Some(config.jobs.finished_ttl.as_secs_f64()),
            auto_yield_ms: Some(config.auto_yield.map_or(0, |d| d.as_millis() as u64)),
            head_grace_ms: Some(config.head_grace.as_millis() as u64),
            poll_settle_ms: Some(config.jobs.poll_settle.as_millis() as u64),
            policy: config.policy.as_ref().map(Policy::policy_config),
            intercept: config.policy.as_ref().map(|p| p.intercept_config().clone()),
            env: Some(config.env.clone()),
            approvals: Some(crate::approvals::ApprovalsFileConfig::effective(
                &config.approvals,
            )),
            sandbox: Some(crate::SandboxFile::effective(&config.sandbox)),
            ssh: Some(ssh),
            docker: Some(docker),
            podman: Some(podman),
            kubectl: Some(kubectl),
            hosts: Some(hosts),
        }
    }
}
