//! A person's decision on a pending approval: what runs, what is persisted, what is refused.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ApprovalDecision, ApprovalState, Lookup, Pending, one_line, rfc3339, rules_for};

/// The rule name of a denied approval.
pub const DENIED_RULE: &str = "approval-denied";
/// The rule name of an answer to an expired approval.
pub const EXPIRED_RULE: &str = "approval-expired";
/// The rule name of an answer to an id that is not pending.
pub const UNKNOWN_RULE: &str = "approval-unknown";
/// The rule name of a refused `allow-always`.
pub const NOT_ALWAYS_RULE: &str = "approval-not-always";
/// The rule name of a destination approval answered `allow-once` (a destination is allowed
/// always or not at all: the run that met it has ended).
pub const DOMAIN_ONCE_RULE: &str = "approval-domain-not-once";
/// The rule name of a denied destination approval.
pub const DOMAIN_DENIED_RULE: &str = "approval-domain-denied";

/// What a decision leads to.
#[derive(Debug)]
pub enum Decided<R> {
    /// Run `request` now: allowed once, or always (its rules are then in force and saved where
    /// possible). `notices` say so and go first in its result.
    Run {
        /// The approved request.
        request: R,
        /// What the decision did.
        notices: Vec<String>,
    },
    /// Nothing runs.
    Refused {
        /// The rule name of the refusal.
        rule: &'static str,
        /// Why, for the model.
        message: String,
        /// The directory the request would have run in.
        cwd: PathBuf,
    },
    /// A destination is allowed always from now on; nothing ran.
    DomainAllowed {
        /// What was allowed, and where it was saved.
        message: String,
        /// The directory of the run that met it.
        cwd: PathBuf,
    },
}

/// A destination the proxy refused, waiting for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NetworkApproval {
    /// `host:port`, what `allow-always` allows.
    pub address: String,
    /// The id to answer with (`approve {id, decision: "allow-always"}`).
    pub id: String,
    /// Its first 8 characters.
    pub short_id: String,
    /// When it expires unanswered (RFC 3339, UTC).
    pub expires_at: String,
}

impl<R: Clone> ApprovalState<R> {
    /// Decide the pending approval `id` (full or short). `allow-once` hands back the request;
    /// `allow-always` first persists the narrowest rules (the exact argv of each segment that
    /// missed; for a destination, its `host:port`); `deny` refuses. An id not pending, or expired,
    /// is refused saying so (in `base_cwd`).
    pub fn decide(&self, id: &str, decision: ApprovalDecision, base_cwd: &Path) -> Decided<R> {
        let pending = match self.broker.take(id) {
            Lookup::Found(p) => *p,
            Lookup::Expired { id, expired_at } => {
                return refused(
                    EXPIRED_RULE,
                    format!(
                        "Approval {id} expired at {} and was denied (fallback \"deny\"): the command did not run. \
                         Run it again to ask anew.",
                        rfc3339(expired_at)
                    ),
                    base_cwd,
                );
            }
            Lookup::Unknown => {
                return refused(
                    UNKNOWN_RULE,
                    format!("No approval `{id}` is pending (unknown, already decided, or dropped)."),
                    base_cwd,
                );
            }
        };
        if let Some(address) = pending.domain.clone() {
            return self.decide_domain(pending, &address, decision);
        }
        match decision {
            ApprovalDecision::Deny => refused(
                DENIED_RULE,
                format!(
                    "Blocked: a person denied approval {}.\nCommand: {}",
                    pending.short_id, pending.command
                ),
                &pending.cwd,
            ),
            ApprovalDecision::AllowOnce => Decided::Run {
                notices: vec![format!(
                    "Approved once by a person (approval {}).",
                    pending.short_id
                )],
                request: pending.request,
            },
            ApprovalDecision::AllowAlways => self.allow_always(pending),
        }
    }

