//! A call on a remote host (SPEC X-3): judged like any other, then run in the host's persistent
//! session, or as one client run (`session: "none"`, a terminal, a job) moved onto the host by a
//! [`HostLayer`]. Directories of named hosts map between this machine and the host.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use shellgate_executor::{LaunchLayer, LaunchSpec, ShellConfig, non_interactive, shell_spec};
use shellgate_hosts::HostLayer;
use shellgate_normalize::Normalized;
use tokio_util::sync::CancellationToken;

use super::BashTool;
use super::run::RunBasics;
use crate::gate::Redacting as _;
use crate::{BashParams, ToolResult, ToolStatus};
use shellgate_hosts::HostRun;
use shellgate_sink::LiveFeed;

/// A remote call that may run, with what was decided about it.
struct RemotePlan {
    params: BashParams,
    normalized: Normalized,
    notices: Vec<String>,
    remote: HostRun,
    /// The session on the host, `None` for a one-off run.
    session: Option<String>,
    /// The directory on the host, `None`: where the client starts (or the session is).
    remote_cwd: Option<String>,
    /// The directory the result shows until the host reports one.
    shown_cwd: String,
    timeout: Duration,
    /// The host's variables, then the call's.
    env: BTreeMap<String, String>,
}

impl BashTool {
    /// Run `params` on its host.
    pub(super) async fn run_remote(
        &self,
        params: BashParams,
        remote: HostRun,
        approved: bool,
        cancel: CancellationToken,
        live: Option<&LiveFeed>,
    ) -> ToolResult {
        let mut plan = match self.plan_remote(params, remote, approved) {
            Ok(plan) => plan,
            Err(result) => return *result,
        };
        let host = plan.remote.host.clone();
        let remote = plan.remote.clone();
        if let Err(e) = host.ensure_reachable().await {
            return ToolResult::not_run(ToolStatus::FailedToStart, e.to_string(), plan.shown_cwd);
        }
        plan.notices.push(format!("Ran on host {}.", host.target()));
        let job = plan.params.background || plan.params.yield_ms.is_some();
        // A session's shell reports itself ready, so a session never needs the client's status read.
        let in_session = !job && !plan.params.pty && plan.session.is_some();
        let mut result = if job {
            let spec = self.remote_client_spec(&plan);
            let basics = Self::remote_basics(&plan);
            self.start_job(spec, basics, None, None, cancel).await
        } else {
            let runner: Box<dyn shellgate_jobs::Runner> = match plan.session.clone() {
                Some(name) if !plan.params.pty => Box::new(crate::runners::RemoteRun {
                    sessions: self.hosts.sessions().clone(),
                    host: host.clone(),
                    name,
                    text: super::launch::session_text(&plan.normalized).into_owned(),
                    cwd: plan.remote_cwd.clone().map(PathBuf::from),
                    env: plan.env.clone(),
                }),
                _ => Box::new(shellgate_jobs::ProcessRun(
                    self.executors.for_run(plan.params.pty),
                    self.remote_client_spec(&plan),
                )),
            };
            let basics = Self::remote_basics(&plan);
            self.foreground(runner, None, basics, live, cancel).await
        };
        if !in_session
            && result.status != ToolStatus::FailedToStart
            && host.is_client_failure(result.exit_code)
            && let Err(e) = host.recheck().await
        {
            result.status = ToolStatus::FailedToStart;
            result.notices.push(e.to_string());
        }
        result.cwd = remote.local_cwd(&result.cwd);
        self.env_gate.redacted(result)
    }

    /// Elevation, the normalized command, the directories, the verdict, the timeout.
    fn plan_remote(
        &self,
        mut params: BashParams,
        remote: HostRun,
        approved: bool,
    ) -> Result<RemotePlan, Box<ToolResult>> {
        let super::plan::Prepared {
            approved,
            normalized,
            mut notices,
            ..
        } = self.prepare(&mut params, approved);
        let session = self.session_name(&params).map(str::to_owned);
        let host_name = remote.host.target().to_string();
        let live_cwd = session
            .as_deref()
            .and_then(|name| self.hosts.sessions().cwd_of(&host_name, name));
        let requested = params.cwd.as_deref().or(normalized.cwd.as_deref());
        let remote_cwd = remote.remote_cwd(requested, &self.config.cwd);
        // What the policy sees as the call's directory: this machine's side of it.
        let judged =
            PathBuf::from(remote.local_cwd(remote_cwd.as_deref().or(live_cwd.as_deref()).unwrap_or("")));
        let judged = if judged.is_absolute() {
            judged
        } else {
            self.config.cwd.clone()
        };
        self.admit(&params, &normalized, &judged, approved, &mut notices)?;
        let (timeout, clamp_notice) = self.clamp_timeout(params.timeout);
        notices.extend(clamp_notice);
        // Without a directory the host's client starts in the login directory.
        let shown_cwd = remote_cwd.clone().or(live_cwd).unwrap_or_else(|| "~".to_owned());
        let env = remote.env(&params.env);
        Ok(RemotePlan {
            params,
            normalized,
            notices,
            remote,
            session,
            remote_cwd,
            shown_cwd,
            timeout,
            env,
        })
    }

    /// The local launch spec of one client run carrying the call to its host. A session's shell has
    /// the non-interactive variables from its start; a client run gets them here.
    fn remote_client_spec(&self, plan: &RemotePlan) -> LaunchSpec {
        // `sh` stands for the host's shell: bash where it has one (see `shellgate_hosts::script`).
        let shell = ShellConfig {
            shell: Some(PathBuf::from("sh")),
            login: false,
            prefix: self.config.shell.prefix.clone(),
        };
        let cwd = plan.remote_cwd.as_deref().unwrap_or("");
        let mut spec = non_interactive(shell_spec(&shell, &plan.normalized.script, cwd));
        spec.env.extend(plan.env.clone());
        spec.env_remove.extend(self.env_gate.removals.iter().cloned());
        spec.pty = plan.params.pty;
        spec.timeout = Some(plan.timeout);
        spec.kill_grace = self.config.kill_grace;
        let host = plan.remote.host.clone();
        self.config.layers.apply(HostLayer::new(host).wrap(spec))
    }

    /// What a run on a host shares with a local one.
    fn remote_basics(plan: &RemotePlan) -> RunBasics<'_> {
        RunBasics {
            params: &plan.params,
            normalized: &plan.normalized,
            cwd: PathBuf::from(&plan.shown_cwd),
            timeout: plan.timeout,
            notices: plan.notices.clone(),
        }
    }

    /// End every remote session and shared connection (at server shutdown).
    pub async fn shutdown_hosts(&self) {
        self.hosts.shutdown().await;
    }
}
