//! The `sessions` and `close_session` actions, over this machine's sessions and those on hosts.

use super::{ProcessAction, ProcessResult, ProcessTool, SessionSummary};

impl ProcessTool {
    pub(super) async fn sessions_action(
        &self,
        action: ProcessAction,
        name: Option<&str>,
        host: Option<&str>,
    ) -> ProcessResult {
        let Some(sessions) = &self.sessions else {
            return ProcessResult::error(action, None, "This process tool has no persistent sessions.");
        };
        let remote = self.hosts.as_ref().map(shellgate_hosts::Hosts::sessions);
        if action == ProcessAction::Sessions {
            let mut list: Vec<SessionSummary> = sessions.list().into_iter().map(Into::into).collect();
            list.extend(
                remote
                    .into_iter()
                    .flat_map(shellgate_hosts::RemoteSessions::list)
                    .map(remote_summary),
            );
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
        let closed = match (host, &self.hosts) {
            (Some(host), Some(hosts)) if !shellgate_hosts::Hosts::is_local(host) => {
                let Some(key) = hosts.session_key(host) else {
                    return ProcessResult::error(action, None, format!("Unknown host {host:?}."));
                };
                hosts.sessions().close(&key, name).await
            }
            _ => sessions.close(name),
        };
        if closed {
            let on = host.filter(|h| !shellgate_hosts::Hosts::is_local(h));
            ProcessResult {
                action,
                message: match on {
                    Some(host) => format!("Session {name:?} on {host} closed."),
                    None => format!("Session {name:?} closed."),
                },
                ..ProcessResult::default()
            }
        } else {
            ProcessResult::error(action, None, format!("No session named {name:?}."))
        }
    }
}

/// A session on another host, as the `sessions` action reports it.
fn remote_summary(info: shellgate_hosts::RemoteSessionInfo) -> SessionSummary {
    SessionSummary {
        name: info.name,
        host: Some(info.host),
        shell: "sh".to_owned(),
        pid: None,
        cwd: info.cwd,
        busy: info.busy,
        idle_secs: info.idle_for.as_secs(),
        commands: info.commands,
        restarts: 0,
    }
}
