//! The proxy's accept loop and connections, on a small runtime of its own in the engine.
//!
//! Each sandbox's listener was bound inside that sandbox's network namespace and handed over with
//! its registration, so the engine accepts its connections directly and knows whose they are.
//! For each: read what the client asks for, match the name against the lists, resolve it once
//! (static names first), refuse local addresses unless allowed, connect to exactly the addresses
//! that were checked (no second lookup that a rebinding DNS server could answer differently), then
//! relay bytes both ways, counting them. Nothing is decrypted.

use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::names::{DomainRules, Listed, normalize};
use super::request::{self, Protocol, Request};
use super::resolve::{Resolver, System};
use crate::denials;

/// Connections one sandbox may have open through the proxy at once; more wait in the backlog.
const MAX_CONNECTIONS: usize = 256;
/// How long a client has to say where it goes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Serving one sandbox's listener; dropping it stops accepting (open connections finish).
#[derive(Debug)]
pub struct ProxyHandle(tokio::task::AbortHandle);

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn runtime() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("shellgate-proxy")
                .enable_all()
                .build()
                .ok()
        })
        .as_ref()
}

/// Accept the connections of `listener` (bound in the sandbox of `domain`) and proxy them by
/// `rules`. `None` when the proxy's runtime cannot start.
pub fn serve(listener: OwnedFd, rules: DomainRules, domain: u64) -> Option<ProxyHandle> {
    let runtime = runtime()?;
    let listener = std::net::TcpListener::from(listener);
    listener.set_nonblocking(true).ok()?;
    let rules = Arc::new(rules);
    let task = runtime.spawn(async move {
        let Ok(listener) = TcpListener::from_std(listener) else {
            return;
        };
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        loop {
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let Ok((client, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let rules = Arc::clone(&rules);
            tokio::spawn(async move {
                handle(client, &rules, domain, &System).await;
                drop(slot);
            });
        }
    });
    Some(ProxyHandle(task.abort_handle()))
}

/// What became of one request.
enum Outcome {
    Refused {
        blocker: &'static str,
        why: &'static str,
    },
    Unreachable(String),
    Connected(TcpStream),
}

async fn handle(mut client: TcpStream, rules: &DomainRules, domain: u64, resolver: &dyn Resolver) {
    let _ = client.set_nodelay(true);
    let request = match tokio::time::timeout(HEAD_TIMEOUT, request::read(&mut client)).await {
        Ok(Ok(request)) => request,
        Ok(Err(reply)) => {
            let _ = client.write_all(&reply).await;
            return;
        }
        Err(_) => return,
    };
    let shown = normalize(&request.host).unwrap_or_else(|| printable(&request.host));
    let address = if shown.contains(':') {
        format!("[{shown}]:{}", request.port)
    } else {
        format!("{shown}:{}", request.port)
    };
    match decide(&request, rules, resolver).await {
        Outcome::Refused { blocker, why } => {
            denials::supervised_denial(domain, blocker, None, Some(address.clone()));
            let reply = match request.protocol {
                Protocol::Socks => request::socks_reply(2),
                _ => request::reply(403, "Forbidden", &format!("{address}: {why}"), Some(why)),
            };
            let _ = client.write_all(&reply).await;
        }
        Outcome::Unreachable(error) => {
            let reply = match request.protocol {
                Protocol::Socks => request::socks_reply(4),
                _ => request::reply(502, "Bad Gateway", &format!("{address}: {error}"), None),
            };
            let _ = client.write_all(&reply).await;
        }
        Outcome::Connected(upstream) => {
            let flow = denials::proxied_connection(domain, &shown, request.port);
            super::relay::relay(client, upstream, &request, &flow).await;
        }
    }
}

/// Match, resolve, check, connect — all by the normalised name, so the name looked up is the
/// name that was judged.
async fn decide(request: &Request, rules: &DomainRules, resolver: &dyn Resolver) -> Outcome {
    let Some(name) = normalize(&request.host) else {
        return Outcome::Refused {
            blocker: denials::PROXY_NOT_ALLOWED,
            why: "domain not allowed",
        };
    };
    match rules.judge(&name, request.port) {
        Listed::Denied => {
            return Outcome::Refused {
                blocker: denials::PROXY_DENIED_DOMAIN,
                why: "denied domain",
            };
        }
        Listed::NotAllowed => {
            return Outcome::Refused {
                blocker: denials::PROXY_NOT_ALLOWED,
                why: "domain not allowed",
            };
        }
        Listed::Allowed => {}
    }
    let addresses: Vec<SocketAddr> = match rules.static_address(&name) {
        Some(ip) => vec![SocketAddr::new(ip, request.port)],
        None => match resolver.lookup(&name).await {
            Ok(found) => found
                .into_iter()
                .map(|ip| SocketAddr::new(ip, request.port))
                .collect(),
            Err(e) => return Outcome::Unreachable(format!("cannot resolve: {e}")),
        },
    };
    if addresses.is_empty() {
        return Outcome::Unreachable("the name has no address".to_owned());
    }
    // Every address must pass: a name answering one public and one private address is refused.
    if !rules.allow_local_addresses && addresses.iter().any(|a| super::addresses::is_local(a.ip())) {
        return Outcome::Refused {
            blocker: denials::PROXY_LOCAL_ADDRESS,
            why: "resolves to a local address",
        };
    }
    let mut last_error = String::from("no address answered");
    for address in addresses {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Outcome::Connected(stream),
            Ok(Err(e)) => last_error = format!("cannot connect to {address}: {e}"),
            Err(_) => last_error = format!("connecting to {address} timed out"),
        }
    }
    Outcome::Unreachable(last_error)
}

/// A host the client wrote that is not a name, made safe to show.
fn printable(host: &str) -> String {
    host.chars()
        .take(255)
        .map(|c| if c.is_ascii_graphic() { c } else { '?' })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::super::resolve::Lookup;
    use super::*;
    use crate::ProxyPolicy;

    /// A resolver answering each call with the next of its answers, counting the calls: a
    /// rebinding DNS server.
    struct Rebinding {
        answers: Mutex<Vec<IpAddr>>,
        calls: AtomicU64,
    }

    impl Rebinding {
        fn new(first: &str, then: &str) -> Self {
            Self {
                answers: Mutex::new(vec![then.parse().unwrap(), first.parse().unwrap()]),
                calls: AtomicU64::new(0),
            }
        }
    }

    impl Resolver for Rebinding {
        fn lookup<'a>(&'a self, _name: &'a str) -> Lookup<'a> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let next = self.answers.lock().unwrap().pop();
            Box::pin(async move { Ok(next.into_iter().collect()) })
        }
    }

    fn request(port: u16) -> Request {
        Request {
            protocol: Protocol::Connect,
            host: "flip.test".to_owned(),
            port,
            first_bytes: Vec::new(),
        }
    }

    fn rules(allow_local: bool) -> DomainRules {
        let mut policy = ProxyPolicy::allowing(["flip.test"]);
        policy.allow_local_addresses = allow_local;
        DomainRules::new(&policy).unwrap()
    }

    /// Listeners on 127.0.0.1 and 127.0.0.2 with one port.
    fn two_listeners() -> (std::net::TcpListener, std::net::TcpListener) {
        loop {
            let first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = first.local_addr().unwrap().port();
            if let Ok(second) = std::net::TcpListener::bind(("127.0.0.2", port)) {
                return (first, second);
            }
        }
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn the_connection_goes_to_the_one_answer_that_was_checked() {
        let (checked, rebound) = two_listeners();
        let port = checked.local_addr().unwrap().port();
        let resolver = Rebinding::new("127.0.0.1", "127.0.0.2");
        let outcome = run(decide(&request(port), &rules(true), &resolver));
        let Outcome::Connected(stream) = outcome else {
            panic!("not connected");
        };
        assert_eq!(stream.peer_addr().unwrap(), checked.local_addr().unwrap());
        assert_eq!(resolver.calls.load(Ordering::SeqCst), 1, "looked up again");
        drop(rebound);
    }

    #[test]
    fn a_refused_answer_is_not_asked_again() {
        // The first answer is local: refused, and no second answer (public) is sought.
        let resolver = Rebinding::new("127.0.0.1", "192.0.2.1");
        let outcome = run(decide(&request(80), &rules(false), &resolver));
        assert!(
            matches!(
                outcome,
                Outcome::Refused {
                    why: "resolves to a local address",
                    ..
                }
            ),
            "not refused"
        );
        assert_eq!(resolver.calls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn static_names_are_not_looked_up() {
        let (checked, _other) = two_listeners();
        let port = checked.local_addr().unwrap().port();
        let mut policy = ProxyPolicy::allowing(["flip.test"]);
        policy.allow_local_addresses = true;
        policy
            .hosts
            .insert("flip.test".into(), "127.0.0.1".parse().unwrap());
        let rules = DomainRules::new(&policy).unwrap();
        let resolver = Rebinding::new("127.0.0.2", "127.0.0.2");
        let outcome = run(decide(&request(port), &rules, &resolver));
        assert!(matches!(outcome, Outcome::Connected(_)), "not connected");
        assert_eq!(resolver.calls.load(Ordering::SeqCst), 0);
    }
}
