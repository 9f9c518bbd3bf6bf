//! A call on a remote host (SPEC X-3): judged like any other, then run in the host's persistent
//! session, or as one client run (`session: "none"`, a terminal, a job) moved onto the host by a
//! [`HostLayer`]. Directories of named hosts map between this machine and the host.

use std::path::PathBuf;
use std::sync::Arc;

use shellgate_executor::{LaunchLayer, ShellConfig, non_interactive, shell_spec};
use shellgate_hosts::HostLayer;
use shellgate_intercept::Context;
use shellgate_normalize::Normalized;
use shellgate_sink::{ArtifactSpill, OutputWindow};
use tokio_util::sync::CancellationToken;

use super::BashTool;
use crate::foreground::{Foreground, Runner};
use crate::live::LiveFeed;
use crate::remote::HostRun;
use crate::shape::StreamFacts;
use crate::{BashParams, ToolResult, ToolStatus};

/// What a remote call needs besides its parameters.
pub(super) struct RemoteCall<'a> {
    pub remote: HostRun,
    pub normalized: Normalized,
    pub notices: Vec<String>,
    pub approved: bool,
    pub live: Option<&'a LiveFeed>,
}

impl BashTool {
    /// Run `params` on its host.
    pub(super) async fn run_remote(
        &self,
        params: BashParams,
        call: RemoteCall<'_>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let RemoteCall {
            remote,
            normalized,
            mut notices,
            approved,
            live,
        } = call;
        let host_name = remote.host.target().to_string();
        let session = self.remote_session_name(&params);
        let live_cwd = session
            .as_deref()
            .and_then(|name| self.live_remote_cwd(&host_name, name));
        let requested = params.cwd.as_deref().or(normalized.cwd.as_deref());
        let remote_cwd = remote.remote_cwd(requested, &self.config.cwd);
        // What the policy sees as the call's directory: this machine's side of it.
        let judged_cwd =
            PathBuf::from(remote.local_cwd(remote_cwd.as_deref().or(live_cwd.as_deref()).unwrap_or("")));
        let judged_cwd = if judged_cwd.is_absolute() {
            judged_cwd
        } else {
            self.config.cwd.clone()
        };
        let ctx = Context {
            tool_names: self.config.tool_names.clone(),
            cwd: Some(judged_cwd.clone()),
        };
        let gate_call = crate::gate::Call {
            params: &params,
            normalized: &normalized,
            ctx: &ctx,
            cwd: &judged_cwd,
        };
        match self.judge(&gate_call) {
            Ok(judged) => notices.extend(judged),
            Err(result) if approved && result.status == ToolStatus::ApprovalPending => {
                notices.extend(result.notices);
            }
            Err(result) if result.status == ToolStatus::ApprovalPending => {
                return self
                    .env_gate
                    .redacted(self.pending(*result, &params, &judged_cwd));
            }
            Err(result) => return self.env_gate.redacted(*result),
        }
        // Without a directory the host's client starts in the login directory.
        let shown_cwd = remote_cwd.clone().or(live_cwd).unwrap_or_else(|| "~".to_owned());
        if let Err(e) = remote.host.ensure_reachable().await {
            return ToolResult::not_run(ToolStatus::FailedToStart, e.to_string(), shown_cwd);
        }
        notices.push(format!("Ran on host {host_name}."));
        let (timeout, clamp_notice) = self.clamp_timeout(params.timeout);
        notices.extend(clamp_notice);
        // A session's shell has the non-interactive variables from its start; a client run gets them
        // with the call's.
        let env = remote.env(&params.env);

