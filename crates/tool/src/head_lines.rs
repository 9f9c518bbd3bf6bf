//! [`HeadLines`]: passes on only the first N lines of a stream, counting all of it.
//!
//! A `head` limit must apply to the complete line stream (SPEC N-6), not to a window that already
//! dropped its middle, so it is applied while the output streams in, before the window.

use shellgate_sink::Sink;

/// Forwards the first `limit` lines (each with its newline) to `inner` and drops the rest, while
/// counting every byte and line of the whole stream.
#[derive(Debug)]
pub struct HeadLines<S> {
    inner: S,
    limit: Option<u64>,
    newlines: u64,
    total_bytes: u64,
    last_byte: Option<u8>,
}

impl<S: Sink> HeadLines<S> {
    /// Keep the first `limit` lines (everything when `None`).
    pub fn new(inner: S, limit: Option<u64>) -> Self {
        Self {
            inner,
            limit,
            newlines: 0,
            total_bytes: 0,
            last_byte: None,
        }
    }

    /// Lines in the whole stream (a trailing newline does not add one).
    pub fn total_lines(&self) -> u64 {
        match self.last_byte {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }

    /// Bytes in the whole stream.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }
}

impl<S: Sink> Sink for HeadLines<S> {
    fn write(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        let before = self.newlines;
        self.total_bytes += chunk.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        self.last_byte = chunk.last().copied();
        match self.limit {
            None => self.inner.write(chunk),
            Some(limit) if before >= limit => {}
            Some(limit) => {
                // The `limit`-th newline ends the kept part; it may fall inside this chunk.
                let needed = (limit - before) as usize;
                match memchr::memchr_iter(b'\n', chunk).nth(needed - 1) {
                    Some(end) => self.inner.write(&chunk[..=end]),
                    None => self.inner.write(chunk),
                }
            }
        }
    }

    fn finish(&mut self) {
        self.inner.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shellgate_sink::Collect;

    fn run(chunks: &[&[u8]], limit: Option<u64>) -> (Vec<u8>, u64) {
        let mut sink = HeadLines::new(Collect::default(), limit);
        for c in chunks {
            sink.write(c);
        }
        sink.finish();
        let lines = sink.total_lines();
        (sink.inner.bytes, lines)
    }

    #[test]
    fn keeps_first_lines_across_chunk_boundaries() {
        let (kept, total) = run(&[b"a\nb", b"\nc\nd", b"\ne"], Some(2));
        assert_eq!(kept, b"a\nb\n");
        assert_eq!(total, 5);
        let (kept, total) = run(&[b"a\nb\n"], Some(2));
        assert_eq!((kept.as_slice(), total), (&b"a\nb\n"[..], 2));
    }

    #[test]
    fn zero_and_unlimited() {
        assert_eq!(run(&[b"a\nb\n"], Some(0)).0, b"");
        assert_eq!(run(&[b"a\nb"], None), (b"a\nb".to_vec(), 2));
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
                let (kept, total) = run(&[a, b], Some(limit));
                assert_eq!(kept, expected, "limit {limit} cut {cut}");
                assert_eq!(total, 6);
            }
        }
    }
}
