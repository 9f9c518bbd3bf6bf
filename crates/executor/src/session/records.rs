//! Control records a session shell writes to its control FIFO.
//!
//! Every record is a one-letter tag followed by its fields, each terminated by a NUL byte. NUL cannot occur
//! inside a shell string, so fields need no escaping; the command's own output never reaches this channel.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::spec::parse_status_trailer;

/// One message from the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    /// The shell finished its bootstrap; its pid.
    Ready { pid: u32 },
    /// The shell picked up command `id` and is about to run it.
    Ack { id: u64 },
    /// Command `id` ended with `status` in directory `cwd`; `stages` are the statuses of its last
    /// pipeline when that had at least two stages (else empty).
    Done {
        id: u64,
        status: i32,
        cwd: PathBuf,
        stages: Vec<i32>,
        /// `pipefail` was on when the command ended (reported with its status line).
        pipefail: bool,
    },
    /// The shell's state after command `id` is saved.
    Saved { id: u64 },
}

/// Upper bound on buffered, unparsed control bytes (a path is at most 4 KiB on Linux).
const MAX_PENDING: usize = 64 * 1024;

/// Splits the control stream into [`Record`]s; bytes may arrive in any chunking.
#[derive(Debug, Default)]
pub(crate) struct RecordReader {
    pending: Vec<u8>,
}

impl RecordReader {
    /// Add bytes read from the control FIFO.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() > MAX_PENDING {
            // Only a corrupted stream gets here; drop it rather than grow without bound.
            self.pending.clear();
        }
    }

    /// The next complete record, if one has fully arrived. Unknown or malformed records are skipped.
    pub(crate) fn next_record(&mut self) -> Option<Record> {
        loop {
            let (fields, used) = split_record(&self.pending)?;
            let record = parse(&fields);
            self.pending.drain(..used);
            if record.is_some() {
                return record;
            }
        }
    }
}

/// The fields of the first complete record in `buf` and the number of bytes it spans.
fn split_record(buf: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let tag_end = memchr_nul(buf, 0)?;
    let wanted = match &buf[..tag_end] {
        b"R" | b"A" | b"S" => 1,
        b"D" => 4,
        _ => 0, // unknown tag: the record is the tag alone, skipped by `parse`
    };
    let mut fields = vec![&buf[..tag_end]];
    let mut pos = tag_end + 1;
    for _ in 0..wanted {
        let end = memchr_nul(buf, pos)?;
        fields.push(&buf[pos..end]);
        pos = end + 1;
    }
    Some((fields, pos))
}

fn memchr_nul(buf: &[u8], from: usize) -> Option<usize> {
    buf.get(from..)?.iter().position(|&b| b == 0).map(|i| i + from)
}

fn parse(fields: &[&[u8]]) -> Option<Record> {
    let num = |i: usize| std::str::from_utf8(fields.get(i)?).ok()?.parse::<u64>().ok();
    match *fields.first()? {
        b"R" => Some(Record::Ready {
            pid: u32::try_from(num(1)?).ok()?,
        }),
        b"A" => Some(Record::Ack { id: num(1)? }),
        b"S" => Some(Record::Saved { id: num(1)? }),
        b"D" => {
            // The status line's `PIPESTATUS` and `$?`, space-separated; empty when the command had none.
            let report = parse_status_trailer(&String::from_utf8_lossy(fields.get(4)?)).unwrap_or_default();
            Some(Record::Done {
                id: num(1)?,
                status: i32::try_from(num(2)?).ok()?,
                cwd: PathBuf::from(OsStr::from_bytes(fields.get(3)?)),
                stages: report.stages,
                pipefail: report.pipefail,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_split_across_chunks() {
        let stream = b"R\x00123\x00A\x007\x00D\x007\x003\x00/tmp/a b\nc\x00 141 3 3\x00D\x008\x000\x00/\x00\x00S\x007\x00";
        for split in 0..stream.len() {
            let mut reader = RecordReader::default();
            let mut got = Vec::new();
            reader.push(&stream[..split]);
            while let Some(r) = reader.next_record() {
                got.push(r);
            }
            reader.push(&stream[split..]);
            while let Some(r) = reader.next_record() {
                got.push(r);
            }
            assert_eq!(
                got,
                vec![
                    Record::Ready { pid: 123 },
                    Record::Ack { id: 7 },
                    Record::Done {
                        id: 7,
                        status: 3,
                        cwd: PathBuf::from("/tmp/a b\nc"),
                        stages: vec![141, 3],
                        pipefail: false,
                    },
                    Record::Done {
                        id: 8,
                        status: 0,
                        cwd: PathBuf::from("/"),
                        stages: Vec::new(),
                        pipefail: false,
                    },
                    Record::Saved { id: 7 },
                ],
                "split at {split}"
            );
        }
    }

    #[test]
    fn garbage_is_skipped() {
        let mut reader = RecordReader::default();
        reader.push(b"X\x00A\x00notanumber\x00A\x009\x00");
        assert_eq!(reader.next_record(), Some(Record::Ack { id: 9 }));
        assert_eq!(reader.next_record(), None);
    }
}
