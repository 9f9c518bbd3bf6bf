//! [`LiveTail`]: a throttled, coalescing view of a stream for live progress (SPEC S-7).
//!
//! Chunks arriving within the interval (default 50 ms) of the last delivery are coalesced into one.
//! If a consumer lags so far that more than `max_pending` bytes pile up, the oldest pending bytes are
//! skipped in the *view* — but every byte is still counted: each delivery says how many bytes were
//! skipped before it and the running total.

use std::time::{Duration, Instant};

use crate::{Flow, Sink};

/// Default minimum time between deliveries.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(50);
/// Default bound on bytes held between deliveries.
pub const DEFAULT_MAX_PENDING: usize = 256 * 1024;

/// One delivery of a [`LiveTail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveChunk<'a> {
    /// The coalesced bytes.
    pub bytes: &'a [u8],
    /// Bytes of the stream dropped from the view just before `bytes` (the consumer lagged).
    pub skipped: u64,
    /// Bytes of the stream so far, including these.
    pub total_bytes: u64,
}

/// Throttles and coalesces chunks before handing them to a callback; see the module docs.
pub struct LiveTail<F, C = fn() -> Instant> {
    callback: F,
    clock: C,
    interval: Duration,
    max_pending: usize,
    pending: Vec<u8>,
    skipped: u64,
    total: u64,
    last_emit: Option<Instant>,
}

impl<F> LiveTail<F>
where
    F: FnMut(LiveChunk<'_>),
{
    /// Deliver to `callback` at most once per [`DEFAULT_INTERVAL`].
    pub fn new(callback: F) -> Self {
        Self::with_clock(callback, Instant::now)
    }
}

impl<F, C> LiveTail<F, C>
where
    F: FnMut(LiveChunk<'_>),
    C: FnMut() -> Instant,
{
    /// Like [`LiveTail::new`] with a custom clock (tests drive time by hand).
    pub fn with_clock(callback: F, clock: C) -> Self {
        Self {
            callback,
            clock,
            interval: DEFAULT_INTERVAL,
            max_pending: DEFAULT_MAX_PENDING,
            pending: Vec::new(),
            skipped: 0,
            total: 0,
            last_emit: None,
        }
    }

    /// Set the minimum time between deliveries.
    #[must_use]
    pub fn interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Set the bound on bytes held between deliveries (at least 1).
    #[must_use]
    pub fn max_pending(mut self, max_pending: usize) -> Self {
        self.max_pending = max_pending.max(1);
        self
    }

    /// Bytes seen so far.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Deliver pending bytes if the interval has passed (call from a timer so a stream that goes
    /// quiet still shows its last output).
    pub fn poll_flush(&mut self) {
        let now = (self.clock)();
        if self.due(now) {
            self.deliver(now);
        }
    }

    fn due(&self, now: Instant) -> bool {
        self.last_emit
            .is_none_or(|last| now.saturating_duration_since(last) >= self.interval)
    }

    fn deliver(&mut self, now: Instant) {
        if self.pending.is_empty() && self.skipped == 0 {
            return;
        }
        (self.callback)(LiveChunk {
            bytes: &self.pending,
            skipped: self.skipped,
            total_bytes: self.total,
        });
        self.pending.clear();
        self.skipped = 0;
        self.last_emit = Some(now);
    }
}

impl<F, C> Sink for LiveTail<F, C>
where
    F: FnMut(LiveChunk<'_>),
    C: FnMut() -> Instant,
{
    fn write(&mut self, chunk: &[u8]) -> Flow {
        if chunk.is_empty() {
            return Flow::Continue;
        }
        self.total += chunk.len() as u64;
        if chunk.len() >= self.max_pending {
            self.skipped += (self.pending.len() + chunk.len() - self.max_pending) as u64;
            self.pending.clear();
            self.pending
                .extend_from_slice(&chunk[chunk.len() - self.max_pending..]);
        } else {
            let overflow = (self.pending.len() + chunk.len()).saturating_sub(self.max_pending);
            if overflow > 0 {
                self.pending.drain(..overflow);
                self.skipped += overflow as u64;
            }
            self.pending.extend_from_slice(chunk);
        }
        self.poll_flush();
        Flow::Continue
    }

    fn finish(&mut self) {
        let now = (self.clock)();
        self.deliver(now);
    }
}

impl<F, C> std::fmt::Debug for LiveTail<F, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveTail")
            .field("interval", &self.interval)
            .field("pending", &self.pending.len())
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;

    #[test]
    fn coalesces_within_the_interval_and_flushes_at_finish() {
        let start = Instant::now();
        let now = Rc::new(Cell::new(start));
        let clock = {
            let now = now.clone();
            move || now.get()
        };
        let mut seen: Vec<(Vec<u8>, u64, u64)> = Vec::new();
        {
            let mut tail = LiveTail::with_clock(
                |c: LiveChunk<'_>| seen.push((c.bytes.to_vec(), c.skipped, c.total_bytes)),
                clock,
            );
            tail.write(b"a");
            tail.write(b"b");
            now.set(start + Duration::from_millis(10));
            tail.write(b"c");
            now.set(start + Duration::from_millis(60));
            tail.write(b"d");
            tail.write(b"e");
            tail.finish();
        }
        assert_eq!(
            seen,
            vec![
                (b"a".to_vec(), 0, 1),
                (b"bcd".to_vec(), 0, 4),
                (b"e".to_vec(), 0, 5)
            ]
        );
    }

    #[test]
    fn a_lagging_view_skips_but_counts_every_byte() {
        let start = Instant::now();
        let mut seen: Vec<(Vec<u8>, u64, u64)> = Vec::new();
        {
            let mut tail = LiveTail::with_clock(
                |c: LiveChunk<'_>| seen.push((c.bytes.to_vec(), c.skipped, c.total_bytes)),
                move || start,
            )
            .max_pending(4);
            tail.write(b"first");
            tail.write(b"123");
            tail.write(b"4567");
            tail.write(b"89");
            tail.finish();
        }
        assert_eq!(seen[0], (b"irst".to_vec(), 1, 5));
        let (bytes, skipped, total) = &seen[1];
        assert_eq!(bytes, b"6789");
        assert_eq!(total, &14);
        assert_eq!(*skipped + bytes.len() as u64 + 5, 14);
    }
}
