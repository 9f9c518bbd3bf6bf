//! Elevated runs (SPEC X-4): outside the sandbox, only when `[policy] elevated` allows it.

use crate::{Elevated, Policy};

/// What the configuration makes of a request's `elevated`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elevation {
    /// Not asked for.
    No,
    /// Asked for and refused: the request runs as any other; the notice says why.
    Refused(String),
    /// Granted; the notice says so.
    Granted {
        /// Whether the run also skips approvals (`elevated = "full"`).
        bypass_approvals: bool,
        /// What the result says about it.
        notice: String,
    },
}

/// The elevation of a request asking `requested` under `policy`.
pub fn elevation(policy: Option<&Policy>, requested: bool) -> Elevation {
    if !requested {
        return Elevation::No;
    }
    match policy.map_or(Elevated::Off, Policy::elevated) {
        Elevated::Off => Elevation::Refused(
            "elevated was refused: the configuration does not allow it ([policy] elevated = \"off\"); \
             the command was handled as any other"
                .into(),
        ),
        level @ (Elevated::On | Elevated::Full) => Elevation::Granted {
            bypass_approvals: level == Elevated::Full,
            notice: format!(
                "Elevated: ran outside the sandbox ([policy] elevated = \"{}\"{}).",
                level.as_str(),
                if level == Elevated::Full {
                    ", without approval"
                } else {
                    ""
                }
            ),
        },
    }
}
