//! Small [`Sink`] adapters: tee, collect, discard and closures.

use crate::{Flow, Sink};

/// Sends every chunk to two sinks, in order.
#[derive(Debug, Default)]
pub struct Tee<A, B> {
    /// The first receiver.
    pub first: A,
    /// The second receiver.
    pub second: B,
}

impl<A, B> Tee<A, B> {
    /// Combine two sinks.
    pub fn new(first: A, second: B) -> Self {
        Self { first, second }
    }
}

impl<A: Sink, B: Sink> Sink for Tee<A, B> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        let first = self.first.write(chunk);
        first.both(self.second.write(chunk))
    }
    fn finish(&mut self) {
        self.first.finish();
        self.second.finish();
    }
}

/// An optional sink: `None` discards everything.
impl<S: Sink> Sink for Option<S> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        match self {
            Some(sink) => sink.write(chunk),
            // An absent sink needs nothing: it never keeps a stream going on its own.
            None => Flow::Stop,
        }
    }
    fn finish(&mut self) {
        if let Some(sink) = self {
            sink.finish();
        }
    }
}

/// Keeps every byte in memory. Unbounded: meant for tests and small, known outputs.
#[derive(Debug, Default, Clone)]
pub struct Collect {
    /// Everything written so far.
    pub bytes: Vec<u8>,
    /// Whether [`Sink::finish`] was called.
    pub finished: bool,
}

impl Sink for Collect {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.bytes.extend_from_slice(chunk);
        Flow::Continue
    }
    fn finish(&mut self) {
        self.finished = true;
    }
}

/// Drops everything, counting bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Discard {
    /// Bytes seen.
    pub bytes: u64,
}

impl Sink for Discard {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.bytes += chunk.len() as u64;
        Flow::Continue
    }
}

/// Turns a closure into a sink.
pub struct FnSink<F>(pub F);

impl<F: FnMut(&[u8])> Sink for FnSink<F> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        (self.0)(chunk);
        Flow::Continue
    }
}

impl<F> std::fmt::Debug for FnSink<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnSink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tee_feeds_both_in_order() {
        let mut tee = Tee::new(Collect::default(), Discard::default());
        tee.write(b"ab");
        tee.write(b"c");
        tee.finish();
        assert_eq!(tee.first.bytes, b"abc");
        assert!(tee.first.finished);
        assert_eq!(tee.second.bytes, 3);
    }

    #[test]
    fn closure_and_reference_sinks() {
        let mut seen = Vec::new();
        {
            let mut sink = FnSink(|c: &[u8]| seen.extend_from_slice(c));
            let by_ref: &mut dyn Sink = &mut sink;
            by_ref.write(b"xy");
        }
        assert_eq!(seen, b"xy");
        let mut boxed: Box<dyn Sink> = Box::new(Collect::default());
        boxed.write(b"z");
        boxed.finish();
    }
}
