//! What an agent sends to the `process` tool.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the `process` tool should do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessAction {
    /// Jobs with id, status, pid, runtime and command, newest first.
    #[default]
    List,
    /// Output since the last poll (or `since`), waiting up to `wait_ms` for news.
    Poll,
    /// Lines by `offset`/`limit` (default: the last 200).
    Log,
    /// Write `data` to the job's stdin; `eof` closes it afterwards.
    Write,
    /// Send `keys` (named keys, `C-x`, `^X`), `hex` bytes and `literal` text.
    #[serde(alias = "send-keys")]
    SendKeys,
    /// Press Enter (after typing `data`, when given).
    Submit,
    /// Paste `text` (bracketed paste on a terminal).
    Paste,
    /// Stop the job's whole process tree: SIGINT, then SIGTERM, then SIGKILL; or send `signal`.
    Kill,
    /// Kill if running, then forget the job.
    Remove,
    /// Forget finished jobs (`job_id`, or all of them).
    Clear,
    /// The rendered terminal screen of a PTY job.
    Screen,
    /// Resize a PTY job's terminal to `cols`×`rows`.
    Resize,
    /// The persistent shell sessions.
    Sessions,
    /// Close the persistent shell session named `session`.
    CloseSession,
}

/// What an agent sends to the `process` tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessParams {
    /// The action.
    pub action: ProcessAction,
    /// The job (every action but `list` and `clear`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// `poll`: read from this stream position instead of the last poll's cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// `poll`: wait up to this many milliseconds (≤ 120000) for new output or the exit; after input,
    /// for the program's answer (it waits for input again). `write`, `send_keys`, `submit`, `paste`:
    /// after sending, wait the same way and return the answer too. The result's `settled` says what
    /// ended the wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
    /// `log`: first line, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// `log`: number of lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// `write`: text to send. `submit`: text to type before Enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    /// `write`: close stdin after writing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eof: bool,
    /// `send_keys`: key names (`enter`, `tab`, `C-c`, `^D`, …) or single characters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// `send_keys`: raw bytes as hex (`"1b5b41"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hex: Vec<String>,
    /// `send_keys`: literal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub literal: Option<String>,
    /// `paste`: the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `paste`: wrap in bracketed-paste markers (default: on for terminals, off for pipes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bracketed: Option<bool>,
    /// `kill`: send this signal (`SIGTERM`, `TERM`, `15`) instead of the graceful sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// `resize`: columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u16>,
    /// `resize`: rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u16>,
    /// `close_session`: the session's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// `close_session`: the host of a session on another machine (as `bash`'s `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl ProcessParams {
    /// Parameters for `action` on `job_id`, everything else at its default.
    pub fn new(action: ProcessAction, job_id: impl Into<String>) -> Self {
        Self {
            action,
            job_id: Some(job_id.into()),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_parse_with_aliases() {
        let p: ProcessParams =
            serde_json::from_str(r#"{"action":"send-keys","job_id":"calm-reef","keys":["C-c"]}"#).unwrap();
        assert_eq!(p.action, ProcessAction::SendKeys);
        assert!(serde_json::from_str::<ProcessParams>(r#"{"action":"explode"}"#).is_err());
    }
}
