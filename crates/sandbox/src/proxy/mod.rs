//! The network by name: the engine's proxy, the only way out of a sandbox whose policy has
//! [`ProxyPolicy`](crate::ProxyPolicy) rules.
//!
//! The sandbox's network namespace holds only loopback. The helper binds a listener on
//! `127.0.0.1:<port>` there and hands it to the engine with its registration (the denial
//! supervisor's connection); the engine accepts on it and judges each destination by name and by
//! the address the name resolves to. Refusals are recorded as the sandbox's denials, allowed
//! destinations as its network summary.

mod addresses;
mod names;
mod relay;
mod request;
mod resolve;
mod serve;

pub(crate) use names::DomainRules;
pub use names::check_domain_pattern;
pub(crate) use serve::{ProxyHandle, serve};