        let one_client_run =
            session.is_none() || params.pty || params.background || params.yield_ms.is_some();
        let spec = one_client_run.then(|| {
            // `sh` stands for the host's shell: bash where it has one (see `shellgate_hosts::script`).
            let shell = ShellConfig {
                shell: Some(PathBuf::from("sh")),
                login: false,
                prefix: self.config.shell.prefix.clone(),
            };
            let mut spec = shell_spec(&shell, &normalized.script, remote_cwd.as_deref().unwrap_or(""));
            spec = non_interactive(spec);
            spec.env.extend(env.clone());
            spec.env_remove.extend(self.env_gate.removals.iter().cloned());
            spec.pty = params.pty;
            spec.timeout = Some(timeout);
            spec.kill_grace = self.config.kill_grace;
            self.config
                .layers
                .apply(HostLayer::new(remote.host.clone()).wrap(spec))
        });
        let display_cwd = PathBuf::from(&shown_cwd);
        let mut result = match spec {
            Some(spec) if params.background || params.yield_ms.is_some() => {
                self.call_as_job(
                    spec,
                    None,
                    &params,
                    &normalized,
                    &display_cwd,
                    timeout,
                    notices,
                    cancel,
                    None,
                )
                .await
            }
            spec => {
                let runner = match (spec, session) {
                    (Some(spec), _) if params.pty => Runner::Pty(spec),
                    (Some(spec), _) => Runner::Pipe(Arc::clone(&self.executor), spec),
                    (None, name) => Runner::Remote {
                        sessions: self.hosts.sessions().clone(),
                        host: remote.host.clone(),
                        name: name.unwrap_or_default(),
                        text: super::session_text(&normalized).into_owned(),
                        cwd: remote_cwd.map(PathBuf::from),
                        env,
                    },
                };
                self.remote_foreground(
                    runner,
                    &params,
                    &normalized,
                    display_cwd,
                    timeout,
                    notices,
                    live,
                    cancel,
                )
                .await
            }
        };
        if result.status != ToolStatus::FailedToStart
            && remote.host.is_client_failure(result.exit_code)
            && let Err(e) = remote.host.recheck().await
        {
            result.status = ToolStatus::FailedToStart;
            result.notices.push(e.to_string());
        }
        result.cwd = remote.local_cwd(&result.cwd);
        self.env_gate.redacted(result)
    }

    /// A foreground run on a host, shaped like a local one.
    #[allow(clippy::too_many_arguments)]
    async fn remote_foreground(
        &self,
        runner: Runner,
        params: &BashParams,
        normalized: &Normalized,
        cwd: PathBuf,
        timeout: std::time::Duration,
        notices: Vec<String>,
        live: Option<&LiveFeed>,
        cancel: CancellationToken,
    ) -> ToolResult {
        let window = match &self.config.artifacts {
            Some(store) => {
                OutputWindow::with_spill(self.config.window.clone(), ArtifactSpill::new(store.clone()))
            }
            None => OutputWindow::new(self.config.window.clone()),
        };
        let run = Foreground {
            runner,
            state_file: None,
            facts: StreamFacts::new(normalized, Self::limits(params, normalized)),
            head_stops: normalized.limits.head.is_some(),
            head_grace: self.config.head_grace,
            live: live.map(|feed| feed.sink(self.config.window.max_column)),
            cwd,
            timeout,
            notices,
            command: params.command.clone(),
            redactions: self.env_gate.redactions(),
            artifacts_error: self
                .config
                .artifacts
                .is_none()
                .then(|| self.config.artifacts_error.clone())
                .flatten(),
        };
        Box::pin(run.run(window, &self.jobs, self.config.auto_yield, cancel)).await
    }

    /// The session a remote call runs in, `None` for a one-off run.
    fn remote_session_name(&self, params: &BashParams) -> Option<String> {
        let name = params.session.as_deref().unwrap_or(&self.config.default_session);
        (name != crate::config::NO_SESSION && !name.is_empty()).then(|| name.to_owned())
    }

    /// The directory of a live remote session.
    fn live_remote_cwd(&self, host: &str, name: &str) -> Option<String> {
        self.hosts
            .sessions()
            .list()
            .into_iter()
            .find(|s| s.host == host && s.name == name && !s.cwd.is_empty())
            .map(|s| s.cwd)
    }

    /// End every remote session and shared connection (at server shutdown).
    pub async fn shutdown_hosts(&self) {
        self.hosts.shutdown().await;
    }
}
