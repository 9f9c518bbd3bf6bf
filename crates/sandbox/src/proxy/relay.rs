//! Moving a proxied connection's bytes both ways, counting them.
//!
//! Each direction copies through a small buffer: most connections (an index page, a redirect, an
//! API call) end there. A read that fills the buffer marks bulk traffic (a download, an upload):
//! that direction's buffer then grows, so a large transfer takes fewer reads, writes and wake-ups.
//! Grown buffers come from a budget shared by every connection of the engine, so memory stays
//! bounded however many connections are open; past it a direction goes on with its small buffer.
//!
//! (Moving the bytes with `splice(2)` through a pipe, which spares the copy into the engine, was
//! measured here too: it took less of the engine's CPU but more time per transfer — the pipe is
//! filled and drained in turn, and the cost of a proxied transfer lies in the second loopback TCP
//! hop rather than in the copy.)

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::net::tcp::{ReadHalf, WriteHalf};

use super::request::{self, Protocol, Request};
use crate::denials;

/// The copy buffer of each direction, until it shows bulk traffic.
const BUFFER: usize = 32 * 1024;
/// The buffer of a direction with bulk traffic.
const BULK_BUFFER: usize = 512 * 1024;
/// Directions holding a bulk buffer at once, engine-wide (16 MiB in all).
const BULK_BUFFERS: usize = 32;
/// The largest response head a forwarded request's response may have to be rewritten.
const MAX_RESPONSE_HEAD: usize = 64 * 1024;

/// Bulk buffers in use, engine-wide.
static BULK_IN_USE: AtomicUsize = AtomicUsize::new(0);

/// A bulk buffer, while the budget has one; it goes back to the budget when dropped.
struct BulkBuffer(Vec<u8>);

impl BulkBuffer {
    fn take() -> Option<Self> {
        BULK_IN_USE
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                (used < BULK_BUFFERS).then_some(used + 1)
            })
            .ok()
            .map(|_| Self(vec![0u8; BULK_BUFFER]))
    }
}

impl Drop for BulkBuffer {
    fn drop(&mut self) {
        BULK_IN_USE.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answer the client, then move bytes both ways until both sides are done.
pub async fn relay(mut client: TcpStream, mut upstream: TcpStream, request: &Request, flow: &denials::Flow) {
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

/// Move bytes until end of stream, then pass the end on. With `response_head`, the head of the
/// HTTP response that comes first is rewritten to close the connection (see
/// [`request::closing_response_head`]).
async fn pump(
    from: &mut ReadHalf<'_>,
    to: &mut WriteHalf<'_>,
    counter: &AtomicU64,
    response_head: bool,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; BUFFER];
    if response_head && !pass_response_head(from, to, counter, &mut buf).await? {
        return to.shutdown().await;
    }
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        counter.fetch_add(n as u64, Ordering::Relaxed);
        if n == buf.len() {
            break;
        }
    }
    // Bulk traffic: a larger buffer from here on, where the budget has one.
    match BulkBuffer::take() {
        Some(mut bulk) => {
            drop(buf);
            copy(from, to, counter, &mut bulk.0).await
        }
        None => copy(from, to, counter, &mut buf).await,
    }
}

/// Copy until end of stream, then pass the end on.
async fn copy(
    from: &mut ReadHalf<'_>,
    to: &mut WriteHalf<'_>,
    counter: &AtomicU64,
    buf: &mut [u8],
) -> std::io::Result<()> {
    loop {
        let n = from.read(buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Pass a forwarded request's response head on, rewritten to close the connection (or as it
/// is when it cannot be read as one). `false` when the stream ended first.
async fn pass_response_head(
    from: &mut ReadHalf<'_>,
    to: &mut WriteHalf<'_>,
    counter: &AtomicU64,
    buf: &mut [u8],
) -> std::io::Result<bool> {
    let mut head = Vec::new();
    loop {
        let n = from.read(buf).await?;
        if n == 0 {
            to.write_all(&head).await?;
            counter.fetch_add(head.len() as u64, Ordering::Relaxed);
            return Ok(false);
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(rewritten) = request::closing_response_head(&head) {
            to.write_all(&rewritten).await?;
            counter.fetch_add(head.len() as u64, Ordering::Relaxed);
            return Ok(true);
        }
        if head.len() > MAX_RESPONSE_HEAD {
            // Not a response head this proxy can read: passed on as it is.
            to.write_all(&head).await?;
            counter.fetch_add(head.len() as u64, Ordering::Relaxed);
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_buffers_come_from_a_bounded_budget() {
        let held: Vec<BulkBuffer> = std::iter::from_fn(BulkBuffer::take)
            .take(BULK_BUFFERS + 1)
            .collect();
        assert_eq!(held.len(), BULK_BUFFERS, "the budget was exceeded");
        assert!(BulkBuffer::take().is_none());
        drop(held);
        assert!(BulkBuffer::take().is_some(), "not given back");
    }
}
