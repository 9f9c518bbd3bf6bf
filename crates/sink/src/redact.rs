//! [`Redact`]: replaces secret values in a stream with `[REDACTED:NAME]` before anything downstream
//! (window, artifact, live view, job log) sees them, also when a value is split across chunks.

use memchr::memmem;

use crate::{Flow, Sink};

/// Forwards the stream to `inner` with every occurrence of each secret value replaced by
/// `[REDACTED:NAME]` (longer values first, so a value containing another is replaced whole). Up to the
/// longest value's length less one byte is held back until the next chunk shows whether a value
/// continues there.
///
/// ```
/// use shellgate_sink::{Collect, Redact, Sink};
///
/// let mut sink = Redact::new(Collect::default(), [("TOKEN", "s3cr3t-value")]);
/// let _ = sink.write(b"token is s3cr3t-");
/// let _ = sink.write(b"value, ok\n");
/// sink.finish();
/// assert_eq!(sink.into_inner().bytes, b"token is [REDACTED:TOKEN], ok\n");
/// ```
#[derive(Debug)]
pub struct Redact<S> {
    inner: S,
    /// Values and their replacements, longest value first.
    secrets: Vec<(Vec<u8>, Vec<u8>)>,
    hold: usize,
    carry: Vec<u8>,
}

impl<S: Sink> Redact<S> {
    /// Redact `secrets` (name, value) from the stream into `inner`; empty values are ignored.
    pub fn new<N: AsRef<str>, V: AsRef<str>>(inner: S, secrets: impl IntoIterator<Item = (N, V)>) -> Self {
        let mut secrets: Vec<(Vec<u8>, Vec<u8>)> = secrets
            .into_iter()
            .filter(|(_, v)| !v.as_ref().is_empty())
            .map(|(n, v)| {
                (
                    v.as_ref().as_bytes().to_vec(),
                    format!("[REDACTED:{}]", n.as_ref()).into_bytes(),
                )
            })
            .collect();
        secrets.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
        let hold = secrets.first().map_or(0, |(v, _)| v.len() - 1);
        Self {
            inner,
            secrets,
            hold,
            carry: Vec::new(),
        }
    }

    /// The wrapped sink.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The wrapped sink, by reference.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// The first secret in `data[from..]`: its start, length and replacement.
    fn next_match(&self, data: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let mut best: Option<(usize, usize, usize)> = None;
        for (index, (value, _)) in self.secrets.iter().enumerate() {
            if let Some(at) = memmem::find(&data[from..], value) {
                let at = from + at;
                // Earliest wins; at the same place the longer value (listed first) stays.
                if best.is_none_or(|(b, _, _)| at < b) {
                    best = Some((at, value.len(), index));
                }
            }
        }
        best
    }

    /// Redact and forward `data` (after what was held back); keep back a possibly unfinished value
    /// unless the stream ends.
    fn pass(&mut self, data: &[u8], end: bool) -> Flow {
        if self.secrets.is_empty() {
            return if data.is_empty() {
                Flow::Continue
            } else {
                self.inner.write(data)
            };
        }
        let mut buf = std::mem::take(&mut self.carry);
        buf.extend_from_slice(data);
        let safe = if end {
            buf.len()
        } else {
            buf.len().saturating_sub(self.hold)
        };
        let mut out = Vec::with_capacity(buf.len());
        let mut i = 0;
        loop {
            match self.next_match(&buf, i) {
                Some((at, len, index)) if at < safe => {
                    out.extend_from_slice(&buf[i..at]);
                    out.extend_from_slice(&self.secrets[index].1);
                    i = at + len;
                }
                _ => {
                    let cut = safe.max(i);
                    out.extend_from_slice(&buf[i..cut]);
                    self.carry = buf[cut..].to_vec();
                    break;
                }
            }
        }
        if out.is_empty() {
            Flow::Continue
        } else {
            self.inner.write(&out)
        }
    }
}

impl<S: Sink> Sink for Redact<S> {
    fn write(&mut self, chunk: &[u8]) -> Flow {
        self.pass(chunk, false)
    }

    fn finish(&mut self) {
        let _ = self.pass(&[], true);
        self.inner.finish();
    }
}

/// Replace every occurrence of each secret value (name, value) in `text` by `[REDACTED:NAME]`
/// (longer values first, so a value containing another is redacted whole): [`Redact`] for text
/// already in hand.
pub fn redact_text(text: &str, secrets: &[(String, String)]) -> String {
    let mut ordered: Vec<&(String, String)> = secrets.iter().filter(|(_, v)| !v.is_empty()).collect();
    ordered.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    let mut out = text.to_owned();
    for (name, value) in ordered {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), &format!("[REDACTED:{name}]"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Collect;

    fn redacted(chunks: &[&[u8]], secrets: &[(&str, &str)]) -> Vec<u8> {
        let mut sink = Redact::new(Collect::default(), secrets.iter().copied());
        for c in chunks {
            let _ = sink.write(c);
        }
        sink.finish();
        sink.into_inner().bytes
    }

    #[test]
    fn every_split_gives_the_whole_string_result() {
        let text = b"a=hunter22; b=hunter2; c=hunter22hunter22 end hunt";
        let secrets = [("LONG", "hunter22"), ("SHORT", "hunter2")];
        let whole = redacted(&[text], &secrets);
        assert_eq!(
            whole,
            b"a=[REDACTED:LONG]; b=[REDACTED:SHORT]; c=[REDACTED:LONG][REDACTED:LONG] end hunt"
        );
        for cut in 0..text.len() {
            for cut2 in cut..text.len() {
                let parts = [&text[..cut], &text[cut..cut2], &text[cut2..]];
                assert_eq!(redacted(&parts, &secrets), whole, "cuts {cut} {cut2}");
            }
        }
    }

    #[test]
    fn without_secrets_bytes_pass_unchanged() {
        assert_eq!(redacted(&[b"abc", b"def"], &[]), b"abcdef");
        assert_eq!(redacted(&[b"abc"], &[("EMPTY", "")]), b"abc");
    }

    #[test]
    fn text_in_hand_is_redacted_longest_value_first() {
        let secrets = [
            ("A".to_owned(), "abc".to_owned()),
            ("B".to_owned(), "abcdef".to_owned()),
        ];
        assert_eq!(
            redact_text("x abcdef abc", &secrets),
            "x [REDACTED:B] [REDACTED:A]"
        );
        assert_eq!(redact_text("none", &[("E".to_owned(), String::new())]), "none");
        let key = [("MY_SERVICE_KEY".to_owned(), "s3cr3t-value".to_owned())];
        assert_eq!(
            redact_text("token=s3cr3t-value; again s3cr3t-value", &key),
            "token=[REDACTED:MY_SERVICE_KEY]; again [REDACTED:MY_SERVICE_KEY]"
        );
    }
}
