//! Records in a remote session's output: `\x1e<nonce>:<kind>:<id>:<status>:<cwd>\x1e`, written by the
//! session's shell after a command's output on the same stream, so they arrive exactly after it.

/// One record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// `r` ready (the id is the shell's pid), `e` a command ended, `d` its directory is missing.
    pub kind: u8,
    /// The command's id (or the shell's pid).
    pub id: u64,
    /// The command's status.
    pub status: i32,
    /// The shell's directory afterwards.
    pub cwd: String,
}

/// What a chunk of the stream holds, in order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Command output.
    Output(&'a [u8]),
    /// A record.
    Record(Record),
}

/// Splits the stream into output and records; a record cut across reads is held until complete.
#[derive(Debug)]
pub(crate) struct Scanner {
    prefix: Vec<u8>,
    pending: Vec<u8>,
}

const SEP: u8 = 0x1e;

impl Scanner {
    /// A scanner for records carrying `nonce`.
    pub(crate) fn new(nonce: &str) -> Self {
        let mut prefix = vec![SEP];
        prefix.extend_from_slice(nonce.as_bytes());
        prefix.push(b':');
        Self {
            prefix,
            pending: Vec::new(),
        }
    }

    /// Feed `chunk`; `each` gets the pieces in order. Output that may be the start of a record is
    /// held back until the next chunk tells.
    pub(crate) fn feed(&mut self, chunk: &[u8], mut each: impl FnMut(Piece<'_>)) {
        self.pending.extend_from_slice(chunk);
        let mut start = 0;
        loop {
            let rest = &self.pending[start..];
            let Some(at) = memchr::memmem::find(rest, &self.prefix) else {
                let keep = partial_prefix_len(rest, &self.prefix);
                if rest.len() > keep {
                    each(Piece::Output(&rest[..rest.len() - keep]));
                }
                start += rest.len() - keep;
                break;
            };
            if at > 0 {
                each(Piece::Output(&rest[..at]));
            }
            let body_start = at + self.prefix.len();
            let Some(len) = memchr::memchr(SEP, &rest[body_start..]) else {
                start += at;
                break;
            };
            if let Some(record) = parse(&rest[body_start..body_start + len]) {
                each(Piece::Record(record));
            }
            start += body_start + len + 1;
        }
        self.pending.drain(..start);
    }

    /// What is held back (at the stream's end it is output after all).
    pub(crate) fn take_pending(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// The length of the longest end of `data` that begins `prefix`.
fn partial_prefix_len(data: &[u8], prefix: &[u8]) -> usize {
    let max = (prefix.len() - 1).min(data.len());
    (1..=max)
        .rev()
        .find(|&n| data[data.len() - n..] == prefix[..n])
        .unwrap_or(0)
}

fn parse(body: &[u8]) -> Option<Record> {
    let text = std::str::from_utf8(body).ok()?;
    let mut parts = text.splitn(4, ':');
    let kind = *parts.next()?.as_bytes().first()?;
    let id = parts.next()?.parse().ok()?;
    let status = parts.next()?.parse().ok()?;
    let cwd = parts.next().unwrap_or("").to_owned();
    Some(Record {
        kind,
        id,
        status,
        cwd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(scanner: &mut Scanner, chunks: &[&[u8]]) -> (Vec<u8>, Vec<Record>) {
        let (mut out, mut records) = (Vec::new(), Vec::new());
        for chunk in chunks {
            scanner.feed(chunk, |piece| match piece {
                Piece::Output(b) => out.extend_from_slice(b),
                Piece::Record(r) => records.push(r),
            });
        }
        (out, records)
    }

    #[test]
    fn splits_output_and_records_at_every_cut() {
        let stream = b"hello\nno newline\x1eabc:e:7:3:/tmp/a b\x1eafter\x1e-not-a-record";
        for cut in 0..stream.len() {
            let mut scanner = Scanner::new("abc");
            let (mut out, records) = collect(&mut scanner, &[&stream[..cut], &stream[cut..]]);
            out.extend(scanner.take_pending());
            assert_eq!(out, b"hello\nno newlineafter\x1e-not-a-record", "cut at {cut}");
            assert_eq!(
                records,
                [Record {
                    kind: b'e',
                    id: 7,
                    status: 3,
                    cwd: "/tmp/a b".into()
                }]
            );
        }
    }

    #[test]
    fn byte_by_byte() {
        let stream = b"x\x1en:r:42:0:/\x1e\x1en:e:1:0:/h\x1ey";
        let mut scanner = Scanner::new("n");
        let chunks: Vec<&[u8]> = stream.chunks(1).collect();
        let (out, records) = collect(&mut scanner, &chunks);
        assert_eq!(out, b"xy");
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].id, 42);
        assert_eq!(records[1].cwd, "/h");
    }
}
