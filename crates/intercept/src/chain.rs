//! Composition of interceptors.

use crate::{Context, Interceptor, Normalized, Verdict};

/// Allows everything: the default interceptor.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Interceptor for AllowAll {
    fn inspect(&self, _cmd: &Normalized, _ctx: &Context) -> Verdict {
        Verdict::Allow
    }
}

/// Runs interceptors in order: the first deny wins at once, otherwise the strictest verdict (SPEC I-8).
#[derive(Default)]
pub struct Chain {
    links: Vec<Box<dyn Interceptor>>,
}

impl Chain {
    /// An empty chain (allows everything).
    pub fn new() -> Self {
        Self::default()
    }

    /// Append an interceptor.
    #[must_use]
    pub fn with(mut self, interceptor: impl Interceptor + 'static) -> Self {
        self.links.push(Box::new(interceptor));
        self
    }

    /// Append an interceptor in place.
    pub fn push(&mut self, interceptor: impl Interceptor + 'static) {
        self.links.push(Box::new(interceptor));
    }

    /// Number of interceptors.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether the chain is empty.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").field("links", &self.links.len()).finish()
    }
}

impl Interceptor for Chain {
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        let mut strictest = Verdict::Allow;
        for link in &self.links {
            let verdict = link.inspect(cmd, ctx);
            if verdict.is_deny() {
                return verdict;
            }
            if verdict.severity() > strictest.severity() {
                strictest = verdict;
            }
        }
        strictest
    }
}

/// An interceptor made from a closure.
pub struct FnInterceptor<F>(F);

/// Turn a closure into an interceptor.
pub fn from_fn<F>(f: F) -> FnInterceptor<F>
where
    F: Fn(&Normalized, &Context) -> Verdict + Send + Sync,
{
    FnInterceptor(f)
}

impl<F> Interceptor for FnInterceptor<F>
where
    F: Fn(&Normalized, &Context) -> Verdict + Send + Sync,
{
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        (self.0)(cmd, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> Normalized {
        Normalized::unchanged(s)
    }

    #[test]
    fn empty_chain_allows() {
        assert_eq!(
            Chain::new().inspect(&cmd("ls"), &Context::default()),
            Verdict::Allow
        );
    }

    #[test]
    fn strictest_wins_and_first_deny_short_circuits() {
        let chain = Chain::new()
            .with(from_fn(|_, _| Verdict::ask("a", "ask")))
            .with(from_fn(|_, _| Verdict::deny("d1", "first")))
            .with(from_fn(|_, _| Verdict::deny("d2", "second")));
        match chain.inspect(&cmd("x"), &Context::default()) {
            Verdict::Deny { rule, .. } => assert_eq!(rule, "d1"),
            other => panic!("expected deny, got {other:?}"),
        }
        let ask_only = Chain::new()
            .with(AllowAll)
            .with(from_fn(|_, _| Verdict::ask("a", "why")));
        assert_eq!(ask_only.inspect(&cmd("x"), &Context::default()).severity(), 1);
    }
}
