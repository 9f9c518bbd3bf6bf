//! What runs a foreground call in a session on another host (a process or a local session's
//! command is the jobs crate's [`shellgate_jobs::ProcessRun`], [`shellgate_jobs::SessionRun`]),
//! and how a [`ToolResult`] answers for the jobs crate's foreground run
//! ([`shellgate_jobs::Foreground`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shellgate_executor::{SendSink, SessionCommand};
use shellgate_jobs::{Job, RunFuture, RunResult, Runner};
use tokio_util::sync::CancellationToken;

use crate::{ToolResult, ToolStatus};

/// A command in a persistent session on another host.
pub(crate) struct RemoteRun {
    pub sessions: shellgate_hosts::RemoteSessions,
    pub host: shellgate_hosts::RemoteHost,
    pub name: String,
    pub text: String,
    pub cwd: Option<PathBuf>,
    pub env: BTreeMap<String, String>,
}

impl Runner for RemoteRun {
    fn run<'a>(
        self: Box<Self>,
        sink: &'a mut SendSink<'_>,
        cancel: CancellationToken,
        timeout: Duration,
    ) -> RunFuture<'a> {
        Box::pin(async move {
            let command = SessionCommand {
                text: &self.text,
                cwd: self.cwd.as_deref(),
                env: &self.env,
                timeout,
                report_status: false,
            };
            self.sessions
                .run_command(&self.host, &self.name, &command, sink, cancel)
                .await
        })
    }
}

impl RunResult for ToolResult {
    fn panicked(error: &str, cwd: &Path) -> Self {
        ToolResult::not_run(
            ToolStatus::FailedToStart,
            format!("The run failed inside the engine: {error}"),
            cwd.display().to_string(),
        )
    }

    fn running(job: &Job, output: String, notice: String, timeout: Duration) -> Self {
        let mut result = running(job, output, timeout);
        result.notices.push(notice);
        result
    }

    fn push_notice(&mut self, notice: String) {
        self.notices.push(notice);
    }

    fn end_notices(&self) -> Vec<String> {
        let mut notices = self.notices.clone();
        if let Some(artifact) = &self.artifact {
            notices.push(format!("Full output of the whole run: {artifact}"));
        }
        notices
    }
}

/// The result of a call that goes on as `job`, with the output so far.
pub(crate) fn running(job: &Job, output: String, timeout: Duration) -> ToolResult {
    let mut result = ToolResult::not_run(ToolStatus::Running, output, job.cwd.clone());
    result.is_error = false;
    result.job_id = Some(job.id.clone());
    result.pid = job.pid();
    result.duration_ms = job.started.elapsed().as_millis() as u64;
    result.timeout_secs = timeout.as_secs();
    result
}
