//! The `process` tool (SPEC J-3): inspect and control background jobs.
//!
//! ```
//! use shellgate::{BashParams, BashTool, ProcessAction, ProcessParams, ProcessTool, CancellationToken};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let bash = BashTool::default();
//! let mut params = BashParams::new("echo started; read line; echo got $line");
//! params.background = true;
//! let started = bash.call(params, CancellationToken::new()).await;
//! let job_id = started.job_id.clone().unwrap();
//!
//! let process = ProcessTool::new(bash.jobs().clone());
//! let mut write = ProcessParams::new(ProcessAction::Write, &job_id);
//! write.data = Some("hello\n".into());
//! assert!(!process.call(write).await.is_error);
//!
//! let mut poll = ProcessParams::new(ProcessAction::Poll, &job_id);
//! poll.wait_ms = Some(5000);
//! let mut seen = String::new();
//! for _ in 0..20 {
//!     seen.push_str(process.call(poll.clone()).await.output.as_deref().unwrap_or(""));
//!     if seen.contains("got hello") {
//!         break;
//!     }
//! }
//! assert!(seen.contains("got hello"), "{seen}");
//! # });
//! ```

mod sessions;

use shellgate_executor::SessionManager;

use crate::jobs::{JobActions, JobRegistry};
use crate::sandboxing::SandboxAccount;

pub use crate::jobs::{ProcessAction, ProcessParams, SessionSummary};

/// The answer of the `process` tool, with the sandbox's account of a job that ended.
pub type ProcessResult = crate::jobs::ProcessResult<SandboxAccount>;

/// The `process` tool over one [`JobRegistry`] (and the persistent sessions, when given): the jobs
/// crate's [`JobActions`], and the `sessions` actions over this machine's and the hosts' sessions.
#[derive(Debug, Clone, Default)]
pub struct ProcessTool {
    jobs: JobActions<SandboxAccount>,
    sessions: Option<SessionManager>,
    /// `bash`'s hosts, whose sessions the `sessions` actions cover too.
    hosts: Option<shellgate_hosts::Hosts>,
}

impl ProcessTool {
    /// A tool controlling the jobs of `registry` (share it with the [`BashTool`](crate::BashTool) that
    /// starts them: `ProcessTool::new(bash.jobs().clone())`).
    pub fn new(registry: JobRegistry) -> Self {
        Self {
            jobs: JobActions::new(registry),
            sessions: None,
            hosts: None,
        }
    }

    /// A tool over everything `bash` started: its jobs and its persistent sessions.
    pub fn for_bash(bash: &crate::BashTool) -> Self {
        Self {
            jobs: JobActions::new(bash.jobs().clone()),
            sessions: Some(bash.sessions().clone()),
            hosts: Some(bash.hosts().clone()),
        }
    }

    /// The registry.
    pub fn registry(&self) -> &JobRegistry {
        self.jobs.registry()
    }

    /// Run one action.
    pub async fn call(&self, params: ProcessParams) -> ProcessResult {
        match params.action {
            action @ (ProcessAction::Sessions | ProcessAction::CloseSession) => {
                self.sessions_action(action, params.session.as_deref(), params.host.as_deref())
                    .await
            }
            _ => self.jobs.call(params).await,
        }
    }
}
