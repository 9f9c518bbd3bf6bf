//! Streaming CRLF → LF conversion for PTY output.
//!
//! A cooked terminal's output processing turns every `\n` into `\r\n`; the model should see the
//! program's lines, not the terminal's. A lone `\r` (progress redraws) is left for the sink's
//! sanitizer. Transcript-only terminals run without output processing and need no conversion.

/// Converts `\r\n` to `\n` across chunk boundaries.
#[derive(Debug, Default, Clone)]
pub struct CrlfToLf {
    pending_cr: bool,
}

impl CrlfToLf {
    /// A converter with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Convert `chunk`, appending to `out`. A trailing `\r` is held until the next byte is known.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let mut rest = chunk;
        if self.pending_cr {
            self.pending_cr = false;
            if rest.first() != Some(&b'\n') {
                out.push(b'\r');
            }
        }
        while let Some(i) = memchr::memchr(b'\r', rest) {
            out.extend_from_slice(&rest[..i]);
            match rest.get(i + 1) {
                Some(b'\n') => {}
                Some(_) => out.push(b'\r'),
                None => self.pending_cr = true,
            }
            rest = &rest[i + 1..];
        }
        out.extend_from_slice(rest);
    }

    /// Whether a trailing `\r` is held until the next byte is known.
    pub fn holds_cr(&self) -> bool {
        self.pending_cr
    }

    /// The stream ended: release a held `\r`.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if std::mem::take(&mut self.pending_cr) {
            out.push(b'\r');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert(chunks: &[&[u8]]) -> Vec<u8> {
        let mut c = CrlfToLf::new();
        let mut out = Vec::new();
        for chunk in chunks {
            c.push(chunk, &mut out);
        }
        c.finish(&mut out);
        out
    }

    #[test]
    fn crlf_becomes_lf_even_when_split() {
        assert_eq!(convert(&[b"a\r\nb\r\n"]), b"a\nb\n");
        assert_eq!(convert(&[b"a\r", b"\nb"]), b"a\nb");
        assert_eq!(convert(&[b"a\r", b"b"]), b"a\rb");
        assert_eq!(convert(&[b"a\r"]), b"a\r");
        assert_eq!(convert(&[b"\r\r\n", b"\r", b"\r", b"\n"]), b"\r\n\r\n");
        assert_eq!(convert(&[b"50%\r100%\r\n"]), b"50%\r100%\n");
        assert_eq!(convert(&[b"", b"\r", b""]), b"\r");
        let mut c = CrlfToLf::new();
        let mut out = Vec::new();
        c.push(b"a\r", &mut out);
        assert!(c.holds_cr());
        c.push(b"\n", &mut out);
        assert!(!c.holds_cr());
        assert_eq!(out, b"a\n");
    }
}
