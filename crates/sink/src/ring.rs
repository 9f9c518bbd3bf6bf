//! A fixed-capacity byte ring holding the most recent bytes of a stream.

/// The last `capacity` bytes pushed, in two memcpy-sized pieces at most.
#[derive(Debug, Clone)]
pub(crate) struct TailRing {
    buf: Vec<u8>,
    capacity: usize,
    /// Where the next byte goes once the ring is full (the oldest byte is there).
    pos: usize,
}

impl TailRing {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            buf: Vec::new(),
            capacity,
            pos: 0,
        }
    }

    /// Bytes held.
    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    /// The most bytes held.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        if bytes.len() >= self.capacity {
            bytes = &bytes[bytes.len() - self.capacity..];
            self.buf.clear();
            self.buf.extend_from_slice(bytes);
            self.pos = 0;
            return;
        }
        let room = self.capacity - self.buf.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        while !bytes.is_empty() {
            let take = (self.capacity - self.pos).min(bytes.len());
            self.buf[self.pos..self.pos + take].copy_from_slice(&bytes[..take]);
            self.pos = (self.pos + take) % self.capacity;
            bytes = &bytes[take..];
        }
    }

    /// The held bytes, oldest first.
    pub(crate) fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len());
        out.extend_from_slice(&self.buf[self.pos..]);
        out.extend_from_slice(&self.buf[..self.pos]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_bytes_in_order() {
        let mut ring = TailRing::new(5);
        ring.push(b"abc");
        assert_eq!(ring.to_vec(), b"abc");
        ring.push(b"def");
        assert_eq!(ring.to_vec(), b"bcdef");
        ring.push(b"gh");
        assert_eq!(ring.to_vec(), b"defgh");
        ring.push(b"0123456789");
        assert_eq!(ring.to_vec(), b"56789");
        ring.push(b"x");
        assert_eq!(ring.to_vec(), b"6789x");
        assert_eq!(ring.len(), 5);
    }

    #[test]
    fn zero_capacity_holds_nothing() {
        let mut ring = TailRing::new(0);
        ring.push(b"abc");
        assert!(ring.to_vec().is_empty());
    }
}
