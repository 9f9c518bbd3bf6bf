//! The environment policy over this engine's own environment: which inherited variables every
//! child loses, and which values are secrets to redact from what the model reads.

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
        let outgoing = with_json_spellings(&redactions);
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

/// `secrets`, then each value whose JSON-escaped spelling differs in that spelling too (a front-end
/// sends values inside JSON strings).
fn with_json_spellings(secrets: &[(String, String)]) -> Vec<(String, String)> {
    let mut spellings = secrets.to_vec();
    for (name, value) in secrets {
        let quoted = serde_json::to_string(value).unwrap_or_default();
        let escaped = quoted.trim_matches('"');
        if escaped != value {
            spellings.push((name.clone(), escaped.to_owned()));
        }
    }
    spellings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_json_spells_otherwise_is_redacted_in_both_spellings() {
        let secrets = vec![
            ("PLAIN".to_owned(), "abc123".to_owned()),
            ("QUOTED".to_owned(), "a\"b\\c\nd".to_owned()),
        ];
        let spellings = with_json_spellings(&secrets);
        assert_eq!(spellings[..2], secrets[..]);
        assert_eq!(
            spellings[2..],
            [("QUOTED".to_owned(), "a\\\"b\\\\c\\nd".to_owned())]
        );
    }
}
