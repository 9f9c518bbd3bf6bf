//! Command judgement for shellgate.
//!
//! An [`Interceptor`] looks at a [`Normalized`] command and returns a [`Verdict`]: allow it, ask a
//! person, or deny it. Interceptors compose into a [`Chain`]: the first deny wins, otherwise the
//! strictest verdict.
//!
//! ```
//! use shellgate_intercept::{Chain, Context, Interceptor, Verdict, from_fn};
//! use shellgate_normalize::{Normalizer, StandardNormalizer};
//!
//! let no_rm = from_fn(|cmd, _ctx| {
//!     if cmd.script.starts_with("rm ") { Verdict::deny("no-rm", "rm is not allowed") } else { Verdict::Allow }
//! });
//! let chain = Chain::new().with(no_rm);
//! let cmd = StandardNormalizer::default().normalize("rm -rf build");
//! assert!(chain.inspect(&cmd, &Context::default()).is_deny());
//! ```
#![forbid(unsafe_code)]

mod chain;
mod verdict;

pub use chain::{AllowAll, Chain, FnInterceptor, from_fn};
pub use shellgate_normalize::Normalized;
pub use verdict::{Context, Verdict};

/// Judges a normalized command.
pub trait Interceptor: Send + Sync {
    /// The verdict for `cmd` in `ctx`.
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict;
}

impl<I: Interceptor + ?Sized> Interceptor for &I {
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        (**self).inspect(cmd, ctx)
    }
}

impl<I: Interceptor + ?Sized> Interceptor for Box<I> {
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        (**self).inspect(cmd, ctx)
    }
}

impl<I: Interceptor + ?Sized> Interceptor for std::sync::Arc<I> {
    fn inspect(&self, cmd: &Normalized, ctx: &Context) -> Verdict {
        (**self).inspect(cmd, ctx)
    }
}
