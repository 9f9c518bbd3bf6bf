//! Fast scanning of plain text: the hot path of the sanitizer.
//!
//! Most output is printable text with newlines. These scans work on blocks with branch-free
//! reductions that the compiler turns into SIMD compares, so plain text costs no per-byte branching.

const BLOCK: usize = 64;

/// Whether a byte needs the sanitizer's attention (a C0 control other than `\t` and `\n`, or DEL)
/// as 0 or 1, computed without branches so block loops vectorise.
#[inline]
fn special_bit(b: u8) -> u8 {
    (u8::from(b < 0x20) & u8::from(b != b'\n') & u8::from(b != b'\t')) | u8::from(b == 0x7f)
}

/// A stretch of text without special bytes, found by [`text_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Length of the stretch.
    pub(crate) len: usize,
    /// Offset of its first non-ASCII byte (`len` if it is all ASCII).
    pub(crate) first_high: usize,
    /// Newlines in it (counted here, while the bytes are in registers, to save a pass).
    pub(crate) newlines: u64,
}

/// Bytes classified one at a time before switching to SIMD scans: runs between escape sequences
/// and `\r` frames are usually this short, and one table look-up per byte beats the set-up cost of
/// `memchr3` and three vector reductions.
const SCALAR_PREFIX: usize = 24;

const SPECIAL: u8 = 1;
const HIGH: u8 = 2;
const NEWLINE: u8 = 4;

/// Per-byte classes for the scalar prefix.
static CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        table[b] = if byte == b'\n' {
            NEWLINE
        } else if (byte < 0x20 && byte != b'\t') || byte == 0x7f {
            SPECIAL
        } else if byte >= 0x80 {
            HIGH
        } else {
            0
        };
        b += 1;
    }
    table
};

/// The longest prefix of `bytes` with no special byte.
pub(crate) fn text_run(bytes: &[u8]) -> Run {
    let prefix = bytes.len().min(SCALAR_PREFIX);
    let mut first_high = usize::MAX;
    let mut newlines = 0u64;
    for (i, &b) in bytes[..prefix].iter().enumerate() {
        let class = CLASS[b as usize];
        if class & SPECIAL != 0 {
            return finish(i, first_high, newlines);
        }
        if class & HIGH != 0 && first_high == usize::MAX {
            first_high = i;
        }
        newlines += u64::from(class >> 2);
    }
    if prefix == bytes.len() {
        return finish(prefix, first_high, newlines);
    }
    let rest = long_run(&bytes[prefix..]);
    let first_high = if first_high == usize::MAX {
        prefix + rest.first_high
    } else {
        first_high
    };
    finish(prefix + rest.len, first_high, newlines + rest.newlines)
}

/// [`text_run`] for long runs: the common stops (ESC, `\r`, backspace) are found with SIMD
/// `memchr3`; the span before the stop is then checked for the rare ones, non-ASCII bytes and newlines
/// with branch-free reductions.
fn long_run(bytes: &[u8]) -> Run {
    let stop = memchr::memchr3(0x1b, b'\r', 0x08, bytes).unwrap_or(bytes.len());
    let span = &bytes[..stop];
    let special = span.iter().fold(0u8, |acc, &b| acc | special_bit(b));
    let high = span.iter().fold(0u8, |acc, &b| acc | b) & 0x80;
    let mut newlines = count_newlines(span);
    if special == 0 && high == 0 {
        return finish(stop, stop, newlines);
    }
    let len = if special == 0 {
        stop
    } else {
        let k = first_where(span, special_bit).unwrap_or(stop);
        newlines = count_newlines(&span[..k]);
        k
    };
    let first_high = if high == 0 {
        len
    } else {
        first_where(&span[..len], |b| b & 0x80).unwrap_or(len)
    };
    finish(len, first_high, newlines)
}

/// Index of the first byte with a non-zero `flag`: whole blocks are tested with a vectorised
/// reduction, and only the block that has one is searched byte by byte.
fn first_where(bytes: &[u8], flag: impl Fn(u8) -> u8 + Copy) -> Option<usize> {
    let mut offset = 0;
    for block in bytes.chunks(BLOCK) {
        if block.iter().fold(0u8, |acc, &b| acc | flag(b)) != 0 {
            return block.iter().position(|&b| flag(b) != 0).map(|k| offset + k);
        }
        offset += block.len();
    }
    None
}

fn finish(len: usize, first_high: usize, newlines: u64) -> Run {
    Run {
        len,
        first_high: first_high.min(len),
        newlines,
    }
}

/// The start of the first line in `body` (which ends with `\n`) longer than `max` bytes, if any.
///
/// Jumps from line start to the last newline within `max + 1` bytes, so short lines cost one
/// short backward scan per `max` bytes rather than one call per line.
pub(crate) fn first_long_line(body: &[u8], max: usize) -> Option<usize> {
    let mut start = 0;
    while start < body.len() {
        let end = start.saturating_add(max).saturating_add(1).min(body.len());
        match memchr::memrchr(b'\n', &body[start..end]) {
            Some(k) => start += k + 1,
            None => return Some(start),
        }
    }
    None
}

/// Number of `\n` in `bytes` (a plain reduction, vectorised by the compiler).
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    let mut total = 0u64;
    // u8 lanes cannot overflow within 255 bytes and give 16-32 compares per instruction.
    for block in bytes.chunks(255) {
        let n = block
            .iter()
            .fold(0u8, |acc, &b| acc.wrapping_add(u8::from(b == b'\n')));
        total += u64::from(n);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(len: usize, first_high: usize, newlines: u64) -> Run {
        Run {
            len,
            first_high,
            newlines,
        }
    }

    #[test]
    fn text_run_stops_at_the_first_control() {
        let mut data = vec![b'a'; 200];
        data[130] = 0x1b;
        data[3] = b'\n';
        data[100] = b'\n';
        data[150] = b'\n';
        assert_eq!(text_run(&data), run(130, 130, 2));
        data[70] = 0xc3;
        data[10] = 0xc3;
        assert_eq!(text_run(&data), run(130, 10, 2));
        assert_eq!(text_run(b"ab\n\tc"), run(5, 5, 1));
        assert_eq!(text_run(b"\r"), run(0, 0, 0));
        assert_eq!(text_run(&[b'x', 0x7f]), run(1, 1, 0));
        data[10] = b'a';
        data[70] = b'a';
        data[140] = 0xc3;
        assert_eq!(
            text_run(&data),
            run(130, 130, 2),
            "high bytes after the stop do not count"
        );
        assert_eq!(text_run(&data[120..]), run(10, 10, 0));
        assert_eq!(text_run(&data[131..]), run(69, 9, 1));
    }

    #[test]
    fn long_lines_are_found() {
        assert_eq!(first_long_line(b"ab\ncd\n", 2), None);
        assert_eq!(first_long_line(b"ab\ncde\nf\n", 2), Some(3));
        assert_eq!(first_long_line(b"abc\n", 2), Some(0));
        let mut many = b"x\n".repeat(1000);
        many.extend_from_slice(b"0123456789\n");
        assert_eq!(first_long_line(&many, 9), Some(2000));
        assert_eq!(first_long_line(&many, 10), None);
    }

    #[test]
    fn counts_newlines() {
        assert_eq!(count_newlines(&b"a\n".repeat(5000)), 5000);
        assert_eq!(count_newlines(b""), 0);
    }
}
