//! What a tool keeps about approvals: the broker of pending ones, the approvals file, and the
//! policy with the persisted rules added to its allow list.

use std::sync::{Arc, PoisonError, RwLock};

use shellgate_intercept::{Policy, PolicyConfig};

use super::{ApprovalBroker, ApprovalsConfig, ApprovalsFile, argv_pattern};

/// What an engine keeps about approvals: the broker of pending ones, the approvals file, and the
/// policy with the persisted rules added to its allow list. Cheap to clone, shared.
#[derive(Debug)]
pub struct ApprovalState<R> {
    /// The pending approvals.
    pub broker: ApprovalBroker<R>,
    /// The approvals file, if there is one.
    pub file: Option<ApprovalsFile>,
    /// Why the approvals file was not used (corrupt, unreadable): shown with every approval.
    pub load_error: Option<String>,
    /// The configured policy, and the one with the persisted rules (`None` when there are none).
    base: Option<Policy>,
    live: Arc<RwLock<Live>>,
    /// Destinations (`host:port`) a person allowed always for proxied sandboxes.
    domains: Arc<RwLock<Vec<String>>>,
}

#[derive(Debug, Default)]
struct Live {
    rules: Vec<Vec<String>>,
    policy: Option<Policy>,
}

impl<R> Clone for ApprovalState<R> {
    fn clone(&self) -> Self {
        Self {
            broker: self.broker.clone(),
            file: self.file.clone(),
            load_error: self.load_error.clone(),
            base: self.base.clone(),
            live: Arc::clone(&self.live),
            domains: Arc::clone(&self.domains),
        }
    }
}

impl<R> ApprovalState<R> {
    /// The state for `config`, over the configured policy `base`, with the approvals file's rules
    /// and destinations loaded (a file that cannot be read is reported in `load_error`).
    pub fn new(config: &ApprovalsConfig, base: Option<&Policy>) -> Self {
        let file = config.file_path().map(ApprovalsFile::new);
        let (rules, load_error) = match file.as_ref().map(ApprovalsFile::load) {
            Some(Ok(rules)) => (rules.into_iter().map(|r| r.argv).collect(), None),
            Some(Err(e)) => (Vec::new(), Some(e.to_string())),
            None => (Vec::new(), None),
        };
        if let Some(e) = &load_error {
            tracing::warn!("approvals file not used: {e}");
        }
        let domains = match (&load_error, file.as_ref().map(ApprovalsFile::load_domains)) {
            (None, Some(Ok(domains))) => domains.into_iter().map(|d| d.address).collect(),
            _ => Vec::new(),
        };
        let state = Self {
            broker: ApprovalBroker::new(config.expiry, config.max_pending),
            file,
            load_error,
            base: base.cloned(),
            live: Arc::default(),
            domains: Arc::new(RwLock::new(domains)),
        };
        state.add_rules(&rules);
        state
    }

    /// The policy to judge with: the configured one with every persisted rule allowed.
    pub fn policy(&self) -> Option<Policy> {
        let live = self.live.read().unwrap_or_else(PoisonError::into_inner);
        live.policy.clone().or_else(|| self.base.clone())
    }

    /// The destinations allowed always, for the proxy's `allowed_domains`.
    pub fn domains(&self) -> Vec<String> {
        self.domains
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Allow `address` (`host:port`) from now on (in this tool).
    pub fn add_domain(&self, address: &str) {
        let mut domains = self.domains.write().unwrap_or_else(PoisonError::into_inner);
        if !domains.iter().any(|d| d == address) {
            domains.push(address.to_owned());
        }
    }

    /// Whether a person is asked at all (the policy's `ask` is not `off`).
    pub fn asks(&self) -> bool {
        self.base
            .as_ref()
            .is_some_and(|p| p.policy_config().ask != shellgate_intercept::AskMode::Off)
    }

    /// Allow `argvs` exactly from now on (in this tool).
    pub fn add_rules(&self, argvs: &[Vec<String>]) {
        let Some(base) = &self.base else { return };
        let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
        let before = live.rules.len();
        for argv in argvs {
            if !live.rules.contains(argv) {
                live.rules.push(argv.clone());
            }
        }
        if live.rules.len() == before && live.policy.is_some() {
            return;
        }
        if live.rules.is_empty() {
            return;
        }
        let config = base.policy_config();
        let mut allow = config.allow.clone();
        // A rule that does not parse (a hand edit) is skipped, not fatal: the others still apply.
        allow.extend(
            live.rules
                .iter()
                .map(|a| argv_pattern(a))
                .filter(|p| Policy::builder().allow(p.clone()).build().is_ok()),
        );
        let built = Policy::builder()
            .policy_config(PolicyConfig { allow, ..config })
            .intercept_config(base.intercept_config().clone())
            .build();
        match built {
            Ok(p) => live.policy = Some(p),
            Err(e) => tracing::warn!("persisted approvals not applied: {e}"),
        }
    }
}
