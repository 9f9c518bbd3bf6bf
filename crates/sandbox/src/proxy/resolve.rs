//! Looking a name up, once per request: the system's resolver in the engine; tests put one in
//! that answers differently each time, to show the address connected to is the address checked.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

/// The addresses of a name.
pub type Lookup<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;

/// Resolves names for the proxy.
pub trait Resolver: Send + Sync {
    /// The addresses of `name` (ASCII, normalised).
    fn lookup<'a>(&'a self, name: &'a str) -> Lookup<'a>;
}

/// The system's resolver (`getaddrinfo`, on a blocking thread).
#[derive(Debug, Clone, Copy, Default)]
pub struct System;

impl Resolver for System {
    fn lookup<'a>(&'a self, name: &'a str) -> Lookup<'a> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((name, 0)).await?;
            Ok(found.map(|address| address.ip()).collect())
        })
    }
}
