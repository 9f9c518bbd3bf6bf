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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::names::{DomainRules, Listed, normalize};
use super::request::{self, Protocol, Request};
use crate::denials;

/// Connections one sandbox may have open through the proxy at once; more wait in the backlog.
const MAX_CONNECTIONS: usize = 256;
/// How long a client has to say where it goes.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a destination may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The relay buffer of each direction.
const BUFFER: usize = 32 * 1024;

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
                handle(client, &rules, domain).await;
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

async fn handle(mut client: TcpStream, rules: &DomainRules, domain: u64) {
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
    match decide(&request, rules).await {
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
            relay(client, upstream, &request, &flow).await;
        }
    }
}

/// Match, resolve, check, connect — all by the normalised name, so the name looked up is the
/// name that was judged.
async fn decide(request: &Request, rules: &DomainRules) -> Outcome {
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
        None => match tokio::net::lookup_host((name.as_str(), request.port)).await {
            Ok(found) => found.collect(),
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

/// Answer the client, then move bytes both ways until both sides are done.
async fn relay(mut client: TcpStream, mut upstream: TcpStream, request: &Request, flow: &denials::Flow) {
    let _ = upstream.set_nodelay(true);
    let greeting: &[u8] = match request.protocol {
        Protocol::Connect => b"HTTP/1.1 200 Connection established\r\n\r\n",
        Protocol::Socks => &request::socks_reply(0),
        Protocol::Forward => b"",
    };
    if client.write_all(greeting).await.is_err() || upstream.write_all(&request.first_bytes).await.is_err() {
        return;
    }
    flow.bytes_out
        .fetch_add(request.first_bytes.len() as u64, Ordering::Relaxed);
    let (mut client_read, mut client_write) = client.split();
    let (mut upstream_read, mut upstream_write) = upstream.split();
    let forwarded = request.protocol == Protocol::Forward;
    let _ = tokio::join!(
        pump(&mut client_read, &mut upstream_write, &flow.bytes_out, false),
        pump(&mut upstream_read, &mut client_write, &flow.bytes_in, forwarded),
    );
}

/// Copy until end of file, then pass the end on. With `response_head`, the head of the HTTP
/// response that comes first is rewritten to close the connection (see
/// [`request::closing_response_head`]).
async fn pump(
    from: &mut tokio::net::tcp::ReadHalf<'_>,
    to: &mut tokio::net::tcp::WriteHalf<'_>,
    counter: &AtomicU64,
    response_head: bool,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    if response_head {
        let mut head = Vec::new();
        loop {
            let n = from.read(&mut buf).await?;
            if n == 0 {
                to.write_all(&head).await?;
                counter.fetch_add(head.len() as u64, Ordering::Relaxed);
                return to.shutdown().await;
            }
            head.extend_from_slice(&buf[..n]);
            if let Some(rewritten) = request::closing_response_head(&head) {
                to.write_all(&rewritten).await?;
                counter.fetch_add(head.len() as u64, Ordering::Relaxed);
                break;
            }
            if head.len() > 64 * 1024 {
                // Not a response head this proxy can read: passed on as it is.
                to.write_all(&head).await?;
                counter.fetch_add(head.len() as u64, Ordering::Relaxed);
                break;
            }
        }
    }
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}
