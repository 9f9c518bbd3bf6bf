//! Verdicts and the context they are made in.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the caller knows that a judgement may depend on.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Names of the other tools available to the agent (redirect-to-tool rules fire only when the
    /// suggested tool is among them).
    pub tool_names: Vec<String>,
    /// The working directory the command will run in.
    pub cwd: Option<PathBuf>,
    /// The persistent session the command runs in, when it does: its functions and aliases are
    /// judged where they are used, its variables where arithmetic reads them.
    pub session: Option<std::sync::Arc<crate::SessionView>>,
    /// The configured workspace: deleting outside it is dangerous wherever the command starts
    /// (`None`: where it starts).
    pub workspace: Option<PathBuf>,
}

/// The judgement of a command, with the rule that made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Verdict {
    /// Run it.
    Allow,
    /// A person must approve it first.
    Ask {
        /// The rule that fired.
        rule: String,
        /// Why.
        reason: String,
    },
    /// Do not run it.
    Deny {
        /// The rule that fired.
        rule: String,
        /// Why.
        reason: String,
        /// A tool the agent should use instead, if any.
        suggested_tool: Option<String>,
    },
}

impl Verdict {
    /// A deny verdict without a suggested tool.
    pub fn deny(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Verdict::Deny {
            rule: rule.into(),
            reason: reason.into(),
            suggested_tool: None,
        }
    }

    /// An ask verdict.
    pub fn ask(rule: impl Into<String>, reason: impl Into<String>) -> Self {
        Verdict::Ask {
            rule: rule.into(),
            reason: reason.into(),
        }
    }

    /// Whether this is a deny.
    pub fn is_deny(&self) -> bool {
        matches!(self, Verdict::Deny { .. })
    }

    /// Strictness rank: allow < ask < deny.
    pub fn severity(&self) -> u8 {
        match self {
            Verdict::Allow => 0,
            Verdict::Ask { .. } => 1,
            Verdict::Deny { .. } => 2,
        }
    }
}
