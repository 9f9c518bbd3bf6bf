//! What a person is asked to approve: the description of a pending call, given with its result.

use serde::{Deserialize, Serialize};
use shellgate_intercept::{Judgement, SegmentVerdict};

use crate::{LOCAL_HOST, Ticket, prompt_text, rfc3339};

/// What a person is asked to approve (with `status: "approval_pending"`); nothing has run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    /// The command as the caller sent it.
    pub command: String,
    /// The directory it would run in.
    pub cwd: String,
    /// The rule or check that asked.
    pub rule: String,
    /// Why it needs approval.
    pub reason: String,
    /// The segments no allow rule covers (what an "allow always" approval would turn into rules),
    /// each with its static `argv`.
    pub segments_missing: Vec<SegmentVerdict>,
    /// Whether the command was asked about only because of allowlist misses, so that an "allow
    /// always" approval may persist rules for it (never for dangerous or unjudgeable commands).
    pub always_approvable: bool,
    /// The id to answer with (`approve {id, decision}`).
    #[serde(default)]
    pub id: String,
    /// Its first 8 characters, also accepted wherever the id is.
    #[serde(default)]
    pub short_id: String,
    /// The host the command would run on (`local`).
    #[serde(default)]
    pub host: String,
    /// When the approval expires unanswered (RFC 3339, UTC); it is then denied.
    #[serde(default)]
    pub expires_at: String,
}

impl Approval {
    /// The approval of `command` in `cwd` asked by `rule` for `reason`, with the segments
    /// `judgement` found no allow rule for; not registered yet (no id).
    pub fn asked(command: &str, cwd: &str, rule: &str, reason: &str, judgement: Option<&Judgement>) -> Self {
        Self {
            command: command.to_owned(),
            cwd: cwd.to_owned(),
            rule: rule.to_owned(),
            reason: reason.to_owned(),
            segments_missing: judgement
                .map(|j| j.missing().cloned().collect())
                .unwrap_or_default(),
            always_approvable: judgement.is_some_and(Judgement::always_approvable),
            id: String::new(),
            short_id: String::new(),
            host: String::new(),
            expires_at: String::new(),
        }
    }

    /// Give it `ticket`'s id and expiry, on this machine; returns the prompt the model reads.
    pub fn ticketed(&mut self, ticket: &Ticket) -> String {
        self.id.clone_from(&ticket.id);
        self.short_id.clone_from(&ticket.short_id);
        LOCAL_HOST.clone_into(&mut self.host);
        self.expires_at = rfc3339(ticket.expires);
        prompt_text(
            &self.short_id,
            &self.reason,
            &self.host,
            &self.cwd,
            &self.command,
            &self.expires_at,
        )
    }
}
