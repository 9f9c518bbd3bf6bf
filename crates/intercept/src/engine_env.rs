//! The environment policy over this engine's own environment: which inherited variables every
//! child loses, and which values are secrets to redact from what the model reads.

use std::fmt::Write as _;
use std::sync::Arc;

use crate::{EnvConfig, EnvPolicy};

/// The environment policy with what it means for this engine's own environment.
#[derive(Debug, Default)]
pub struct EngineEnv {
    /// The policy itself (a request's variables are judged by it).
    pub policy: EnvPolicy,
    /// Inherited variables removed from every child (secrets not allowlisted, injection keys).
    pub removals: Vec<String>,
    /// Configured secret names and their values, to be replaced by `[REDACTED:NAME]` in the
    /// output stream (window, artifact, live view, job logs) and in results.
    redactions: Arc<Vec<(String, String)>>,
    /// The same, each value also in its JSON-escaped spelling where that differs.
    outgoing: Vec<(String, String)>,
}

impl EngineEnv {
    /// The policy of `config` over the engine's environment as it is now.
    pub fn new(config: &EnvConfig) -> Self {
        // Variables that are not UTF-8 cannot be named in a configuration; they are kept.
        let vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let policy = EnvPolicy::new(config);
        let redactions = policy.redactions(vars.iter().map(|(k, v)| (k, v)));
        let mut outgoing = redactions.clone();
        for (name, value) in &redactions {
            let escaped = json_escaped(value);
            if escaped != *value {
                outgoing.push((name.clone(), escaped));
            }
        }
        Self {
            removals: policy.inherited_removals(vars.iter().map(|(k, v)| (k, v))),
            redactions: Arc::new(redactions),
            outgoing,
            policy,
        }
    }

    /// The secret values to redact from text sent on as JSON or as it is (what a front-end sends):
    /// each value as it is and JSON-escaped.
    pub fn outgoing_redactions(&self) -> &[(String, String)] {
        &self.outgoing
    }

    /// The secret values to redact, each with its variable's name.
    pub fn redactions(&self) -> Arc<Vec<(String, String)>> {
        Arc::clone(&self.redactions)
    }
}

/// `value` as it is spelt inside a JSON string.
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_as_json_spells_them() {
        for value in [
            "plain",
            "quo\"te",
            "back\\slash",
            "new\nline\ttab\r",
            "\u{1}\u{8}\u{c}\u{1f}",
            "ünï/cødé\u{7f}",
        ] {
            let json = serde_json::to_string(value).unwrap();
            assert_eq!(json_escaped(value), json.trim_matches('"'), "{value:?}");
        }
    }
}
