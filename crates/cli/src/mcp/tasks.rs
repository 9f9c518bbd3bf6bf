//! Long runs as tasks (the `io.modelcontextprotocol/tasks` extension), for requests that declare
//! it.
//!
//! A foreground `bash` call still running at `auto_yield_ms` has already become a background job;
//! for such a client the call answers a task whose id is the job's id instead of a `running` result.
//! `tasks/get` polls the job: `working` with the output printed since the last `tasks/get` as its
//! status message, then `completed` with the final tool result (the whole output and the exit)
//! or `cancelled` after `tasks/cancel`, which kills the job's whole process tree. A terminal state is
//! kept, so every later `tasks/get` answers the same. Only jobs that became tasks are tasks:
//! `background: true` and `yield_ms` keep returning job ids for the `process` tool, and input to a
//! job is `process write` (`tasks/update` only answers a task's input requests, and shellgate's
//! tasks ask none).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::SystemTime;

use rmcp::model::{CreateTaskResult, DetailedTask, JsonObject, Task, TaskPayload, TaskStatus};
use serde_json::Value;
use shellgate::approvals::rfc3339;
use shellgate::{JobStatus, ProcessAction, ProcessParams, ProcessResult, ProcessTool};

/// How often a client is asked to poll a working task.
const POLL_INTERVAL_MS: u64 = 1000;

/// One task: when it began, and its final state once it has one.
#[derive(Debug, Clone)]
struct Entry {
    created_at: String,
    /// What the call printed before it became a job (the job's own stream starts after it).
    first_output: String,
    cancelled: bool,
    terminal: Option<DetailedTask>,
}

/// The tasks of this server, by id (the job id).
#[derive(Debug, Default)]
pub struct Tasks {
    entries: Mutex<HashMap<String, Entry>>,
}

/// A tool result as the `result` of a completed task.
pub type Finish<'a> = &'a (dyn Fn(&ProcessResult, bool) -> JsonObject + Sync);

impl Tasks {
    /// Make job `job_id` a task; the handle the call answers.
    pub fn create(&self, job_id: &str, first_output: &str) -> CreateTaskResult {
        let now = rfc3339(SystemTime::now());
        let entry = Entry {
            created_at: now.clone(),
            first_output: first_output.to_owned(),
            cancelled: false,
            terminal: None,
        };
        self.lock().insert(job_id.to_owned(), entry);
        let mut task =
            Task::new(job_id, TaskStatus::Working, now.clone(), now).with_poll_interval_ms(POLL_INTERVAL_MS);
        if !first_output.is_empty() {
            task = task.with_status_message(first_output);
        }
        CreateTaskResult::new(task)
    }

    /// The state of `task_id` (`None` for an unknown task): the job is polled unless the task
    /// already ended; `finish` makes the completed task's tool result from the last poll.
    pub async fn get(
        &self,
        process: &ProcessTool,
        task_id: &str,
        finish: Finish<'_>,
    ) -> Option<DetailedTask> {
        let entry = self.lock().get(task_id).cloned()?;
        if let Some(terminal) = entry.terminal {
            return Some(terminal);
        }
        let polled = process.call(poll(task_id)).await;
        let now = rfc3339(SystemTime::now());
        let mut task = Task::new(task_id, TaskStatus::Working, entry.created_at, now)
            .with_poll_interval_ms(POLL_INTERVAL_MS);
        let running = polled.status == Some(JobStatus::Running);
        if running {
            let output = polled.output.clone().unwrap_or_default();
            if !output.is_empty() {
                task = task.with_status_message(output);
            }
            return Some(DetailedTask::new(task, TaskPayload::Working));
        }
        let payload = if entry.cancelled {
            TaskPayload::Cancelled
        } else {
            // The result holds the whole output, as the call would have returned it had it not
            // outlived `auto_yield_ms`, not only what came after the last `tasks/get`.
            let mut polled = process
                .call(ProcessParams {
                    since: Some(0),
                    ..poll(task_id)
                })
                .await;
            let rest = polled.output.take().unwrap_or_default();
            polled.output = Some(entry.first_output.clone() + &rest);
            let failed = polled.is_error
                || polled.status != Some(JobStatus::Completed)
                || polled.exit_code.is_some_and(|code| code != 0);
            TaskPayload::Completed {
                result: finish(&polled, failed),
            }
        };
        task = task.with_status_message(polled.message.clone());
        let detailed = DetailedTask::new(task, payload);
        if let Some(entry) = self.lock().get_mut(task_id) {
            entry.terminal = Some(detailed.clone());
        }
        Some(detailed)
    }

    /// Kill `task_id`'s job tree (`false` for an unknown task). A task that already ended stays as
    /// it ended.
    pub async fn cancel(&self, process: &ProcessTool, task_id: &str) -> bool {
        {
            let mut entries = self.lock();
            let Some(entry) = entries.get_mut(task_id) else {
                return false;
            };
            if entry.terminal.is_some() {
                return true;
            }
            entry.cancelled = true;
        }
        let params = ProcessParams {
            action: ProcessAction::Kill,
            job_id: Some(task_id.to_owned()),
            ..ProcessParams::default()
        };
        let killed = process.call(params).await;
        tracing::debug!(task_id, message = %killed.message, "task cancelled");
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A poll of `job_id` that does not wait.
fn poll(job_id: &str) -> ProcessParams {
    ProcessParams {
        action: ProcessAction::Poll,
        job_id: Some(job_id.to_owned()),
        wait_ms: Some(0),
        ..ProcessParams::default()
    }
}

/// `value` as a JSON object (a tool result always is one).
pub fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use shellgate::ToolConfig;

    /// The shortest tool-call timeout common among MCP clients (several stop waiting for a result
    /// after about 60 s, and progress notifications do not reset it). A call must answer before it:
    /// by `auto_yield_ms` a foreground run becomes a job (or a task) and the call returns.
    const SMALLEST_COMMON_CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

    #[test]
    fn a_foreground_run_yields_well_before_the_smallest_common_client_timeout() {
        let after = ToolConfig::default()
            .auto_yield
            .expect("auto_yield_ms is on by default");
        // Room on top for the client's own overhead.
        assert!(
            after * 2 <= SMALLEST_COMMON_CLIENT_TIMEOUT,
            "auto_yield_ms defaults to {after:?}"
        );
    }
}
