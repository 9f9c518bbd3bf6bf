//! [`LineLimit`]: passes on only the first N lines of a stream, counting all of it, and says when it
//! has seen enough.
//!
//! A `head` limit must apply to the complete line stream (SPEC N-6), not to a window that already
//! dropped its middle, so it sits in front of the window. Once its lines are complete it answers
//! [`Flow::Stop`] — at once, or after a counting grace during which it keeps counting the lines it
//! drops — so the executor can close the pipe as a real `head` would (the producer then meets
//! `EPIPE`/`SIGPIPE`), instead of letting an endless producer run to its timeout.

use std::time::{Duration, Instant};

use crate::{Flow, Sink};

/// Forwards the first `limit` lines (each with its newline) to `inner` and drops the rest, while
/// counting every byte and line it is given.
#[derive(Debug)]
pub struct LineLimit<S> {
    inner: S,
    limit: Option<u64>,
    grace: Duration,
    newlines: u64,
    total_bytes: u64,
    last_byte: Option<u8>,
    full_since: Option<Instant>,
    stops: bool,
}

impl<S: Sink> LineLimit<S> {
    /// Keep the first `limit` lines (everything when `None`); answer [`Flow::Stop`] as soon as they
    /// are complete.
    pub fn new(inner: S, limit: Option<u64>) -> Self {
        Self {
            inner,
            limit,
            grace: Duration::ZERO,
            newlines: 0,
            total_bytes: 0,
            last_byte: None,
            full_since: None,
            stops: true,
        }
    }

    /// Whether a full limit answers [`Flow::Stop`] (the default) or only drops the rest: a limit the
    /// caller asked to be shown, not one the command itself had (its producer must not be cut short).
    #[must_use]
    pub fn stopping(mut self, on: bool) -> Self {
        self.stops = on;
        self
    }

    /// Keep counting for `grace` after the limit is full before answering [`Flow::Stop`] (`ZERO`, the
    /// default, stops exactly where `head` would).
    #[must_use]
    pub fn with_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Lines seen (a trailing newline does not add one).
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Bytes seen.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Lines passed on: the limit, or every line when the stream was shorter.
    pub fn kept_lines(&self) -> u64 {
        self.limit
            .map_or(self.total_lines(), |l| l.min(self.total_lines()))
    }

    /// The wrapped sink.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The limit is full: stop now, or once the grace has passed.
    fn full(&mut self) -> Flow {
        if !self.stops {
            return Flow::Continue;
        }
        let since = *self.full_since.get_or_insert_with(Instant::now);
        if self.grace.is_zero() || since.elapsed() >= self.grace {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

impl<S: Sink> Sink for LineLimit<S> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        if chunk.is_empty() {
            return Flow::Continue;
        }
        let before = self.newlines;
        self.total_bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        let Some(limit) = self.limit else {
            return self.inner.write(chunk);
        };
        if before >= limit {
            return self.full();
        }
        // The `limit`-th newline ends the kept part; it may fall inside this chunk.
        let needed = (limit - before) as usize;
        match memchr::memchr_iter(b'\n', chunk).nth(needed - 1) {
            Some(end) => {
                let inner = self.inner.write(&chunk[..=end]);
                if inner.is_stop() { inner } else { self.full() }
            }
            None => self.inner.write(chunk),
        }
    }

    fn finish(&mut self) {
        self.inner.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Collect;

    fn run(chunks: &[&[u8]], limit: Option<u64>) -> (Vec<u8>, u64, Vec<Flow>) {
        let mut sink = LineLimit::new(Collect::default(), limit);
        let flows = chunks.iter().map(|c| sink.write(c)).collect();
        sink.finish();
        let lines = sink.total_lines();
        (sink.inner.bytes, lines, flows)
    }

    #[test]
    fn keeps_first_lines_across_chunk_boundaries() {
        let (kept, total, flows) = run(&[b"a\nb", b"\nc\nd", b"\ne"], Some(2));
        assert_eq!(kept, b"a\nb\n");
        assert_eq!(total, 5);
        assert_eq!(flows, [Flow::Continue, Flow::Stop, Flow::Stop]);
        let (kept, total, _) = run(&[b"a\nb\n"], Some(2));
        assert_eq!((kept.as_slice(), total), (&b"a\nb\n"[..], 2));
    }

    #[test]
    fn zero_and_unlimited() {
        let (kept, _, flows) = run(&[b"a\nb\n"], Some(0));
        assert_eq!((kept.as_slice(), flows.as_slice()), (&b""[..], &[Flow::Stop][..]));
        let (kept, total, flows) = run(&[b"a\nb"], None);
        assert_eq!((kept, total, flows), (b"a\nb".to_vec(), 2, vec![Flow::Continue]));
    }

    #[test]
    fn a_limit_that_only_shows_never_stops() {
        let mut sink = LineLimit::new(Collect::default(), Some(1)).stopping(false);
        assert_eq!(sink.write(b"a\nb\n"), Flow::Continue);
        assert_eq!(sink.write(b"c\n"), Flow::Continue);
        assert_eq!(
            (sink.total_lines(), sink.inner.bytes.as_slice()),
            (3, &b"a\n"[..])
        );
    }

    #[test]
    fn a_grace_keeps_counting_before_it_stops() {
        let mut sink = LineLimit::new(Collect::default(), Some(1)).with_grace(Duration::from_millis(500));
        assert_eq!(sink.write(b"a\nb\n"), Flow::Continue);
        assert_eq!(sink.write(b"c\n"), Flow::Continue);
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(sink.write(b"d\n"), Flow::Stop);
        assert_eq!((sink.total_lines(), sink.kept_lines()), (4, 1));
        assert_eq!(sink.inner.bytes, b"a\n");
    }

    #[test]
    fn matches_a_plain_split_for_every_chunking() {
        let text = b"1\n22\n\n333\n4444\n5";
        for limit in 0..8u64 {
            let expected: Vec<u8> = text
                .split_inclusive(|&b| b == b'\n')
                .take(limit as usize)
                .flatten()
                .copied()
                .collect();
            for cut in 0..text.len() {
                let (a, b) = text.split_at(cut);
                let (kept, total, _) = run(&[a, b], Some(limit));
                assert_eq!(kept, expected, "limit {limit} cut {cut}");
                assert_eq!(total, 6);
            }
        }
    }
}