    fn allow_always(&self, pending: Pending<R>) -> Decided<R> {
        let rules = if pending.always_approvable {
            rules_for(&pending.segments).map_err(|e| e.to_string())
        } else {
            Err(format!(
                "`{}` cannot be allowed always (it is dangerous, unjudgeable or not an allowlist miss); \
                 approve it with allow-once instead",
                pending.command
            ))
        };
        let rules = match rules {
            Ok(rules) => rules,
            Err(why) => {
                let (short, cwd) = (pending.short_id.clone(), pending.cwd.clone());
                self.broker.put_back(pending);
                return refused(
                    NOT_ALWAYS_RULE,
                    format!(
                        "{why}. Approval {short} is still pending: reply with approve {short} allow-once|deny"
                    ),
                    &cwd,
                );
            }
        };
        let saved = match &self.file {
            Some(file) => match file.add(&rules, &pending.command) {
                Ok(_) => format!(
                    "Allowed always from now on: {} (in {}).",
                    rules
                        .iter()
                        .map(|r| format!("`{}`", r.join(" ")))
                        .collect::<Vec<_>>()
                        .join(", "),
                    file.path().display()
                ),
                Err(e) => format!("The rule could not be saved ({e}); it applies in this server only."),
            },
            None => "No approvals file (neither XDG_CONFIG_HOME nor HOME is set): the rule applies in this server only."
                .into(),
        };
        self.add_rules(&rules);
        Decided::Run {
            request: pending.request,
            notices: vec![saved],
        }
    }

    fn decide_domain(&self, pending: Pending<R>, address: &str, decision: ApprovalDecision) -> Decided<R> {
        match decision {
            ApprovalDecision::Deny => refused(
                DOMAIN_DENIED_RULE,
                format!(
                    "A person denied network access to {address} (approval {}).",
                    pending.short_id
                ),
                &pending.cwd,
            ),
            ApprovalDecision::AllowOnce => {
                let (short, cwd) = (pending.short_id.clone(), pending.cwd.clone());
                self.broker.put_back(pending);
                refused(
                    DOMAIN_ONCE_RULE,
                    format!(
                        "The run that met {address} has ended: a destination is allowed always or not at all. \
                         Approval {short} is still pending: reply with approve {short} allow-always|deny"
                    ),
                    &cwd,
                )
            }
            ApprovalDecision::AllowAlways => {
                let saved = match &self.file {
                    Some(file) => match file.add_domain(address, &pending.command) {
                        Ok(_) => format!("(in {})", file.path().display()),
                        Err(e) => format!("(not saved: {e}; it applies in this server only)"),
                    },
                    None => "(no approvals file: it applies in this server only)".to_owned(),
                };
                self.add_domain(address);
                Decided::DomainAllowed {
                    message: format!(
                        "Network access to {address} is allowed always from now on {saved}. Nothing ran: run the \
                         command again to reach it."
                    ),
                    cwd: pending.cwd,
                }
            }
        }
    }

    /// With asking on, one pending approval per destination in `unlisted` (each `host:port` the
    /// proxy refused as not allowed during a run of `request`), with a notice each.
    pub fn offer_domains(
        &self,
        unlisted: impl IntoIterator<Item = String>,
        request: &R,
        command: &str,
        cwd: &Path,
    ) -> (Vec<String>, Option<Vec<NetworkApproval>>) {
        if !self.asks() {
            return (Vec::new(), None);
        }
        let mut notices = Vec::new();
        let mut offered = Vec::new();
        for address in unlisted {
            let ticket = self
                .broker
                .register_domain(&address, request.clone(), command, cwd.to_path_buf());
            notices.push(format!(
                "The sandbox's proxy refused {}: it is not in allowed_domains. A person can allow it from \
                 now on: approve {} allow-always|deny (then run the command again).",
                one_line(&address),
                ticket.short_id
            ));
            offered.push(NetworkApproval {
                address,
                id: ticket.id,
                short_id: ticket.short_id,
                expires_at: rfc3339(ticket.expires),
            });
        }
        (notices, (!offered.is_empty()).then_some(offered))
    }
}

fn refused<R>(rule: &'static str, message: String, cwd: &Path) -> Decided<R> {
    Decided::Refused {
        rule,
        message,
        cwd: cwd.to_path_buf(),
    }
}
