//! The `sessions` and `close_session` actions.

use super::{ProcessAction, ProcessResult, ProcessTool, SessionSummary};

impl ProcessTool {
    pub(super) fn sessions_action(&self, action: ProcessAction, name: Option<&str>) -> ProcessResult {
        let Some(sessions) = &self.sessions else {
            return ProcessResult::error(action, None, "This process tool has no persistent sessions.");
        };
        if action == ProcessAction::Sessions {
            let list: Vec<SessionSummary> = sessions.list().into_iter().map(Into::into).collect();
            return ProcessResult {
                action,
                message: format!("{} session(s).", list.len()),
                sessions: Some(list),
                ..ProcessResult::default()
            };
        }
        let Some(name) = name else {
            return ProcessResult::error(action, None, "session is required for close_session.");
        };
        if sessions.close(name) {
            ProcessResult {
                action,
                message: format!("Session {name:?} closed."),
                ..ProcessResult::default()
            }
        } else {
            ProcessResult::error(action, None, format!("No session named {name:?}."))
        }
    }
}
