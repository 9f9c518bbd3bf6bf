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
}

impl EngineEnv {
    /// The policy of `config` over the engine's environment as it is now.
    pub fn new(config: &EnvConfig) -> Self {
        // Variables that are not UTF-8 cannot be named in a configuration; they are kept.
        let vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let policy = EnvPolicy::new(config);
        Self {
            removals: policy.inherited_removals(vars.iter().map(|(k, v)| (k, v))),
            redactions: Arc::new(policy.redactions(vars.iter().map(|(k, v)| (k, v)))),
            policy,
        }
    }

    /// The secret values to redact, each with its variable's name.
    pub fn redactions(&self) -> Arc<Vec<(String, String)>> {
        Arc::clone(&self.redactions)
    }
}
