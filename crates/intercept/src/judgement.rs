//! The detailed result of judging a command: the verdict, and why, segment by segment.

use serde::{Deserialize, Serialize};

use crate::Verdict;

/// Allow, ask or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run it.
    Allow,
    /// A person must approve it.
    Ask,
    /// Do not run it.
    Deny,
}

impl Decision {
    /// The decision of a verdict.
    pub fn of(verdict: &Verdict) -> Self {
        match verdict {
            Verdict::Allow => Decision::Allow,
            Verdict::Ask { .. } => Decision::Ask,
            Verdict::Deny { .. } => Decision::Deny,
        }
    }

    /// The exit status `shellgate check` uses: 0 allow, 1 ask, 2 deny.
    pub fn exit_code(self) -> i32 {
        match self {
            Decision::Allow => 0,
            Decision::Ask => 1,
            Decision::Deny => 2,
        }
    }
}

/// What decided a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Basis {
    /// An allow rule matched.
    AllowRule,
    /// The `@safe` profile accepted it.
    SafeProfile,
    /// Nothing a rule must allow runs (an assignment, `cd`, a test).
    Inert,
    /// `security = "full"` allows it.
    Full,
    /// No rule allows it; approving it "always" may persist [`SegmentVerdict::argv`] as a rule.
    Miss,
    /// It cannot be judged without running it (dynamic command, opaque syntax, file-writing
    /// redirect, …); no rule can allow it.
    Unjudgeable,
    /// A deny rule matched.
    DenyRule,
    /// A dangerous command (SPEC I-4): never turned into an always-rule.
    Dangerous,
    /// A command administering the engine (SPEC I-5).
    Control,
    /// Script preflight found shell syntax in a script (SPEC I-6).
    Preflight,
    /// A redirect-to-tool rule (SPEC I-1).
    Redirect,
    /// `security = "deny"`.
    SecurityDeny,
}

/// The judgement of one segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentVerdict {
    /// The segment's source text.
    pub command: String,
    /// Its decision.
    pub decision: Decision,
    /// The rule that decided it (a pattern as written, `@safe`, or a check name).
    pub rule: Option<String>,
    /// Why.
    pub reason: Option<String>,
    /// Whether it is an allowlist miss (no rule allows it).
    pub missing: bool,
    /// What decided it.
    pub basis: Basis,
    /// The static argv prefix of the command that runs (wrappers looked through), up to the
    /// first word only known at run time: the narrowest rule that would allow it.
    pub argv: Option<Vec<String>>,
    /// Whether `argv` is the whole command line (every word static, nothing appended at run
    /// time), so that it is an exact rule.
    pub argv_complete: bool,
}

/// The judgement of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// The verdict.
    pub verdict: Verdict,
    /// The rule that decided (for allow: the rules that allowed, when one rule decided all).
    pub rule: Option<String>,
    /// Why.
    pub reason: Option<String>,
    /// Each segment, in source order.
    pub segments: Vec<SegmentVerdict>,
}

impl Judgement {
    /// The decision.
    pub fn decision(&self) -> Decision {
        Decision::of(&self.verdict)
    }

    /// The segments no rule allows: the ones an "allow always" approval would turn into rules.
    pub fn missing(&self) -> impl Iterator<Item = &SegmentVerdict> {
        self.segments.iter().filter(|s| s.missing)
    }

    /// Whether an "allow always" approval may persist rules for this command: it was asked only
    /// because of allowlist misses (nothing dangerous, unjudgeable or denied).
    pub fn always_approvable(&self) -> bool {
        self.decision() == Decision::Ask
            && self.segments.iter().all(|s| {
                matches!(
                    s.basis,
                    Basis::Miss | Basis::AllowRule | Basis::SafeProfile | Basis::Inert | Basis::Full
                )
            })
            && self.segments.iter().any(|s| s.missing && s.argv.is_some())
    }
}

#[derive(Serialize)]
struct JudgementView<'a> {
    decision: Decision,
    rule: &'a Option<String>,
    reason: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suggested_tool: Option<&'a str>,
    segments: &'a [SegmentVerdict],
}

impl Serialize for Judgement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let suggested_tool = match &self.verdict {
            Verdict::Deny { suggested_tool, .. } => suggested_tool.as_deref(),
            _ => None,
        };
        JudgementView {
            decision: self.decision(),
            rule: &self.rule,
            reason: &self.reason,
            suggested_tool,
            segments: &self.segments,
        }
        .serialize(s)
    }
}
